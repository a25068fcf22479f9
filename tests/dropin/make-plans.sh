#!/usr/bin/env bash
# tests/dropin/make-plans.sh COLLC OUT: the plan folders the COLLC_PLAN_PATH
# tests use, made with the collc tool.
#   OUT/good:  a bundle for allreduce on 4 ranks (recursive_doubling below
#              2 KiB, rabenseifner from 2 KiB), a ring for 3 ranks that does not
#              claim in-place use, a reduce to
#              root 3 on 4 ranks, a plan for 16 ranks (never fits: used=0), and
#              two files the interposer must refuse with a warning: a truncated
#              plan and a corrupted bundle.
#   OUT/odd:   files that are not plans at all — a directory named x.cplan,
#              a FIFO named y.cbundle, an empty .cbundle and an empty .cplan —
#              one warning each, and a good plan that must still be used.
#   OUT/open:  a good plan in a folder every user can write (trust model).
#   OUT/swapped: a 2-rank allreduce that is correct for commutative
#              operations but whose ranks combine the operands in opposite
#              orders (x1 ∘ x0 and x0 ∘ x1): proven, not identical, so
#              COLLC_VERIFY=1 must refuse it.
#   OUT/unproven: a correct ring for 4 ranks compiled with --no-verify: its
#              file records no proof, so it is refused unless COLLC_VERIFY=1
#              or COLLC_ACCEPT_UNPROVEN=1.
#   OUT/lying: a ring for 4 ranks compiled with --no-verify from text that
#              claims `commutative: false` — the plan is wrong for
#              non-commutative operations, and COLLC_VERIFY=1 must refuse it.
set -eu
collc=$1 out=$2
rm -rf "$out"
mkdir -p "$out/good" "$out/lying" "$out/swapped" "$out/unproven" "$out/odd/x.cplan" "$out/tmp"
t=$out/tmp
gen() { "$collc" gen "$@"; }
gen recursive_doubling --ranks 4 | "$collc" compile - -o "$t/rd4.cplan"
gen rabenseifner --ranks 4 | "$collc" compile - -o "$t/rab4.cplan"
"$collc" bundle "$t/rd4.cplan@0-2K" "$t/rab4.cplan@2K-" -o "$out/good/allreduce-4.cbundle"
# Not declared in-place: in-place calls must still be right (the runtime copies
# the input aside first).
gen ring --ranks 3 | sed 's/^in_place: true/in_place: false/' |
  "$collc" compile - -o "$out/good/allreduce-ring-3.cplan"
gen binary_tree --collective reduce --ranks 4 --root 3 |
  "$collc" compile - -o "$out/good/reduce-tree-4-root3.cplan"
gen ring --ranks 16 | "$collc" compile - -o "$out/good/allreduce-ring-16.cplan"
head -c 40 "$t/rab4.cplan" > "$out/good/truncated.cplan"
cp "$out/good/allreduce-4.cbundle" "$out/good/corrupt.cbundle"
printf '\x55' | dd of="$out/good/corrupt.cbundle" bs=1 seek=60 conv=notrunc status=none
gen ring --ranks 4 | sed 's/^commutative: true/commutative: false/' |
  "$collc" compile --no-verify - -o "$out/lying/allreduce-ring-4.cplan"
mkfifo "$out/odd/y.cbundle"
: > "$out/odd/empty.cbundle"
: > "$out/odd/empty.cplan"
cp "$out/good/allreduce-ring-3.cplan" "$out/odd/"
# A good plan of a collective the drop-in does not serve (its calls go native).
# OUT/open: that good plan in a folder every user can write (no sticky bit):
# refused unless COLLC_TRUSTED names the folder.
mkdir -p "$out/open"
cp "$out/good/allreduce-ring-3.cplan" "$out/open/"
chmod 0777 "$out/open"
gen ring --ranks 4 | "$collc" compile --no-verify - -o "$out/unproven/allreduce-ring-4.cplan" 2>/dev/null
cat <<'EOF' | "$collc" compile -O0 - -o "$out/swapped/allreduce-swapped-2.cplan"
format: collc-plan/1
collective: allreduce
algorithm: swapped_pair
ranks: 2
chunks: 1
commutative: true
programs:
  0:
    - {step: 0, op: copy, buf: out, chunk: 0, src: in}
    - {step: 1, op: send, to: 1, buf: in, chunk: 0}
    - {step: 1, op: recv_reduce, from: 1, buf: out, chunk: 0, order: recv_first}
  1:
    - {step: 0, op: copy, buf: out, chunk: 0, src: in}
    - {step: 1, op: send, to: 0, buf: in, chunk: 0}
    - {step: 1, op: recv_reduce, from: 0, buf: out, chunk: 0, order: recv_first}
EOF
rm -rf "$t"
