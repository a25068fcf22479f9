#!/usr/bin/env bash
# tests/mpi/bench-check.sh BIN NP: compiles the eight plans (five allreduce,
# three reduce at root NP-1) for NP ranks and runs
#   mpirun -np NP collc-bench --plan-dir DIR --all-pairs --check --json
# which checks every (op, datatype) pair collc has a kernel for, and the
# non-commutative matrix product, against the exact fold. Fails if any row is
# wrong, or if a refusal is anything but a commutative-only plan given the
# non-commutative operation.
set -euo pipefail
bin=$1 np=$2
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
for a in binary_tree recursive_doubling rabenseifner binary_blocks ring; do
  "$bin/collc" gen "$a" --ranks "$np" | "$bin/collc" compile - -o "$dir/allreduce-$a.cplan"
done
for a in binomial binary_tree rabenseifner; do
  "$bin/collc" gen "$a" --collective reduce --ranks "$np" --root $((np - 1)) |
    "$bin/collc" compile - -o "$dir/reduce-$a.cplan"
done
mpirun -np "$np" --oversubscribe --mca mpi_yield_when_idle 1 "$bin/collc-bench" \
  --plan-dir "$dir" --all-pairs --check --json --sizes 32,1000 --iters 1 --warmup 0 \
  > "$dir/rows.jsonl" 2> "$dir/stderr" || { cat "$dir/stderr" >&2; grep -v '"ok": true' "$dir/rows.jsonl" | head >&2; exit 1; }
rows=$(wc -l < "$dir/rows.jsonl")
ok=$(grep -c '"ok": true' "$dir/rows.jsonl" || true)
# Refused: commutative-only plans (rabenseifner, binary_blocks, ring) with the matrix product.
refused=$(grep -v '"ok": true' "$dir/rows.jsonl" || true)
bad=$(echo "$refused" | grep -v '^$' | grep -v '"op": "noncommutative"' || true)
if [ -n "$bad" ] || echo "$refused" | grep -q '"algorithm": "\(binary_tree\|recursive_doubling\|binomial\)"'; then
  echo "unexpected rows:" >&2; echo "$refused" | head >&2; exit 1
fi
expected=$(( (116 + 1) * 8 * 2 ))
[ "$rows" -eq "$expected" ] || { echo "expected $expected rows, got $rows" >&2; exit 1; }
echo "np $np: $ok of $rows rows exact, $((rows - ok)) refused (commutative-only plan, non-commutative op)"
