#!/usr/bin/env bash
# fuzz/check-corpus.sh BIN: the committed seeds of the plan and bundle fuzzers
# still read and prove with the collc in BIN (a seed the reader refuses
# explores little beyond the refusal). After a format change, regenerate them
# with fuzz/make-corpus.sh. Registered as the ctest fuzz.corpus.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
collc=${1:?usage: fuzz/check-corpus.sh BIN}/collc
status=0 n=0
for f in "$root"/fuzz/corpus/plan/*.yaml; do
  n=$((n + 1))
  "$collc" verify "$f" > /dev/null 2>&1 ||
    { echo "FAIL: $f does not verify (collc verify exits $?); run fuzz/make-corpus.sh" >&2; status=1; }
done
for f in "$root"/fuzz/corpus/bundle/*.cbundle; do
  n=$((n + 1))
  "$collc" bundle --list "$f" > /dev/null 2>&1 ||
    { echo "FAIL: $f is not a valid bundle; run fuzz/make-corpus.sh" >&2; status=1; }
done
for f in "$root"/fuzz/corpus/rules/*.yaml; do
  n=$((n + 1))
  [ -f "$root/tests/dropin/rules/${f##*/}" ] && ! cmp -s "$f" "$root/tests/dropin/rules/${f##*/}" &&
    { echo "FAIL: $f differs from tests/dropin/rules; run fuzz/make-corpus.sh" >&2; status=1; }
done
[ "$n" -ge 20 ] || { echo "FAIL: only $n seeds found" >&2; status=1; }
[ $status -eq 0 ] && echo "fuzz corpus: $n seeds ok"
exit $status
