# bench/cluster/cluster-up.sh: sourced by the bench/cluster tables. With root,
# bin, topo, nodes and ppn set: a work folder ($work; kept when KEEP=DIR names
# one), the emulated cluster up (NODES x PPN of TOPOLOGY) and torn down with
# the folder on every exit, p = NODES x PPN.
cluster="$root/scripts/cluster"
export COLLC_NETSWITCH="$bin/collc-netswitch"
work="${KEEP:-$(mktemp -d)}"
mkdir -p "$work"
trap '"$cluster" down >/dev/null 2>&1 || true; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
p=$((nodes * ppn))
"$cluster" down >/dev/null
"$cluster" up "$topo" --nodes "$nodes" --ppn "$ppn" >&2
