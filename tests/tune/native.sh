#!/usr/bin/env bash
# tests/tune/native.sh COLLC TOPOLOGY WORK [MPI MPIEXEC NATIVEALGO]...
# collc tune --emit: the tuning files for MPIs' own algorithms, loaded by each
# MPI (MPI: openmpi or mpich; NATIVEALGO: tests/tune/nativealgo.c built for it).
#  - allreduce at 4 ranks over recursive doubling and ring (Open MPI) or
#    Rabenseifner (MPICH, which has no ring allreduce): under the emitted
#    file the MPI's allreduce has, at every size, the combining tree of the
#    algorithm the file names there (nativealgo's signature equals the one
#    with that algorithm forced), and at some size a tree other than its own
#    choice without the file — the file is read and obeyed;
#  - the seven collectives tuned into one file (each --emit merges), and
#    every collective's results right under it at 3, 4 and 5 ranks;
#  - merging replaces an entry rather than adding one; misuse (an unknown
#    format, a file that is not the MPI's, no candidate the MPI has) exits
#    with a clear message and leaves the file as it was.
set -euo pipefail
collc=$1 topo=$2 work=$3
shift 3
rm -rf "$work"
mkdir -p "$work"
cd "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fail() { echo "FAIL: $*" >&2; exit 1; }
sizes="64 4096 65536 1048576"

# The allreduce rules of an Open MPI file at 4 ranks: "BYTES ALGORITHM" lines.
ompi_allreduce_rules() {
  python3 - "$1" <<'PY'
import sys
nums = [int(w) for line in open(sys.argv[1]) for w in line.split("#")[0].split()]
it = iter(nums)
for _ in range(next(it)):
    coll, ncomm = next(it), next(it)
    for _ in range(ncomm):
        ranks, nmsg = next(it), next(it)
        for _ in range(nmsg):
            rule = [next(it) for _ in range(4)]
            if coll == 2 and ranks == 4:
                print(rule[0], rule[1])
assert next(it, None) is None, "numbers after the last collective"
PY
}

# The allreduce selection of an MPICH file for 4 ranks: "BYTES ALGORITHM"
# lines (the MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM name, for a built-in
# operation and a count of 4 or more).
mpich_allreduce_rules() {
  python3 - "$1" <<'PY'
import json, sys
sel = json.load(open(sys.argv[1]))["collective=allreduce"]["comm_type=intra"]["comm_size<=4"]
start = 0
for key, node in sel.items():
    while True:
        algs = [k for k in node if k.startswith("algorithm=")]
        if algs:
            break
        node = node.get("is_op_built_in=yes") or node["count=any"]
    print(start, algs[0].removeprefix("algorithm=MPIR_Allreduce_intra_"))
    if "<" in key:
        start = int(key.split("<")[1])
PY
}

# The rule for a size: the algorithm of the last rule at or below it.
rule_at() { awk -v n="$2" '$1 <= n { a = $2 } END { print a }' "$1"; }

check_mpi() {
  local mpi=$1 mpiexec=$2 prog=$3 fmt file algs
  if [ "$mpi" = openmpi ]; then
    fmt=ompi-rules file=ompi.rules algs=recursive_doubling,ring
    run() { timeout 120 "$mpiexec" --oversubscribe --mca mpi_yield_when_idle 1 -n "$@"; }
    run_file() { run "$1" --mca coll_tuned_use_dynamic_rules 1 \
                   --mca coll_tuned_dynamic_rules_filename "$PWD/$file" "${@:2}"; }
    run_forced() { run 4 --mca coll_tuned_use_dynamic_rules 1 \
                     --mca coll_tuned_allreduce_algorithm "$1" "${@:2}"; }
  else
    fmt=mpich-json file=mpich.json algs=recursive_doubling,rabenseifner
    run() { timeout 120 "$mpiexec" -n "$@"; }
    run_file() { MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$PWD/$file" run "$@"; }
    run_forced() { MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM="$1" run 4 "${@:2}"; }
  fi

  # 1. allreduce: the file's choice is the MPI's.
  "$collc" tune --topology "$topo" --ranks 4 --sizes 8..1M --segments 1 --quiet \
    --algorithms "$algs" -o ar.cbundle --emit "$fmt" "$file" >ar.out \
    || fail "$mpi: tune --emit"
  grep -q "^wrote .*'s selection for allreduce at 4 ranks to $file:" ar.out \
    || { cat ar.out; fail "$mpi: no summary of the file"; }
  if [ "$mpi" = openmpi ]; then
    ompi_allreduce_rules "$file" >ar.rules
  else
    mpich_allreduce_rules "$file" >ar.rules
  fi
  [ "$(wc -l <ar.rules)" -ge 2 ] || { cat "$file"; fail "$mpi: one algorithm at every size"; }
  run_file 4 "$prog" signature $sizes >sig.file || fail "$mpi: the program under the file"
  run 4 "$prog" signature $sizes >sig.own || fail "$mpi: the program without the file"
  for alg in $(cut -d' ' -f2 ar.rules | sort -u); do
    run_forced "$alg" "$prog" signature $sizes >"sig.$alg" || fail "$mpi: forced $alg"
  done
  local differs=0 n want got
  for n in $sizes; do
    want=$(grep "^$n " "sig.$(rule_at ar.rules "$n")")
    got=$(grep "^$n " sig.file)
    [ "$want" = "$got" ] || fail "$mpi: at $n bytes the file names $(rule_at ar.rules "$n"), whose tree is '$want', but the MPI ran '$got'"
    [ "$got" = "$(grep "^$n " sig.own)" ] || differs=1
  done
  [ $differs = 1 ] || fail "$mpi: the file's choice is the MPI's own at every size; the test shows nothing"
  echo "$mpi: allreduce follows the file at $sizes ($(tr '\n' ' ' <ar.rules))"

  # 2. every collective into one file, results right under it.
  local c
  for c in reduce reduce_scatter_block allgather bcast scan exscan; do
    "$collc" tune --topology "$topo" --ranks 4 --collective "$c" --sizes 8..1M --segments 1 \
      --quiet -o "$c.cbundle" --emit "$fmt" "$file" >"$c.out" || fail "$mpi: tune --emit $c"
  done
  if [ "$mpi" = openmpi ]; then
    [ "$(grep -c '^2 *# allreduce$' "$file")" = 1 ] || fail "$mpi: allreduce not once in the file"
    [ "$(awk '{ sub(/#.*/, ""); gsub(/ /, "") } $0 != "" { print; exit }' "$file")" = 7 ] \
      || fail "$mpi: the file does not count 7 collectives"
  else
    python3 - "$file" <<'PY' || fail "$mpi: the seven collectives are not each tuned once"
import json, sys
d = json.load(open(sys.argv[1]))
for c in ["allreduce", "reduce", "reduce_scatter_block", "allgather", "bcast", "scan", "exscan"]:
    sel = d["collective=" + c]
    sel = sel.get("comm_type=intra", sel)
    assert list(sel) == ["comm_size<4", "comm_size<=4", "comm_size=any"], (c, list(sel))
PY
  fi
  local np
  for np in 3 4 5; do
    run_file "$np" "$prog" check 8 $sizes || fail "$mpi: a wrong result under the file at $np ranks"
  done

  # 3. misuse leaves the file alone.
  cp "$file" kept
  if "$collc" tune --topology "$topo" --ranks 4 --collective bcast --algorithms chain \
       --quiet -o x.cbundle --emit "$fmt" "$file" >/dev/null 2>err; then
    fail "$mpi: no candidate the MPI has, yet tune succeeded"
  fi
  grep -q "no compiled candidate is an algorithm" err || { cat err; fail "$mpi: unclear error"; }
  cmp -s kept "$file" || fail "$mpi: a failed tune changed the file"
  echo "not a tuning file" >bad
  if "$collc" tune --topology "$topo" --ranks 4 --quiet -o x.cbundle --emit "$fmt" bad \
       >/dev/null 2>err; then
    fail "$mpi: tune merged into a file that is not the MPI's"
  fi
  grep -q "'bad' exists and cannot be merged into" err || { cat err; fail "$mpi: unclear error"; }
  [ "$(cat bad)" = "not a tuning file" ] || fail "$mpi: the foreign file was changed"
  rm -f "$file" ./*.cbundle
}

if "$collc" tune --topology "$topo" --ranks 4 --quiet -o x.cbundle --emit lammps-json x \
     >/dev/null 2>err; then
  fail "an unknown --emit format was taken"
fi
grep -q "the formats are ompi-rules" err || { cat err; fail "unclear error for an unknown format"; }

while [ $# -ge 3 ]; do
  check_mpi "$1" "$2" "$3"
  shift 3
done
echo "PASS"
