#!/usr/bin/env bash
# tests/tune/measure.sh COLLC COMPARE MPIEXEC LIB PROGRAM USERLIB TOPOLOGY WORK
# collc tune --measure under mpirun, at 2 and 4 ranks, over a user's library
# (USERLIB: tests/userlib, its 2D torus) and the library's ring:
#  - the report and the JSON show, per size, the timed plans (predicted and
#    measured) and native MPI's time, and the winner is the fastest of them;
#  - the bundle and rules written run PROGRAM (tests/dropin/collectives.c)
#    under the drop-in with native's results and no warning;
#  - the linear allreduce (6 hops in a row at 4 ranks, against native's 2
#    rounds): native MPI measured fastest, so the rules say native and no
#    bundle is written;
#  - --refit writes a topology that reads back, with the error before and
#    after on stderr (after <= before) and a table in the report;
#  - --noncommutative times the order-preserving plans with a user op;
#  - misuse: a job of another size than --ranks, --measure-top out of range,
#    --refit without --measure.
set -euo pipefail
collc=$1 compare=$2 mpiexec=$3 lib=$4 prog=$5 userlib=$6 topo=$7 work=$8
rm -rf "$work"
mkdir -p "$work"
cd "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() { local np=$1; shift; timeout 240 "$mpiexec" --oversubscribe --mca mpi_yield_when_idle 1 -n "$np" "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

for np in 2 4; do
  run "$np" "$collc" tune --measure --measure-top 2 --library "$userlib" --algorithms torus2d,ring \
    --topology "$topo" --ranks "$np" --sizes 8,64K --segments 1,2 --budget none \
    -o "m$np.cbundle" --rules "m$np.rules" --report "m$np.md" --json "m$np.json" \
    --refit "m$np.topology.yaml" \
    >"m$np.out" 2>"m$np.err" || { cat "m$np.err"; fail "tune --measure at $np ranks"; }
  grep -q "^collc tune: measuring 8 B: native, " "m$np.err" || fail "no progress line at $np ranks"
  grep -q "^  bytes  *plan  *measured$" "m$np.out" || fail "the summary shows no measured column"
  python3 - "m$np.json" "$np" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
np = int(sys.argv[2])
m = r["measured"]
assert [x["bytes"] for x in m] == [8, 65536], m
for x in m:
    assert x["native"] > 0, x
    plans = x["plans"]
    assert 1 <= len(plans) <= 2, plans
    times = {p["plan"]: p["measured"] for p in plans if p["measured"] is not None}
    assert times, x
    best = min(times, key=times.get)
    want = best if times[best] < x["native"] else "native"
    assert x["winner"] == want, (x, want)
    # the model's order: fastest predicted first
    assert plans == sorted(plans, key=lambda p: p["predicted"]), plans
ranges = [g["plan"] for g in r["ranges"]]
winners = [x["winner"] for x in m]
assert ranges == [w for i, w in enumerate(winners) if i == 0 or winners[i - 1] != w], (ranges, winners)
print(f"np {np}: winners {winners}")
PY
  grep -q "^## Measured" "m$np.md" || fail "the report has no Measured section"
  grep -q "^## Refitted topology" "m$np.md" || fail "the report has no Refitted topology section"
  grep -q "^| system latency | " "m$np.md" || { cat "m$np.md"; fail "no refitted latency row"; }
  line=$(grep "^collc tune: wrote the refitted topology to m$np.topology.yaml: rms of ln(predicted / measured) " "m$np.err") \
    || { cat "m$np.err"; fail "no refit line at $np ranks"; }
  python3 - "$line" <<'PY' || fail "the refit made the error worse: $line"
import re, sys
m = re.search(r"([0-9.]+) -> ([0-9.]+) over ([0-9]+) measured plan times$", sys.argv[1])
assert m, sys.argv[1]
before, after, n = float(m[1]), float(m[2]), int(m[3])
assert after <= before and n >= 2, (before, after, n)
PY
  grep -q "^name: \"uniform-refit\"$" "m$np.topology.yaml" || { cat "m$np.topology.yaml"; fail "refit name"; }
  "$collc" tune --topology "m$np.topology.yaml" --ranks "$np" --algorithms ring --segments 1 \
    --sizes 8 -o "r$np.cbundle" --quiet >/dev/null || fail "the refitted topology does not read back"
  grep -q "^| 8 B | native | - | " "m$np.md" || fail "the report has no native row"
done

# The tuned outputs under the drop-in at 4 ranks: native's results.
env_args=(--env "COLLC_RULES=$work/m4.rules" --env COLLC_STATS=1)
[ -e m4.cbundle ] && env_args+=(--env "COLLC_PLAN_PATH=$work/m4.cbundle")
bash "$compare" --mpiexec "$mpiexec" --lib "$lib" --np 4 --warnings 0 "${env_args[@]}" \
  --stderr "^collc: allreduce handled=" -- "$prog"

# Native made fastest: the linear allreduce at 4 ranks.
run 4 "$collc" tune --measure --algorithms linear --segments 1 --topology "$topo" --ranks 4 \
  --sizes 8 --budget none -o n4.cbundle --rules n4.rules --quiet >n4.out 2>n4.err \
  || { cat n4.err; fail "tune --measure linear"; }
grep -q "algorithm: native}" n4.rules || { cat n4.rules n4.out; fail "no native rule"; }
grep -q "no bundle is written, and the rules say native" n4.err || { cat n4.err; fail "no note"; }
[ ! -e n4.cbundle ] || fail "a bundle was written though native won everywhere"
grep -q "^  0-  *native  *" n4.out || { cat n4.out; fail "the summary does not say native"; }

# Misuse: exit 2, one line from rank 0.
set +e
run 2 "$collc" tune --measure --topology "$topo" --ranks 4 --sizes 8 -o x.cbundle >x.out 2>x.err
rc=$?
set -e
[ $rc = 2 ] || fail "a job of 2 ranks for --ranks 4: exit $rc"
grep -q "^collc: --measure times the plans on the ranks of this job: run it under mpirun -np 4 (--ranks 4); this job has 2$" x.err \
  || { cat x.err; fail "the size mismatch is not said"; }
set +e
run 2 "$collc" tune --measure --measure-top 0 --topology "$topo" --ranks 2 --sizes 8 -o x.cbundle >x.out 2>x.err
rc=$?
set -e
[ $rc = 2 ] && grep -q "^collc: --measure-top 0 out of range (1..16)$" x.err || { cat x.err; fail "--measure-top 0: exit $rc"; }
set +e
"$collc" tune --refit x.yaml --topology "$topo" --ranks 2 --sizes 8 -o x.cbundle >x.out 2>x.err
rc=$?
set -e
[ $rc = 2 ] && grep -q "^collc: --refit FILE needs --measure: it fits the topology to the measured times$" x.err \
  || { cat x.err; fail "--refit without --measure: exit $rc"; }
[ ! -e x.yaml ] || fail "--refit without --measure wrote a file"

# --noncommutative: order-preserving plans timed with the matrix product.
run 2 "$collc" tune --measure --noncommutative --measure-top 1 --algorithms ring,recursive_doubling \
  --segments 1 --topology "$topo" --ranks 2 --sizes 64K --budget none -o nc.cbundle --json nc.json \
  >nc.out 2>nc.err || { cat nc.err; fail "tune --measure --noncommutative"; }
grep -q "^collc tune: measuring 64 KiB with a non-commutative user op (2x2 matrix product): native, " nc.err \
  || { cat nc.err; fail "--noncommutative was not timed with the user op"; }
python3 - nc.json <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["measured"]
assert len(m) == 1 and m[0]["native"] > 0 and m[0]["plans"][0]["measured"] > 0, m
PY
echo "measure.sh: all checks passed"
