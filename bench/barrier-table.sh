#!/usr/bin/env bash
# bench/barrier-table.sh: docs/performance.md's barrier table — the library's
# barrier plans through the C API (collc_barrier, and collc_barrier_init +
# collc_start with --persistent): plan time ÷ native MPI_Barrier time (Open
# MPI, or MPICH with MPI=mpich: bench/mpi.sh) at p = 2 and 4.
#
# For each p it compiles the plans (collc compile), runs collc-bench
# --collective barrier --json RUNS times per form (plan and native
# interleaved in one process: each run is a paired measurement), and prints
# the median ratio over the runs with its range, then native's median time.
#   usage: bench/barrier-table.sh [BUILD_DIR] [RUNS] [RANKS...]   (default build 5 2 4)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}; runs=${2:-5}; shift $(( $# > 2 ? 2 : $# )) || true
ranks=("$@"); [ ${#ranks[@]} -gt 0 ] || ranks=(2 4)
source "$root/bench/mpi.sh"
mpi_check_ranks "${ranks[@]}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

for p in "${ranks[@]}"; do
  mapfile -t mpi < <(launch "$p")
  dir=$work/p$p; mkdir -p "$dir"
  for a in dissemination tree; do
    "$bin/collc" compile "$a" --collective barrier --ranks "$p" -o "$dir/$a.cplan"
  done
  iters=$(( p <= 2 ? 5000 : 1000 ))
  for ((i = 0; i < runs; i++)); do
    for form in blocking persistent; do
      flag=(); [ "$form" = blocking ] || flag=(--persistent)
      "${mpi[@]}" "$bin/collc-bench" --plan-dir "$dir" --collective barrier --json \
        --sizes 0 --iters "$iters" --warmup 100 "${flag[@]}" |
        sed "s/^{/{\"form\": \"$form\", /" >> "$work/runs.jsonl"
    done
  done
done

python3 - "$work/runs.jsonl" "$mpiname" <<'PY'
import json, statistics, sys
from collections import defaultdict

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ratios, natives, order = defaultdict(list), defaultdict(list), []
for r in rows:
    if r.get("error") or not r.get("native_us"):
        continue
    key = (r["ranks"], r["algorithm"].split("/")[-1])
    if key not in order:
        order.append(key)
    ratios[key + (r["form"],)].append(r["plan_us"] / r["native_us"])
    natives[key + (r["form"],)].append(r["native_us"])

forms = ["blocking", "persistent"]
runs = max(len(v) for v in ratios.values())
print("plan ÷ native %s MPI_Barrier, median of %d runs (min-max); native's median time in µs"
      " after each\n" % (sys.argv[2], runs))
print("| p | plan | " + " | ".join(forms) + " |")
print("|---|---|" + "---|" * len(forms))
for key in order:
    cells = []
    for f in forms:
        v = ratios.get(key + (f,))
        cells.append("—" if not v else "%.2f (%.2f-%.2f) %.3g µs" % (
            statistics.median(v), min(v), max(v), statistics.median(natives[key + (f,)])))
    print("| %d | %s | %s |" % (key[0], key[1], " | ".join(cells)))
PY
