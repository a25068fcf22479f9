#!/usr/bin/env bash
# bench/transport-table.sh: the transport table of docs/performance.md, reproducibly.
#
# Compiles the allreduce plans of the library for each rank count, then runs
# collc-bench RUNS times with each transport (COLLC_TRANSPORT=shm, then mpi),
# double sum, blocking calls, every plan against native MPI in the same
# run (Open MPI, or MPICH with MPI=mpich: bench/mpi.sh). Prints, per (ranks, bytes): the best plan's time over shared memory and
# over MPI divided by native's time in the same run (median over the runs,
# min-max range), the median native time, the best shm time and the
# memory-bandwidth bound of collc-bench; for p = 2, the time per byte of the
# largest size over that of the one before it (the "cliff" check); then, at
# p = 2, the 8-byte call three ways (collc-small-call, RUNS times: native
# MPI_Allreduce, collc_allreduce with recursive doubling, and the floor of the
# measurement itself, a one-cache-line flag exchange after the barrier) with
# their medians. The load average before and after is printed with the
# tables: on a shared machine, read the ratios (same run), not the times.
#   usage: bench/transport-table.sh [BUILD_DIR] [RUNS] [RANKS...]   (default build 3 2 4)
#   SIZES="8 64K 1M 8M 64M" (default) chooses the sizes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}; runs=${2:-3}; shift $(( $# > 2 ? 2 : $# )) || true
ranks=("$@"); [ ${#ranks[@]} -gt 0 ] || ranks=(2 4)
sizes=(${SIZES:-8 64K 1M 8M 64M})
source "$root/bench/mpi.sh"
mpi_check_ranks "${ranks[@]}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
echo "transport table against native $mpiname: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')," \
     "$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

iters() { # iterations for a size: fewer for long vectors
  case $1 in 8|*[0-9]|*K) echo "200 10" ;; 1M|2M|4M) echo "40 3" ;; *) echo "8 2" ;; esac
}

for p in "${ranks[@]}"; do
  mkdir -p "$work/p$p"
  for a in binary_tree recursive_doubling rabenseifner binary_blocks ring; do
    "$bin/collc" gen "$a" --ranks "$p" | "$bin/collc" compile - -o "$work/p$p/$a.cplan"
  done
  for ((i = 0; i < runs; i++)); do
    for t in shm mpi; do
      mapfile -t mpi < <(launch "$p" COLLC_TRANSPORT=$t)
      for s in "${sizes[@]}"; do
        read -r it wu <<< "$(iters "$s")"
        "${mpi[@]}" "$bin/collc-bench" --plan-dir "$work/p$p" --json \
          --sizes "$s" --iters "$it" --warmup "$wu" | sed "s/^{/{\"transport\": \"$t\", \"run\": $i, /" \
          >> "$work/rows.jsonl"
      done
    done
  done
done

# The 8-byte call at p = 2: native, collc (recursive doubling), the flag floor.
small=()
if [[ " ${ranks[*]} " == *" 2 "* ]]; then
  mapfile -t small_launch < <(launch 2)
  for ((i = 0; i < runs; i++)); do
    for w in native collc flag; do
      small+=("$("${small_launch[@]}" "$bin/collc-small-call" "$work/p2/recursive_doubling.cplan" "$w" 20000)")
    done
  done
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

printf '%s\n' "${small[@]}" > "$work/small.txt"
python3 - "$work/rows.jsonl" "$runs" "$work/small.txt" <<'PY'
import json, statistics, sys
from collections import defaultdict
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
best = defaultdict(dict)   # (ranks, bytes, transport, run) -> (best plan_us, algorithm, native_us)
bound = defaultdict(list)
for r in rows:
    if not r.get("plan_us"):
        continue
    k = (r["ranks"], r["bytes"], r["transport"], r["run"])
    b = best[k]
    if not b or r["plan_us"] < b["plan_us"]:
        best[k] = {"plan_us": r["plan_us"], "alg": r["algorithm"], "native_us": r["native_us"]}
    bound[(r["ranks"], r["bytes"])].append(r["bound_us"])
def med(xs):
    return statistics.median(xs) if xs else float("nan")
print("| ranks | bytes | native µs | best shm µs (plan) | shm ÷ native | mpi ÷ native | shm ÷ bound |")
print("|---|---|---|---|---|---|---|")
for (p, n) in sorted({(k[0], k[1]) for k in best}):
    cells = {}
    for t in ("shm", "mpi"):
        rs = [best[k] for k in best if k[0] == p and k[1] == n and k[2] == t]
        ratios = [x["plan_us"] / x["native_us"] for x in rs if x["native_us"] > 0]
        cells[t] = (rs, ratios)
    shm, mpi = cells["shm"], cells["mpi"]
    native = med([x["native_us"] for x in shm[0] + mpi[0]])
    shm_us = med([x["plan_us"] for x in shm[0]])
    algs = sorted({x["alg"] for x in shm[0]})
    fmt = lambda rs: "%.2f (%.2f-%.2f)" % (med(rs), min(rs), max(rs)) if rs else "-"
    bnd = med(bound[(p, n)])
    print("| %d | %d | %.1f | %.1f (%s) | %s | %s | %s |" % (
        p, n, native, shm_us, "/".join(algs), fmt(shm[1]), fmt(mpi[1]),
        "%.1f" % (shm_us / bnd) if bnd > 0 else "-"))
# No cliff: time per byte of the best shm plan at the largest size against
# the size before it (p = 2).
sizes2 = sorted({k[1] for k in best if k[0] == 2})
if len(sizes2) >= 2:
    per = lambda n: med([best[k]["plan_us"] for k in best if k[0] == 2 and k[1] == n and k[2] == "shm"]) / n
    a, b = sizes2[-2], sizes2[-1]
    print()
    print("p = 2, best shm plan: time per byte at %d bytes / at %d bytes = %.2f" % (b, a, per(b) / per(a)))
# The 8-byte call (collc-small-call lines "WAY: median X us over N calls").
small = defaultdict(list)
for line in open(sys.argv[3]):
    if ": median " in line:
        way, rest = line.split(": median ")
        small[way].append(float(rest.split()[0]))
if small:
    print()
    print("p = 2, 8 bytes, collc-small-call (median of %d runs of 20000 calls, each bracketed by MPI_Barrier):" % len(small["native"]))
    nat = med(small["native"])
    for way, what in (("native", "native MPI_Allreduce"), ("collc", "collc_allreduce (recursive doubling)"),
                      ("flag", "floor: one cache-line flag exchange")):
        xs = small[way]
        ratios = [x / y for x, y in zip(xs, small["native"])]
        print("  %-40s %.3f us (%.3f-%.3f), ÷ native %.2f (%.2f-%.2f)" % (
            what, med(xs), min(xs), max(xs), med(ratios), min(ratios), max(ratios)))
PY
