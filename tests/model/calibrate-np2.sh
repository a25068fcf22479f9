#!/bin/sh
# tests/model/calibrate-np2.sh COLLC MPIEXEC OUT [FLAVOUR]: collc calibrate at
# np 2, with each transport, writes a topology with a fitted node level that
# collc simulate reads; a bad --transport is a usage error. FLAVOUR: openmpi
# (default) or mpich, the MPI that COLLC and MPIEXEC are built for.
set -eu
collc=$1 mpiexec=$2 out=$3 flavour=${4:-openmpi}
mpiopts="--oversubscribe --mca mpi_yield_when_idle 1"
[ "$flavour" = mpich ] && mpiopts=""
for via in collc mpi; do
  f=$out.$via.yaml
  rm -f "$f"
  "$mpiexec" -np 2 $mpiopts \
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

# --topology: the file's levels and placement kept, the level two ranks cross
# measured, the others kept (with a note); a file that does not hold 2 ranks
# is refused.
cat > "$out.shape.yaml" <<'YAML'
format: collc-topology/1
name: shape
levels:
  - {name: core, size: 2, latency: 7us, bandwidth: 1GB/s}
  - {name: box, size: 3, latency: 9us, bandwidth: 1GB/s, share: 2}
reduce: 1GB/s
mapping: block
YAML
"$mpiexec" -np 2 $mpiopts \
  "$collc" calibrate --topology "$out.shape.yaml" -o "$out.shaped.yaml" --max-bytes 4K \
  > "$out.shaped.log" 2> "$out.shaped.err" || { cat "$out.shaped.err"; exit 1; }
grep -q '^core  *alpha ' "$out.shaped.log" || { echo "--topology: level core not fitted"; cat "$out.shaped.log"; exit 1; }
grep -q '^box  *no pair of the 2 ranks crosses it: kept from ' "$out.shaped.log" ||
  { echo "--topology: no note for the level nobody crosses"; cat "$out.shaped.log"; exit 1; }
grep -q '^name: "shape"$' "$out.shaped.yaml" || { echo "--topology: name not kept"; cat "$out.shaped.yaml"; exit 1; }
grep -q 'name: "box", size: 3, latency: 9us, bandwidth: 1000MB/s, share: 2' "$out.shaped.yaml" ||
  { echo "--topology: the level nobody crosses changed"; cat "$out.shaped.yaml"; exit 1; }
grep -q 'name: "core", size: 2, latency: 7us' "$out.shaped.yaml" &&
  { echo "--topology: level core kept its cost instead of the measured one"; cat "$out.shaped.yaml"; exit 1; }
sed 's/size: 3/size: 1/; s/size: 2,/size: 1,/; s/, share: 2//' "$out.shape.yaml" > "$out.small.yaml"
if "$mpiexec" -np 2 $mpiopts \
  "$collc" calibrate --topology "$out.small.yaml" --max-bytes 4K > "$out.small.log" 2>&1; then
  echo "--topology: a file of 1 slot accepted for 2 ranks"; exit 1
fi
grep -q 'calibrate: .*small.yaml: 2 ranks' "$out.small.log" || { echo "--topology: no reason given"; cat "$out.small.log"; exit 1; }
echo "ok --topology"
