#!/usr/bin/env bash
# bench/churn-table.sh: communicators that come and go (bench/churn/churn.c)
# natively, under the drop-in (shared memory after a communicator's first 16 calls,
# COLLC_SHM_AFTER's default), under the drop-in with COLLC_SHM_AFTER=0
# (shared memory from the first call) and with COLLC_TRANSPORT=mpi,
# interleaved in one session (Open MPI, or MPICH with MPI=mpich: bench/mpi.sh).
# Prints per rank count the median over RUNS runs (min-max) of microseconds
# per iteration of each mode (dup, split: a communicator made, used for an
# allreduce, an iallreduce and a bcast, and freed; reuse: one call on a
# communicator used 100,000 times) and the drop-in's ratio to native.
#   usage: bench/churn-table.sh [BUILD_DIR] [RUNS] [RANKS...]   (default build 5 2 4)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}; runs=${2:-5}; shift $(( $# > 2 ? 2 : $# )) || true
ranks=("$@"); [ ${#ranks[@]} -gt 0 ] || ranks=(2 4)
source "$root/bench/mpi.sh"
mpi_check_ranks "${ranks[@]}"
lib=$build/lib/libcollc_mpi.so
[ "$MPI" = mpich ] && lib=$build/lib/mpich/libcollc_mpi.so
[ -x "$bin/collc-churn" ] && [ -f "$lib" ] || { echo "build collc-churn and $lib first" >&2; exit 2; }
echo "against native $mpiname"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
for p in "${ranks[@]}"; do
  for ((i = 0; i < runs; i++)); do
    for how in native dropin dropin-eager dropin-mpi; do
      env=()
      [ $how != native ] && env+=("LD_PRELOAD=$lib")
      [ $how = dropin-eager ] && env+=(COLLC_SHM_AFTER=0)
      [ $how = dropin-mpi ] && env+=(COLLC_TRANSPORT=mpi)
      mapfile -t mpi < <(launch "$p" "${env[@]}")
      timeout 600 "${mpi[@]}" "$bin/collc-churn" 200 100000 |
        awk -v how=$how '{ print how, $1, $2 }' >> "$work/p$p"
    done
  done
  echo
  echo "### p = $p ($runs runs; µs per iteration, median (min-max); ratio: median of drop-in ÷ median of native)"
  python3 - "$work/p$p" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    how, mode, us = line.split()
    rows.setdefault((mode, how), []).append(float(us))
def cell(v):
    return f"{statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f})"
print("| mode | native | drop-in | ratio | COLLC_SHM_AFTER=0 | ratio | COLLC_TRANSPORT=mpi | ratio |")
print("|---|---|---|---|---|---|---|---|")
med = statistics.median
for mode in ("dup", "split", "reuse"):
    n, *rest = (rows.get((mode, h), [float("nan")])
                for h in ("native", "dropin", "dropin-eager", "dropin-mpi"))
    print(f"| {mode} | {cell(n)} | " + " | ".join(f"{cell(v)} | {med(v) / med(n):.2f}" for v in rest) + " |")
PY
done
