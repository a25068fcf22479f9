#!/bin/bash
# bench/tune/dropin-table.sh BIN [RUNS [ITERS]]: on this machine at p = 2,
# MPI_Allreduce (doubles, sum) natively, through the drop-in with its default
# table, and through the drop-in with the bundle and rules `collc tune` wrote
# for topologies/this-machine.yaml (docs/performance.md, "Tuned against the defaults").
#
# collc-bench's native column times MPI_Allreduce, so under LD_PRELOAD it
# times the drop-in; the three configurations alternate RUNS times (default
# 5) and the table gives each one's median, with the load average before and
# after (the machine is shared).
set -euo pipefail
bin=$1 runs=${2:-5} iters=${3:-50}
root="$(cd "$(dirname "$0")/../.." && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
sizes=8,64,512,4K,32K,256K,2M,16M
lib="$bin/../lib/libcollc_mpi.so"
"$bin/collc" tune --topology "$root/topologies/this-machine.yaml" --ranks 2 --quiet \
  -o "$work/tuned.cbundle" --rules "$work/tuned.rules.yaml" --json "$work/tuned.json" >&2
"$bin/collc" bundle --extract "$work/tuned.cbundle" --entry 0 -o "$work/any.cplan" >/dev/null
run=(mpirun -np 2 --oversubscribe --mca mpi_yield_when_idle 1)
bench=("$bin/collc-bench" --plan "$work/any.cplan" --sizes "$sizes" --iters "$iters" --warmup 5 --json)
tuned=(-x LD_PRELOAD="$lib" -x COLLC_PLAN_PATH="$work/tuned.cbundle" -x COLLC_RULES="$work/tuned.rules.yaml")
# The plans the drop-in picks, from its decision log.
"${run[@]}" -x LD_PRELOAD="$lib" -x COLLC_DEBUG=1 "${bench[@]}" --iters 1 --warmup 0 \
  >/dev/null 2>"$work/default.log"
"${run[@]}" "${tuned[@]}" -x COLLC_DEBUG=1 "${bench[@]}" --iters 1 --warmup 0 \
  >/dev/null 2>"$work/tuned.log"
load_before=$(uptime | sed 's/.*load average: //')
for r in $(seq "$runs"); do
  "${run[@]}" "${bench[@]}" >>"$work/native.json"
  "${run[@]}" -x LD_PRELOAD="$lib" "${bench[@]}" >>"$work/default.json"
  "${run[@]}" "${tuned[@]}" "${bench[@]}" >>"$work/tuned.json.rows"
  echo "run $r of $runs done" >&2
done
load_after=$(uptime | sed 's/.*load average: //')
python3 - "$work" "$runs" "$iters" "$load_before" "$load_after" <<'PY'
import json, re, statistics, sys
work, runs, iters, before, after = sys.argv[1:]
def rows(name):
    out = {}
    for line in open(f"{work}/{name}"):
        if line.startswith("{"):
            d = json.loads(line)
            out.setdefault(d["bytes"], []).append(d["native_us"])
    return out
def picks(log):
    out = {}
    for line in open(f"{work}/{log}"):
        m = re.search(r"\[rank 0\] allreduce comm 0 \(2 ranks\) (\d+) bytes \(\d+ x MPI_DOUBLE, MPI_SUM\): (\S+)", line)
        if m:
            out.setdefault(int(m.group(1)), m.group(2))
    return out
native, default, tuned = rows("native.json"), rows("default.json"), rows("tuned.json.rows")
pd, pt = picks("default.log"), picks("tuned.log")
pred = json.load(open(f"{work}/tuned.json"))
print(f"p = 2, MPI_Allreduce of doubles (sum); median of {runs} runs of collc-bench "
      f"(each the median of {iters} calls, the slowest rank's); load average {before} before, {after} after\n")
print("| bytes | default table plan | tuned plan | native µs | drop-in default µs | drop-in tuned µs | tuned / native | tuned / default |")
print("|---:|---|---|---:|---:|---:|---:|---:|")
for b in sorted(native):
    n, d, t = (statistics.median(x[b]) for x in (native, default, tuned))
    print(f"| {b} | {pd.get(b, '?')} | {pt.get(b, '?')} | {n:.2f} | {d:.2f} | {t:.2f} | {t / n:.2f} | {t / d:.2f} |")
PY
