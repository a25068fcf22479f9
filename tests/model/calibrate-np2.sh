#!/bin/sh
# tests/model/calibrate-np2.sh COLLC MPIEXEC OUT: collc calibrate at np 2
# writes a topology with a fitted node level that collc simulate reads.
set -eu
collc=$1 mpiexec=$2 out=$3
rm -f "$out"
"$mpiexec" -np 2 --oversubscribe --mca mpi_yield_when_idle 1 \
  "$collc" calibrate -o "$out" --max-bytes 64K --name calibrated > "$out.log" 2> "$out.err"
grep -q '^node  *alpha ' "$out.log" || { echo "no fit for the node level"; cat "$out.log"; exit 1; }
grep -q 'collc calibrate: 2 ranks on 1 node(s)' "$out.err" || { echo "no progress"; cat "$out.err"; exit 1; }
grep -q '^name: "calibrated"$' "$out" || { echo "no topology written"; cat "$out"; exit 1; }
"$collc" simulate ring --ranks 2 --topology "$out" --bytes 1K > "$out.sim"
grep -q '^predicted: ' "$out.sim" || { echo "simulate did not read it back"; cat "$out.sim"; exit 1; }
echo "ok: $(grep '^predicted' "$out.sim")"
