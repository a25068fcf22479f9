# bench/mpi.sh: sourced by the table scripts after they set $build — the MPI
# a table measures, chosen by MPI=openmpi (the default) or MPI=mpich
# (docs/mpi.md). Sets:
#   bin      the build's programs for that MPI ($build/bin or $build/bin/mpich)
#   mpiname  "Open MPI" or "MPICH", for the table's title
# and defines
#   mpi_check_ranks P...     exits if MPI=mpich and some P exceeds the cores
#   launch P [VAR=VALUE...]  the launcher for P ranks with VAR set on every
#                            rank, one word per line (mapfile -t cmd < <(launch ...))
# Open MPI is told to oversubscribe and yield when P exceeds the cores; MPICH
# cannot be told to yield (its ranks spin), so its tables stop at one rank per core.
MPI=${MPI:-openmpi}
case $MPI in
  openmpi) bin=$build/bin mpiname="Open MPI" ;;
  mpich) bin=$build/bin/mpich mpiname="MPICH" ;;
  *) echo "MPI=$MPI: openmpi or mpich" >&2; exit 2 ;;
esac
[ -x "$bin/collc-bench" ] || { echo "no $bin/collc-bench: build collc for $mpiname first" >&2; exit 2; }
launch() {
  local p=$1; shift
  if [ "$MPI" = openmpi ]; then
    printf '%s\n' mpirun -np "$p"
    [ "$p" -gt "$(nproc)" ] && printf '%s\n' --oversubscribe --mca mpi_yield_when_idle 1
    for e in "$@"; do printf '%s\n' -x "$e"; done
  else
    printf '%s\n' mpirun.mpich -np "$p"
    for e in "$@"; do printf '%s\n' -genv "${e%%=*}" "${e#*=}"; done
  fi
}
mpi_check_ranks() {
  [ "$MPI" = mpich ] || return 0
  for p in "$@"; do
    [ "$p" -le "$(nproc)" ] ||
      { echo "MPI=mpich: $p ranks on $(nproc) cores spin natively; use p <= $(nproc)" >&2; exit 2; }
  done
}
