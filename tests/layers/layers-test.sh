#!/usr/bin/env bash
# The layer check (scripts/check-layers) fails on an include that runs up a
# layer, names the file and line, and passes a tree whose includes run down.
set -u
CHECK="$1"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mk() { mkdir -p "$(dirname "$WORK/$1")"; printf '%s\n' "${@:2}" > "$WORK/$1"; }

# A tree whose includes all run down (or stay within a folder).
mk ir/Plan.h '#include "llvm/ADT/StringRef.h"' '#include <vector>'
mk lang/Parser.cpp '#include "lang/Parser.h"' '#include "ir/Plan.h"' '#include "Lexer.h"'
mk compiler/Lower.cpp '#include "ir/Plan.h"' '#include "runtime/bytecode/Format.h"'
mk tune/Tuner.cpp '#include "schedules/Generators.h"' '#include "model/Simulator.h"'
out="$("$CHECK" "$WORK" 2>&1)" || fail "a clean tree was refused: $out"

# The compiler may use the bytecode format, not the interpreter.
mk compiler/Lower.cpp '#include "ir/Plan.h"' '#include "runtime/core/Executor.h"'
out="$("$CHECK" "$WORK" 2>&1)" && fail "compiler -> runtime/core was accepted"
grep -q 'compiler/Lower.cpp:2: error: .compiler. includes "runtime/core/Executor.h"' <<<"$out" \
  || fail "the error does not name the file and line: $out"
mk compiler/Lower.cpp '#include "ir/Plan.h"'

# The language front end sits below the library; the library below the tuner.
mk lang/Instantiator.cpp '#include "schedules/Generators.h"'
mk schedules/Generators.cpp '  #  include "tune/Tuner.h"'
out="$("$CHECK" "$WORK" 2>&1)" && fail "lang -> schedules and schedules -> tune were accepted"
grep -q 'lang/Instantiator.cpp:1: error' <<<"$out" || fail "lang -> schedules not reported: $out"
grep -q 'schedules/Generators.cpp:1: error' <<<"$out" || fail "schedules -> tune not reported: $out"

# A more specific folder's rule wins: runtime/bytecode may not use runtime/core.
rm "$WORK/lang/Instantiator.cpp" "$WORK/schedules/Generators.cpp"
mk runtime/bytecode/Loader.cpp '#include "runtime/core/Executor.h"'
out="$("$CHECK" "$WORK" 2>&1)" && fail "runtime/bytecode -> runtime/core was accepted"
grep -q 'runtime/bytecode/Loader.cpp:1: error' <<<"$out" || fail "not reported: $out"

# No sources at all is an error, not a pass.
out="$("$CHECK" "$WORK/nothing" 2>&1)" && fail "an empty tree passed"
grep -q 'no source files' <<<"$out" || fail "unclear message for an empty tree: $out"
echo "layers-test: ok"
