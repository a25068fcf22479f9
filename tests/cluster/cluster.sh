#!/usr/bin/env bash
# tests/cluster/cluster.sh: the emulated cluster end to end (ctest label
# "cluster"; docs/cluster.md).
#
# usage: cluster.sh --lib LIBCOLLC_MPI --pingpong PROG --program PROG [--program PROG]
#
# Brings up 2 nodes x 1 rank on a 200 µs link, checks that each rank is on
# its own node (its host name, its shared-memory communicator) and that a
# message takes at least the emulated latency, runs each PROGRAM (plain MPI
# programs that print their results: tests/dropin/collectives.c for
# allreduce, family.c for bcast) natively and under the drop-in, requires
# the same output and allreduce and bcast calls the drop-in served, tears the
# cluster down and checks nothing named collc- is left. Exits 77 (ctest:
# skipped, with the reason) when this machine cannot make namespaces.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cluster="$root/scripts/cluster"
lib="" pingpong="" programs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --lib) lib=$2; shift 2 ;;
    --pingpong) pingpong=$2; shift 2 ;;
    --program) programs+=("$2"); shift 2 ;;
    *) echo "cluster.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

skip() { echo "skipped: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "not root: network namespaces need root"
for c in ip unshare; do command -v $c >/dev/null || skip "no '$c' (iproute2, util-linux)"; done
[ -c /dev/net/tun ] || skip "no /dev/net/tun"
ip netns list 2>/dev/null | grep -q '^collc-' &&
  skip "an emulated cluster is up (scripts/cluster status); this test needs the names"
probe="collc-probe-$$"
ip netns add "$probe" 2>/dev/null || skip "cannot make a network namespace here"
ip netns delete "$probe"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/collc-cluster-test.XXXXXX")
trap '"$cluster" down >/dev/null 2>&1; rm -rf "$tmp"' EXIT

cat >"$tmp/two.yaml" <<'EOF'
format: collc-topology/1
name: two-nodes
levels:
  - {name: node, size: 1, latency: 1us, bandwidth: 8GB/s}
  - {name: network, size: 2, latency: 200us, bandwidth: 1Gb/s}
reduce: 4GB/s
EOF

"$cluster" up "$tmp/two.yaml" --nodes 2 --ppn 1 || fail "scripts/cluster up"
# A second up refuses while one is up.
if "$cluster" up "$tmp/two.yaml" --nodes 2 2>"$tmp/second.err"; then
  fail "a second up was accepted"
fi
grep -q "already up" "$tmp/second.err" || fail "a second up: $(cat "$tmp/second.err")"

run() { "$cluster" run --timeout 300 -- mpirun --mca mpi_yield_when_idle 1 -np 2 "$@"; }

run "$pingpong" >"$tmp/pp.out" 2>"$tmp/pp.err" || { cat "$tmp/pp.err"; fail "pingpong"; }
cat "$tmp/pp.out"
grep -q '^rank 0 host collc-n0 node-ranks 1$' "$tmp/pp.out" || fail "rank 0 is not alone on collc-n0"
grep -q '^rank 1 host collc-n1 node-ranks 1$' "$tmp/pp.out" || fail "rank 1 is not alone on collc-n1"
us=$(awk '/^one-way-us/ {print $2}' "$tmp/pp.out")
[ -n "$us" ] || fail "no latency measured"
awk -v us="$us" 'BEGIN { exit !(us >= 200) }' ||
  fail "one message took $us us, less than the emulated 200 us"

: >"$tmp/stats"
for program in "${programs[@]}"; do
  name=$(basename "$program")
  run "$program" >"$tmp/$name.native" 2>"$tmp/$name.native.err" ||
    { cat "$tmp/$name.native.err"; fail "$name: native run"; }
  run -x LD_PRELOAD="$lib" -x COLLC_STATS=1 "$program" >"$tmp/$name.collc" 2>"$tmp/$name.collc.err" ||
    { cat "$tmp/$name.collc.err"; fail "$name: run under the drop-in"; }
  diff "$tmp/$name.native" "$tmp/$name.collc" >"$tmp/diff" ||
    { head -20 "$tmp/diff"; fail "$name: results differ from native"; }
  echo "$name: $(wc -l <"$tmp/$name.native") lines of results equal to native's"
  cat "$tmp/$name.collc.err" >>"$tmp/stats"
done
for coll in allreduce bcast; do
  grep -Eq "^collc: $coll handled=[1-9]" "$tmp/stats" ||
    { cat "$tmp/stats"; fail "the drop-in served no $coll"; }
done

"$cluster" down || fail "scripts/cluster down"
left=$(ip netns list | grep '^collc-' || true)
[ -z "$left" ] || fail "namespaces left: $left"
ip -o link | grep -q 'collc-' && fail "links named collc- left on the host"
[ ! -e /run/collc-cluster ] || fail "state left in /run/collc-cluster"
trap 'rm -rf "$tmp"' EXIT
echo "PASS"
