# scripts/bootstrap.sh: sourced by ./scripts/demo and ./scripts/test.
# Installs the Debian packages collc needs when they are missing (as root,
# unattended), then configures and builds into $BUILD (default ./build).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
JOBS="${JOBS:-$(nproc)}"

collc_packages=(cmake ninja-build g++ python3 llvm-14-dev llvm-14-tools libyaml-cpp-dev
                libopenmpi-dev openmpi-bin mpich libmpich-dev libgtest-dev libbenchmark-dev chromium
                clang-14 libclang-rt-14-dev)

collc_install_missing() {
  local missing=() p
  for p in "${collc_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "collc: missing Debian packages: ${missing[*]}" >&2
    echo "collc: run as root, or: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  echo "collc: installing ${missing[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

collc_build() {
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCOLLC_WERROR="${COLLC_WERROR:-OFF}" -DCOLLC_TEST_DIRS=all \
        -DCOLLC_MPICH="${COLLC_MPICH:-ON}" "$@"
  cmake --build "$BUILD" -j "$JOBS"
}

# Open MPI refuses to run as root unless told, and we oversubscribe 2 cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
