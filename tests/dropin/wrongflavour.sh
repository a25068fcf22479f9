#!/usr/bin/env bash
# tests/dropin/wrongflavour.sh MPIEXEC FLAVOUR LIB PROGRAM: LIB, the drop-in
# built for the other MPI, preloaded into PROGRAM (an MPI program of FLAVOUR,
# launched by MPIEXEC) at 2 ranks: the run must fail before main, with
# collc's message naming both MPIs and the library to preload instead, and
# the program must print nothing (it never ran).
set -u
mpiexec=$1 flavour=$2 lib=$3 prog=$4
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/collc-flavour.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
case "$flavour" in
  openmpi) run=("$mpiexec" --oversubscribe -n 2 -x "LD_PRELOAD=$lib")
           want="built for MPICH, but the program runs 'Open MPI v"
           instead="lib/libcollc_mpi.so" ;;
  mpich) run=("$mpiexec" -n 2 -genv LD_PRELOAD "$lib")
         want="built for Open MPI, but the program runs 'MPICH Version:"
         instead="lib/mpich/libcollc_mpi.so" ;;
  *) echo "wrongflavour.sh: unknown flavour $flavour" >&2; exit 2 ;;
esac
timeout 60 "${run[@]}" "$prog" >"$tmp/out" 2>"$tmp/err"
rc=$?
fail=0
if [ "$rc" = 0 ] || [ "$rc" = 124 ]; then
  echo "FAIL: exit $rc, expected the run to stop" >&2; fail=1
fi
grep -qF "collc: error: this libcollc_mpi.so was $want" "$tmp/err" ||
  { echo "FAIL: no message naming both MPIs on stderr" >&2; fail=1; }
grep -qF "preload the drop-in built for that MPI ($instead" "$tmp/err" ||
  { echo "FAIL: the message does not name $instead" >&2; fail=1; }
if [ -s "$tmp/out" ]; then
  echo "FAIL: the program printed (it should not have started):" >&2; head -5 "$tmp/out" >&2; fail=1
fi
[ $fail = 0 ] || { echo "--- stderr:" >&2; head -20 "$tmp/err" >&2; }
exit $fail
