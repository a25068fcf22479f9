#!/usr/bin/env bash
# bench/cluster/native-table.sh [NODES] [PPN] [BIN] [ROUNDS] [TOPOLOGY] [ITERS]:
# collc against native MPI on the emulated cluster (docs/cluster.md, "collc
# against native MPI"; as root).
#
# Brings up NODES x PPN ranks (default 4 x 2) of TOPOLOGY (default
# topologies/emulated-slow.yaml), tunes a bundle for each of allreduce,
# reduce, bcast, allgather and reduce_scatter_block on the topology as
# emulated (`collc tune`, TUNE_BUDGET each, default 60s), then runs collc-coll-timing (a
# plain MPI program; ITERS timed calls, default 3: medians) ROUNDS times
# (default 3), the four configurations interleaved in every round:
#   native   Open MPI's default selection (coll/tuned)
#   han      Open MPI's hierarchical coll/han (--mca coll_han_priority 100)
#   collc    the drop-in (LD_PRELOAD=libcollc_mpi.so) with its default table
#   tuned    the drop-in with the tuned bundles and rules
#   measured (MEASURE=1) the drop-in with bundles and rules of
#            `collc tune --measure` run on the emulated cluster itself (the
#            model's best 3 per size and native MPI timed there, the fastest
#            kept, native included; the refitted topologies are kept in the
#            work folder as COLLECTIVE.refit.yaml)
# and prints, per collective and size, the median over the rounds of each and
# their ratios to native. The work folder is kept when KEEP=DIR names one.
set -euo pipefail
nodes=${1:-4} ppn=${2:-2}
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="${3:-$root/build/bin}"
rounds="${4:-3}"
topo="${5:-$root/topologies/emulated-slow.yaml}"
iters="${6:-3}"
lib="$(cd "$bin/../lib" && pwd)/libcollc_mpi.so"
sizes=(8 128 2048 32768 524288 4194304 16777216)
collectives=(allreduce reduce bcast allgather reduce_scatter_block)

. "$root/bench/cluster/cluster-up.sh"
cp "$("$cluster" topology)" "$work/emulated.yaml"

# One bundle per collective; their rules in one file.
plans=""
echo "format: collc-rules/1" >"$work/tuned.rules.yaml"
echo "rules:" >>"$work/tuned.rules.yaml"
for c in "${collectives[@]}"; do
  echo "tuning $c ..." >&2
  "$bin/collc" tune --topology "$work/emulated.yaml" --ranks "$p" --collective "$c" \
    --sizes 8..16M --budget "${TUNE_BUDGET:-60s}" --quiet -o "$work/$c.cbundle" --rules "$work/$c.rules.yaml" \
    --report "$work/$c.md" >"$work/$c.tune.txt"
  grep -E '^  - ' "$work/$c.rules.yaml" >>"$work/tuned.rules.yaml"
  plans="${plans:+$plans:}$work/$c.cbundle"
done

configs=(native han collc tuned)
mplans=""
if [ "${MEASURE:-0}" = 1 ]; then
  configs+=(measured)
  echo "format: collc-rules/1" >"$work/measured.rules.yaml"
  echo "rules:" >>"$work/measured.rules.yaml"
  for c in "${collectives[@]}"; do
    echo "tuning $c with --measure on the emulated cluster ..." >&2
    "$cluster" run --timeout 1800 -- mpirun -np "$p" "$bin/collc" tune --measure \
      --topology "$work/emulated.yaml" --ranks "$p" --collective "$c" \
      --sizes "$(IFS=,; echo "${sizes[*]}")" --budget "${TUNE_BUDGET:-60s}" --quiet \
      -o "$work/$c.m.cbundle" --rules "$work/$c.m.rules.yaml" --report "$work/$c.m.md" \
      --refit "$work/$c.refit.yaml" >"$work/$c.m.tune.txt" 2>"$work/$c.m.tune.err" ||
      { echo "tune --measure $c failed:" >&2; tail -5 "$work/$c.m.tune.err" >&2; exit 1; }
    grep -E '^  - ' "$work/$c.m.rules.yaml" >>"$work/measured.rules.yaml"
    [ ! -e "$work/$c.m.cbundle" ] || mplans="${mplans:+$mplans:}$work/$c.m.cbundle"
  done
fi

run() { # configuration round
  local args=()
  case $1 in
    native) ;;
    han) args=(--mca coll_han_priority 100) ;;
    collc) args=(-x "LD_PRELOAD=$lib") ;;
    tuned) args=(-x "LD_PRELOAD=$lib" -x "COLLC_PLAN_PATH=$plans"
                 -x "COLLC_RULES=$work/tuned.rules.yaml") ;;
    measured) args=(-x "LD_PRELOAD=$lib" -x "COLLC_RULES=$work/measured.rules.yaml")
              [ -z "$mplans" ] || args+=(-x "COLLC_PLAN_PATH=$mplans") ;;
  esac
  "$cluster" run --timeout 1800 -- mpirun -np "$p" "${args[@]}" "$bin/collc-coll-timing" \
    "$iters" "${sizes[@]}" >"$work/$1.$2.txt" 2>"$work/$1.$2.err" ||
    { echo "$1 (round $2) failed:" >&2; tail -5 "$work/$1.$2.err" >&2; exit 1; }
}
for r in $(seq "$rounds"); do
  for c in "${configs[@]}"; do
    echo "round $r: $c" >&2
    run "$c" "$r"
  done
done

python3 - "$work" "$rounds" "$nodes" "$ppn" "$(basename "$topo")" "${configs[@]}" <<'EOF'
import statistics, sys
work, rounds, nodes, ppn, topo = sys.argv[1], int(sys.argv[2]), *sys.argv[3:6]
configs = sys.argv[6:]
t = {}
for c in configs:
    for r in range(1, rounds + 1):
        for line in open(f"{work}/{c}.{r}.txt"):
            f = line.split()
            if len(f) >= 3 and f[0][0].isalpha():
                t.setdefault((f[0], int(f[1]), c), []).append(float(f[2]))
keys = sorted({(k[0], k[1]) for k in t}, key=lambda k: (["allreduce", "reduce", "bcast",
               "allgather", "reduce_scatter_block"].index(k[0]), k[1]))
print(f"# {nodes} nodes x {ppn} ranks of {topo}: median µs over {rounds} interleaved rounds")
print("| collective | bytes | native µs | " + " | ".join(f"{c} ÷ native" for c in configs[1:]) + " |")
print("|---|---:|---:|" + "---:|" * (len(configs) - 1))
ratios = {c: [] for c in configs[1:]}
for coll, b in keys:
    med = {c: statistics.median(t[(coll, b, c)]) for c in configs if (coll, b, c) in t}
    cells = []
    for c in configs[1:]:
        x = med[c] / med["native"]
        ratios[c].append(x)
        cells.append(f"{x:.2f}")
    print(f"| {coll} | {b} | {med['native']:.1f} | " + " | ".join(cells) + " |")
print()
for c in configs[1:]:
    r = sorted(ratios[c])
    wins = sum(x < 0.9 for x in r)
    losses = sum(x > 1.1 for x in r)
    print(f"{c} ÷ native: median {statistics.median(r):.2f}, range {r[0]:.2f}-{r[-1]:.2f}; "
          f"faster by 10 %+ in {wins} of {len(r)}, slower by 10 %+ in {losses}")
EOF
