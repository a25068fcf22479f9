#!/usr/bin/env bash
# bench/cluster/calibration-table.sh [BIN] [RUNS]: does `collc calibrate`
# recover the emulated network? (docs/cluster.md, "Calibration"; as root)
#
# For each setting (latency, bandwidth per node) it brings up 2 nodes x 1
# rank (scripts/cluster), runs `collc calibrate --topology` (the emulated
# topology's levels, costs measured) RUNS times (default 3) with each
# transport (collc: as plans send; mpi: MPI_Send/MPI_Recv), and prints a
# markdown table of the median fits against the emulated values. The first
# setting's latency is 1 µs: what this machine's own stack takes through the
# switch (the base), which every fitted α includes. The raw fits are kept in
# FITS (default: a temporary file) and FITS=FILE with an existing file only
# prints its table again.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="${1:-$root/build/bin}"
runs="${2:-3}"
cluster="$root/scripts/cluster"
export COLLC_NETSWITCH="$bin/collc-netswitch"
work=$(mktemp -d)
trap '"$cluster" down >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
fits="${FITS:-$work/fits}"

settings=("1us 1Gb/s" "50us 1Gb/s" "200us 1Gb/s" "500us 200Mb/s")
[ -s "$fits" ] || {
"$cluster" down >/dev/null
for s in "${settings[@]}"; do
  read -r lat bw <<<"$s"
  cat >"$work/t.yaml" <<EOF
format: collc-topology/1
name: calibration
levels:
  - {name: node, size: 1, latency: 1us, bandwidth: 4GB/s}
  - {name: network, size: 2, latency: $lat, bandwidth: $bw}
reduce: 4GB/s
EOF
  "$cluster" up "$work/t.yaml" --nodes 2 --ppn 1 >/dev/null
  for via in collc mpi; do
    for ((i = 0; i < runs; i++)); do
      "$cluster" run --timeout 300 -- mpirun -np 2 "$bin/collc" calibrate --transport "$via" \
        --topology "$("$cluster" topology)" --max-bytes 16M -o /dev/null 2>/dev/null |
        awk -v s="$lat $bw $via" '$1 == "network" { print s, $3, $6 }'
    done
  done
  echo "$lat $bw: done" >&2
  "$cluster" down >/dev/null
done >"$fits"
}

python3 - "$fits" <<'EOF'
import statistics, sys
def seconds(t):
    for unit, f in (("us", 1e-6), ("ms", 1e-3), ("ns", 1e-9), ("s", 1.0)):
        if t.endswith(unit):
            return float(t[:-len(unit)]) * f
def bytes_per_s(b):
    n, unit = b[:-3], b[-3:]
    mult = {"G": 1e9, "M": 1e6, "k": 1e3}.get(n[-1], 1)
    return float(n.rstrip("GMk")) * mult / (8 if unit == "b/s" else 1)
rows = {}
for line in open(sys.argv[1]):
    lat, bw, via, alpha_us, beta_ns = line.split()
    rows.setdefault((lat, bw, via), []).append((float(alpha_us), float(beta_ns)))
base = {}
print("| emulated latency | emulated bandwidth | transport | fitted α µs | fitted α − base µs | α error | fitted bandwidth MB/s | bandwidth error |")
print("|---:|---:|---|---:|---:|---:|---:|---:|")
for (lat, bw, via), fits in rows.items():
    a = statistics.median(f[0] for f in fits)
    bwfit = 1e3 / statistics.median(f[1] for f in fits)  # MB/s
    em_a, em_bw = seconds(lat) * 1e6, bytes_per_s(bw) / 1e6
    if via not in base:
        base[via] = a - em_a
    net = a - base[via]
    err = f"{(a / em_a - 1) * 100:+.0f} %" if em_a >= 10 else "(the base)"
    print(f"| {lat} | {bw} | {via} | {a:.1f} | {net:.1f} | {err} | {bwfit:.1f} | {(bwfit / em_bw - 1) * 100:+.0f} % |")
EOF
