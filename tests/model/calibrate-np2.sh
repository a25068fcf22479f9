#!/bin/sh
# tests/model/calibrate-np2.sh COLLC MPIEXEC OUT: collc calibrate at np 2, with
# each transport, writes a topology with a fitted node level that collc
# simulate reads; a bad --transport is a usage error.
set -eu
collc=$1 mpiexec=$2 out=$3
for via in collc mpi; do
  f=$out.$via.yaml
  rm -f "$f"
  "$mpiexec" -np 2 --oversubscribe --mca mpi_yield_when_idle 1 \
    "$collc" calibrate -o "$f" --transport $via --max-bytes 64K --name calibrated \
    > "$f.log" 2> "$f.err"
  grep -q '^node  *alpha ' "$f.log" || { echo "$via: no fit for the node level"; cat "$f.log" "$f.err"; exit 1; }
  grep -q 'collc calibrate: 2 ranks on 1 node(s)' "$f.err" || { echo "$via: no progress"; cat "$f.err"; exit 1; }
  grep -q 'collc calibrate: node:     65536 B ' "$f.err" || { echo "$via: 64K not timed"; cat "$f.err"; exit 1; }
  grep -q '^name: "calibrated"$' "$f" || { echo "$via: no topology written"; cat "$f"; exit 1; }
  grep -q "^description: \"measured by collc calibrate --transport $via: 2 ranks" "$f" ||
    { echo "$via: the description does not name the transport"; cat "$f"; exit 1; }
  "$collc" simulate ring --ranks 2 --topology "$f" --bytes 1K > "$f.sim"
  grep -q '^predicted: ' "$f.sim" || { echo "$via: simulate did not read it back"; cat "$f.sim"; exit 1; }
  echo "ok $via: $(grep '^predicted' "$f.sim")"
done
if "$collc" calibrate --transport tcp > "$out.bad" 2>&1; then
  echo "--transport tcp accepted"; exit 1
fi
grep -q "transport" "$out.bad" || { echo "no message for --transport tcp"; cat "$out.bad"; exit 1; }
