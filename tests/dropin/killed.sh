#!/usr/bin/env bash
# tests/dropin/killed.sh MPIEXEC LIB PROGRAM NP: a rank killed mid-collective
# (killed.c) ends the job, natively and under the drop-in, within a time
# bound (no rank left waiting forever), with mpirun's failure status; and the
# drop-in's run leaves no shared-memory segment (/dev/shm/collc-<pid>-*) of
# any of its processes behind.
set -u
mpiexec=$1 lib=$2 prog=$3 np=$4
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/collc-killed.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
run=("$mpiexec" --oversubscribe --mca mpi_yield_when_idle 1 -n "$np")
fail=0
for how in native dropin; do
  xs=()
  [ "$how" = dropin ] && xs=(-x "LD_PRELOAD=$lib")
  timeout 120 "${run[@]}" "${xs[@]}" "$prog" >"$tmp/$how.out" 2>"$tmp/$how.err"
  rc=$?
  if [ "$rc" = 124 ]; then
    echo "FAIL: $how: the job did not end within 120 s after a rank was killed" >&2
    fail=1
  elif [ "$rc" = 0 ]; then
    echo "FAIL: $how: the job succeeded although a rank was killed" >&2
    fail=1
  fi
  if grep -q "not killed" "$tmp/$how.out"; then
    echo "FAIL: $how: a rank finished its loop" >&2
    fail=1
  fi
  pids=$(awk '$1 == "pid" { print $3 }' "$tmp/$how.out")
  if [ "$(echo "$pids" | grep -c .)" != "$np" ]; then
    echo "FAIL: $how: expected $np process ids, got: $pids" >&2
    fail=1
  fi
  for p in $pids; do
    if ls /dev/shm/collc-"$p"-* >/dev/null 2>&1; then
      echo "FAIL: $how: shared memory left behind: $(ls /dev/shm/collc-"$p"-*)" >&2
      rm -f /dev/shm/collc-"$p"-*
      fail=1
    fi
  done
  echo "$how: exit $rc"
done
exit $fail
