#!/usr/bin/env bash
# bench/soak/soak.sh: the soak (tests/dropin/soak.c) for a time budget,
# natively and under libcollc_mpi.so, same seed: every served collective in
# every form at random sizes, communicators made and freed, a non-commutative
# user operation, two threads every fourth iteration, every result checked.
# Prints each run's table — per tenth of the budget, the iterations, the time
# per iteration and the largest resident memory of any rank — and a summary
# line per run: memory growth from the second window to the last, and the
# last window's time per iteration against the second's (drift).
#   usage: bench/soak/soak.sh [BUILD_DIR] [SECONDS] [NP] [SEED]   (default build 3600 4 1)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}; seconds=${2:-3600}; np=${3:-4}; seed=${4:-1}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun -np "$np")
[ "$np" -gt "$(nproc)" ] && mpi+=(--oversubscribe --mca mpi_yield_when_idle 1)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
status=0
for how in native collc; do
  xs=()
  [ "$how" = collc ] && xs=(-x "LD_PRELOAD=$build/lib/libcollc_mpi.so")
  echo "## $how, $np ranks, ${seconds} s, seed $seed"
  if ! timeout $((seconds * 2 + 300)) "${mpi[@]}" "${xs[@]}" "$build/bin/collc-dropin-soak" \
      "$seconds" "$seed" > "$work/$how.out" 2> "$work/$how.err"; then
    status=1
    tail -5 "$work/$how.err" >&2
  fi
  cat "$work/$how.out"
  awk 'NR > 1 && $1 ~ /^[0-9]+$/ { ms[$1] = $3; rss[$1] = $4; last = $1 }
       END { if (last > 1 && ms[1] > 0)
               printf "summary: memory %.1f -> %.1f MiB (%+.1f), time per iteration %.1f -> %.1f ms (x%.2f)\n",
                      rss[1], rss[last], rss[last] - rss[1], ms[1], ms[last], ms[last] / ms[1] }' \
    "$work/$how.out"
  echo
done
exit $status
