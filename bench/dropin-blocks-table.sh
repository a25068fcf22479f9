#!/usr/bin/env bash
# bench/dropin-blocks-table.sh: docs/performance.md's table for the drop-in's
# block movers — an unmodified program's MPI_Alltoall, MPI_Gather and
# MPI_Scatter, and their v-variants with even counts, under libcollc_mpi.so (its default table's plans) over native
# MPI (Open MPI, or MPICH with MPI=mpich: bench/mpi.sh), at p = 2 and 4 and
# 8p B / 64 KiB / 1 MiB / 16 MiB.
#
# collc-dropin-vs-pmpi (bench/dropin/vs_pmpi.c) runs preloaded: its MPI_*
# calls are the drop-in's, its PMPI_* calls native MPI's, timed in turn in one
# process (each run a paired measurement, the median of 5 rounds). The table
# gives the median ratio over RUNS runs with its range, then native's median
# time. Sizes as in bench/blocks-table.sh: a rank's whole buffer for alltoall,
# the root's (root 0) for gather and scatter.
#   usage: bench/dropin-blocks-table.sh [BUILD_DIR] [RUNS] [RANKS...]   (default build 3 2 4)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}; runs=${2:-3}; shift $(( $# > 2 ? 2 : $# )) || true
ranks=("$@"); [ ${#ranks[@]} -gt 0 ] || ranks=(2 4)
source "$root/bench/mpi.sh"
mpi_check_ranks "${ranks[@]}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
lib=$build/lib/libcollc_mpi.so
[ "$MPI" = mpich ] && lib=$build/lib/mpich/libcollc_mpi.so
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

for p in "${ranks[@]}"; do
  mapfile -t mpi < <(launch "$p" "LD_PRELOAD=$lib")
  for ((i = 0; i < runs; i++)); do
    "${mpi[@]}" "$bin/collc-dropin-vs-pmpi" 5 200 "$((8 * p))" 65536 | sed "s/^/$p /" >> "$work/runs"
    "${mpi[@]}" "$bin/collc-dropin-vs-pmpi" 5 30 1048576 | sed "s/^/$p /" >> "$work/runs"
    "${mpi[@]}" "$bin/collc-dropin-vs-pmpi" 5 4 16777216 | sed "s/^/$p /" >> "$work/runs"
  done
done

python3 - "$work/runs" "$mpiname" <<'PY'
import statistics, sys
from collections import defaultdict

ratios, natives, order = defaultdict(list), defaultdict(list), []
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 5:
        continue
    if "WRONG" in f:
        sys.exit("a wrong result: " + line.strip())
    p, call, n, native, dropin = int(f[0]), f[1], int(f[2]), float(f[3]), float(f[4])
    column = "8p B" if n < 1024 else "64 KiB" if n < (1 << 20) else "1 MiB" if n < (16 << 20) else "16 MiB"
    if (p, call) not in order:
        order.append((p, call))
    ratios[(p, call, column)].append(dropin / native)
    natives[(p, call, column)].append(native)

columns = ["8p B", "64 KiB", "1 MiB", "16 MiB"]
runs = max(len(v) for v in ratios.values())
print("drop-in ÷ native %s, median of %d runs (min-max), root 0; native %s's median time in µs"
      " after each\n" % (sys.argv[2], runs, sys.argv[2]))
print("| p | call | " + " | ".join(columns) + " |")
print("|---|---|" + "---|" * len(columns))
for key in order:
    cells = []
    for col in columns:
        v = ratios.get(key + (col,))
        cells.append("—" if not v else "%.2f (%.2f-%.2f) %.4g µs" % (
            statistics.median(v), min(v), max(v), statistics.median(natives[key + (col,)])))
    print("| %d | MPI_%s | %s |" % (key[0], key[1].capitalize(), " | ".join(cells)))
PY
