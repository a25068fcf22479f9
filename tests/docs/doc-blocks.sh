#!/usr/bin/env bash
# tests/docs/doc-blocks.sh: run the shell blocks of a markdown document as a
# reader would, in order, and check the output each block shows.
#
# usage: doc-blocks.sh --root SRC --build BUILD [--slow] [--list] FILE.md
#
# Every ```sh block of FILE runs in one scratch folder that looks like a
# checkout after its build (SRC's folders linked in, build/ linked to BUILD),
# as its own `bash -e` (at most COLLC_DOC_TIMEOUT seconds, default 600),
# carrying to the next block what a reader's shell would keep: exported
# variables and the working directory. A block passes when it ends with status
# 0 and its output holds every line it shows: a comment line "#   text" (a
# hash and three spaces) under a command is output that command prints. An
# HTML comment on the line before a block changes how it runs:
#   <!-- doc-test: skip REASON -->  not run (REASON says which test covers it)
#   <!-- doc-test: slow -->         run only with --slow (the ctest label "slow")
#   <!-- doc-test: status N -->     its last command must end with status N (a
#                                   disproof, a refusal); the block runs without -e
#   <!-- doc-test: slow status N --> both
# A shown line ending in "..." is matched up to the dots.
# Files a block needs are made by an earlier block or shipped in the checkout.
# COLLC_DOC_KEEP=1 keeps the scratch folder and each block's output (out.N).
set -u
ROOT="" BUILD="" SLOW=0 LIST=0 FILE=""
while [ $# -gt 0 ]; do
  case "$1" in
    --root) ROOT="$2"; shift 2 ;;
    --build) BUILD="$2"; shift 2 ;;
    --slow) SLOW=1; shift ;;
    --list) LIST=1; shift ;;
    -*) echo "doc-blocks.sh: unknown option $1" >&2; exit 2 ;;
    *) FILE="$1"; shift ;;
  esac
done
[ -n "$FILE" ] && [ -f "$FILE" ] || { echo "doc-blocks.sh: no document given (or not a file): '$FILE'" >&2; exit 2; }
TIMEOUT="${COLLC_DOC_TIMEOUT:-600}"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/collc-doc-XXXXXX")"
if [ -n "${COLLC_DOC_KEEP:-}" ]; then echo "doc-blocks.sh: keeping $WORK"; else trap 'rm -rf "$WORK"' EXIT; fi
mkdir -p "$WORK/blocks" "$WORK/scratch"

# Split FILE into blocks: blocks/N.sh, blocks/N.mode ("run", "slow", "skip
# REASON"), blocks/N.status, blocks/N.line.
awk -v dir="$WORK/blocks" '
  /^<!-- doc-test: / { marker = $0; sub(/^<!-- doc-test: /, "", marker); sub(/ *-->.*$/, "", marker); held = NR; next }
  /^```sh[ \t]*$/ && !inblock {
    n++; inblock = 1
    mode = "run"; status = 0
    if (held > 0 && held == NR - 1) {
      if (marker ~ /^skip /) mode = marker
      else if (marker ~ /^(slow)?( ?status [0-9]+)?$/ && marker != "") {
        if (marker ~ /^slow/) mode = "slow"
        if (marker ~ /status [0-9]+$/) { status = marker; sub(/^.*status /, "", status) }
      } else { print FILENAME ":" held ": unknown doc-test marker: " marker > "/dev/stderr"; bad = 1 }
    }
    print mode > (dir "/" n ".mode"); print status > (dir "/" n ".status"); print NR > (dir "/" n ".line")
    printf "" > (dir "/" n ".sh")
    next
  }
  /^```/ && inblock { inblock = 0; next }
  inblock { print > (dir "/" n ".sh") }
  END { print n + 0 > (dir "/count"); exit bad }
' "$FILE" || exit 2
count="$(cat "$WORK/blocks/count")"
if [ "$count" -eq 0 ]; then
  echo "doc-blocks.sh: $FILE has no sh blocks" >&2
  exit 2
fi
if [ $LIST -eq 1 ]; then
  for ((i = 1; i <= count; i++)); do echo "$FILE:$(cat "$WORK/blocks/$i.line"): $(cat "$WORK/blocks/$i.mode")"; done
  exit 0
fi
[ -d "$ROOT" ] && [ -d "$BUILD" ] || { echo "doc-blocks.sh: --root and --build must be folders" >&2; exit 2; }

# The scratch folder: a checkout after its build.
for entry in "$ROOT"/*; do
  name="$(basename "$entry")"
  [ "$name" = build ] || ln -s "$entry" "$WORK/scratch/$name"
done
ln -s "$BUILD" "$WORK/scratch/build"

# A reader who followed the README: collc on PATH, Open MPI allowed to run
# as root (the README's first steps; --oversubscribe is each command's own).
export HOME="$WORK/home" PATH="$WORK/scratch/build/bin:$PATH"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$HOME"
declare -px > "$WORK/env.0"
env_file="$WORK/env.0" # what the last block that ran left exported
pwd_file="$WORK/pwd"
echo "$WORK/scratch" > "$pwd_file"
failed=0 ran=0 skipped=0
for ((i = 1; i <= count; i++)); do
  mode="$(cat "$WORK/blocks/$i.mode")"
  where="$FILE:$(cat "$WORK/blocks/$i.line")"
  case "$mode" in
    skip*) echo "SKIP $where (${mode#skip })"; skipped=$((skipped + 1)); continue ;;
    slow) if [ $SLOW -eq 0 ]; then echo "SKIP $where (slow: run with --slow)"; skipped=$((skipped + 1)); continue; fi ;;
  esac
  want="$(cat "$WORK/blocks/$i.status")"
  timeout --kill-after=10 "$TIMEOUT" bash -c '
    source "$1" 2>/dev/null
    cd "$(cat "$2")" || exit 97
    [ "$5" -eq 0 ] && set -e
    source "$3"
    status=$?
    set +e
    declare -px > "$4"
    pwd > "$2"
    exit $status
  ' block "$env_file" "$pwd_file" "$WORK/blocks/$i.sh" "$WORK/env.$i" "$want" > "$WORK/out.$i" 2>&1 < /dev/null
  got=$?
  [ -f "$WORK/env.$i" ] && env_file="$WORK/env.$i"
  ran=$((ran + 1))
  problem=""
  if [ "$got" -eq 124 ] || [ "$got" -eq 137 ]; then
    problem="did not finish in ${TIMEOUT} s"
  elif [ "$got" -ne "$want" ]; then
    problem="ended with status $got, not $want"
  fi
  while IFS= read -r shown; do
    text="${shown#\#   }"
    text="${text%"${text##*[![:space:]]}"}"
    text="${text%...}"
    [ -n "$text" ] || continue
    grep -qF -- "$text" "$WORK/out.$i" || problem="${problem:+$problem; }its output lacks the line it shows: $text"
  done < <(grep -E '^#   ' "$WORK/blocks/$i.sh")
  if [ -n "$problem" ]; then
    echo "FAIL $where: $problem"
    echo "---- the block:"; cat "$WORK/blocks/$i.sh"
    echo "---- its output:"; tail -n 40 "$WORK/out.$i"
    echo "----"
    failed=$((failed + 1))
  else
    echo "ok   $where"
  fi
done
echo "doc-blocks.sh: $FILE: $ran run, $skipped skipped, $failed failed"
[ $failed -eq 0 ]
