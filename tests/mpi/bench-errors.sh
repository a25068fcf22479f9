#!/usr/bin/env bash
# tests/mpi/bench-errors.sh BIN: collc-bench's errors for bad plans and
# arguments — each one line on stderr and exit 2 before anything is timed,
# never an abort, a hang or a row of results for a plan that was not run.
set -uo pipefail
bin=$1
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
"$bin/collc" gen ring --ranks 2 | "$bin/collc" compile - -o "$dir/ring2.cplan" || exit 1
mkdir -p "$dir/plans/sub.cplan" "$dir/a" "$dir/b"
cp "$dir/ring2.cplan" "$dir/a/x.cplan"
"$bin/collc" gen recursive_doubling --ranks 2 | "$bin/collc" compile - -o "$dir/b/y.cplan"
mkfifo "$dir/fifo.cplan"
: > "$dir/empty.cplan"
status=0
# expect EXIT REGEX ARGS...: collc-bench exits with EXIT and stderr matches REGEX.
expect() {
  local want=$1 re=$2; shift 2
  timeout 60 mpirun -np 2 --oversubscribe --mca mpi_yield_when_idle 1 "$bin/collc-bench" "$@" \
    > "$dir/out" 2> "$dir/err"
  local rc=$?
  if [ "$rc" -ne "$want" ] || { [ -n "$re" ] && ! grep -Eq -- "$re" "$dir/err"; }; then
    echo "FAIL: collc-bench $*: exit $rc (expected $want), stderr:" >&2
    head -5 "$dir/err" >&2
    status=1
  fi
  if [ "$want" -eq 2 ] && grep -q ERROR "$dir/out"; then
    echo "FAIL: collc-bench $*: printed result rows for a plan it could not run" >&2
    status=1
  fi
}
expect 2 "^collc-bench: error: cannot load a plan: cannot read '$dir/plans': it is a directory, not a file$" \
  --plan "$dir/plans"
expect 2 "cannot read '$dir/plans/sub.cplan': it is a directory, not a file$" --plan-dir "$dir/plans"
expect 2 "cannot read '$dir/fifo.cplan': it is a FIFO, not a regular file$" --plan "$dir/fifo.cplan"
expect 2 "cannot load a plan: $dir/empty.cplan: empty input: not a compiled plan" --plan "$dir/empty.cplan"
expect 2 "^collc-bench: error: --sizes: 8 bytes is less than one mat2x2_uint32 element \(16 bytes\)$" \
  --plan "$dir/ring2.cplan" --op noncommutative --sizes 8
# Two --plan-dir: both are used.
expect 0 "" --plan-dir "$dir/a" --plan-dir "$dir/b" --sizes 8 --iters 1 --warmup 0 --check
for name in x.cplan y.cplan; do
  grep -q "^$name " "$dir/out" || { echo "FAIL: --plan-dir twice: no row for $name" >&2; status=1; }
done
[ $status -eq 0 ] && echo "collc-bench errors: ok"
exit $status
