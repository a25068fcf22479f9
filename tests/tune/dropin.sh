#!/usr/bin/env bash
# tests/tune/dropin.sh COLLC COMPARE MPIEXEC LIB PROGRAM TOPOLOGY NODEMAP WORK
# Tunes allreduce for 4 ranks on TOPOLOGY (2 nodes x 2 ranks, an explicit
# map), then runs PROGRAM (tests/dropin/collectives.c: every datatype,
# operation and count) under the drop-in with the written bundle and rules,
# the 2 "nodes" emulated on this machine by COLLC_NODE_MAP=NODEMAP (shared
# memory inside each, MPI across): every result must be native Open MPI's,
# with no warning, and every plan of the bundle must have served calls.
# Then the bundle alone (without the rules) the same way.
set -euo pipefail
collc=$1 compare=$2 mpiexec=$3 lib=$4 prog=$5 topo=$6 nodemap=$7 work=$8
rm -rf "$work"
mkdir -p "$work"
cd "$work"
# Segments 1 and 4 only: the ranges then fall so that each holds sizes the
# program calls with (4 B .. 28 B, 4 KiB, 256 KiB of ints), as the check of
# every plan's use below needs.
"$collc" tune --topology "$topo" --ranks 4 --sizes 8..1M --segments 1,4 --budget none --quiet \
  -o tuned.cbundle --rules tuned.rules.yaml --report tuned.md
"$collc" verify tuned.cbundle >verify.out || { cat verify.out; exit 1; }
# One --stderr pattern per entry: "tuned.cbundle#I (allreduce NAME, 4 ranks) used=N>0".
used=()
while read -r i name; do
  used+=(--stderr "tuned.cbundle#$i \\(allreduce $name, 4 ranks\\) used=[1-9]")
done < <("$collc" bundle --list tuned.cbundle | sed -n 's/^  \([0-9]*\): bytes [^ ]* *\([^ ]*\) .*/\1 \2/p')
[ ${#used[@]} -ge 4 ] || { echo "FAIL: the bundle has fewer than 2 plans" >&2; exit 1; }
common=(--mpiexec "$mpiexec" --lib "$lib" --np 4 --warnings 0
        --env "COLLC_NODE_MAP=$nodemap" --env COLLC_STATS=1
        --stderr "^collc: allreduce handled=[1-9]" "${used[@]}")
bash "$compare" "${common[@]}" --env "COLLC_PLAN_PATH=$work/tuned.cbundle" \
  --env "COLLC_RULES=$work/tuned.rules.yaml" -- "$prog"
bash "$compare" "${common[@]}" --env "COLLC_PLAN_PATH=$work/tuned.cbundle" -- "$prog"
