#!/usr/bin/env bash
# tests/dropin/component-load.sh MPIEXEC OLD GONE PROGRAM: components Open MPI
# must leave out, each asked for at priority 90 on PROGRAM (collectives.c) at
# 2 ranks; the job runs on without it, its output native's:
#  - OLD/mca_coll_collc.so claims to be built for Open MPI 3: it declines to
#    open with one message naming both versions;
#  - GONE/mca_coll_collc.so needs libcollc-gone.so, which the loader cannot
#    find: Open MPI says it could not open the component, naming the library.
# Neither serves a call (COLLC_STATS prints nothing).
set -u
mpiexec=$1 old=$2 gone=$3 prog=$4
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/collc-component-load.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
builtin=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }

timeout 120 "$mpiexec" --oversubscribe -n 2 "$prog" >"$tmp/native.out" 2>"$tmp/native.err" ||
  { cat "$tmp/native.err" >&2; echo "FAIL: the native run failed" >&2; exit 1; }

for variant in old gone; do
  dir=$old
  [ $variant = gone ] && dir=$gone
  timeout 120 "$mpiexec" --oversubscribe --mca mpi_yield_when_idle 1 -n 2 \
    --mca mca_base_component_path "$builtin:$dir" --mca coll_collc_priority 90 \
    -x COLLC_STATS=1 "$prog" >"$tmp/$variant.out" 2>"$tmp/$variant.err" ||
    { cat "$tmp/$variant.err" >&2; bad "$variant: the job failed"; continue; }
  cmp -s "$tmp/native.out" "$tmp/$variant.out" || bad "$variant: the output differs from native's"
  ! grep -q "handled=" "$tmp/$variant.err" || bad "$variant: the component served calls"
  case $variant in
    old) want="coll/collc: built for Open MPI 3\.[0-9]*\.[0-9]*, loaded into Open MPI [0-9.]*: not used (rebuild collc against this Open MPI)" ;;
    gone) want="libcollc-gone\.so: cannot open shared object file" ;;
  esac
  grep -q "$want" "$tmp/$variant.err" || { cat "$tmp/$variant.err" >&2; bad "$variant: no message matching '$want'"; }
done
[ $fail = 0 ] && echo PASS
exit $fail
