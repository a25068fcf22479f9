#!/usr/bin/env bash
# bench/noncommutative-table.sh: a non-commutative user operation on long
# vectors — the order-preserving plans the default table had (recursive
# doubling) and has now (Rabenseifner's halving-doubling, proven
# order-preserving), each against native MPI in the same run (Open MPI, or
# MPICH with MPI=mpich: bench/mpi.sh).
#
# `collc-bench --op noncommutative` is the 2×2 matrix product over uint32
# (MPI_Op_create with commute = 0, combined through MPI_Reduce_local). Prints,
# per rank count, the median plan/native ratio over RUNS runs with its range
# (tools/collc-bench/summarize.py --pivot --markdown).
#   usage: bench/noncommutative-table.sh [BUILD_DIR] [RUNS] [RANKS...]   (default build 3 2 4)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}; runs=${2:-3}; shift $(( $# > 2 ? 2 : $# )) || true
ranks=("$@"); [ ${#ranks[@]} -gt 0 ] || ranks=(2 4)
source "$root/bench/mpi.sh"
mpi_check_ranks "${ranks[@]}"
echo "against native $mpiname"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
for p in "${ranks[@]}"; do
  mkdir -p "$work/p$p"
  for a in recursive_doubling rabenseifner; do
    "$bin/collc" gen "$a" --ranks "$p" | "$bin/collc" compile - -o "$work/p$p/$a.cplan"
  done
  mapfile -t mpi < <(launch "$p")
  out=$work/p$p.jsonl
  for ((i = 0; i < runs; i++)); do
    "${mpi[@]}" "$bin/collc-bench" --plan-dir "$work/p$p" --op noncommutative --json --check \
      --sizes 1M --iters 30 --warmup 3 >> "$out"
    "${mpi[@]}" "$bin/collc-bench" --plan-dir "$work/p$p" --op noncommutative --json --check \
      --sizes 16M --iters 8 --warmup 2 >> "$out"
  done
  echo
  echo "### p = $p, noncommutative 2x2 matrix product ($runs runs; plan_us / native_us, median (min-max))"
  python3 "$root/tools/collc-bench/summarize.py" "$out" --pivot --markdown
done
