#!/usr/bin/env bash
# bench/userop-table.sh: allreduce with a user-defined operation at every size,
# each order-preserving library algorithm (and, for a commutative one, the
# rest) against native MPI in the same run (Open MPI, or MPICH with
# MPI=mpich: bench/mpi.sh).
#
# Two user operations (collc-bench --op): `noncommutative`, the 2×2 matrix
# product over uint32 on a contiguous derived datatype (commute = 0), and
# `usersum`, MPI_SUM on double as a user operation (commute = 1). Every
# combine goes through MPI_Reduce_local. Prints, per rank count and
# operation, the median plan/native ratio over RUNS runs with its range
# (tools/collc-bench/summarize.py --pivot --markdown). The drop-in's default
# table picks recursive_doubling below 512 B and rabenseifner from there for
# a user operation at p = 2 (docs/dropin.md).
#   usage: bench/userop-table.sh [BUILD_DIR] [RUNS] [RANKS...]   (default build 3 2)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}; runs=${2:-3}; shift $(( $# > 2 ? 2 : $# )) || true
ranks=("$@"); [ ${#ranks[@]} -gt 0 ] || ranks=(2)
source "$root/bench/mpi.sh"
mpi_check_ranks "${ranks[@]}"
echo "against native $mpiname"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
for p in "${ranks[@]}"; do
  for op in noncommutative usersum; do
    dir=$work/p$p-$op
    mkdir -p "$dir"
    algs=(binary_tree recursive_doubling rabenseifner chain linear)
    [ $op = usersum ] && algs+=(ring binary_blocks)
    for a in "${algs[@]}"; do
      "$bin/collc" gen "$a" --ranks "$p" | "$bin/collc" compile - -o "$dir/$a.cplan"
    done
    mapfile -t mpi < <(launch "$p")
    out=$dir.jsonl
    for ((i = 0; i < runs; i++)); do
      "${mpi[@]}" "$bin/collc-bench" --plan-dir "$dir" --op $op --json --check \
        --sizes 16,512,4K,64K --iters 200 --warmup 20 >> "$out"
      "${mpi[@]}" "$bin/collc-bench" --plan-dir "$dir" --op $op --json --check \
        --sizes 1M,4M --iters 20 --warmup 3 >> "$out"
      "${mpi[@]}" "$bin/collc-bench" --plan-dir "$dir" --op $op --json --check \
        --sizes 16M,64M --iters 4 --warmup 1 >> "$out"
    done
    echo
    echo "### p = $p, $op ($runs runs; plan_us / native_us, median (min-max))"
    python3 "$root/tools/collc-bench/summarize.py" "$out" --pivot --markdown
  done
done
