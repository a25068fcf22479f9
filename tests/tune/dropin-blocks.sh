#!/usr/bin/env bash
# tests/tune/dropin-blocks.sh COLLC COMPARE MPIEXEC LIB PROGRAM TOPOLOGY NODEMAP WORK
# Tunes alltoall for 4 ranks on TOPOLOGY (2 nodes x 2 ranks, an explicit
# map), then runs PROGRAM (tests/dropin/blocks.c: alltoall, gather and
# scatter, every form, in place, other datatypes) under the drop-in with the
# written bundle and rules: every result must be native Open MPI's, with no
# warning, the bundle's plans must serve the alltoalls, and the rules file must
# be read without complaint.
set -euo pipefail
collc=$1 compare=$2 mpiexec=$3 lib=$4 prog=$5 topo=$6 nodemap=$7 work=$8
rm -rf "$work"
mkdir -p "$work"
cd "$work"
"$collc" tune --collective alltoall --topology "$topo" --ranks 4 --sizes 8..1M --segments 1 \
  --budget none --quiet -o tuned.cbundle --rules tuned.rules.yaml
"$collc" verify tuned.cbundle >verify.out || { cat verify.out; exit 1; }
rules=$(cat tuned.rules.yaml)
grep -q "collective: alltoall" <<<"$rules" || { echo "FAIL: no alltoall rule" >&2; exit 1; }
bash "$compare" --mpiexec "$mpiexec" --lib "$lib" --np 4 --warnings 0 \
  --env "COLLC_NODE_MAP=$nodemap" --env COLLC_STATS=1 \
  --env "COLLC_PLAN_PATH=$work/tuned.cbundle" --env "COLLC_RULES=$work/tuned.rules.yaml" \
  --expect "^all cases right$" \
  --stderr "^collc: alltoall handled=[1-9][0-9]* fallback=0$" \
  --stderr "tuned.cbundle#[0-9]+ \\(alltoall [a-z_.0-9]+, 4 ranks\\) used=[1-9]" -- "$prog"
echo "tune.dropin.blocks: ok"
