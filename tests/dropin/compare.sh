#!/usr/bin/env bash
# tests/dropin/compare.sh: run an MPI program natively and under
# libcollc_mpi.so (LD_PRELOAD through mpirun -x) and require the same stdout.
#
# usage: compare.sh --mpiexec MPIEXEC --np N [options] -- PROGRAM [ARGS...]
#   --flavour F          openmpi (default: mpirun -x, --oversubscribe) or mpich
#                        (Hydra's mpiexec: -genv, -env per rank)
#   --lib LIB            the interposer (required unless --native-only or --component)
#   --component DIR      instead of preloading LIB, run with Open MPI's coll/collc
#                        component from DIR (mca_coll_collc.so) at priority 90
#   --ref FILE           the native output to compare with; written by --native-only,
#                        run natively now when not given
#   --native-only        run natively and write --ref (a fixture for later tests)
#   --preload-only       do not compare; the program checks itself (see --expect)
#   --env VAR=VALUE      set for the preloaded run (repeatable)
#   --rank-env R VAR=VALUE  set for rank R of the preloaded run only (repeatable): the
#                        run becomes MPMD, one app context per rank (mpirun A : B : ...)
#   --warnings N         exactly N "collc: warning:" lines on stderr
#   --stderr REGEX       stderr of the preloaded run must match (grep -E; repeatable)
#   --no-stderr REGEX    ... must not match (repeatable)
#   --expect REGEX       stdout of the preloaded run must match (repeatable)
# Open MPI options: --oversubscribe (up to 8 ranks on 2 cores) and
# mpi_yield_when_idle so oversubscribed ranks yield while they wait. MPICH
# oversubscribes without asking (and spins: its native runs are slow at 8).
set -u
mpiexec="" np=1 lib="" component="" ref="" mode=compare warnings="" flavour=openmpi
envs=() rankenvs=() want=() unwanted=() expect=()
while [ $# -gt 0 ]; do
  case "$1" in
    --mpiexec) mpiexec=$2; shift 2 ;;
    --flavour) flavour=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --lib) lib=$2; shift 2 ;;
    --component) component=$2; shift 2 ;;
    --ref) ref=$2; shift 2 ;;
    --native-only) mode=native; shift ;;
    --preload-only) mode=preload; shift ;;
    --env) envs+=("$2"); shift 2 ;;
    --rank-env) rankenvs+=("$2" "$3"); shift 3 ;;
    --warnings) warnings=$2; shift 2 ;;
    --stderr) want+=("$2"); shift 2 ;;
    --no-stderr) unwanted+=("$2"); shift 2 ;;
    --expect) expect+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "compare.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "compare.sh: no program given" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
case "$flavour" in
  openmpi) launch=("$mpiexec" --oversubscribe --mca mpi_yield_when_idle 1) ;;
  mpich) launch=("$mpiexec") ;;
  *) echo "compare.sh: unknown flavour $flavour (openmpi or mpich)" >&2; exit 2 ;;
esac
# passenv VAR: the launcher's option that gives VAR (set here) to every rank
# (Open MPI: -x VAR; Hydra: -genv VAR VALUE), or one app context (-env).
passenv() {
  if [ "$flavour" = openmpi ]; then printf '%s\n' -x "$2"
  else printf '%s\n' "$1" "${2%%=*}" "${2#*=}"; fi
}
run=("${launch[@]}" -n "$np")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/collc-compare.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if [ "$mode" = native ] || { [ "$mode" = compare ] && [ -z "$ref" ]; }; then
  out=${ref:-$tmp/native.out}
  if ! "${run[@]}" "$@" >"$out.tmp" 2>"$tmp/native.err"; then
    echo "FAIL: the native run failed:" >&2
    cat "$tmp/native.err" >&2
    exit 1
  fi
  mv "$out.tmp" "$out"
  ref=$out
  [ "$mode" = native ] && exit 0
fi

# envopts SCOPE: the launcher options that set LD_PRELOAD and every --env
# (SCOPE: -genv for the whole job, -env for one app context under MPICH).
# LD_PRELOAD is never exported here: it would load the library into the
# launcher and every tool this script runs.
envopts() {
  if [ -n "$component" ]; then
    local builtin
    builtin=$(ompi_info --path pkglibdir --parsable 2>/dev/null | sed -n 's/^path:pkglibdir://p')
    printf '%s\n' --mca mca_base_component_path "${builtin:+$builtin:}$component" \
      --mca coll_collc_priority 90
  else
    passenv "$1" "LD_PRELOAD=$lib"
  fi
  for e in "${envs[@]+"${envs[@]}"}"; do passenv "$1" "$e"; done
}
for e in "${envs[@]+"${envs[@]}"}"; do export "$e"; done
under=libcollc_mpi.so
[ -n "$component" ] && under=coll/collc
if [ ${#rankenvs[@]} -eq 0 ]; then
  mapfile -t xs < <(envopts -genv)
  cmd=("${run[@]}" "${xs[@]}" "$@")
else # MPMD: one app context of one rank each, with its own settings
  mapfile -t xs < <(envopts -env)
  cmd=("${launch[@]}")
  for ((r = 0; r < np; ++r)); do
    [ $r -gt 0 ] && cmd+=(:)
    cmd+=(-n 1 "${xs[@]}")
    for ((i = 0; i < ${#rankenvs[@]}; i += 2)); do
      [ "${rankenvs[i]}" = "$r" ] && mapfile -t -O ${#cmd[@]} cmd < <(passenv -env "${rankenvs[i + 1]}")
    done
    cmd+=("$@")
  done
fi
start=$(date +%s%N)
"${cmd[@]}" >"$tmp/collc.out" 2>"$tmp/collc.err"
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
status=0
if [ $rc -ne 0 ]; then
  echo "FAIL: the run under $under exited with $rc" >&2
  status=1
fi
if [ "$mode" = compare ] && ! diff -u "$ref" "$tmp/collc.out" >"$tmp/diff"; then
  echo "FAIL: the output under $under differs from the native output:" >&2
  head -40 "$tmp/diff" >&2
  status=1
fi
for re in "${expect[@]+"${expect[@]}"}"; do
  grep -Eq -- "$re" "$tmp/collc.out" || { echo "FAIL: stdout does not match '$re'" >&2; status=1; }
done
if [ -n "$warnings" ]; then
  n=$(grep -c '^collc: warning:' "$tmp/collc.err")
  if [ "$n" -ne "$warnings" ]; then
    echo "FAIL: $n 'collc: warning:' lines on stderr, expected $warnings" >&2
    status=1
  fi
fi
for re in "${want[@]+"${want[@]}"}"; do
  grep -Eq -- "$re" "$tmp/collc.err" || { echo "FAIL: stderr does not match '$re'" >&2; status=1; }
done
for re in "${unwanted[@]+"${unwanted[@]}"}"; do
  ! grep -Eq -- "$re" "$tmp/collc.err" || { echo "FAIL: stderr matches '$re'" >&2; status=1; }
done
echo "np $np ${envs[*]+${envs[*]}} ${rankenvs[*]+(per rank: ${rankenvs[*]})}: ${ms} ms under $under"
if [ $status -ne 0 ]; then
  echo "--- stderr of the run under $under (first 60 lines):" >&2
  head -60 "$tmp/collc.err" >&2
fi
exit $status
