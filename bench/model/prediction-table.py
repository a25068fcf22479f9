#!/usr/bin/env python3
# bench/model/prediction-table.py COLLC TOPOLOGY WORK: the table of
# prediction-table.sh from its work folder (the plans as YAML and
# collc-bench's bench.json): collc simulate on TOPOLOGY against the measured
# times, and how often the simulator's choice is the measured fastest.
# A fourth argument names collc-bench's JSON when it is not WORK/bench.json.
import json, subprocess, sys, os
collc, topo, work = sys.argv[1:4]
bench = sys.argv[4] if len(sys.argv) > 4 else os.path.join(work, "bench.json")
rows = []
for line in open(bench):
    line = line.strip()
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    if r.get("plan_us") is None:
        continue
    yaml = os.path.join(work, os.path.splitext(os.path.basename(r["plan"]))[0] + ".yaml")
    out = subprocess.run([collc, "simulate", yaml, "-O0", "--topology", topo, "--bytes", str(r["bytes"]),
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
choices = []
for key, g in sorted(groups.items()):
    if len(g) < 2:
        continue
    total += 1
    best_measured = min(m for _, _, m in g)
    pick = min(g, key=lambda x: x[1])
    exact += pick[2] == best_measured
    near += pick[2] <= 1.10 * best_measured
    best = min(g, key=lambda x: x[2])
    choices.append((key, best, pick))
print()
print("| collective | bytes | measured fastest | its µs | simulator's pick | its measured µs | pick ÷ fastest |")
print("|---|---:|---|---:|---|---:|---:|")
for (c, b), best, pick in choices:
    print(f"| {c} | {b} | {best[0]} | {best[2]:.1f} | {pick[0]} | {pick[2]:.1f} | {pick[2] / best[2]:.2f} |")
print()
print(f"rows: {len(rows)}; measured/predicted: median {ratios[len(ratios) // 2]:.2f}, "
      f"10th percentile {ratios[len(ratios) // 10]:.2f}, 90th percentile {ratios[9 * len(ratios) // 10]:.2f}")
print(f"choices (collective x size with 2+ plans): {total}; the simulator's fastest is the "
      f"measured fastest in {exact} ({100 * exact / total:.0f} %), within 10 % of it in {near} "
      f"({100 * near / total:.0f} %)")
