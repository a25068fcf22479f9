#!/usr/bin/env bash
# bench/transport-table.sh: the transport table of the README, reproducibly.
#
# Compiles the allreduce plans of the library for each rank count, then runs
# collc-bench RUNS times with each transport (COLLC_TRANSPORT=shm, then mpi),
# double sum, blocking calls, every plan against native Open MPI in the same
# run. Prints, per (ranks, bytes): the best plan's time over shared memory and
# over MPI divided by native's time in the same run (median over the runs,
# min-max range), the median native time, the best shm time and the
# memory-bandwidth bound of collc-bench.
#   usage: bench/transport-table.sh [BUILD_DIR] [RUNS] [RANKS...]   (default build 3 2 4)
#   SIZES="8 64K 1M 16M" (default) chooses the sizes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}; runs=${2:-3}; shift $(( $# > 2 ? 2 : $# )) || true
ranks=("$@"); [ ${#ranks[@]} -gt 0 ] || ranks=(2 4)
sizes=(${SIZES:-8 64K 1M 16M})
bin=$build/bin
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

iters() { # iterations for a size: fewer for long vectors
  case $1 in 8|*[0-9]|*K) echo "200 10" ;; 1M|2M|4M) echo "40 3" ;; *) echo "8 2" ;; esac
}

for p in "${ranks[@]}"; do
  mkdir -p "$work/p$p"
  for a in binary_tree recursive_doubling rabenseifner binary_blocks ring; do
    "$bin/collc" gen "$a" --ranks "$p" | "$bin/collc" compile - -o "$work/p$p/$a.cplan"
  done
  mpi=(mpirun -np "$p")
  [ "$p" -gt "$(nproc)" ] && mpi+=(--oversubscribe --mca mpi_yield_when_idle 1)
  for ((i = 0; i < runs; i++)); do
    for t in shm mpi; do
      for s in "${sizes[@]}"; do
        read -r it wu <<< "$(iters "$s")"
        "${mpi[@]}" -x COLLC_TRANSPORT=$t "$bin/collc-bench" --plan-dir "$work/p$p" --json \
          --sizes "$s" --iters "$it" --warmup "$wu" | sed "s/^{/{\"transport\": \"$t\", \"run\": $i, /" \
          >> "$work/rows.jsonl"
      done
    done
  done
done

python3 - "$work/rows.jsonl" "$runs" <<'PY'
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
PY
