#!/bin/bash
# bench/model/prediction-table.sh BIN TOPOLOGY [ITERS]: the simulator against
# collc-bench at p = 2 (docs/performance.md, "Machine model").
#
# Every library algorithm that accepts p = 2 is compiled (-O2, root 0) and
# disassembled back to YAML, so the simulator sees exactly the plan the
# runtime runs; collc-bench times all of them at 8 B .. 32 MiB (8·4^k) and
# 64 MiB of doubles (sum); collc simulate predicts each on TOPOLOGY. Prints a
# markdown table (predicted, measured, measured/predicted) and, per
# collective and size, whether the plan the simulator ranks fastest is the
# measured fastest or within 10 % of it. p = 2 runs without yield_when_idle
# (one rank per core).
set -euo pipefail
bin=$1 topo=$2 iters=${3:-10}
# The plans run over the transport COLLC_TRANSPORT names (default: the
# runtime's, shared memory); calibrate TOPOLOGY with the same one.
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
mpirun -np 2 "$bin/collc-bench" \
  --plan-dir "$work" --sizes "$sizes" --iters "$iters" --warmup 2 --json > "$work/bench.json"
python3 "$root/bench/model/prediction-table.py" "$bin/collc" "$topo" "$work"
