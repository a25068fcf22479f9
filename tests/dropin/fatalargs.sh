#!/usr/bin/env bash
# tests/dropin/fatalargs.sh MPIEXEC LIB PROGRAM NP: each case of fatalargs.c
# under MPI_ERRORS_ARE_FATAL, natively and under the drop-in: both runs must
# fail, and name the same MPI error class (MPI_ERR_*) on stderr.
set -u
mpiexec=$1 lib=$2 prog=$3 np=$4
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/collc-fatal.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
run=("$mpiexec" --oversubscribe --mca mpi_yield_when_idle 1 -n "$np")
fail=0
for c in 0 1 2 3 4 5; do
  classes=()
  for how in native dropin; do
    xs=()
    [ "$how" = dropin ] && xs=(-x "LD_PRELOAD=$lib")
    # Open MPI sometimes ends the job before the aborting process's message
    # is out: up to three tries for a message.
    for try in 1 2 3; do
      timeout 60 "${run[@]}" "${xs[@]}" "$prog" "$c" >"$tmp/$how.out" 2>"$tmp/$how.err"
      rc=$?
      grep -q 'MPI_ERR_' "$tmp/$how.err" && break
    done
    if [ "$rc" = 0 ] || [ "$rc" = 124 ]; then
      echo "FAIL: case $c, $how: exit $rc (expected MPI to end the job)" >&2
      fail=1
    fi
    classes+=("$(grep -o 'MPI_ERR_[A-Z_]*' "$tmp/$how.err" | sort -u | tr '\n' ' ')")
  done
  if [ -z "${classes[0]}" ] || [ "${classes[0]}" != "${classes[1]}" ]; then
    echo "FAIL: case $c: native says '${classes[0]}', under the drop-in '${classes[1]}'" >&2
    fail=1
  fi
  echo "case $c: ${classes[0]}"
done
exit $fail
