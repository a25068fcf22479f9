// tests/mpi/FamilyMpiTest.cpp: the C API's reduce_scatter_block,
// reduce_scatter, scan, exscan, allgather and bcast on real MPI (and the
// block movers, their v-variants and the barrier).
//
// Every rank runs this program (one ctest per rank count). The plans are the
// test plans of tests/support/FamilyPlans.h, proven and optimized at -O2 as
// `collc compile` would, then loaded from memory. Each case
// (tools/collc-bench/Calls.h) fills every rank's input from (rank, index),
// poisons the output, runs the call blocking, non-blocking or persistent
// (three starts with new inputs), in place or not, and compares every rank's
// output with the sequential model of the collective.
// Counts include 0, 1, fewer elements than chunks, a prime and uneven
// recvcounts with zeros; operations include the non-commutative matrix
// product (order-preserving plans only; the ring reduce-scatter refuses it).
#include "collc/collc.h"
#include "collc/collc.hpp"
#include "compiler/Lower.h"
#include "compiler/Prove.h"
#include "compiler/passes/Pipeline.h"
#include "schedules/Generators.h"
#include "tests/mpi/MpiSuite.h"
#include "tests/support/FamilyPlans.h"
#include "tools/collc-bench/Calls.h"
#include "tools/collc-bench/Workload.h"

#include <chrono>
#include <cstring>
#include <functional>
#include <thread>

using namespace collc;
using bench::Workload;
using mpitest::Suite;

namespace {

/// A loaded plan, proven and optimized like `collc compile`.
struct LoadedPlan {
  collc_plan plan = COLLC_PLAN_NULL;
  explicit LoadedPlan(ir::Plan p) {
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

/// Runs `c` in every mode and records what is wrong.
void runAllModes(Suite &s, bench::Call &c, collc_plan plan) {
  static const char *modes[] = {"blocking", "non-blocking", "persistent"};
  for (int mode = 0; mode < 3; ++mode) {
    const int runs = mode == 2 ? 3 : 1;
    collc_request req = COLLC_REQUEST_NULL;
    for (int k = 0; k < runs; ++k) {
      const uint64_t salt = uint64_t(100 * mode + k + 1);
      c.prepare(salt);
      int rc = COLLC_SUCCESS;
      if (mode < 2 || k == 0)
        rc = c.collc(plan, mode, &req);
      if (rc == COLLC_SUCCESS && mode == 2)
        rc = collc_start(req);
      if (rc == COLLC_SUCCESS && mode != 0)
        rc = collc_wait(&req);
      const std::string what = c.describe() + " " + modes[mode];
      s.expect(rc == COLLC_SUCCESS,
               what + ": returned " + std::to_string(rc) + " (" + collc_error_message() + ")");
      if (rc != COLLC_SUCCESS)
        break;
      const std::string wrong = c.check(salt);
      s.expect(wrong.empty(), what + ": " + wrong);
    }
    if (req != COLLC_REQUEST_NULL)
      collc_request_free(&req);
  }
}

std::vector<uint64_t> countsFor(uint32_t p) {
  return {0, 1, 7, uint64_t(p) + 1, 1000, 100003};
}

/// Uneven recvcounts, zeros included: three patterns.
std::vector<std::vector<MPI_Count>> recvcountPatterns(uint32_t p) {
  std::vector<std::vector<MPI_Count>> out(3, std::vector<MPI_Count>(p));
  for (uint32_t b = 0; b < p; ++b) {
    out[0][b] = MPI_Count((b * 37 + 11) % 50) * (b % 3 == 1 ? 0 : 1);
    out[1][b] = b == 0 ? 100003 : 0;
    out[2][b] = MPI_Count(b + 1);
  }
  return out;
}

void family(Suite &s) {
  using bench::CallKind;
  const uint32_t p = uint32_t(s.size());
  using rt::ElemType;
  using rt::ReduceOp;
  const Workload sumI = bench::builtinWorkload(ReduceOp::Sum, ElemType::Int64);
  const Workload maxD = bench::builtinWorkload(ReduceOp::Max, ElemType::Double);
  const Workload &mat = bench::matrixWorkload();
  LoadedPlan rsb(testplans::ringReduceScatter(p));
  LoadedPlan scan(testplans::chainScan(p, false)), exscan(testplans::chainScan(p, true));
  LoadedPlan ag(testplans::ringAllgather(p));
  LoadedPlan bcast0(testplans::binomialBcast(p, 0)), bcastLast(testplans::binomialBcast(p, p - 1));
  auto run = [&](CallKind k, collc_plan plan, const Workload &w, uint64_t n, bool inPlace,
                 int root = 0, std::vector<MPI_Count> counts = {}) {
    bench::Call c(k, w, MPI_COMM_WORLD, n, inPlace, root, std::move(counts));
    runAllModes(s, c, plan);
  };
  for (bool inPlace : {false, true}) {
    for (const Workload *w : {&sumI, &maxD}) {
      for (uint64_t n : countsFor(p))
        run(CallKind::ReduceScatterBlock, rsb.plan, *w, n * p, inPlace);
      for (const std::vector<MPI_Count> &counts : recvcountPatterns(p))
        run(CallKind::ReduceScatter, rsb.plan, *w, 0, inPlace, 0, counts);
    }
    for (const Workload *w : {&sumI, &mat})
      for (uint64_t n : countsFor(p)) {
        run(CallKind::Scan, scan.plan, *w, n, inPlace);
        run(CallKind::Exscan, exscan.plan, *w, n, inPlace);
      }
    for (const Workload *w : {&maxD, &mat}) {
      for (uint64_t n : countsFor(p))
        run(CallKind::Allgather, ag.plan, *w, n * p, inPlace);
      // allgatherv on the same plan: uneven blocks, zeros included.
      for (const std::vector<MPI_Count> &counts : recvcountPatterns(p))
        run(CallKind::Allgatherv, ag.plan, *w, 0, inPlace, 0, counts);
    }
  }
  for (const Workload *w : {&sumI, &mat})
    for (uint64_t n : countsFor(p)) {
      run(CallKind::Bcast, bcast0.plan, *w, n, false, 0);
      run(CallKind::Bcast, bcastLast.plan, *w, n, false, int(p) - 1);
    }
}

/// alltoall, gather and scatter: every library algorithm at this p, every
/// root, in place where MPI allows it (alltoall's sendbuf, gather's root's
/// sendbuf, scatter's root's recvbuf), counts with zeros and primes, and a
/// 16-byte user datatype. And allgatherv on every library allgather plan:
/// uneven blocks, zeros included, in place or not.
void blockMovers(Suite &s) {
  using bench::CallKind;
  const uint32_t p = uint32_t(s.size());
  const Workload sumI = bench::builtinWorkload(rt::ReduceOp::Sum, rt::ElemType::Int64);
  const Workload &mat = bench::matrixWorkload();
  for (const sched::Algorithm &a : sched::algorithms()) {
    CallKind k;
    if (a.collective == ir::Collective::Allgather) {
      sched::GenOptions g;
      g.ranks = p;
      if (!a.accepts(g))
        continue;
      LoadedPlan plan(a.build(g));
      for (bool inPlace : {false, true})
        for (const std::vector<MPI_Count> &counts : recvcountPatterns(p)) {
          bench::Call c(CallKind::Allgatherv, mat, MPI_COMM_WORLD, 0, inPlace, 0, counts);
          runAllModes(s, c, plan.plan);
        }
      continue;
    }
    if (a.collective == ir::Collective::Alltoall)
      k = CallKind::Alltoall;
    else if (a.collective == ir::Collective::Gather)
      k = CallKind::Gather;
    else if (a.collective == ir::Collective::Scatter)
      k = CallKind::Scatter;
    else
      continue;
    for (uint32_t root = 0; root < (ir::hasRoot(a.collective) ? p : 1); ++root) {
      sched::GenOptions g;
      g.ranks = p;
      g.root = root;
      if (!a.accepts(g))
        continue;
      LoadedPlan plan(a.build(g));
      for (bool inPlace : {false, true})
        for (const Workload *w : {&sumI, &mat})
          for (uint64_t n : {0ull, 1ull, 3ull, 1000ull}) {
            bench::Call c(k, *w, MPI_COMM_WORLD, n * p, inPlace, int(root));
            runAllModes(s, c, plan.plan);
          }
    }
  }
}

/// gatherv, scatterv and alltoallv: on the library's plans that move each
/// rank's own blocks only (linear gather and scatter, every root; linear
/// and pairwise alltoall), uneven counts with zeros, in place or not, every
/// mode; the counts passed only where MPI reads them (Calls.cpp). And the
/// plans that relay others' blocks refused on the ranks that would.
void varying(Suite &s) {
  using bench::CallKind;
  const uint32_t p = uint32_t(s.size());
  const Workload sumI = bench::builtinWorkload(rt::ReduceOp::Sum, rt::ElemType::Int64);
  const Workload &mat = bench::matrixWorkload();
  struct Case {
    ir::Collective collective;
    const char *algorithm;
    CallKind kind;
  };
  for (const Case &k : {Case{ir::Collective::Gather, "linear", CallKind::Gatherv},
                        Case{ir::Collective::Scatter, "linear", CallKind::Scatterv},
                        Case{ir::Collective::Alltoall, "linear", CallKind::Alltoallv},
                        Case{ir::Collective::Alltoall, "pairwise", CallKind::Alltoallv}}) {
    const bool rooted = k.collective != ir::Collective::Alltoall;
    for (uint32_t root = 0; root < (rooted ? p : 1); ++root) {
      sched::GenOptions g;
      g.ranks = p;
      g.root = root;
      LoadedPlan plan(sched::findAlgorithm(k.collective, k.algorithm)->build(g));
      for (bool inPlace : {false, true})
        for (const Workload *w : {&sumI, &mat})
          for (const std::vector<MPI_Count> &counts : recvcountPatterns(p)) {
            bench::Call c(k.kind, *w, MPI_COMM_WORLD, 0, inPlace, int(root), counts);
            runAllModes(s, c, plan.plan);
          }
    }
  }
  // Binomial gather: a rank that relays others' blocks does not know their
  // sizes, and refuses before sending anything; the leaves (and the root,
  // which knows every block) would run, so only the relaying ranks call.
  sched::GenOptions g;
  g.ranks = p;
  g.root = 0;
  LoadedPlan binomial(sched::findAlgorithm(ir::Collective::Gather, "binomial")->build(g));
  // Rooted at 0, an even rank r > 0 relays rank r + 1's block (if any).
  if (s.rank() == 0 || s.rank() % 2 == 1 || uint32_t(s.rank()) + 1 >= p)
    return;
  std::vector<int64_t> buf(4);
  int rc = collc_gatherv(binomial.plan, buf.data(), 1, nullptr, nullptr, MPI_INT64_T, 0,
                         MPI_COMM_WORLD);
  s.expect(rc == COLLC_ERR_UNSUPPORTED &&
               std::string(collc_error_message()).find("does not know") != std::string::npos,
           "gatherv on a binomial plan at relaying rank " + std::to_string(s.rank()) +
               ": returned " + std::to_string(rc) + " (" + collc_error_message() + ")");
}

/// Refusals: a commutative-only plan and a non-commutative operation, shape
/// mismatches, bad recvcounts — each before anything is sent.
/// Barriers: the library's plans, every mode. One rank at a time enters
/// late (it sleeps first); every rank notes when it entered and left on the
/// node's monotonic clock, and no rank may have left before the last one
/// entered. A plan whose messages did not chain every rank to every other
/// would let the ranks that are not waiting on the late one leave early.
void barriers(Suite &s) {
  const int p = s.size(), me = s.rank();
  auto now = [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  for (const sched::Algorithm &a : sched::algorithms()) {
    if (a.collective != ir::Collective::Barrier)
      continue;
    LoadedPlan plan(a.build({uint32_t(p), 0}));
    static const char *modes[] = {"blocking", "non-blocking", "persistent"};
    for (int mode = 0; mode < 3; ++mode) {
      collc_request req = COLLC_REQUEST_NULL;
      if (mode == 2)
        s.expect(collc_barrier_init(plan.plan, MPI_COMM_WORLD, &req) == COLLC_SUCCESS,
                 "collc_barrier_init");
      for (int late = 0; late < p; ++late) {
        if (me == late)
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        double times[2] = {now(), 0};
        int rc = mode == 0   ? collc_barrier(plan.plan, MPI_COMM_WORLD)
                 : mode == 1 ? collc_ibarrier(plan.plan, MPI_COMM_WORLD, &req)
                             : collc_start(req);
        if (rc == COLLC_SUCCESS && mode != 0)
          rc = collc_wait(&req);
        times[1] = now();
        const std::string what = std::string("barrier ") + a.name.str() + " " + modes[mode] +
                                 ", rank " + std::to_string(late) + " late";
        s.expect(rc == COLLC_SUCCESS, what + ": returned " + std::to_string(rc) + " (" +
                                          collc_error_message() + ")");
        std::vector<double> all(2 * size_t(p));
        MPI_Allgather(times, 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE, MPI_COMM_WORLD);
        double lastIn = 0;
        for (int q = 0; q < p; ++q)
          lastIn = std::max(lastIn, all[2 * size_t(q)]);
        s.expect(times[1] >= lastIn, what + ": rank " + std::to_string(me) + " left " +
                                         std::to_string((lastIn - times[1]) * 1e6) +
                                         " us before the last rank entered");
      }
      if (req != COLLC_REQUEST_NULL)
        collc_request_free(&req);
    }
  }
}

void refusals(Suite &s) {
  const uint32_t p = uint32_t(s.size());
  const Workload &mat = bench::matrixWorkload();
  LoadedPlan rsb(testplans::ringReduceScatter(p)), scan(testplans::chainScan(p, false));
  std::vector<uint64_t> buf(64 * p + 64);
  auto expectCode = [&](int rc, int want, const std::string &what) {
    s.expect(rc == want, what + ": returned " + std::to_string(rc) + ", expected " +
                             std::to_string(want) + " (" + collc_error_message() + ")");
  };
  if (p >= 3) // p <= 2: the ring happens to keep rank order, and is recorded so
    expectCode(collc_reduce_scatter_block(rsb.plan, buf.data(), buf.data() + 32 * p, 2, mat.type,
                                          mat.op, MPI_COMM_WORLD),
               COLLC_ERR_UNSUPPORTED, "the ring reduce-scatter with a non-commutative op");
  expectCode(collc_allgather(scan.plan, buf.data(), buf.data() + 8, 1, MPI_INT64_T,
                             MPI_COMM_WORLD),
             COLLC_ERR_SHAPE, "a scan plan for allgather");
  std::vector<MPI_Count> counts(p, 1);
  counts[0] = -1;
  expectCode(collc_reduce_scatter(rsb.plan, buf.data(), buf.data() + 32 * p, counts.data(),
                                  MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD),
             COLLC_ERR_ARG, "a negative recvcount");
  expectCode(collc_bcast(rsb.plan, buf.data(), 4, MPI_INT64_T, 0, MPI_COMM_WORLD),
             COLLC_ERR_SHAPE, "a reduce-scatter plan for bcast");
  sched::GenOptions g;
  g.ranks = p;
  g.root = p - 1;
  LoadedPlan scatter(sched::findAlgorithm(ir::Collective::Scatter, "binomial")->build(g));
  LoadedPlan gather(sched::findAlgorithm(ir::Collective::Gather, "binomial")->build(g));
  expectCode(collc_scatter(scatter.plan, buf.data(), buf.data() + 32 * p, 1, MPI_INT64_T, 0,
                           MPI_COMM_WORLD),
             p > 1 ? COLLC_ERR_SHAPE : COLLC_SUCCESS, "a scatter plan for another root");
  // The v-variants' counts, checked where MPI reads them, before anything
  // is sent: each case is refused on every rank that calls.
  LoadedPlan linearGather(sched::findAlgorithm(ir::Collective::Gather, "linear")->build(g));
  LoadedPlan linearScatter(sched::findAlgorithm(ir::Collective::Scatter, "linear")->build(g));
  g.root = 0;
  LoadedPlan pairwise(sched::findAlgorithm(ir::Collective::Alltoall, "pairwise")->build(g));
  std::vector<MPI_Count> ones(p, 1), negative(p, 1);
  negative[p - 1] = -2;
  if (uint32_t(s.rank()) == p - 1) {
    expectCode(collc_gatherv(linearGather.plan, buf.data(), 1, buf.data() + 8, nullptr,
                             MPI_INT64_T, int(p) - 1, MPI_COMM_WORLD),
               COLLC_ERR_ARG, "gatherv without recvcounts at the root");
    expectCode(collc_gatherv(linearGather.plan, buf.data(), 2, buf.data() + 8, ones.data(),
                             MPI_INT64_T, int(p) - 1, MPI_COMM_WORLD),
               COLLC_ERR_ARG, "gatherv whose root sends 2 but receives 1 from itself");
    expectCode(collc_scatterv(linearScatter.plan, buf.data(), negative.data(), buf.data() + 8,
                              1, MPI_INT64_T, int(p) - 1, MPI_COMM_WORLD),
               COLLC_ERR_ARG, "scatterv with a negative sendcount");
  }
  expectCode(collc_alltoallv(pairwise.plan, buf.data(), ones.data(), buf.data() + 8 * p,
                             negative.data(), MPI_INT64_T, MPI_COMM_WORLD),
             COLLC_ERR_ARG, "alltoallv with a negative recvcount");
  expectCode(collc_alltoallv(pairwise.plan, buf.data(), nullptr, buf.data() + 8 * p,
                             ones.data(), MPI_INT64_T, MPI_COMM_WORLD),
             COLLC_ERR_ARG, "alltoallv without sendcounts");
  // MPI_IN_PLACE only where MPI allows it: refused on the rank that misuses
  // it, before anything is sent (the others make no call).
  const bool last = uint32_t(s.rank()) == p - 1;
  if (last)
    expectCode(collc_scatter(scatter.plan, MPI_IN_PLACE, buf.data() + 32 * p, 1, MPI_INT64_T,
                             int(p) - 1, MPI_COMM_WORLD),
               COLLC_ERR_ARG, "scatter with MPI_IN_PLACE as the root's sendbuf");
  else
    expectCode(collc_gather(gather.plan, MPI_IN_PLACE, nullptr, 1, MPI_INT64_T, int(p) - 1,
                            MPI_COMM_WORLD),
               COLLC_ERR_ARG, "gather with MPI_IN_PLACE at a non-root rank");
}

/// The C++ wrapper's family calls: a scan blocking and through request().
void cppWrapper(Suite &s) {
  const uint32_t p = uint32_t(s.size());
  ir::Plan chain = testplans::chainScan(p, false);
  std::vector<uint8_t> bytes = compiler::lower(chain, compiler::proveStrongest(chain).proof);
  collc::Plan plan = collc::Plan::fromMemory(bytes.data(), bytes.size());
  std::vector<int64_t> in(5), out(5, -1);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = int64_t(s.rank() * 10 + int(i));
  auto expected = [&](size_t i) {
    int64_t sum = 0;
    for (int r = 0; r <= s.rank(); ++r)
      sum += r * 10 + int64_t(i);
    return sum;
  };
  plan.scan(in.data(), out.data(), 5, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  for (size_t i = 0; i < in.size(); ++i)
    s.expect(out[i] == expected(i), "Plan::scan element " + std::to_string(i));
  std::fill(out.begin(), out.end(), -1);
  collc::Request req = plan.request([&](collc_plan pl, collc_request *r) {
    return collc_iscan(pl, in.data(), out.data(), 5, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD, r);
  });
  req.wait();
  for (size_t i = 0; i < in.size(); ++i)
    s.expect(out[i] == expected(i), "Plan::request(collc_iscan) element " + std::to_string(i));
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int status = 1;
  {
    Suite s;
    if (s.rank() == 0)
      std::printf("collc family suite on %d ranks\n", s.size());
    s.test("family", [&] { family(s); });
    s.test("block_movers", [&] { blockMovers(s); });
    s.test("varying", [&] { varying(s); });
    s.test("barriers", [&] { barriers(s); });
    s.test("refusals", [&] { refusals(s); });
    s.test("cpp_wrapper", [&] { cppWrapper(s); });
    status = s.finish();
  }
  bench::freeMatrixWorkload();
  MPI_Finalize();
  return status;
}
