#!/bin/bash
# bench/tune/measured-table.sh BIN [RUNS [ITERS [P...]]]: on this machine, at
# p = 2 and p = 4 (or the P given), MPI_Allreduce and MPI_Reduce_scatter_block of doubles (sum),
# 8 B .. 16 MiB: natively, through the drop-in with its default table, with
# the bundle and rules of `collc tune` from the model alone (on the topology
# `collc calibrate` measures here for p ranks), and with those of `collc tune
# --measure` run under mpirun here (docs/performance.md, "Tuning that measures").
#
# collc-bench's native column times the MPI call, so under LD_PRELOAD it
# times the drop-in; the four configurations alternate RUNS times (default 3)
# and the table gives each one's median, with the load average before and
# after (the machine is shared). The plans each configuration picks come from
# the drop-in's decision log (COLLC_DEBUG).
set -euo pipefail
bin=$1 runs=${2:-3} iters=${3:-30}
shift $(( $# < 3 ? $# : 3 ))
nps=${*:-2 4}
root="$(cd "$(dirname "$0")/../.." && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
sizes=8,64,512,4K,32K,256K,2M,16M
lib="$bin/../lib/libcollc_mpi.so"
for np in $nps; do
  run=(mpirun -np "$np" --oversubscribe)
  [ "$np" -gt 2 ] && run+=(--mca mpi_yield_when_idle 1)
  topo="$work/machine-$np.yaml"
  "${run[@]}" "$bin/collc" calibrate -o "$topo" >/dev/null
  for coll in allreduce reduce_scatter_block; do
    w="$work/$np-$coll"
    mkdir -p "$w"
    "$bin/collc" tune --topology "$topo" --collective "$coll" --ranks "$np" --sizes 8..16M --quiet \
      -o "$w/model.cbundle" --rules "$w/model.rules" >&2
    "${run[@]}" "$bin/collc" tune --measure --topology "$topo" --collective "$coll" --ranks "$np" \
      --sizes 8..16M --quiet -o "$w/measured.cbundle" --rules "$w/measured.rules" \
      --json "$w/measured.json" >&2
    "$bin/collc" bundle --extract "$w/model.cbundle" --entry 0 -o "$w/any.cplan" >/dev/null
    bench=("$bin/collc-bench" --plan "$w/any.cplan" --sizes "$sizes" --iters "$iters" --warmup 3 --json)
    model=(-x LD_PRELOAD="$lib" -x COLLC_PLAN_PATH="$w/model.cbundle" -x COLLC_RULES="$w/model.rules")
    measured=(-x LD_PRELOAD="$lib" -x COLLC_RULES="$w/measured.rules")
    [ -e "$w/measured.cbundle" ] && measured+=(-x COLLC_PLAN_PATH="$w/measured.cbundle")
    for cfg in default model measured; do
      case $cfg in
        default) env=(-x LD_PRELOAD="$lib") ;;
        model) env=("${model[@]}") ;;
        measured) env=("${measured[@]}") ;;
      esac
      "${run[@]}" "${env[@]}" -x COLLC_DEBUG=1 "${bench[@]}" --iters 1 --warmup 0 \
        >/dev/null 2>"$w/$cfg.log"
    done
    load_before=$(uptime | sed 's/.*load average: //')
    for r in $(seq "$runs"); do
      "${run[@]}" "${bench[@]}" >>"$w/native.rows"
      "${run[@]}" -x LD_PRELOAD="$lib" "${bench[@]}" >>"$w/default.rows"
      "${run[@]}" "${model[@]}" "${bench[@]}" >>"$w/model.rows"
      "${run[@]}" "${measured[@]}" "${bench[@]}" >>"$w/measured.rows"
      echo "p = $np $coll: run $r of $runs done" >&2
    done
    load_after=$(uptime | sed 's/.*load average: //')
    python3 - "$w" "$np" "$coll" "$runs" "$iters" "$load_before" "$load_after" <<'PY'
import json, re, statistics, sys
w, np, coll, runs, iters, before, after = sys.argv[1:]
def rows(name):
    out = {}
    for line in open(f"{w}/{name}.rows"):
        if line.startswith("{"):
            d = json.loads(line)
            out.setdefault(d["bytes"], []).append(d["native_us"])
    return out
def picks(cfg):
    out = {}
    for line in open(f"{w}/{cfg}.log"):
        m = re.search(r"\[rank 0\] \w+ comm 0 \(\d+ ranks\) (\d+) bytes \([^)]*\): ([^\s:]+)", line)
        if m:
            out.setdefault(int(m.group(1)), m.group(2))
    return out
t = {c: rows(c) for c in ("native", "default", "model", "measured")}
p = {c: picks(c) for c in ("default", "model", "measured")}
call = "MPI_Allreduce" if coll == "allreduce" else "MPI_Reduce_scatter_block"
print(f"\np = {np}, {call} of doubles (sum); median of {runs} runs of collc-bench (each the "
      f"median of {iters} calls, the slowest rank's); load average {before} before, {after} after\n")
print("| bytes | native µs | default µs | model-tuned µs | measured-tuned µs | measured plan | measured / native | model / measured |")
print("|---:|---:|---:|---:|---:|---|---:|---:|")
for b in sorted(t["native"]):
    n, d, mo, me = (statistics.median(t[c][b]) for c in ("native", "default", "model", "measured"))
    print(f"| {b} | {n:.2f} | {d:.2f} | {mo:.2f} | {me:.2f} | {p['measured'].get(b, '?')} | "
          f"{me / n:.2f} | {mo / me:.2f} |")
PY
  done
done
