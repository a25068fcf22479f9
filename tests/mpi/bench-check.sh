#!/usr/bin/env bash
# tests/mpi/bench-check.sh BIN NP [FLAVOUR]: compiles the library's plans (every
# allreduce, every reduce at root NP-1, and k = 3 variants of the radix
# algorithms) whose files accept NP ranks, and runs
#   mpirun -np NP collc-bench --plan-dir DIR --all-pairs --check --json
# which checks every (op, datatype) pair collc has a kernel for, and the
# non-commutative matrix product, against the exact fold. Fails if any row is
# wrong, or if a refusal is anything but a commutative-only plan given the
# non-commutative operation. FLAVOUR: openmpi (default; mpirun) or mpich
# (BIN is then bin/mpich, run by mpirun.mpich).
set -euo pipefail
bin=$1 np=$2 flavour=${3:-openmpi}
launch=(mpirun --oversubscribe --mca mpi_yield_when_idle 1)
[ "$flavour" = mpich ] && launch=(mpirun.mpich)
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
# Swing is defined for powers of two only (its files' `require`).
pow2=$(( (np & (np - 1)) == 0 ))
plans=0
gen() { # gen NAME COLLECTIVE [collc gen options...]
  local name=$1 coll=$2; shift 2
  "$bin/collc" gen "$@" --collective "$coll" --ranks "$np" |
    "$bin/collc" compile - -o "$dir/$coll-$name.cplan"
  plans=$((plans + 1))
}
for a in binary_tree recursive_doubling rabenseifner binary_blocks ring recursive_multiplying chain; do
  gen "$a" allreduce "$a"
done
gen recursive_multiplying3 allreduce recursive_multiplying --set k=3
if [ "$pow2" -eq 1 ]; then
  gen swing_latency allreduce swing_latency
  gen swing_bandwidth allreduce swing_bandwidth
fi
for a in binomial binary_tree rabenseifner knomial; do
  gen "$a" reduce "$a" --root $((np - 1))
done
gen knomial3 reduce knomial --root $((np - 1)) --set k=3
"${launch[@]}" -np "$np" "$bin/collc-bench" \
  --plan-dir "$dir" --all-pairs --check --json --sizes 32,1000 --iters 1 --warmup 0 \
  > "$dir/rows.jsonl" 2> "$dir/stderr" || { cat "$dir/stderr" >&2; grep -v '"ok": true' "$dir/rows.jsonl" | head >&2; exit 1; }
rows=$(wc -l < "$dir/rows.jsonl")
ok=$(grep -c '"ok": true' "$dir/rows.jsonl" || true)
# Refused: commutative-only plans (binary_blocks, ring, recursive_multiplying, swing_*) with the matrix product.
refused=$(grep -v '"ok": true' "$dir/rows.jsonl" || true)
bad=$(echo "$refused" | grep -v '^$' | grep -v '"op": "noncommutative"' || true)
if [ -n "$bad" ] || grep -q '"algorithm": "\(binary_tree\|recursive_doubling\|rabenseifner\|binomial\|chain\|knomial\)"' <<<"$refused"; then
  echo "unexpected rows:" >&2; printf '%s\n' "$refused" | sed -n 1,10p >&2; exit 1
fi
expected=$(( (116 + 1) * plans * 2 ))
[ "$rows" -eq "$expected" ] || { echo "expected $expected rows, got $rows" >&2; exit 1; }
echo "np $np: $ok of $rows rows exact, $((rows - ok)) refused (commutative-only plan, non-commutative op)"
