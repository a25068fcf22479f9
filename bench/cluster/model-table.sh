#!/usr/bin/env bash
# bench/cluster/model-table.sh NODES PPN [BIN] [ITERS] [TOPOLOGY]: the
# simulator against real messages on the emulated cluster (docs/performance.md,
# "The model on the emulated cluster"; as root).
#
# Brings up NODES x PPN ranks of TOPOLOGY (default topologies/emulated-4x2.yaml)
# with scripts/cluster, calibrates it (`collc calibrate --topology`: the
# emulated machine's levels, their costs measured), compiles every allreduce of
# the library that accepts the rank count, plus the composed ones with their
# defaults and two other inner choices, at -O2 for the calibrated topology,
# times them all with collc-bench (ITERS iterations, default 5: medians) at
# 8 B .. 16 MiB, and compares with `collc simulate` of the same compiled plans
# on the calibrated topology (bench/model/prediction-table.py): every row,
# measured ÷ predicted (median, 10th and 90th percentiles) and how often the
# simulator's pick is the measured fastest or within 10 % of it. The work
# folder is kept when KEEP=DIR names one.
set -euo pipefail
nodes=$1 ppn=$2
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="${3:-$root/build/bin}"
iters="${4:-5}"
topo="${5:-$root/topologies/emulated-4x2.yaml}"
sizes=8,64,256,1K,4K,16K,64K,256K,1M,4M,16M

. "$root/bench/cluster/cluster-up.sh"
emulated=$("$cluster" topology)
echo "calibrating ..." >&2
"$cluster" run --timeout 600 -- mpirun -np "$p" "$bin/collc" calibrate --topology "$emulated" \
  --max-bytes 16M -o "$work/calibrated.yaml" >"$work/calibrate.log" 2>&1 ||
  { cat "$work/calibrate.log" >&2; exit 1; }
grep -E '^(node|network|rack|system) ' "$work/calibrate.log" >&2 || true

# The candidates: NAME [--set K=V ...] -> FILE.cplan
mkdir -p "$work/plans"
compile() { # file-stem algorithm args...
  local stem=$1; shift
  if "$bin/collc" compile "$@" --ranks "$p" --topology "$work/calibrated.yaml" \
       -o "$work/plans/$stem.cplan" 2>"$work/$stem.err"; then
    "$bin/collc" disasm "$work/plans/$stem.cplan" -o "$work/plans/$stem.yaml"
  else
    echo "not compiled: $stem: $(head -1 "$work/$stem.err")" >&2
  fi
}
for alg in $("$bin/collc" list | awk '$1 == "allreduce" {print $2}'); do
  case $alg in
    multi_leader|n_level)
      compile "$alg" "$alg"
      compile "$alg.inter-ring" "$alg" --set inter=ring
      compile "$alg.inter-rd" "$alg" --set inter=recursive_doubling ;;
    single_leader)
      compile "$alg" "$alg"
      compile "$alg.inter-ring" "$alg" --set inter=ring
      compile "$alg.inter-rd" "$alg" --set inter=recursive_doubling ;;
    *) compile "$alg" "$alg" ;;
  esac
done
echo "collc-bench: $(ls "$work"/plans/*.cplan | wc -l) plans at $p ranks, sizes $sizes, $iters iterations" >&2
"$cluster" run --timeout 3600 -- mpirun -np "$p" "$bin/collc-bench" --plan-dir "$work/plans" \
  --sizes "$sizes" --iters "$iters" --warmup 2 --json >"$work/bench.json" 2>"$work/bench.err" ||
  { tail "$work/bench.err" >&2; exit 1; }
"$cluster" status | grep -E 'deliveries|dropped' >&2 || true
echo "# $nodes nodes x $ppn ranks of $(basename "$topo"), calibrated: $(grep -E '^(network|rack|system) ' "$work/calibrate.log" | awk '{printf "%s alpha %s us, %.0f MB/s; ", $1, $3, 1000/$6}')"
python3 "$root/bench/model/prediction-table.py" "$bin/collc" "$work/calibrated.yaml" "$work/plans" \
  "$work/bench.json"
