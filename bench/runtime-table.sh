#!/usr/bin/env bash
# bench/runtime-table.sh: the runtime tables of docs/performance.md, reproducibly.
#
# Compiles the five allreduce plans for each rank count at -O0 and -O2 (the
# default of `collc compile`), runs collc-bench RUNS times against native
# Open MPI (blocking calls, then persistent requests), and prints, per
# (level, mode), the median plan/native ratio over the runs with its range
# (tools/collc-bench/summarize.py --pivot --markdown).
#   usage: bench/runtime-table.sh [BUILD_DIR] [RUNS] [RANKS...]   (default build 5 2 4)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}; runs=${2:-5}; shift $(( $# > 2 ? 2 : $# )) || true
ranks=("$@"); [ ${#ranks[@]} -gt 0 ] || ranks=(2 4)
bin=$build/bin
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

for p in "${ranks[@]}"; do
  for level in 0 2; do
    mkdir -p "$work/p$p-O$level"
    for a in binary_tree recursive_doubling rabenseifner binary_blocks ring; do
      "$bin/collc" gen "$a" --ranks "$p" | "$bin/collc" compile - -O$level -o "$work/p$p-O$level/$a.cplan"
    done
  done
done

for p in "${ranks[@]}"; do
  # As many ranks as cores: busy polling. More: oversubscribe and yield.
  mpi=(mpirun -np "$p")
  [ "$p" -gt "$(nproc)" ] && mpi+=(--oversubscribe --mca mpi_yield_when_idle 1)
  for level in 0 2; do
    for mode in blocking persistent; do
      extra=(); [ $mode = persistent ] && extra=(--persistent)
      out=$work/p$p-O$level-$mode.jsonl
      for ((i = 0; i < runs; i++)); do
        dir=$work/p$p-O$level
        "${mpi[@]}" "$bin/collc-bench" --plan-dir "$dir" --json --sizes 8,64K --iters 500 --warmup 20 "${extra[@]}" >> "$out"
        "${mpi[@]}" "$bin/collc-bench" --plan-dir "$dir" --json --sizes 1M --iters 100 --warmup 5 "${extra[@]}" >> "$out"
        "${mpi[@]}" "$bin/collc-bench" --plan-dir "$dir" --json --sizes 16M --iters 20 --warmup 3 "${extra[@]}" >> "$out"
      done
      echo
      echo "### p = $p, -O$level, $mode ($runs runs; plan_us / native_us, median (min-max))"
      python3 "$root/tools/collc-bench/summarize.py" "$out" --pivot --markdown
    done
  done
done
