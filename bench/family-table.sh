#!/usr/bin/env bash
# bench/family-table.sh: docs/performance.md's table for the rest of the family —
# plan time ÷ native MPI time (Open MPI, or MPICH with MPI=mpich: bench/mpi.sh), per collective, for the plan the drop-in's
# default table picks (docs/dropin.md, "Default decision table: the rest of
# the family"), at p = 2 and 4 and 8 B / 64 KiB / 1 MiB / 16 MiB.
#
# For each p it compiles those plans (collc gen | collc compile, -O2), runs
# collc-bench --collective C --json RUNS times (plan and native interleaved in
# one process: each run is a paired measurement), and prints the median ratio
# over the runs with its range. Sizes are the whole vector (collc-bench
# --sizes): the reduce-scatters' input, allgather's result; for those three
# the 8 B column is one double per rank (8p bytes in all), since a smaller
# vector has no element for some ranks.
#   usage: bench/family-table.sh [BUILD_DIR] [RUNS] [RANKS...]   (default build 3 2 4)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}; runs=${2:-3}; shift $(( $# > 2 ? 2 : $# )) || true
ranks=("$@"); [ ${#ranks[@]} -gt 0 ] || ranks=(2 4)
source "$root/bench/mpi.sh"
mpi_check_ranks "${ranks[@]}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

# The default table's choices for p = 2, 4 (p a power of two below 8) and a
# commutative predefined op (MPI_SUM on doubles), by collective:
# "algorithm:from-bytes ...".
declare -A choice=(
  [reduce_scatter_block]="recursive_halving:0"
  [reduce_scatter]="recursive_halving:0"
  [scan]="recursive_doubling:0"
  [exscan]="recursive_doubling:0"
  [allgather]="recursive_doubling:0 ring:524288"
  [bcast]="binomial:0"
)
for p in "${ranks[@]}"; do
  case $p in 1|2|4) ;; *) echo "family-table.sh: the choices here are for p = 1, 2, 4" >&2; exit 2 ;; esac
done
calls=(reduce_scatter_block reduce_scatter scan exscan allgather bcast)
planColl() { [ "$1" = reduce_scatter ] && echo reduce_scatter_block || echo "$1"; }

for p in "${ranks[@]}"; do
  mapfile -t mpi < <(launch "$p")
  for c in "${calls[@]}"; do
    dir=$work/p$p-$c; mkdir -p "$dir"
    for entry in ${choice[$c]}; do
      a=${entry%%:*}
      "$bin/collc" gen "$a" --collective "$(planColl "$c")" --ranks "$p" |
        "$bin/collc" compile - -o "$dir/$a.cplan"
    done
    small=8
    case $c in reduce_scatter*|allgather) small=$((8 * p)) ;; esac
    for ((i = 0; i < runs; i++)); do
      "${mpi[@]}" "$bin/collc-bench" --plan-dir "$dir" --collective "$c" --json \
        --sizes "$small,64K" --iters 200 --warmup 10 >> "$work/runs.jsonl"
      "${mpi[@]}" "$bin/collc-bench" --plan-dir "$dir" --collective "$c" --json \
        --sizes 1M --iters 50 --warmup 3 >> "$work/runs.jsonl"
      "${mpi[@]}" "$bin/collc-bench" --plan-dir "$dir" --collective "$c" --json \
        --sizes 16M --iters 10 --warmup 2 >> "$work/runs.jsonl"
    done
  done
done

choices=$(for c in "${calls[@]}"; do echo "$c ${choice[$c]}"; done)
python3 - "$work/runs.jsonl" "$choices" "$mpiname" <<'EOF'
import json, statistics, sys
from collections import defaultdict

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
choice = {}
for line in sys.argv[2].splitlines():
    call, *entries = line.split()
    choice[call] = [(e.split(":")[0], int(e.split(":")[1])) for e in entries]

def picked(call, nbytes):
    alg = None
    for a, start in choice[call]:
        if nbytes >= start:
            alg = a
    return alg

ratios = defaultdict(list)  # (ranks, call, column) -> ratios
natives = defaultdict(list)  # (ranks, call, column) -> native µs

for r in rows:
    if r.get("error") or not r.get("native_us"):
        continue
    call, n = r["collective"], r["bytes"]
    column = "8 B" if n < 1024 else "64 KiB" if n < (1 << 20) else "1 MiB" if n < (16 << 20) else "16 MiB"
    if r["algorithm"] != picked(call, n):
        continue
    ratios[(r["ranks"], call, column)].append(r["plan_us"] / r["native_us"])
    natives[(r["ranks"], call, column)].append(r["native_us"])

columns = ["8 B", "64 KiB", "1 MiB", "16 MiB"]

def plans(call):
    return "; ".join(a if start == 0 else "%s from %d KiB" % (a, start >> 10)
                     for a, start in choice[call])

runs = max(len(v) for v in ratios.values())
print("plan ÷ native %s, median of %d runs (min-max), for the plan the default table picks;"
      " native %s's median time in µs after each\n" % (sys.argv[3], runs, sys.argv[3]))
print("| p | collective | plan | " + " | ".join(columns) + " |")
print("|---|---|---|" + "---|" * len(columns))
for p in sorted({k[0] for k in ratios}):
    for call in choice:
        cells = []
        for col in columns:
            v = ratios.get((p, call, col))
            cells.append("—" if not v else "%.2f (%.2f-%.2f) %.4g µs" % (
                statistics.median(v), min(v), max(v), statistics.median(natives[(p, call, col)])))
        print("| %d | %s | %s | %s |" % (p, call, plans(call), " | ".join(cells)))
EOF
