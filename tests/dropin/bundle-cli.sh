#!/usr/bin/env bash
# tests/dropin/bundle-cli.sh COLLC WORKDIR: `collc bundle` — what it writes,
# what it refuses (exit 1) and what is misuse (exit 2), with the exact messages.
set -u
collc=$1 dir=$2
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || exit 2
fail=0
# expect CODE 'MESSAGE' -- COMMAND...: exit status CODE and MESSAGE on stderr.
expect() {
  local code=$1 msg=$2
  shift 3
  "$@" >out.txt 2>err.txt
  local rc=$?
  if [ $rc -ne "$code" ]; then
    echo "FAIL: '$*' exited $rc, expected $code"; cat err.txt; fail=1
  elif [ -n "$msg" ] && ! grep -qF -- "$msg" err.txt; then
    echo "FAIL: '$*' stderr lacks: $msg"; cat err.txt; fail=1
  fi
}
"$collc" gen recursive_doubling --ranks 4 | "$collc" compile - -o rd4.cplan || exit 2
"$collc" gen rabenseifner --ranks 4 | "$collc" compile - -o rab4.cplan || exit 2
"$collc" gen ring --ranks 5 | "$collc" compile - -o ring5.cplan || exit 2
"$collc" gen binomial --collective reduce --ranks 4 --root 1 | "$collc" compile - -o bin4r1.cplan || exit 2
"$collc" gen binary_tree --collective reduce --ranks 4 --root 2 | "$collc" compile - -o tree4r2.cplan || exit 2
"$collc" gen ring --ranks 4 | sed 's/^commutative: true/commutative: false/' |
  "$collc" compile --no-verify - -o lying4.cplan || exit 2

expect 0 '' -- "$collc" bundle rd4.cplan@0-2K rab4.cplan@2K- -o a4.cbundle
expect 0 '' -- "$collc" bundle --list a4.cbundle
cat > want.txt <<'WANT'
bundle: allreduce, 4 ranks, 2 plans
  0: bytes 0-2K       recursive_doubling   any-op in-place proven identical, 171 bytes
  1: bytes 2K-        rabenseifner         any-op in-place proven identical, 209 bytes
WANT
# (plan sizes change with the bytecode encoder: compare the sizes loosely)
if ! diff <(sed 's/[0-9]* bytes$/N bytes/' want.txt) <(sed 's/[0-9]* bytes$/N bytes/' out.txt); then
  echo "FAIL: --list output differs"; fail=1
fi
# Reduce plans for different roots may share byte ranges.
expect 0 '' -- "$collc" bundle bin4r1.cplan tree4r2.cplan -o r4.cbundle
expect 0 '' -- "$collc" bundle --list r4.cbundle
grep -q "root 2 any-op in-place proven identical" out.txt || { echo "FAIL: roots not listed"; cat out.txt; fail=1; }

expect 1 'cannot bundle: entries 0 (0-4K) and 1 (2K-) overlap' -- "$collc" bundle rd4.cplan@0-4K rab4.cplan@2K- -o x.cbundle
expect 1 'cannot bundle: entries 0 (0-) and 1 (0-) overlap for root 1' -- "$collc" bundle bin4r1.cplan bin4r1.cplan -o x.cbundle
expect 1 'cannot bundle: plan 1: the plan is for 5 ranks, the bundle for 4' -- "$collc" bundle rd4.cplan ring5.cplan -o x.cbundle
expect 1 'cannot bundle: plan 1: the plan is for reduce, the bundle for allreduce' -- "$collc" bundle rd4.cplan bin4r1.cplan -o x.cbundle
expect 1 "refusing to bundle 'lying4.cplan': it does not verify" -- "$collc" bundle lying4.cplan -o x.cbundle
expect 0 '' -- "$collc" bundle --no-verify lying4.cplan -o x.cbundle
expect 1 'a4.cbundle: offset 0x0: not a compiled plan' -- "$collc" bundle a4.cbundle -o x.cbundle
expect 1 'rd4.cplan: this is a compiled plan (.cplan), not a bundle' -- "$collc" bundle --list rd4.cplan
head -c 100 a4.cbundle > short.cbundle
expect 1 'short.cbundle: offset 0x8: truncated' -- "$collc" bundle --list short.cbundle
expect 2 "'2K-1K' in 'rd4.cplan@2K-1K' is not a byte range" -- "$collc" bundle rd4.cplan@2K-1K -o x.cbundle
expect 2 "'2X' in 'rd4.cplan@2X' is not a byte range" -- "$collc" bundle rd4.cplan@2X -o x.cbundle
expect 2 "cannot read 'missing.cplan'" -- "$collc" bundle missing.cplan -o x.cbundle
expect 2 'no output file given' -- "$collc" bundle rd4.cplan
expect 2 '--list takes one bundle' -- "$collc" bundle --list a4.cbundle r4.cbundle
# --extract gives back each entry's plan, byte for byte.
expect 0 '' -- "$collc" bundle --extract a4.cbundle -o parts
cmp -s parts/a4.0.cplan rd4.cplan || { echo "FAIL: --extract entry 0 differs from rd4.cplan"; fail=1; }
cmp -s parts/a4.1.cplan rab4.cplan || { echo "FAIL: --extract entry 1 differs from rab4.cplan"; fail=1; }
grep -q "parts/a4.1.cplan: bytes 2K-, rabenseifner" out.txt || { echo "FAIL: --extract listing"; cat out.txt; fail=1; }
expect 0 '' -- "$collc" bundle --extract a4.cbundle --entry 1 -o one.cplan
cmp -s one.cplan rab4.cplan || { echo "FAIL: --extract --entry 1 differs"; fail=1; }
expect 2 '--entry 2: the bundle has 2 entries' -- "$collc" bundle --extract a4.cbundle --entry 2 -o x.cplan
expect 2 '--extract needs -o' -- "$collc" bundle --extract a4.cbundle
expect 2 '--entry goes with --extract' -- "$collc" bundle rd4.cplan --entry 0 -o x.cbundle
# Proof status: a plan compiled with --no-verify is listed UNPROVEN when bundled
# unverified; bundling verifies it and records the proof.
"$collc" gen ring --ranks 4 | "$collc" compile --no-verify - -o nv4.cplan 2>/dev/null
expect 0 '' -- "$collc" bundle --no-verify nv4.cplan -o nv.cbundle
expect 0 '' -- "$collc" bundle --list nv.cbundle
grep -q "ring                 commutative in-place UNPROVEN" out.txt || { echo "FAIL: UNPROVEN not listed"; cat out.txt; fail=1; }
expect 0 '' -- "$collc" bundle nv4.cplan -o v.cbundle
expect 0 '' -- "$collc" bundle --list v.cbundle
grep -q "commutative in-place proven identical" out.txt || { echo "FAIL: bundling did not record the proof"; cat out.txt; fail=1; }

[ $fail -eq 0 ] && echo "bundle-cli: ok"
exit $fail
