#!/usr/bin/env bash
# bench/cluster/optimizer-table.sh [NODES] [PPN] [BIN] [ITERS] [TOPOLOGY]: does
# -O2 make topology-aware plans faster or slower on a real network? The
# emulated cluster's answer (docs/cluster.md, "The optimizer question"; as
# root).
#
# Brings up NODES x PPN ranks (default 8 x 1) of TOPOLOGY (default
# topologies/emulated-4x2.yaml) with scripts/cluster, generates multi_leader
# and single_leader (allreduce), pairwise allgather and pairwise
# reduce_scatter_block for the emulated machine, compiles each at -O0 and at
# -O2 (the plan compiled without --topology, so no pass is undone), times
# both with collc-bench (ITERS iterations, default 5: medians) at 64 KiB, 1 MiB
# and 4 MiB, and prints measured and predicted (`collc simulate` on the
# emulated topology) side by side. The work folder is kept when KEEP=DIR
# names one.
set -euo pipefail
nodes=${1:-8} ppn=${2:-1}
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="${3:-$root/build/bin}"
iters="${4:-5}"
topo="${5:-$root/topologies/emulated-4x2.yaml}"
sizes=64K,1M,4M

. "$root/bench/cluster/cluster-up.sh"
mkdir -p "$work/plans"
emulated=$("$cluster" topology)
cp "$emulated" "$work/emulated.yaml"

plan() { # stem collective algorithm
  local stem=$1 coll=$2 alg=$3
  "$bin/collc" gen "$alg" --collective "$coll" --ranks "$p" --topology "$work/emulated.yaml" \
    -o "$work/$stem.yaml"
  for level in 0 2; do
    "$bin/collc" compile "$work/$stem.yaml" -O$level -o "$work/plans/$stem.O$level.cplan"
    "$bin/collc" disasm "$work/plans/$stem.O$level.cplan" -o "$work/plans/$stem.O$level.yaml"
  done
}
plan multi_leader allreduce multi_leader
plan single_leader allreduce single_leader
plan allgather.pairwise allgather pairwise
plan rsb.pairwise reduce_scatter_block pairwise

"$cluster" run --timeout 1800 -- mpirun -np "$p" "$bin/collc-bench" --plan-dir "$work/plans" \
  --sizes "$sizes" --iters "$iters" --warmup 2 --json >"$work/bench.json" 2>"$work/bench.err" ||
  { tail "$work/bench.err" >&2; exit 1; }

python3 - "$bin/collc" "$work" "$nodes" "$ppn" "$(basename "$topo")" <<'EOF'
import json, os, subprocess, sys
collc, work, nodes, ppn, topo = sys.argv[1:6]
got = {}
for line in open(os.path.join(work, "bench.json")):
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    if r.get("plan_us") is None:
        continue
    stem, level = os.path.splitext(os.path.splitext(r["plan"])[0])
    yaml = os.path.join(work, "plans", os.path.splitext(r["plan"])[0] + ".yaml")
    out = subprocess.run([collc, "simulate", yaml, "-O0", "--topology", os.path.join(work, "emulated.yaml"),
                          "--bytes", str(r["bytes"]), "--json"],
                         capture_output=True, text=True, check=True).stdout
    got[(stem, r["bytes"], level)] = (r["plan_us"], json.loads(out)["time"] * 1e6)
print(f"# {nodes} nodes x {ppn} ranks of {topo}: -O0 against -O2, collc-bench medians, "
      "and collc simulate on the emulated topology")
print("| plan | bytes | -O0 measured ms | -O2 measured ms | -O2 ÷ -O0 measured "
      "| -O0 predicted ms | -O2 predicted ms | -O2 ÷ -O0 predicted |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for (stem, b, level) in sorted(got):
    if level != ".O0" or (stem, b, ".O2") not in got:
        continue
    m0, p0 = got[(stem, b, ".O0")]
    m2, p2 = got[(stem, b, ".O2")]
    print(f"| {stem} | {b} | {m0 / 1e3:.2f} | {m2 / 1e3:.2f} | {m2 / m0:.2f} "
          f"| {p0 / 1e3:.2f} | {p2 / 1e3:.2f} | {p2 / p0:.2f} |")
EOF
