#!/usr/bin/env bash
# tests/dropin/profiler.sh MPIEXEC COLLC_LIB PROFILER_LIB PROGRAM: a PMPI
# profiling library (profiler.c) preloaded beside libcollc_mpi.so, in both
# orders, on PROGRAM (collectives.c) at 2 ranks (docs/dropin.md, "PMPI tools"):
#   profiler first: it sees every MPI_Allreduce the program makes (and those
#     collc's set-up makes), collc serves none of them and, its MPI_Finalize
#     shadowed, prints no report, and collc warns once naming the profiler;
#   collc first: collc serves them, the profiler sees none of them, and collc
#     warns once that the profiler is passed over.
# The program's output is native's in both orders and alone under the profiler.
set -u
mpiexec=$1 collc=$2 prof=$3 prog=$4
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/collc-profiler.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
run=("$mpiexec" --oversubscribe --mca mpi_yield_when_idle 1 -n 2 -x COLLC_STATS=1)
fail=0
timeout 120 "${run[@]}" -x "LD_PRELOAD=$prof" "$prog" >"$tmp/alone.out" 2>"$tmp/alone.err" ||
  { echo "FAIL: the run under the profiler alone failed" >&2; cat "$tmp/alone.err" >&2; exit 1; }
calls=$(sed -n 's/^profiler: MPI_Allreduce calls=\([0-9]*\)$/\1/p' "$tmp/alone.err")
[ -n "$calls" ] && [ "$calls" -gt 0 ] ||
  { echo "FAIL: the profiler alone counted no MPI_Allreduce" >&2; cat "$tmp/alone.err" >&2; exit 1; }
for order in profiler-first collc-first; do
  if [ $order = profiler-first ]; then pre=$prof:$collc; else pre=$collc:$prof; fi
  timeout 120 "${run[@]}" -x "LD_PRELOAD=$pre" "$prog" >"$tmp/$order.out" 2>"$tmp/$order.err"
  rc=$?
  e=$tmp/$order.err
  bad() { echo "FAIL: $order: $*" >&2; fail=1; }
  [ $rc = 0 ] || bad "exit $rc"
  cmp -s "$tmp/alone.out" "$tmp/$order.out" || bad "the program's output differs from native's"
  if [ $order = profiler-first ]; then
    seen=$(sed -n 's/^profiler: MPI_Allreduce calls=\([0-9]*\)$/\1/p' "$e")
    [ -n "$seen" ] && [ "$seen" -ge "$calls" ] || bad "the profiler counted ${seen:-no} allreduces, fewer than the program's $calls"
    ! grep -q '^collc: allreduce handled=[1-9]' "$e" || bad "collc served allreduces"
    grep -q "^collc: warning: .*libcollc-test-profiler.so is loaded before libcollc_mpi.so and defines MPI_Allreduce, .*collc.*serves none of them" "$e" ||
      bad "no warning naming the profiler in front"
  else
    grep -q '^profiler: MPI_Allreduce calls=0$' "$e" || bad "the profiler saw allreduces collc intercepts"
    grep -q '^collc: allreduce handled=[1-9][0-9]* ' "$e" || bad "collc did not serve the allreduces"
    grep -q "^collc: warning: .*libcollc-test-profiler.so is loaded after libcollc_mpi.so and defines MPI_Allreduce, .*it does not see them" "$e" ||
      bad "no warning naming the profiler passed over"
  fi
  [ "$(grep -c '^collc: warning:' "$e")" = 1 ] || bad "expected exactly one warning"
  [ $fail = 0 ] || { echo "--- stderr ($order):" >&2; head -30 "$e" >&2; }
done
[ $fail = 0 ] && echo "ok: profiler counted $calls allreduces alone and first; collc served them when first"
exit $fail
