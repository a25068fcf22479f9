#!/bin/bash
# bench/tune/baselines-table.sh BIN [BUDGET_SECONDS]: the tuned choice against
# Open MPI 4.1's and MPICH's default allreduce on the simulator, for the
# shipped topologies (docs/performance.md, "Tuned against the defaults of Open MPI
# and MPICH"): this machine (calibrated) at 2 ranks, the 64 x 32 cluster at 256
# ranks (8 nodes) and the 3-level cluster at 1024 (2 racks of 16 nodes).
set -euo pipefail
bin=$1 budget=${2:-120}
root="$(cd "$(dirname "$0")/../.." && pwd)"
for case in "this-machine 2" "cluster-64x32 256" "cluster-3level 1024"; do
  read -r topo p <<<"$case"
  "$bin/collc-tune-baselines" "$root/topologies/$topo.yaml" "$p" "$budget" 2>/dev/null
done
