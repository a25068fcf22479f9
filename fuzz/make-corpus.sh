#!/usr/bin/env bash
# fuzz/make-corpus.sh [BIN]: regenerates the seed corpora of the plan, bundle,
# rules and env fuzzers (fuzz/corpus/{plan,bundle,rules,env}/) from the
# library's algorithms, the examples and the drop-in's test rules, with the
# collc built in BIN (default build/bin). Run it after a format change; the
# corpus tests (ctest -R FuzzCorpus) say when it is due. The loader's seeds
# come from build/bin/collc-make-loader-corpus; the language's are hand-made.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${1:-$root/build/bin}
collc=$bin/collc
[ -x "$collc" ] || { echo "make-corpus: no $collc (build first)" >&2; exit 1; }
corpus=$root/fuzz/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- plan: one plan per collective at 3 or 4 ranks, as generated and as
# optimized (three-address forms, explicit `after`), and the hand-written example.
rm -rf "$corpus/plan" && mkdir -p "$corpus/plan"
gen() { # gen NAME ARGS...: the generated plan, and its -O2 form
  local name=$1; shift
  "$collc" gen "$@" -o "$corpus/plan/$name.yaml"
  "$collc" opt -O2 "$corpus/plan/$name.yaml" -o "$corpus/plan/$name-O2.yaml"
}
gen allreduce-ring-p3 ring --ranks 3
gen allreduce-ring-p1 ring --ranks 1
gen allreduce-rabenseifner-p3 rabenseifner --ranks 3
gen allreduce-binary_blocks-p3 binary_blocks --ranks 3
gen allreduce-swing_bandwidth-p4 swing_bandwidth --ranks 4
gen reduce-binomial-p3-root1 binomial --collective reduce --ranks 3 --root 1
gen reduce_scatter_block-ring-p3 ring --collective reduce_scatter_block --ranks 3
gen scan-brent_kung-p4 brent_kung --collective scan --ranks 4
gen exscan-chain-p3 chain --collective exscan --ranks 3
gen allgather-bruck-p3 bruck --collective allgather --ranks 3
gen bcast-scatter_allgather-p3-root2 scatter_allgather --collective bcast --ranks 3 --root 2
gen alltoall-bruck-p3 bruck --collective alltoall --ranks 3
gen gather-binomial-p3-root1 binomial --collective gather --ranks 3 --root 1
gen scatter-binomial-p3-root2 binomial --collective scatter --ranks 3 --root 2
gen barrier-dissemination-p5 dissemination --collective barrier --ranks 5
cp "$root/examples/pair-exchange.yaml" "$corpus/plan/"

# --- bundle: several plans by size, one plan, and reduce plans for two roots.
rm -rf "$corpus/bundle" && mkdir -p "$corpus/bundle"
plan() { # plan NAME ARGS...: a compiled plan in $tmp
  local name=$1; shift
  "$collc" gen "$@" | "$collc" compile - -o "$tmp/$name.cplan"
}
plan ring3 ring --ranks 3
plan rd3 recursive_doubling --ranks 3
plan tree3 binary_tree --ranks 3
plan ring1 ring --ranks 1
plan binomial3-0 binomial --collective reduce --ranks 3 --root 0
plan binomial3-1 binomial --collective reduce --ranks 3 --root 1
"$collc" bundle "$tmp/tree3.cplan@0-2K" "$tmp/rd3.cplan@2K-64K" "$tmp/ring3.cplan@64K-" \
  -o "$corpus/bundle/allreduce-3-sizes.cbundle"
"$collc" bundle "$tmp/ring1.cplan" -o "$corpus/bundle/allreduce-1.cbundle"
"$collc" bundle "$tmp/binomial3-0.cplan" "$tmp/binomial3-1.cplan@1-1M" \
  -o "$corpus/bundle/reduce-3-roots.cbundle" 2>/dev/null # warns about the gaps at root 1

# --- rules: the drop-in's test files (valid and each kind of error), and one
# file in every style the subset allows.
rm -rf "$corpus/rules" && mkdir -p "$corpus/rules"
cp "$root"/tests/dropin/rules/*.yaml "$corpus/rules/"
cat > "$corpus/rules/styles.yaml" <<'EOF'
---
format: "collc-rules/1"   # quoted
rules:
- {collective: reduce, ranks: 2-8, bytes: -64K, algorithm: binomial}
-   collective: allreduce
    ranks: 9-
    bytes: 1G-
    algorithm: 'ring'
-
  collective: allreduce
  algorithm: native
EOF
printf 'format: collc-rules/1\nrules: []\n' > "$corpus/rules/empty.yaml"

# --- env: the drop-in's settings, one `NAME=VALUE` a line (fuzz/EnvFuzzer.cpp).
rm -rf "$corpus/env" && mkdir -p "$corpus/env"
cat > "$corpus/env/valid.env" <<'EOF'
COLLC_DEBUG=1
COLLC_STATS=yes
COLLC_VERIFY=off
COLLC_ACCEPT_UNPROVEN=TRUE
COLLC_PLAN_PATH=/opt/plans: ./more :
COLLC_ALGORITHM=allreduce:ring, reduce:binomial
EOF
cat > "$corpus/env/bad.env" <<'EOF'
COLLC_DEBUG=2
COLLC_STATS=
COLLC_VERIFY= maybe
COLLC_PLAN_PATH=::
COLLC_ALGORITHM=allreduce:ring,allreduce:native
EOF
printf 'COLLC_ALGORITHM=reduce\n' > "$corpus/env/no-colon.env"
printf 'COLLC_ALGORITHM=bcast:ring\n' > "$corpus/env/unknown-collective.env"
printf 'COLLC_ALGORITHM=allreduce:\n' > "$corpus/env/no-algorithm.env"
echo "make-corpus: $(find "$corpus"/{plan,bundle,rules,env} -type f | wc -l) seeds written"
