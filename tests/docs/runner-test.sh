#!/usr/bin/env bash
# The document runner (doc-blocks.sh): what passes, what fails and how it says so.
set -u
RUN="$1"
W="$(mktemp -d)"
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$W/root/examples" "$W/build/bin"
echo shipped > "$W/root/examples/data.txt"
run() { bash "$RUN" --root "$W/root" --build "$W/build" "$@"; }

# Exports and the working directory carry from block to block; shown output
# is found; skip and status markers; a shipped file is there.
cat > "$W/good.md" <<'DOC'
Text.
```sh
export GREETING=hello
mkdir -p sub && cd sub
```
```sh
echo "$GREETING from $(basename "$PWD")"
#   hello from sub
cat ../examples/data.txt   # shipped
#   shipped
echo "a long line that goes on"
#   a long line ...
```
<!-- doc-test: skip covered elsewhere -->
```sh
false
```
<!-- doc-test: status 3 -->
```sh
true
(exit 3)
```
<!-- doc-test: slow -->
```sh
echo slow > "$HOME/slow-ran"
```
DOC
out="$(run "$W/good.md" 2>&1)" || fail "a good page failed: $out"
grep -q '3 run, 2 skipped, 0 failed' <<<"$out" || fail "wrong tally: $out"
grep -q 'SKIP .*good.md:15 (covered elsewhere)' <<<"$out" || fail "skip not reported: $out"
out="$(run --slow "$W/good.md" 2>&1)" || fail "--slow failed: $out"
grep -q '4 run, 1 skipped, 0 failed' <<<"$out" || fail "--slow did not run the slow block: $out"

# A block that fails, one whose output lacks a shown line, one that ends with
# the wrong status: each is a FAIL naming the page and line, and the page fails.
cat > "$W/bad.md" <<'DOC'
```sh
echo one
false
echo never
```
```sh
echo two
#   three
```
<!-- doc-test: status 1 -->
```sh
true
```
DOC
out="$(run "$W/bad.md" 2>&1)" && fail "a bad page passed: $out"
grep -q 'FAIL .*bad.md:1: ended with status 1, not 0' <<<"$out" || fail "failing command: $out"
grep -q 'FAIL .*bad.md:6: its output lacks the line it shows: three' <<<"$out" || fail "shown output: $out"
grep -q 'FAIL .*bad.md:11: ended with status 0, not 1' <<<"$out" || fail "status: $out"
grep -q 'echo never' <<<"$out" || fail "the failing block is not shown: $out"

# An unknown marker and a page without blocks are errors, not passes.
printf '<!-- doc-test: sometimes -->\n```sh\ntrue\n```\n' > "$W/marker.md"
out="$(run "$W/marker.md" 2>&1)" && fail "an unknown marker passed"
grep -q 'unknown doc-test marker: sometimes' <<<"$out" || fail "unclear marker error: $out"
printf 'no blocks\n' > "$W/empty.md"
out="$(run "$W/empty.md" 2>&1)" && fail "a page without blocks passed"
grep -q 'has no sh blocks' <<<"$out" || fail "unclear empty-page error: $out"

# A block that does not finish is stopped.
printf '```sh\nsleep 30\n```\n' > "$W/slow.md"
out="$(COLLC_DOC_TIMEOUT=1 run "$W/slow.md" 2>&1)" && fail "a hanging block passed"
grep -q 'did not finish in 1 s' <<<"$out" || fail "timeout not reported: $out"
echo "runner-test: ok"
