#!/usr/bin/env bash
# tests/install/install-test.sh CMAKE BUILD SRC MPIEXEC WORK
# Installs the build into a temporary prefix, moves the prefix (an installation
# must not depend on where it was made), then builds examples/allreduce.c
# against it twice — CMake (find_package(collc), collc::runtime) and pkg-config
# (collc.pc) — and runs both under mpirun on a plan the installed collc
# compiles from the installed algorithm library. Each run prints "ok".
set -euo pipefail
cmake=$1 build=$2 src=$3 mpiexec=$4 work=$5
rm -rf "$work"
mkdir -p "$work"
fail() { echo "install test: $*" >&2; exit 1; }

"$cmake" --install "$build" --prefix "$work/first" >"$work/install.log" ||
  fail "cmake --install failed (see $work/install.log)"
mv "$work/first" "$work/prefix"
P=$work/prefix
libdir=
for d in lib lib64 lib/*-linux-gnu; do
  [ -z "$libdir" ] && [ -f "$P/$d/libcollc.so" ] && libdir=$d
done
[ -n "$libdir" ] || fail "no libcollc.so under $P"
for f in bin/collc bin/collc-bench "$libdir/libcollc.so" "$libdir/libcollc_mpi.so" \
         include/collc/collc.h include/collc/collc.hpp \
         "$libdir/cmake/collc/collcConfig.cmake" "$libdir/cmake/collc/collcConfigVersion.cmake" \
         "$libdir/pkgconfig/collc.pc" share/collc/schedules/ring.calgo \
         share/collc/topologies/cluster-64x32.yaml share/collc/topologies/emulated-4x2.yaml \
         share/doc/collc/plan-format.md share/doc/collc/examples/allreduce.c \
         share/man/man1/collc.1 share/man/man1/collc-verify.1 share/man/man1/collc-bench.1; do
  [ -e "$P/$f" ] || fail "missing $f"
done
# A man page for every command collc lists.
"$P/bin/collc" --help | sed -n 's/^  collc \([a-z-]*\) .*/\1/p' >"$work/commands"
[ -s "$work/commands" ] || fail "collc --help lists no commands"
while read -r c; do
  [ -f "$P/share/man/man1/collc-$c.1" ] || fail "no man page for 'collc $c'"
done <"$work/commands"
# Output is captured before it is matched: with pipefail, `collc ... | grep -q`
# fails whenever grep exits before collc has written everything (SIGPIPE).
out=$("$P/bin/collc" --version) || fail "collc --version failed"
grep -q "bytecode format" <<<"$out" || fail "collc --version: no bytecode format"

# The installed topologies are the machines the man pages' examples name.
out=$("$P/bin/collc" simulate ring --ranks 64 --topology "$P/share/collc/topologies/cluster-64x32.yaml" \
  --bytes 1M) || fail "collc simulate on the installed cluster-64x32.yaml failed"
grep -q "^predicted: " <<<"$out" || fail "collc simulate on the installed cluster-64x32.yaml: no prediction"

np=2
"$P/bin/collc" compile "$P/share/collc/schedules/ring.calgo" --ranks $np -o "$work/ring.cplan"
run() { "$mpiexec" -np $np --oversubscribe --mca mpi_yield_when_idle 1 "$@"; }

# CMake: find_package(collc) from the moved prefix.
"$cmake" -S "$src/tests/install/consumer" -B "$work/cmake-app" -DCMAKE_PREFIX_PATH="$P" \
  -DCOLLC_EXAMPLE="$src/examples/allreduce.c" >"$work/cmake-app.log" 2>&1 ||
  { cat "$work/cmake-app.log"; fail "configuring the CMake application failed"; }
"$cmake" --build "$work/cmake-app" >>"$work/cmake-app.log" 2>&1 ||
  { cat "$work/cmake-app.log"; fail "building the CMake application failed"; }
out=$(run "$work/cmake-app/allreduce" "$work/ring.cplan")
[ "$out" = ok ] || fail "CMake-built example printed '$out', expected 'ok'"
echo "cmake: ok"

# pkg-config: the MPI compiler wrapper plus collc's flags.
export PKG_CONFIG_PATH="$P/$libdir/pkgconfig"
[ "$(pkg-config --modversion collc)" = "$("$P/bin/collc" --version | sed 's/^collc \([^ ]*\).*/\1/')" ] ||
  fail "collc.pc and collc --version disagree on the version"
# shellcheck disable=SC2046
mpicc "$src/examples/allreduce.c" $(pkg-config --cflags --libs collc) \
  -Wl,-rpath,"$(pkg-config --variable=libdir collc)" -o "$work/pc-app"
out=$(run "$work/pc-app" "$work/ring.cplan")
[ "$out" = ok ] || fail "pkg-config-built example printed '$out', expected 'ok'"
echo "pkg-config: ok"

# The installed drop-in under the same program (its MPI_Allreduce reference
# then runs on collc too).
out=$(run -x LD_PRELOAD="$P/$libdir/libcollc_mpi.so" "$work/pc-app" "$work/ring.cplan")
[ "$out" = ok ] || fail "example under the installed drop-in printed '$out', expected 'ok'"
echo "drop-in: ok"

# The Open MPI component from the installation, when it was built.
if [ -e "$P/$libdir/openmpi/mca_coll_collc.so" ]; then
  builtin=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
  out=$(COLLC_STATS=1 run -x COLLC_STATS --mca mca_base_component_path "$builtin:$P/$libdir/openmpi" \
        --mca coll_collc_priority 90 "$work/pc-app" "$work/ring.cplan" 2>"$work/component.err")
  [ "$out" = ok ] || fail "example under the installed component printed '$out', expected 'ok'"
  grep -q '^collc: allreduce handled=[1-9]' "$work/component.err" ||
    fail "the installed component served no allreduce: $(head -5 "$work/component.err")"
  echo "component: ok"
fi

# The MPICH build beside it, when it was built: the same example against
# P/lib/mpich/libcollc.so, built with MPICH's compiler wrapper, run by MPICH's
# launcher, alone and under P/lib/mpich/libcollc_mpi.so.
if [ -e "$P/$libdir/mpich/libcollc.so" ]; then
  for f in bin/mpich/collc bin/mpich/collc-bench "$libdir/mpich/libcollc_mpi.so"; do
    [ -e "$P/$f" ] || fail "missing $f"
  done
  mpicc.mpich "$src/examples/allreduce.c" -I"$P/include" -L"$P/$libdir/mpich" -lcollc \
    -Wl,-rpath,"$P/$libdir/mpich" -o "$work/mpich-app"
  out=$(mpirun.mpich -np $np "$work/mpich-app" "$work/ring.cplan")
  [ "$out" = ok ] || fail "MPICH-built example printed '$out', expected 'ok'"
  out=$(mpirun.mpich -np $np -genv LD_PRELOAD "$P/$libdir/mpich/libcollc_mpi.so" \
        "$work/mpich-app" "$work/ring.cplan")
  [ "$out" = ok ] || fail "MPICH example under the installed drop-in printed '$out', expected 'ok'"
  echo "mpich: ok"
fi

# Every man page's EXAMPLES, as a reader types them against this installation
# (PREFIX set, its bin on PATH), each page in a scratch folder of its own.
for page in "$P"/share/man/man1/*.1; do
  name=$(basename "$page" .1)
  sed -n '/^\.SH EXAMPLES\{0,1\}$/,/^\.SH /p' "$page" |
    sed -n '/^\.nf/,/^\.fi/p' | sed '/^\.nf/d; /^\.fi/d; s/\\-/-/g; s/\\e/\\/g' \
    >"$work/$name.examples"
  [ -s "$work/$name.examples" ] || continue
  mkdir -p "$work/ex-$name"
  if ! (cd "$work/ex-$name" &&
        PREFIX="$P" PATH="$P/bin:$PATH" PKG_CONFIG_PATH="$P/$libdir/pkgconfig" \
          timeout --kill-after=10 600 bash -e "$work/$name.examples") >"$work/$name.log" 2>&1; then
    echo "--- $name's EXAMPLES:"; cat "$work/$name.examples"
    echo "--- what they printed:"; tail -n 30 "$work/$name.log"
    fail "the EXAMPLES of man page $name do not run as shown"
  fi
  echo "man $name EXAMPLES: ok"
done
rm -rf "$work"
