#!/bin/sh
# vecreport.sh - which reduce kernels the compiler vectorizes, one line per kernel<Op, Type>.
#
# usage: runtime/kernels/vecreport.sh [c++ compiler] [extra flags...]   (default: c++, flags -O3)
# Compiles Kernels.cpp the way collc_kernels does (-std=c++20 -O3, no -march) with GCC's
# vectorizer dump and prints "<op> <type> <widest vector>" or "scalar". GCC only.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cxx=${1:-c++}
[ $# -gt 0 ] && shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cxx" -std=c++20 -O3 "$@" -I"$root" -fdump-tree-vect-details="$tmp/vect" \
  -c "$here/Kernels.cpp" -o "$tmp/k.o"
awk '
  /^;; Function .*kernel</ {
    fn = $0
    sub(/.*kernel<collc::rt::ReduceOp::/, "", fn); sub(/>.*/, "", fn)
    sub(/, collc::rt::ElemType::/, " ", fn)
    if (!(fn in best)) best[fn] = 0
    cur = fn; next
  }
  /^;; Function / { cur = ""; next }
  cur != "" && /optimized: loop vectorized using/ {
    for (i = 1; i <= NF; i++) if ($i == "using") w = $(i + 1) + 0
    if (w > best[cur]) best[cur] = w
  }
  END {
    for (k in best) printf "%-22s %s\n", k, (best[k] ? best[k] " byte vectors" : "scalar")
  }' "$tmp/vect" | sort
