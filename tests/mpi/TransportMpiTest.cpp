// tests/mpi/TransportMpiTest.cpp: every library plan over both transports,
// bit for bit.
//
// Two duplicates of MPI_COMM_WORLD: one made after collc_set_transport(MPI),
// one after collc_set_transport(SHM). Every algorithm of the library whose
// file accepts this many ranks is compiled (-O2, proven), and each call runs
// on both communicators with the same inputs, blocking and non-blocking, in
// place or not; the outputs must be identical byte for byte, and right
// (checked against the sequential model). Workloads: double sum, int64 max,
// a commutative user operation and the non-commutative matrix product (for
// order-preserving plans). With COLLC_NODE_MAP (a rank -> node map), the
// shared-memory communicator mixes shared memory inside a "node" and MPI
// across; the suite checks that each rank reaches exactly its node's other
// ranks through shared memory.
#include "collc/collc.h"
#include "compiler/Lower.h"
#include "compiler/Prove.h"
#include "compiler/passes/Pipeline.h"
#include "runtime/shm/ShmNode.h"
#include "schedules/Generators.h"
#include "tests/mpi/MpiSuite.h"
#include "tools/collc-bench/Calls.h"
#include "tools/collc-bench/Workload.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace collc;
using bench::Workload;
using mpitest::Suite;

namespace {

struct LoadedPlan {
  collc_plan plan = COLLC_PLAN_NULL;
  explicit LoadedPlan(const ir::Plan &p) {
    compiler::PipelineOptions o2;
    llvm::Expected<ir::Plan> opt = compiler::optimize(p, o2);
    if (!opt) {
      std::fprintf(stderr, "optimize: %s\n", llvm::toString(opt.takeError()).c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    compiler::Proven proven = compiler::proveStrongest(*opt);
    std::vector<uint8_t> bytes = compiler::lower(*opt, proven.proof);
    if (collc_plan_load_memory(bytes.data(), bytes.size(), &plan) != COLLC_SUCCESS) {
      std::fprintf(stderr, "load: %s\n", collc_error_message());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  ~LoadedPlan() { collc_plan_free(&plan); }
  LoadedPlan(const LoadedPlan &) = delete;
  LoadedPlan &operator=(const LoadedPlan &) = delete;
};

bench::CallKind kindOf(ir::Collective c) {
  switch (c) {
  case ir::Collective::Allreduce:
    return bench::CallKind::Allreduce;
  case ir::Collective::Reduce:
    return bench::CallKind::Reduce;
  case ir::Collective::ReduceScatterBlock:
    return bench::CallKind::ReduceScatterBlock;
  case ir::Collective::Scan:
    return bench::CallKind::Scan;
  case ir::Collective::Exscan:
    return bench::CallKind::Exscan;
  case ir::Collective::Allgather:
    return bench::CallKind::Allgather;
  case ir::Collective::Bcast:
    return bench::CallKind::Bcast;
  case ir::Collective::Alltoall:
    return bench::CallKind::Alltoall;
  case ir::Collective::Gather:
    return bench::CallKind::Gather;
  case ir::Collective::Scatter:
    return bench::CallKind::Scatter;
  case ir::Collective::Barrier:
    return bench::CallKind::Barrier;
  }
  return bench::CallKind::Allreduce;
}

/// The commutative user operation: a double sum through MPI_Op_create.
void userSum(void *in, void *inout, int *len, MPI_Datatype *) {
  const double *a = static_cast<const double *>(in);
  double *b = static_cast<double *>(inout);
  for (int i = 0; i < *len; ++i)
    b[i] = a[i] + b[i];
}

/// Runs the call on both communicators in `mode` (0 blocking, 1 non-blocking).
void compare(Suite &s, const Workload &w, bench::CallKind k, collc_plan plan, uint64_t n,
             bool inPlace, int root, MPI_Comm viaMpi, MPI_Comm viaShm, const std::string &name) {
  for (int mode = 0; mode < 2; ++mode) {
    std::string outs[2];
    bool ran = true;
    MPI_Comm comms[2] = {viaMpi, viaShm};
    for (int t = 0; t < 2; ++t) {
      bench::Call c(k, w, comms[t], n, inPlace, root);
      c.prepare(7);
      collc_request req = COLLC_REQUEST_NULL;
      int rc = c.collc(plan, mode, &req);
      if (rc == COLLC_SUCCESS && mode == 1)
        rc = collc_wait(&req);
      const std::string what = name + " " + c.describe() + (mode ? " non-blocking" : "") +
                               (t ? " over shm" : " over mpi");
      if (rc == COLLC_ERR_UNSUPPORTED && !w.commutative) { // a commutative-only plan refuses
        ran = false;
        break;
      }
      s.expect(rc == COLLC_SUCCESS, what + ": returned " + std::to_string(rc) + " (" +
                                        collc_error_message() + ")");
      if (rc != COLLC_SUCCESS) {
        ran = false;
        break;
      }
      const std::string wrong = c.check(7);
      s.expect(wrong.empty(), what + ": " + wrong);
      outs[t] = c.output();
    }
    if (ran)
      s.expect(outs[0] == outs[1], name + " n=" + std::to_string(n) + " " + w.opName +
                                       (mode ? " non-blocking" : "") +
                                       ": the transports' outputs differ");
  }
}

void everyPlan(Suite &s, MPI_Comm viaMpi, MPI_Comm viaShm) {
  const uint32_t p = uint32_t(s.size());
  const Workload sumD = bench::builtinWorkload(rt::ReduceOp::Sum, rt::ElemType::Double);
  const Workload maxI = bench::builtinWorkload(rt::ReduceOp::Max, rt::ElemType::Int64);
  Workload user = sumD;
  user.opName = "user_sum";
  MPI_Op_create(userSum, 1, &user.op);
  const Workload &mat = bench::matrixWorkload();
  // Oversubscribed runs (more ranks than cores) are slow: fewer sizes there.
  const std::vector<uint64_t> counts =
      p <= 4 ? std::vector<uint64_t>{0, 1, 7, 1000, 20011} : std::vector<uint64_t>{0, 7, 1000};
  for (const sched::Algorithm &a : sched::algorithms()) {
    sched::GenOptions g;
    g.ranks = p;
    g.root = ir::hasRoot(a.collective) ? p - 1 : 0;
    if (!a.accepts(g))
      continue;
    LoadedPlan plan(a.build(g));
    const bench::CallKind k = kindOf(a.collective);
    const std::string name = std::string(ir::name(a.collective)) + " " + a.name.str();
    std::vector<const Workload *> ws;
    if (bench::combines(k) && p <= 4)
      ws = {&sumD, &maxI, &user, &mat};
    else if (bench::combines(k))
      ws = {&sumD, &user, &mat};
    else
      ws = {&sumD, &mat};
    for (const Workload *w : ws)
      for (uint64_t n : counts) {
        const bool blocked = k == bench::CallKind::ReduceScatterBlock ||
                             k == bench::CallKind::Allgather;
        const uint64_t total = blocked ? n * p : n;
        compare(s, *w, k, plan.plan, total, false, int(g.root), viaMpi, viaShm, name);
        if (n == 7 && k != bench::CallKind::Bcast)
          compare(s, *w, k, plan.plan, total, true, int(g.root), viaMpi, viaShm, name);
      }
  }
  MPI_Op_free(&user.op);
}

/// A communicator made while COLLC_SHM_FAST is `value` on this rank (null:
/// unset), so that its blocking calls take the shared-memory direct path or not.
MPI_Comm commWithDirect(const char *value) {
  if (value)
    setenv("COLLC_SHM_FAST", value, 1);
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  int peers = 0;
  collc_comm_shm_peers(c, &peers); // sets the communicator up now
  unsetenv("COLLC_SHM_FAST");
  return c;
}

/// The direct path of blocking calls (docs/shm-transport.md): every library
/// allreduce, reduce and bcast plan at counts 1..30, blocking, on three
/// communicators — direct on every rank, on none (COLLC_SHM_FAST=0), and on
/// even ranks only — must give the same bytes, and right ones; each call
/// runs twice (the second reuses the cached request). Then blocking calls
/// between the start and the wait of non-blocking ones on one communicator.
void directPath(Suite &s) {
  const uint32_t p = uint32_t(s.size());
  MPI_Comm comms[3] = {commWithDirect(nullptr), commWithDirect("0"),
                       commWithDirect(s.rank() % 2 ? "0" : "1")};
  const char *names[3] = {"direct", "requests", "mixed"};
  const Workload sumD = bench::builtinWorkload(rt::ReduceOp::Sum, rt::ElemType::Double);
  const Workload maxI = bench::builtinWorkload(rt::ReduceOp::Max, rt::ElemType::Int64);
  const Workload &mat = bench::matrixWorkload();
  std::vector<uint64_t> counts;
  for (uint64_t n = 1; n <= 30; n += p <= 4 ? 1 : 4)
    counts.push_back(n);
  for (const sched::Algorithm &a : sched::algorithms()) {
    if (a.collective != ir::Collective::Allreduce && a.collective != ir::Collective::Reduce &&
        a.collective != ir::Collective::Bcast)
      continue;
    sched::GenOptions g;
    g.ranks = p;
    g.root = ir::hasRoot(a.collective) ? p - 1 : 0;
    if (!a.accepts(g))
      continue;
    LoadedPlan plan(a.build(g));
    const bench::CallKind k = kindOf(a.collective);
    const std::string name = std::string(ir::name(a.collective)) + " " + a.name.str();
    std::vector<const Workload *> ws = {&sumD, &mat};
    if (bench::combines(k))
      ws.push_back(&maxI);
    for (const Workload *w : ws)
      for (uint64_t n : counts) {
        std::string outs[3];
        bool ran = true;
        for (int t = 0; t < 3 && ran; ++t) {
          bench::Call c(k, *w, comms[t], n, false, int(g.root));
          for (int again = 0; again < 2 && ran; ++again) {
            c.prepare(11 + uint64_t(again));
            const int rc = c.collc(plan.plan, 0, nullptr);
            const std::string what = name + " " + c.describe() + " " + names[t];
            if (rc == COLLC_ERR_UNSUPPORTED && !w->commutative) {
              ran = false;
              break;
            }
            s.expect(rc == COLLC_SUCCESS, what + ": returned " + std::to_string(rc) + " (" +
                                              collc_error_message() + ")");
            const std::string wrong = c.check(11 + uint64_t(again));
            s.expect(wrong.empty(), what + ": " + wrong);
            outs[t] += c.output();
          }
        }
        if (ran)
          s.expect(outs[0] == outs[1] && outs[1] == outs[2],
                   name + " n=" + std::to_string(n) + " " + w->opName +
                       ": the direct path's output differs from the requests'");
      }
    // A blocking call while non-blocking ones are in flight on the same
    // communicator, and one after they are waited for.
    for (int t = 0; t < 3; ++t) {
      bench::Call nb1(k, sumD, comms[t], 3, false, int(g.root));
      bench::Call nb2(k, sumD, comms[t], 200, false, int(g.root));
      bench::Call bl(k, sumD, comms[t], 2, false, int(g.root));
      nb1.prepare(21);
      nb2.prepare(22);
      bl.prepare(23);
      collc_request r1 = COLLC_REQUEST_NULL, r2 = COLLC_REQUEST_NULL;
      int rc = nb1.collc(plan.plan, 1, &r1);
      rc = rc == COLLC_SUCCESS ? nb2.collc(plan.plan, 1, &r2) : rc;
      rc = rc == COLLC_SUCCESS ? bl.collc(plan.plan, 0, nullptr) : rc;
      rc = rc == COLLC_SUCCESS ? collc_wait(&r2) : rc;
      rc = rc == COLLC_SUCCESS ? collc_wait(&r1) : rc;
      const std::string what = name + " " + names[t] + " interleaved";
      s.expect(rc == COLLC_SUCCESS, what + ": returned " + std::to_string(rc) + " (" +
                                        collc_error_message() + ")");
      s.expect(nb1.check(21).empty() && nb2.check(22).empty() && bl.check(23).empty(),
               what + ": wrong results");
      bl.prepare(24);
      s.expect(bl.collc(plan.plan, 0, nullptr) == COLLC_SUCCESS && bl.check(24).empty(),
               what + ": the blocking call after the wait");
    }
  }
  for (MPI_Comm &c : comms)
    MPI_Comm_free(&c);
}

/// A user operation on elements of 5000 doubles (40 000 bytes, more than a
/// shared-memory segment): the call falls back to MPI, counted, and stays right.
void userBigSum(void *in, void *inout, int *len, MPI_Datatype *) {
  const double *a = static_cast<const double *>(in);
  double *b = static_cast<double *>(inout);
  for (long i = 0; i < long(*len) * 5000; ++i)
    b[i] = a[i] + b[i];
}

void bigElements(Suite &s, MPI_Comm viaShm, int shmPeers) {
  const int p = s.size();
  sched::GenOptions g;
  g.ranks = uint32_t(p);
  LoadedPlan plan(sched::findAlgorithm(ir::Collective::Allreduce, "recursive_doubling")->build(g));
  MPI_Datatype big;
  MPI_Type_contiguous(5000, MPI_DOUBLE, &big);
  MPI_Type_commit(&big);
  MPI_Op op;
  MPI_Op_create(userBigSum, 1, &op);
  std::vector<double> in(3 * 5000), out(in.size(), -1);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = double(s.rank() + 1) * double(i % 7);
  long long before = 0, after = 0;
  collc_transport_fallbacks(&before);
  int rc = collc_allreduce(plan.plan, in.data(), out.data(), 3, big, op, viaShm);
  collc_transport_fallbacks(&after);
  s.expect(rc == COLLC_SUCCESS, "allreduce of 40000-byte elements: " + std::to_string(rc) +
                                    " (" + collc_error_message() + ")");
  bool right = true;
  for (size_t i = 0; i < in.size(); ++i)
    right = right && out[i] == double(p * (p + 1) / 2) * double(i % 7);
  s.expect(right, "allreduce of 40000-byte elements: wrong result");
  const long long want = shmPeers > 0 ? 1 : 0;
  s.expect(after - before == want, std::to_string(after - before) + " fallbacks counted, not " +
                                       std::to_string(want));
  MPI_Op_free(&op);
  MPI_Type_free(&big);
}

/// COLLC_SHM_FAIL=create (the node's first rank cannot reserve the region, as
/// with a full /dev/shm) and =map (the others cannot map it), set here for
/// one communicator each: every rank falls back to MPI with one COLLC_DEBUG
/// line saying why, counts one fallback, and the results stay right.
void setupFailure(Suite &s, const char *step, const std::string &whyFirst,
                  const std::string &whyOthers) {
  const int p = s.size();
  std::vector<double> in(5, double(s.rank() + 1)), out(5, -1);
  LoadedPlan plan(sched::findAlgorithm(ir::Collective::Allreduce, "recursive_doubling")
                      ->build([&] {
                        sched::GenOptions g;
                        g.ranks = uint32_t(p);
                        return g;
                      }()));
  collc_set_transport(COLLC_TRANSPORT_AUTO);
  setenv("COLLC_SHM_FAIL", step, 1);
  setenv("COLLC_DEBUG", "1", 1);
  // Catch this rank's stderr while the communicator is set up.
  std::fflush(stderr);
  char path[] = "/tmp/collc-shm-fail-XXXXXX";
  const int fd = mkstemp(path);
  const int saved = dup(2);
  dup2(fd, 2);
  long long before = 0, after = 0;
  collc_transport_fallbacks(&before);
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int peers = -1;
  const int rc = collc_comm_shm_peers(comm, &peers);
  collc_transport_fallbacks(&after);
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  unsetenv("COLLC_SHM_FAIL");
  unsetenv("COLLC_DEBUG");
  std::string text;
  char buf[512];
  for (ssize_t k; (k = pread(fd, buf, sizeof buf, off_t(text.size()))) > 0;)
    text.append(buf, size_t(k));
  close(fd);
  unlink(path);
  const std::string head = "collc: [rank " + std::to_string(s.rank()) + "] communicator of " +
                           std::to_string(p) + " ranks: ";
  const std::string tail = "; using MPI point-to-point\n";
  const std::string &why = s.rank() == 0 ? whyFirst : whyOthers;
  if (p == 1) { // nothing to share: no set-up, no fallback
    s.expect(rc == COLLC_SUCCESS && peers == 0 && after == before && text.empty(),
             std::string(step) + ": a communicator of one rank reported '" + text + "'");
  } else {
    s.expect(rc == COLLC_SUCCESS && peers == 0,
             std::string(step) + ": " + std::to_string(peers) + " peers by shm");
    s.expect(after - before == 1, std::string(step) + ": " + std::to_string(after - before) +
                                      " fallbacks counted, not 1");
    s.expect(std::count(text.begin(), text.end(), '\n') == 1 && text.starts_with(head) &&
                 text.ends_with(tail) && text.find(why) != std::string::npos,
             std::string(step) + ": stderr was '" + text + "', not one line with '" + why + "'");
  }
  int arc = collc_allreduce(plan.plan, in.data(), out.data(), 5, MPI_DOUBLE, MPI_SUM, comm);
  s.expect(arc == COLLC_SUCCESS, std::string(step) + ": allreduce returned " +
                                     std::to_string(arc) + " (" + collc_error_message() + ")");
  bool right = true;
  for (double v : out)
    right = right && v == double(p * (p + 1) / 2);
  s.expect(right, std::string(step) + ": wrong allreduce result after the fallback");
  MPI_Comm_free(&comm);
}

/// Which ranks share shared memory with this one: all (one node), or the
/// ranks COLLC_NODE_MAP puts on this rank's node.
int expectedShmPeers(const Suite &s) {
  std::vector<int> map;
  std::string why;
  if (!rt::parseNodeMap(std::getenv("COLLC_NODE_MAP"), map, why) ||
      map.size() != size_t(s.size()))
    return s.size() - 1;
  int peers = 0;
  for (int r = 0; r < s.size(); ++r)
    peers += r != s.rank() && map[size_t(r)] == map[size_t(s.rank())];
  return peers;
}

/// The shared-memory regions this process has mapped (/proc/self/maps).
int mappedRegions() {
  FILE *f = std::fopen("/proc/self/maps", "r");
  if (!f)
    return -1;
  int n = 0;
  char line[4096];
  while (std::fgets(line, sizeof line, f))
    n += std::strstr(line, "/dev/shm/collc-") != nullptr;
  std::fclose(f);
  return n;
}

/// A communicator starts on MPI and every rank sets up its shared memory in
/// the same call: the first blocking one after its first COLLC_SHM_AFTER
/// executions (default 16; docs/shm-transport.md). Across the move: a
/// non-blocking execution in flight over MPI while the blocking call that
/// moves runs, and a persistent request made before it and started after;
/// every result right, the region mapped exactly from that call on, and
/// unmapped with the communicator.
void moveToShm(Suite &s) {
  collc_set_transport(COLLC_TRANSPORT_AUTO);
  const char *env = std::getenv("COLLC_SHM_AFTER");
  const int after = env ? std::atoi(env) : 16;
  const int p = s.size(), me = s.rank();
  const sched::Algorithm *ring = nullptr;
  for (const sched::Algorithm &a : sched::algorithms())
    if (a.collective == ir::Collective::Allreduce && a.name == "ring")
      ring = &a;
  sched::GenOptions g;
  g.ranks = uint32_t(p);
  LoadedPlan plan(ring->build(g));
  const int base = mappedRegions();
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  const int n = 1000;
  std::vector<double> pin(n), pout(n), a(n), b(n), x(n), y(n);
  collc_request persistent = COLLC_REQUEST_NULL;
  s.expect(collc_allreduce_init(plan.plan, pin.data(), pout.data(), n, MPI_DOUBLE, MPI_SUM, c,
                                &persistent) == COLLC_SUCCESS,
           std::string("collc_allreduce_init: ") + collc_error_message());
  // Rank r contributes r + 1 + k + 1000 i to element k: the sum is known.
  auto fill = [&](std::vector<double> &v, int i) {
    for (int k = 0; k < n; ++k)
      v[size_t(k)] = me + 1 + k + 1000.0 * i;
  };
  auto right = [&](const std::vector<double> &v, int i) {
    for (int k = 0; k < n; ++k)
      if (v[size_t(k)] != p * (p + 1) / 2.0 + p * (k + 1000.0 * i))
        return false;
    return true;
  };
  // After each start: the region is mapped from the first blocking call
  // after `after` starts on (from the first use with COLLC_SHM_AFTER=0).
  int starts = 0;
  bool moved = after == 0;
  auto started = [&](const char *what, int i) {
    ++starts;
    const int mapped = mappedRegions() - base;
    const int want = moved && expectedShmPeers(s) > 0 ? 1 : 0;
    s.expect(mapped == want, std::to_string(mapped) + " regions mapped after execution " +
                                 std::to_string(starts) + " (" + what + ", iteration " +
                                 std::to_string(i) + "), not " + std::to_string(want));
  };
  for (int i = 0; i < 3 + (after + 2) / 3; ++i) {
    fill(a, i);
    collc_request req = COLLC_REQUEST_NULL;
    s.expect(collc_iallreduce(plan.plan, a.data(), b.data(), n, MPI_DOUBLE, MPI_SUM, c, &req) ==
                 COLLC_SUCCESS,
             "collc_iallreduce");
    started("non-blocking", i);
    fill(x, i + 1);
    moved = moved || starts >= after;
    s.expect(collc_allreduce(plan.plan, x.data(), y.data(), n, MPI_DOUBLE, MPI_SUM, c) ==
                 COLLC_SUCCESS,
             "collc_allreduce");
    started("blocking", i);
    fill(pin, i + 2);
    s.expect(collc_start(persistent) == COLLC_SUCCESS, "collc_start");
    started("persistent", i);
    s.expect(collc_wait(&persistent) == COLLC_SUCCESS, "the persistent request");
    s.expect(collc_wait(&req) == COLLC_SUCCESS, "collc_wait");
    const std::string at = " at iteration " + std::to_string(i);
    s.expect(right(b, i), "the non-blocking result is wrong" + at);
    s.expect(right(y, i + 1), "the blocking result is wrong" + at);
    s.expect(right(pout, i + 2), "the persistent request's result is wrong" + at);
  }
  collc_request_free(&persistent);
  MPI_Comm_free(&c);
  s.expect(mappedRegions() == base, "the region outlives its communicator");
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int status = 1;
  {
    Suite s;
    if (s.rank() == 0)
      std::printf("collc transport suite on %d ranks\n", s.size());
    MPI_Comm viaMpi, viaShm;
    collc_set_transport(COLLC_TRANSPORT_MPI);
    MPI_Comm_dup(MPI_COMM_WORLD, &viaMpi);
    int peers = -1;
    s.test("transport_selection", [&] {
      s.expect(collc_comm_shm_peers(viaMpi, &peers) == COLLC_SUCCESS && peers == 0,
               "the MPI communicator reaches " + std::to_string(peers) + " peers by shm");
      collc_set_transport(COLLC_TRANSPORT_SHM);
      collc_transport t = COLLC_TRANSPORT_AUTO;
      s.expect(collc_get_transport(&t) == COLLC_SUCCESS && t == COLLC_TRANSPORT_SHM,
               "collc_get_transport");
      s.expect(collc_set_transport(collc_transport(7)) == COLLC_ERR_ARG,
               "collc_set_transport(7) is refused");
      MPI_Comm_dup(MPI_COMM_WORLD, &viaShm);
      const int want = expectedShmPeers(s);
      s.expect(collc_comm_shm_peers(viaShm, &peers) == COLLC_SUCCESS && peers == want,
               "the shm communicator reaches " + std::to_string(peers) + " peers by shm, not " +
                   std::to_string(want));
      long long fallbacks = -1;
      s.expect(collc_transport_fallbacks(&fallbacks) == COLLC_SUCCESS && fallbacks == 0,
               std::to_string(fallbacks) + " fallbacks");
    });
    s.test("every_plan_both_ways", [&] { everyPlan(s, viaMpi, viaShm); });
    s.test("elements_larger_than_a_segment", [&] { bigElements(s, viaShm, peers); });
    s.test("move_to_shared_memory", [&] { moveToShm(s); });
    s.test("direct_path_bit_for_bit", [&] {
      collc_set_transport(COLLC_TRANSPORT_AUTO);
      directPath(s);
    });
    if (!std::getenv("COLLC_NODE_MAP")) {
      s.test("setup_fails_creating", [&] {
        setupFailure(s, "create", "shared memory: posix_fallocate: No space left on device (",
                     "shared memory: the node's first rank could not create the region: "
                     "posix_fallocate: No space left on device (");
      });
      s.test("setup_fails_mapping", [&] {
        setupFailure(s, "map", "another rank on this node could not map the shared-memory region",
                     "shared memory: mmap: Cannot allocate memory");
      });
    }
    MPI_Comm_free(&viaShm);
    MPI_Comm_free(&viaMpi);
    status = s.finish();
  }
  bench::freeMatrixWorkload();
  MPI_Finalize();
  return status;
}
