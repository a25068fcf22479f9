#!/bin/bash
# bench/tune/rabenseifner-map.sh BIN [BUDGET] [P...]: the tuner's choice on the
# textbook machine (topologies/uniform.yaml: one level, no contention) for
# p = 2..128 and n = 8 B..64 MiB, unpipelined, as a map of p by size — the
# pattern of Rabenseifner's selection table (short: recursive doubling; long,
# power of two: halving-doubling; long, small non-power of two: ring; long,
# large non-power of two: binary blocks). Prints a markdown table, one row
# per p; the JSON of every run is left in $MAP_DIR when it is set (and with
# MAP_REUSE=1 the JSON already there is printed again without tuning).
set -euo pipefail
bin=$1 budget=${2:-30s}
shift $(( $# >= 2 ? 2 : $# ))
ps=("$@")
[ ${#ps[@]} -gt 0 ] || ps=(2 3 4 5 6 7 8 9 12 15 16 17 24 31 32 33 48 63 64 65 96 127 128)
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir=${MAP_DIR:-$(mktemp -d)}
mkdir -p "$dir"
for p in "${ps[@]}"; do
  [ "${MAP_REUSE:-0}" = 1 ] && [ -f "$dir/p$p.json" ] && continue
  "$bin/collc" tune --topology "$root/topologies/uniform.yaml" --ranks "$p" --sizes 8..64M \
    --segments 1 --budget "$budget" --quiet -o "$dir/p$p.cbundle" --json "$dir/p$p.json" >/dev/null
  echo "p = $p done" >&2
done
python3 - "$dir" "${ps[@]}" <<'PY'
import json, sys
d, ps = sys.argv[1], sys.argv[2:]
short = {"recursive_doubling": "rd", "rabenseifner": "hd", "ring": "ring", "binary_blocks": "bb",
         "binary_tree": "tree", "chain": "chain", "two_level": "2lvl", "swing_latency": "swl",
         "swing_bandwidth": "swb", "recursive_multiplying": "rm"}
def name(n):
    base, _, rest = n.partition(".")
    return short.get(base, base) + ("." + rest if rest else "")
runs = {p: json.load(open(f"{d}/p{p}.json")) for p in ps}
sizes = runs[ps[0]]["sizes"]
def b(x):
    for u, s in ((1 << 20, "M"), (1 << 10, "K")):
        if x >= u: return f"{x // u}{s}"
    return str(x)
print("| p | " + " | ".join(b(s) for s in sizes) + " |")
print("|---:|" + "---|" * len(sizes))
for p in ps:
    r = runs[p]
    cut = " (budget)" if r["budget"]["exhausted"] else ""
    print(f"| {p}{cut} | " + " | ".join(name(c["winner"]) for c in r["choices"]) + " |")
print("\nrd recursive_doubling, hd rabenseifner (halving-doubling), bb binary_blocks, tree "
      "binary_tree, 2lvl two_level, swl/swb swing_latency/bandwidth, rm.kK recursive_multiplying "
      "radix K; (budget): the budget cut that search")
PY
