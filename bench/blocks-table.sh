#!/usr/bin/env bash
# bench/blocks-table.sh: docs/performance.md's table for the collectives that
# move blocks — alltoall, gather and scatter through the C API: plan time ÷
# native MPI time (Open MPI, or MPICH with MPI=mpich: bench/mpi.sh) for every
# library algorithm of each, root 0, at p = 2 and 4 and 8p B / 64 KiB / 1 MiB /
# 16 MiB.
#
# For each p it compiles the plans (collc compile, -O2), runs collc-bench
# --collective C --json RUNS times (plan and native interleaved in one process:
# each run is a paired measurement), and prints the median ratio over the runs
# with its range, then native's median time. Sizes are collc-bench's: each
# rank's whole buffer for alltoall, the root's for gather and scatter; the
# smallest is one double per block (8p bytes).
#   usage: bench/blocks-table.sh [BUILD_DIR] [RUNS] [RANKS...]   (default build 3 2 4)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}; runs=${2:-3}; shift $(( $# > 2 ? 2 : $# )) || true
ranks=("$@"); [ ${#ranks[@]} -gt 0 ] || ranks=(2 4)
source "$root/bench/mpi.sh"
mpi_check_ranks "${ranks[@]}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

declare -A algs=(
  [alltoall]="pairwise bruck linear"
  [gather]="binomial linear"
  [scatter]="binomial linear"
)
calls=(alltoall gather scatter)
for p in "${ranks[@]}"; do
  mapfile -t mpi < <(launch "$p")
  for c in "${calls[@]}"; do
    dir=$work/p$p-$c; mkdir -p "$dir"
    for a in ${algs[$c]}; do
      "$bin/collc" compile "$a" --collective "$c" --ranks "$p" -o "$dir/$a.cplan"
    done
    for ((i = 0; i < runs; i++)); do
      "${mpi[@]}" "$bin/collc-bench" --plan-dir "$dir" --collective "$c" --json \
        --sizes "$((8 * p)),64K" --iters 200 --warmup 10 >> "$work/runs.jsonl"
      "${mpi[@]}" "$bin/collc-bench" --plan-dir "$dir" --collective "$c" --json \
        --sizes 1M --iters 50 --warmup 3 >> "$work/runs.jsonl"
      "${mpi[@]}" "$bin/collc-bench" --plan-dir "$dir" --collective "$c" --json \
        --sizes 16M --iters 10 --warmup 2 >> "$work/runs.jsonl"
    done
  done
done

python3 - "$work/runs.jsonl" "$mpiname" <<'PY'
import json, statistics, sys
from collections import defaultdict

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ratios = defaultdict(list)   # (ranks, call, algorithm, column) -> ratios
natives = defaultdict(list)
order = []
for r in rows:
    if r.get("error") or not r.get("native_us"):
        continue
    n = r["bytes"]
    column = "8p B" if n < 1024 else "64 KiB" if n < (1 << 20) else "1 MiB" if n < (16 << 20) else "16 MiB"
    alg = r["algorithm"].split("/")[-1]
    key = (r["ranks"], r["collective"], alg)
    if key not in order:
        order.append(key)
    ratios[key + (column,)].append(r["plan_us"] / r["native_us"])
    natives[key + (column,)].append(r["native_us"])

columns = ["8p B", "64 KiB", "1 MiB", "16 MiB"]
runs = max(len(v) for v in ratios.values())
print("plan ÷ native %s, median of %d runs (min-max), root 0; native %s's median time in µs"
      " after each\n" % (sys.argv[2], runs, sys.argv[2]))
print("| p | collective | plan | " + " | ".join(columns) + " |")
print("|---|---|---|" + "---|" * len(columns))
for key in order:
    cells = []
    for col in columns:
        v = ratios.get(key + (col,))
        cells.append("—" if not v else "%.2f (%.2f-%.2f) %.4g µs" % (
            statistics.median(v), min(v), max(v), statistics.median(natives[key + (col,)])))
    print("| %d | %s | %s | %s |" % (key[0], key[1], key[2], " | ".join(cells)))
PY
