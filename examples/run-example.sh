#!/usr/bin/env bash
# examples/run-example.sh COLLC MPIEXEC EXAMPLE PLAN NP SRC_DIR WORK_DIR
# Compiles PLAN (a plan or algorithm file in SRC_DIR, or a library algorithm's
# name) for NP ranks and
# runs the example program on it; the example prints "ok" when every result
# matches MPI_Allreduce.
set -euo pipefail
collc=$1 mpiexec=$2 example=$3 plan=$4 np=$5 src=$6 work=$7
mkdir -p "$work"
out=$work/$plan.np$np.cplan
if [ -f "$src/$plan.yaml" ]; then
  "$collc" compile "$src/$plan.yaml" -o "$out"
elif [ -f "$src/$plan.calgo" ]; then
  "$collc" compile "$src/$plan.calgo" --ranks "$np" -o "$out"
else
  "$collc" gen "$plan" --ranks "$np" | "$collc" compile - -o "$out"
fi
extra=()
[ "$np" -gt "$(nproc)" ] && extra=(--oversubscribe --mca mpi_yield_when_idle 1)
exec "$mpiexec" -np "$np" "${extra[@]}" "$example" "$out"
