#!/bin/bash
# bench/model/prediction-table.sh BIN TOPOLOGY [ITERS]: the simulator against
# collc-bench at p = 2 (README, "Prediction against measurement").
#
# Every library algorithm that accepts p = 2 is compiled (-O2, root 0) and
# disassembled back to YAML, so the simulator sees exactly the plan the
# runtime runs; collc-bench times all of them at 8 B .. 32 MiB (8·4^k) and
# 64 MiB of doubles (sum); collc simulate predicts each on TOPOLOGY. Prints a
# markdown table (predicted, measured, measured/predicted) and, per
# collective and size, whether the plan the simulator ranks fastest is the
# measured fastest or within 10 % of it.
set -euo pipefail
bin=$1 topo=$2 iters=${3:-10}
root="$(cd "$(dirname "$0")/../.." && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for f in "$root"/schedules/*.calgo; do
  name=$(basename "$f" .calgo)
  "$bin/collc" compile "$f" --ranks 2 -o "$work/$name.cplan" 2>/dev/null || continue
  "$bin/collc" disasm "$work/$name.cplan" -o "$work/$name.yaml"
done
sizes=8,32,128,512,2K,8K,32K,128K,512K,2M,8M,32M,64M
echo "collc-bench: $(ls "$work"/*.cplan | wc -l) plans, sizes $sizes, $iters iterations" >&2
mpirun -np 2 --oversubscribe --mca mpi_yield_when_idle 1 "$bin/collc-bench" \
  --plan-dir "$work" --sizes "$sizes" --iters "$iters" --warmup 2 --json > "$work/bench.json"
python3 - "$bin/collc" "$topo" "$work" <<'PY'
import json, subprocess, sys, os
collc, topo, work = sys.argv[1:4]
rows = []
for line in open(os.path.join(work, "bench.json")):
    line = line.strip()
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    if r.get("plan_us") is None:
        continue
    yaml = os.path.splitext(r["plan"])[0] + ".yaml"
    out = subprocess.run([collc, "simulate", yaml, "--topology", topo, "--bytes", str(r["bytes"]),
                          "--json"], capture_output=True, text=True, check=True).stdout
    pred = json.loads(out)["time"] * 1e6
    name = os.path.basename(os.path.splitext(r["plan"])[0])
    rows.append((r["collective"], name, r["bytes"], pred, r["plan_us"]))
print("| collective | plan | bytes | predicted_us | measured_us | measured/predicted |")
print("|---|---|---:|---:|---:|---:|")
for c, n, b, p, m in rows:
    print(f"| {c} | {n} | {b} | {p:.2f} | {m:.2f} | {m / p if p > 0 else float('inf'):.2f} |")
ratios = sorted(m / p for _, _, _, p, m in rows if p > 0)
groups = {}
for c, n, b, p, m in rows:
    groups.setdefault((c, b), []).append((n, p, m))
exact = near = total = 0
for key, g in sorted(groups.items()):
    if len(g) < 2:
        continue
    total += 1
    best_measured = min(m for _, _, m in g)
    pick = min(g, key=lambda x: x[1])
    exact += pick[2] == best_measured
    near += pick[2] <= 1.10 * best_measured
print()
print(f"rows: {len(rows)}; measured/predicted: median {ratios[len(ratios) // 2]:.2f}, "
      f"10th percentile {ratios[len(ratios) // 10]:.2f}, 90th percentile {ratios[9 * len(ratios) // 10]:.2f}")
print(f"choices (collective x size with 2+ plans): {total}; the simulator's fastest is the "
      f"measured fastest in {exact} ({100 * exact / total:.0f} %), within 10 % of it in {near} "
      f"({100 * near / total:.0f} %)")
PY
