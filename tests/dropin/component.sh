#!/usr/bin/env bash
# tests/dropin/component.sh MPIEXEC DIR PROFILER PROGRAM: Open MPI's coll/collc
# component from DIR (mca_coll_collc.so) on PROGRAM (collectives.c) at 2 ranks:
#  - ompi_info lists its parameters, each with its help;
#  - not selected without a priority (collc prints nothing);
#  - its settings as MCA parameters (coll_collc_stats), the COLLC_* variable
#    winning over the parameter when both are set;
#  - a PMPI profiler (PROFILER) preloaded at the same time sees every
#    MPI_Allreduce the program makes (and those collc's own set-up makes)
#    while collc serves them;
# the program's output is native's in every run.
set -u
mpiexec=$1 dir=$2 prof=$3 prog=$4
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/collc-component.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
builtin=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
path=(--mca mca_base_component_path "$builtin:$dir")
run=("$mpiexec" --oversubscribe --mca mpi_yield_when_idle 1 -n 2 "${path[@]}")
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }

OMPI_MCA_mca_base_component_path="$builtin:$dir" ompi_info --param coll collc --level 9 >"$tmp/info" 2>&1 || bad "ompi_info failed"
for p in priority algorithm rules plan_path library stats debug verify transport trusted proof_cache; do
  grep -q "parameter \"coll_collc_$p\"" "$tmp/info" || bad "ompi_info does not list coll_collc_$p"
done
grep -q "COLLC_STATS" "$tmp/info" || bad "ompi_info: coll_collc_stats does not name COLLC_STATS"

timeout 120 "$mpiexec" --oversubscribe -n 2 "$prog" >"$tmp/native.out" 2>"$tmp/native.err" ||
  { bad "the native run failed"; cat "$tmp/native.err" >&2; exit 1; }

check() { # NAME: the run's output is native's
  cmp -s "$tmp/native.out" "$tmp/$1.out" || bad "$1: the program's output differs from native's"
}

timeout 120 "${run[@]}" -x COLLC_STATS=1 "$prog" >"$tmp/unselected.out" 2>"$tmp/unselected.err" ||
  bad "unselected: the run failed"
check unselected
! grep -q '^collc:' "$tmp/unselected.err" || bad "unselected: collc printed (it should not be selected at priority 0)"

timeout 120 "${run[@]}" --mca coll_collc_priority 90 --mca coll_collc_stats 1 "$prog" \
  >"$tmp/mca.out" 2>"$tmp/mca.err" || bad "mca: the run failed"
check mca
grep -q '^collc: allreduce handled=[1-9]' "$tmp/mca.err" || bad "mca: coll_collc_stats 1 gave no report of served calls"

timeout 120 "${run[@]}" --mca coll_collc_priority 90 --mca coll_collc_stats 1 -x COLLC_STATS=0 "$prog" \
  >"$tmp/wins.out" 2>"$tmp/wins.err" || bad "wins: the run failed"
check wins
! grep -q '^collc: allreduce handled=' "$tmp/wins.err" || bad "wins: coll_collc_stats 1 won over COLLC_STATS=0"
timeout 120 "$mpiexec" --oversubscribe -n 2 -x "LD_PRELOAD=$prof" "$prog" >"$tmp/alone.out" 2>"$tmp/alone.err" ||
  bad "profiler alone: the run failed"
calls=$(sed -n 's/^profiler: MPI_Allreduce calls=\([0-9]*\)$/\1/p' "$tmp/alone.err")
timeout 120 "${run[@]}" --mca coll_collc_priority 90 -x COLLC_STATS=1 -x "LD_PRELOAD=$prof" "$prog" \
  >"$tmp/profiled.out" 2>"$tmp/profiled.err" || bad "profiled: the run failed"
check profiled
seen=$(sed -n 's/^profiler: MPI_Allreduce calls=\([0-9]*\)$/\1/p' "$tmp/profiled.err")
[ -n "$calls" ] && [ "$calls" -gt 0 ] && [ -n "$seen" ] && [ "$seen" -ge "$calls" ] ||
  bad "profiled: the profiler counted ${seen:-nothing} allreduces under the component, ${calls:-nothing} alone"
grep -q '^collc: allreduce handled=[1-9]' "$tmp/profiled.err" || bad "profiled: collc served no allreduce"
! grep -q '^collc: warning:' "$tmp/profiled.err" || bad "profiled: collc warned"

if [ $fail != 0 ]; then
  for f in "$tmp"/*.err; do echo "--- $(basename "$f"):" >&2; head -15 "$f" >&2; done
else
  echo "ok: parameters listed; unselected at priority 0; MCA settings, the variable winning; a profiler saw all $calls allreduces while collc served them"
fi
exit $fail
