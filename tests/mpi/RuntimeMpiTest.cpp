// tests/mpi/RuntimeMpiTest.cpp: the collc C API under mpiexec, on real MPI.
//
// Every rank runs this program (ctest starts it once per rank count, see
// CMakeLists.txt). Plans are generated and lowered in-process, loaded with
// collc_plan_load_memory and executed through the C API; every result is
// compared with the exact sequential fold in rank order (Workload.h), on
// every rank that has an output. Failures are gathered to rank 0, which
// prints them; every rank exits nonzero if any check failed.
//
// What it covers, per rank count:
//  - sweep: the five allreduce and three reduce algorithms (reduce at roots 0
//    and p-1) × counts {0, 1, 7, chunks-1, 1000, 100003} × a rotating sample of
//    the (op, datatype) pairs of the kernel table — enough cases per run that
//    every one of the 116 valid pairs is used at every rank count;
//  - in place (MPI_IN_PLACE: every rank of an allreduce, the root of a reduce);
//  - non-blocking: several executions in flight on one communicator, waited
//    for in reverse order or polled with collc_test;
//  - persistent: collc_allreduce_init started 1000 times on the same buffers
//    with new inputs each time, checked every time; collc_reduce_init too;
//  - a non-commutative user operation (2×2 matrix product modulo 2^32) exact
//    with the order-preserving plans, refused by the commutative ones;
//  - that operation and its datatype freed while non-blocking and persistent
//    requests use them;
//  - MPI_Comm_split and MPI_Comm_dup communicators;
//  - refusals: shape mismatches, non-contiguous datatypes, invalid pairs,
//    bad arguments and bad plans.
#include "collc/collc.h"
#include "collc/collc.hpp"
#include "compiler/Lower.h"
#include "schedules/Generators.h"
#include "tools/collc-bench/Workload.h"
#include "tests/mpi/MpiSuite.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

using namespace collc;
using bench::Workload;
using collc::mpitest::allocate;
using collc::mpitest::Bytes;
using collc::mpitest::Suite;

namespace {

// --- plans and buffers ------------------------------------------------------------

/// The plan of `alg` for (ranks, root), generated and lowered in-process.
Plan makePlan(const sched::Algorithm &alg, uint32_t ranks, uint32_t root = 0) {
  sched::GenOptions g;
  g.ranks = ranks;
  g.root = ir::hasRoot(alg.collective) ? root : 0;
  std::vector<uint8_t> bytes = compiler::lower(alg.build(g));
  return Plan::fromMemory(bytes.data(), bytes.size());
}

const sched::Algorithm &algorithm(ir::Collective c, const char *name) {
  const sched::Algorithm *a = sched::findAlgorithm(c, name);
  if (!a) {
    std::fprintf(stderr, "no algorithm %s\n", name);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return *a;
}

/// The allreduce and reduce algorithms of the registry.
std::vector<const sched::Algorithm *> reductions() {
  std::vector<const sched::Algorithm *> out;
  for (const sched::Algorithm &a : sched::algorithms())
    if (a.collective == ir::Collective::Allreduce || a.collective == ir::Collective::Reduce)
      out.push_back(&a);
  return out;
}

int commRank(MPI_Comm c) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}
int commSize(MPI_Comm c) {
  int s = 0;
  MPI_Comm_size(c, &s);
  return s;
}

std::string collcFailure(const char *call, int rc) {
  return std::string(call) + " returned " + std::to_string(rc) + " (" + collc_strerror(rc) +
         "): " + collc_error_message();
}

/// One execution of a loaded plan with its buffers: input filled, output
/// poisoned, then checked against the reference.
struct Case {
  const Plan *plan = nullptr;
  const Workload *w = nullptr;
  size_t n = 0;
  bool inPlace = false;
  MPI_Comm comm = MPI_COMM_WORLD;
  uint64_t salt = 0;

  bool reduce = false;
  int root = 0, rank = 0, size = 1;
  bool hasOut = true;
  Bytes in, out;

  Case(const Plan &p, const Workload &wl, size_t count, bool inPlaceUse, MPI_Comm c,
       uint64_t s)
      : plan(&p), w(&wl), n(count), inPlace(inPlaceUse), comm(c), salt(s) {
    collc_plan_info info = p.info();
    reduce = info.collective == COLLC_REDUCE;
    root = info.root;
    rank = commRank(comm);
    size = commSize(comm);
    hasOut = !reduce || rank == root;
    in = allocate(n * w->extent);
    out = allocate(n * w->extent);
    prepare();
  }
  /// New inputs (for `salt`), poisoned output, input copied to it in place.
  void prepare() {
    bench::fillInput(*w, rank, salt, in.get(), n);
    std::memset(out.get(), 0xa5, n * w->extent + 1);
    if (inPlace && hasOut)
      std::memcpy(out.get(), in.get(), n * w->extent);
  }
  const void *sendbuf() const { return inPlace && hasOut ? MPI_IN_PLACE : in.get(); }
  /// Non-roots of a reduce pass NULL: they have no output buffer.
  void *recvbuf() const { return hasOut ? out.get() : nullptr; }

  int runBlocking() const {
    return reduce ? collc_reduce(plan->get(), sendbuf(), recvbuf(), MPI_Count(n), w->type, w->op,
                                 root, comm)
                  : collc_allreduce(plan->get(), sendbuf(), recvbuf(), MPI_Count(n), w->type,
                                    w->op, comm);
  }
  int start(collc_request *req) const {
    return reduce ? collc_ireduce(plan->get(), sendbuf(), recvbuf(), MPI_Count(n), w->type,
                                  w->op, root, comm, req)
                  : collc_iallreduce(plan->get(), sendbuf(), recvbuf(), MPI_Count(n), w->type,
                                     w->op, comm, req);
  }
  int init(collc_request *req) const {
    return reduce ? collc_reduce_init(plan->get(), sendbuf(), recvbuf(), MPI_Count(n), w->type,
                                      w->op, root, comm, req)
                  : collc_allreduce_init(plan->get(), sendbuf(), recvbuf(), MPI_Count(n),
                                         w->type, w->op, comm, req);
  }
  /// "" if this rank's output is the exact fold (or the rank has none).
  std::string verify() const {
    if (!hasOut || n == 0)
      return "";
    Bytes want = allocate(n * w->extent), scratch = allocate(n * w->extent);
    bench::referenceFold(*w, size, salt, want.get(), scratch.get(), n);
    size_t at = bench::firstMismatch(*w, out.get(), want.get(), n);
    if (at == n)
      return "";
    return "element " + std::to_string(at) + " is " + bench::formatElement(*w, out.get(), at) +
           ", expected " + bench::formatElement(*w, want.get(), at);
  }
  std::string describe() const {
    collc_plan_info info = plan->info();
    return std::string(info.collective == COLLC_REDUCE ? "reduce " : "allreduce ") +
           info.algorithm + (reduce ? " root " + std::to_string(root) : "") + " p=" +
           std::to_string(size) + " n=" + std::to_string(n) + " " + w->opName + "/" +
           w->typeName + (inPlace ? " in-place" : "") + " salt " + std::to_string(salt);
  }
};

/// Runs a blocking case and records its failure, if any.
void checkBlocking(Suite &s, Case &c) {
  int rc = c.runBlocking();
  if (rc != COLLC_SUCCESS) {
    s.expect(false, c.describe() + ": " + collcFailure("the blocking call", rc));
    return;
  }
  std::string bad = c.verify();
  s.expect(bad.empty(), c.describe() + ": " + bad);
}

std::vector<size_t> countsFor(uint32_t chunks) {
  std::vector<size_t> ns = {0, 1, 7, 1000, 100003};
  if (chunks > 1)
    ns.push_back(chunks - 1);
  std::sort(ns.begin(), ns.end());
  ns.erase(std::unique(ns.begin(), ns.end()), ns.end());
  return ns;
}

struct PlanAt {
  const sched::Algorithm *alg;
  uint32_t root;
  Plan plan;
};

/// Every allreduce plan, and every reduce plan at roots 0 and p-1, for p ranks
/// (of the algorithms whose files accept p).
std::vector<PlanAt> allPlans(uint32_t p) {
  std::vector<PlanAt> plans;
  for (const sched::Algorithm *a : reductions()) {
    std::set<uint32_t> roots = {0};
    if (a->collective == ir::Collective::Reduce)
      roots.insert(p - 1);
    for (uint32_t root : roots)
      if (a->accepts(sched::GenOptions{p, root})) // skip the p its `require` refuses
        plans.push_back({a, root, makePlan(*a, p, root)});
  }
  return plans;
}

// --- the tests --------------------------------------------------------------------

void sweep(Suite &s) {
  const uint32_t p = uint32_t(s.size());
  std::vector<PlanAt> plans = allPlans(p);
  const auto pairs = bench::validPairs();
  s.expect(pairs.size() == 116, "the kernel table has " + std::to_string(pairs.size()) +
                                    " valid pairs, expected 116");
  std::vector<Workload> loads;
  for (auto [op, t] : pairs)
    loads.push_back(bench::builtinWorkload(op, t));
  size_t runs = 0;
  for (const PlanAt &pa : plans)
    runs += countsFor(pa.plan.info().chunks).size();
  // Enough pairs per (plan, count) that one rank count alone uses each of
  // them three times; the start rotates with p so that each pair meets
  // different plans and counts at different rank counts.
  const size_t perRun = (3 * pairs.size() + runs - 1) / runs;
  size_t cursor = size_t(p) * 37;
  std::set<size_t> used;
  for (const PlanAt &pa : plans)
    for (size_t n : countsFor(pa.plan.info().chunks))
      for (size_t k = 0; k < perRun; ++k) {
        size_t which = cursor++ % pairs.size();
        used.insert(which);
        Case c(pa.plan, loads[which], n, false, MPI_COMM_WORLD, cursor);
        checkBlocking(s, c);
      }
  s.expect(used.size() == pairs.size(),
           "covered " + std::to_string(used.size()) + " of " + std::to_string(pairs.size()) +
               " (op, type) pairs");
  // The checker itself: an output the plan never wrote must be caught.
  Case unwritten(plans.front().plan, loads[size_t(p) % loads.size()], 7, false, MPI_COMM_WORLD,
                 1);
  s.expect(!unwritten.hasOut || !unwritten.verify().empty(),
           "the reference check accepts an output that was never written");
  if (s.rank() == 0)
    std::printf("       sweep: %zu plans, %zu (plan, count) runs x %zu pairs, %zu of %zu pairs "
                "covered\n",
                plans.size(), runs, perRun, used.size(), pairs.size());
}

void inPlace(Suite &s) {
  const uint32_t p = uint32_t(s.size());
  using rt::ElemType;
  using rt::ReduceOp;
  const Workload loads[] = {
      bench::builtinWorkload(ReduceOp::Sum, ElemType::Double),
      bench::builtinWorkload(ReduceOp::Prod, ElemType::Int32),
      bench::builtinWorkload(ReduceOp::Bxor, ElemType::Byte),
      bench::builtinWorkload(ReduceOp::Max, ElemType::Float),
      bench::builtinWorkload(ReduceOp::Minloc, ElemType::DoubleInt),
      bench::builtinWorkload(ReduceOp::Sum, ElemType::DoubleComplex),
  };
  size_t k = 0;
  for (const PlanAt &pa : allPlans(p)) {
    for (size_t n : countsFor(pa.plan.info().chunks)) {
      if (n > 1000)
        continue;
      ++k;
      Case c(pa.plan, loads[k % std::size(loads)], n, true, MPI_COMM_WORLD, k);
      checkBlocking(s, c);
    }
    if (!pa.alg->needsCommutative) { // in place with operand order mattering
      Case c(pa.plan, bench::matrixWorkload(), 333, true, MPI_COMM_WORLD, 7);
      checkBlocking(s, c);
    }
  }
}

void nonBlocking(Suite &s) {
  const uint32_t p = uint32_t(s.size());
  using rt::ElemType;
  using rt::ReduceOp;
  const Workload sum = bench::builtinWorkload(ReduceOp::Sum, ElemType::Int64);
  const Workload bxor = bench::builtinWorkload(ReduceOp::Bxor, ElemType::Uint32);
  // Four different plans in flight on one communicator, waited in reverse order.
  {
    std::vector<Plan> plans;
    for (const char *name : {"binary_tree", "recursive_doubling", "rabenseifner", "ring"})
      plans.push_back(makePlan(algorithm(ir::Collective::Allreduce, name), p));
    plans.push_back(makePlan(algorithm(ir::Collective::Reduce, "binomial"), p, p - 1));
    std::vector<std::unique_ptr<Case>> cases;
    std::vector<collc_request> reqs(plans.size(), COLLC_REQUEST_NULL);
    for (size_t k = 0; k < plans.size(); ++k) {
      cases.push_back(
          std::make_unique<Case>(plans[k], sum, 1000 + 17 * k, false, MPI_COMM_WORLD, 100 + k));
      int rc = cases[k]->start(&reqs[k]);
      s.expect(rc == COLLC_SUCCESS, cases[k]->describe() + ": " + collcFailure("start", rc));
    }
    for (size_t k = plans.size(); k-- > 0;) {
      if (reqs[k] == COLLC_REQUEST_NULL)
        continue;
      int rc = collc_wait(&reqs[k]);
      s.expect(rc == COLLC_SUCCESS, cases[k]->describe() + ": " + collcFailure("collc_wait", rc));
      s.expect(reqs[k] == COLLC_REQUEST_NULL, "collc_wait leaves the request non-null");
      std::string bad = cases[k]->verify();
      s.expect(bad.empty(), cases[k]->describe() + " (reverse wait): " + bad);
    }
  }
  // The same plan four times in flight; the first is polled with collc_test
  // until done, the rest waited in reverse order.
  {
    Plan ring = makePlan(algorithm(ir::Collective::Allreduce, "ring"), p);
    std::vector<std::unique_ptr<Case>> cases;
    collc_request reqs[4] = {};
    for (int k = 0; k < 4; ++k) {
      cases.push_back(std::make_unique<Case>(ring, bxor, 5000, k % 2 == 1, MPI_COMM_WORLD,
                                             200 + uint64_t(k)));
      int rc = cases.back()->start(&reqs[k]);
      s.expect(rc == COLLC_SUCCESS, cases.back()->describe() + ": " + collcFailure("start", rc));
    }
    int flag = 0, polls = 0;
    while (reqs[0] != COLLC_REQUEST_NULL && !flag) {
      int rc = collc_test(&reqs[0], &flag);
      ++polls;
      if (rc != COLLC_SUCCESS) {
        s.expect(false, collcFailure("collc_test", rc));
        break;
      }
    }
    s.expect(reqs[0] == COLLC_REQUEST_NULL, "a completed collc_test leaves the request non-null");
    for (int k = 3; k >= 1; --k) {
      int rc = collc_wait(&reqs[k]);
      s.expect(rc == COLLC_SUCCESS, collcFailure("collc_wait", rc));
    }
    for (auto &c : cases) {
      std::string bad = c->verify();
      s.expect(bad.empty(), c->describe() + " (4 in flight): " + bad);
    }
  }
  // Misuse of a finished non-blocking request.
  collc_request none = COLLC_REQUEST_NULL;
  s.expect(collc_wait(&none) == COLLC_ERR_ARG, "collc_wait(NULL request) is not COLLC_ERR_ARG");
  int flag = 0;
  s.expect(collc_test(&none, &flag) == COLLC_ERR_ARG,
           "collc_test(NULL request) is not COLLC_ERR_ARG");
}

void persistent(Suite &s) {
  const uint32_t p = uint32_t(s.size());
  using rt::ElemType;
  using rt::ReduceOp;
  const Workload sum = bench::builtinWorkload(ReduceOp::Sum, ElemType::Int64);
  const Workload dsum = bench::builtinWorkload(ReduceOp::Sum, ElemType::Double);
  struct Spec {
    const sched::Algorithm &alg;
    uint32_t root;
    const Workload &w;
    size_t n;
    bool inPlace;
    int starts;
  };
  const Spec specs[] = {
      {algorithm(ir::Collective::Allreduce, "ring"), 0, sum, 64, false, 1000},
      {algorithm(ir::Collective::Allreduce, "recursive_doubling"), 0, bench::matrixWorkload(), 9,
       false, 200},
      {algorithm(ir::Collective::Allreduce, "rabenseifner"), 0, dsum, 1000, true, 100},
      {algorithm(ir::Collective::Reduce, "binomial"), p - 1, dsum, 100, true, 200},
  };
  for (const Spec &sp : specs) {
    Plan plan = makePlan(sp.alg, p, sp.root);
    Case c(plan, sp.w, sp.n, sp.inPlace, MPI_COMM_WORLD, 0);
    collc_request req = COLLC_REQUEST_NULL;
    int rc = c.init(&req);
    s.expect(rc == COLLC_SUCCESS, c.describe() + ": " + collcFailure("init", rc));
    if (rc != COLLC_SUCCESS)
      continue;
    int wrong = 0;
    std::string first;
    for (int k = 0; k < sp.starts; ++k) {
      c.salt = uint64_t(k); // new inputs in the same buffers
      c.prepare();
      rc = collc_start(req);
      if (rc == COLLC_SUCCESS)
        rc = collc_wait(&req);
      if (rc != COLLC_SUCCESS) {
        s.expect(false, c.describe() + ": " + collcFailure("collc_start/collc_wait", rc));
        break;
      }
      std::string bad = c.verify();
      if (!bad.empty() && wrong++ == 0)
        first = c.describe() + ": start " + std::to_string(k) + ": " + bad;
    }
    s.expect(wrong == 0, std::to_string(wrong) + " of " + std::to_string(sp.starts) +
                             " persistent runs wrong; first: " + first);
    s.expect(req != COLLC_REQUEST_NULL, "collc_wait freed a persistent request");
    // State errors: a second start while active; freeing while active.
    rc = collc_start(req);
    s.expect(rc == COLLC_SUCCESS, collcFailure("collc_start", rc));
    int again = collc_start(req);
    s.expect(again == COLLC_ERR_STATE, "a second collc_start while active returned " +
                                           std::to_string(again) + ", not COLLC_ERR_STATE");
    int freed = collc_request_free(&req);
    s.expect(freed == COLLC_ERR_STATE, "collc_request_free while active returned " +
                                           std::to_string(freed) + ", not COLLC_ERR_STATE");
    rc = collc_wait(&req);
    s.expect(rc == COLLC_SUCCESS, collcFailure("collc_wait", rc));
    collc_plan handle = plan.get();
    s.expect(collc_plan_free(&handle) == COLLC_ERR_STATE,
             "collc_plan_free with a live request is not COLLC_ERR_STATE");
    rc = collc_request_free(&req);
    s.expect(rc == COLLC_SUCCESS && req == COLLC_REQUEST_NULL, collcFailure("collc_request_free", rc));
  }
  // A non-blocking request cannot be restarted.
  Plan ring = makePlan(algorithm(ir::Collective::Allreduce, "ring"), p);
  Case c(ring, sum, 10, false, MPI_COMM_WORLD, 0);
  collc_request req = COLLC_REQUEST_NULL;
  int rc = c.start(&req);
  s.expect(rc == COLLC_SUCCESS, collcFailure("collc_iallreduce", rc));
  s.expect(collc_start(req) == COLLC_ERR_STATE,
           "collc_start of a non-persistent request is not COLLC_ERR_STATE");
  rc = collc_wait(&req);
  s.expect(rc == COLLC_SUCCESS, collcFailure("collc_wait", rc));
}

/// Blocking calls that repeat the last one on a communicator reuse its bound
/// request: new inputs in the same buffers must still be right, a changed
/// call must not reuse it, and a plan can be freed and another loaded (maybe
/// at the same address) without the cache serving the old one.
void repeatedBlocking(Suite &s) {
  const uint32_t p = uint32_t(s.size());
  using rt::ElemType;
  using rt::ReduceOp;
  const Workload sum = bench::builtinWorkload(ReduceOp::Sum, ElemType::Int64);
  const Workload maxw = bench::builtinWorkload(ReduceOp::Max, ElemType::Int32);
  for (int round = 0; round < 3; ++round) {
    Plan plan = makePlan(algorithm(ir::Collective::Allreduce,
                                   round == 1 ? "recursive_doubling" : "ring"),
                         p);
    Case c(plan, sum, 37, round == 2, MPI_COMM_WORLD, 0);
    Case other(plan, maxw, 37, false, MPI_COMM_WORLD, 0);
    int wrong = 0;
    for (int k = 0; k < 200; ++k) {
      Case &x = k % 50 == 49 ? other : c; // now and then a different call
      x.salt = uint64_t(k + 1000 * round);
      x.prepare();
      int rc = x.runBlocking();
      if (rc != COLLC_SUCCESS) {
        s.expect(false, x.describe() + ": " + collcFailure("the blocking call", rc));
        return;
      }
      if (!x.verify().empty() && wrong++ == 0)
        s.expect(false, x.describe() + ": call " + std::to_string(k) + ": " + x.verify());
    }
    s.expect(wrong == 0, std::to_string(wrong) + " of 200 repeated blocking calls wrong");
    // The cached request is not a live request of the plan: freeing works.
    collc_plan handle = plan.release();
    s.expect(collc_plan_free(&handle) == COLLC_SUCCESS,
             "collc_plan_free after blocking calls: " + std::string(collc_error_message()));
  }
}

/// Different plans in flight together on one communicator: their tag ranges
/// must not overlap even when one rank starts the second before the first has
/// progressed and another only after (review finding: tags came from each
/// plan's own stride, so a ring and a binomial could swap messages).
void mixedPlansInFlight(Suite &s) {
  const uint32_t p = uint32_t(s.size());
  if (p < 2)
    return;
  using rt::ElemType;
  using rt::ReduceOp;
  const Workload sum = bench::builtinWorkload(ReduceOp::Sum, ElemType::Int64);
  Plan ring = makePlan(algorithm(ir::Collective::Allreduce, "ring"), p);
  Plan binomial = makePlan(algorithm(ir::Collective::Reduce, "binomial"), p, 0);
  MPI_Comm sync;
  MPI_Comm_dup(MPI_COMM_WORLD, &sync);
  for (int round = 0; round < 3; ++round) {
    // A fresh communicator: its first executions are where tags collided.
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    Case a(ring, sum, 4, false, comm, 900 + uint64_t(round));
    Case b(binomial, sum, 2, false, comm, 950 + uint64_t(round));
    collc_request ra = COLLC_REQUEST_NULL, rb = COLLC_REQUEST_NULL;
    int rc = a.start(&ra);
    if (s.rank() == 0) { // starts the reduce at once
      rc = rc ? rc : b.start(&rb);
      MPI_Barrier(sync);
    } else { // progresses the allreduce a while first
      MPI_Barrier(sync);
      int flag = 0;
      for (int k = 0; k < 200 && !flag && ra; ++k)
        (void)collc_test(&ra, &flag);
      rc = rc ? rc : b.start(&rb);
    }
    if (ra)
      rc = rc ? rc : collc_wait(&ra);
    if (rb)
      rc = rc ? rc : collc_wait(&rb);
    s.expect(rc == COLLC_SUCCESS, collcFailure("mixed plans in flight", rc));
    s.expect(a.verify().empty(), a.describe() + " in flight with a reduce: " + a.verify());
    s.expect(b.verify().empty(), b.describe() + " in flight with an allreduce: " + b.verify());
    MPI_Comm_free(&comm);
  }
  MPI_Comm_free(&sync);
}

/// MPI lets a communicator be freed with operations pending on it; they
/// complete normally, and a persistent request outlives it (review finding:
/// the private duplicate was freed at once).
void freedCommunicator(Suite &s) {
  const uint32_t p = uint32_t(s.size());
  using rt::ElemType;
  using rt::ReduceOp;
  const Workload sum = bench::builtinWorkload(ReduceOp::Sum, ElemType::Int64);
  Plan ring = makePlan(algorithm(ir::Collective::Allreduce, "ring"), p);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  Case a(ring, sum, 1000, false, dup, 1100), b(ring, sum, 1000, false, dup, 1101);
  collc_request pending = COLLC_REQUEST_NULL, persistent = COLLC_REQUEST_NULL;
  int rc = b.init(&persistent);
  rc = rc ? rc : a.start(&pending);
  MPI_Comm_free(&dup);
  rc = rc ? rc : collc_wait(&pending);
  s.expect(rc == COLLC_SUCCESS, collcFailure("a request pending at MPI_Comm_free", rc));
  s.expect(a.verify().empty(), a.describe() + " pending at MPI_Comm_free: " + a.verify());
  for (int k = 0; k < 3 && rc == COLLC_SUCCESS; ++k) {
    b.salt = 1101 + uint64_t(k);
    b.prepare();
    rc = collc_start(persistent);
    rc = rc ? rc : collc_wait(&persistent);
    s.expect(rc == COLLC_SUCCESS, collcFailure("a persistent request after MPI_Comm_free", rc));
    s.expect(b.verify().empty(), b.describe() + " after MPI_Comm_free: " + b.verify());
  }
  if (persistent)
    (void)collc_request_free(&persistent);
}

/// A user operation that is not the one freed: inout = 0.
void zeroOp(void *, void *inout, int *len, MPI_Datatype *type) {
  int size = 0;
  MPI_Type_size(*type, &size);
  std::memset(inout, 0, size_t(*len) * size_t(size));
}

/// MPI_Op_free and MPI_Type_free while requests use them: MPI says pending
/// operations complete normally. A non-blocking and a persistent request on
/// a user operation and derived datatype; both handles are freed, new ones
/// are made (they may get the freed handles' values), then the requests run.
void freedHandles(Suite &s) {
  const uint32_t p = uint32_t(s.size());
  for (const PlanAt &pa : allPlans(p)) {
    if (pa.alg->needsCommutative)
      continue;
    Workload w = bench::newMatrixWorkload();
    Case a(pa.plan, w, 1000, false, MPI_COMM_WORLD, 31), b(pa.plan, w, 7, false, MPI_COMM_WORLD, 32);
    collc_request pending = COLLC_REQUEST_NULL, persistent = COLLC_REQUEST_NULL;
    int rc = a.start(&pending);
    rc = rc ? rc : b.init(&persistent);
    MPI_Op_free(&w.op);
    MPI_Type_free(&w.type);
    s.expect(w.op == MPI_OP_NULL && w.type == MPI_DATATYPE_NULL,
             a.describe() + ": MPI_Op_free / MPI_Type_free did not null the handles");
    // New handles, first in line for the freed ones' memory: a type of the
    // same size in another layout, an operation that computes something else.
    MPI_Datatype swapped;
    const int lens[4] = {1, 1, 1, 1}, displs[4] = {3, 2, 1, 0};
    MPI_Type_indexed(4, lens, displs, MPI_UINT32_T, &swapped);
    MPI_Type_commit(&swapped);
    MPI_Op zero;
    MPI_Op_create(&zeroOp, 0, &zero);
    rc = rc ? rc : collc_wait(&pending);
    s.expect(rc == COLLC_SUCCESS, collcFailure("a request whose op and type were freed", rc));
    s.expect(a.verify().empty(), a.describe() + " with op and type freed: " + a.verify());
    for (int k = 0; k < 3 && rc == COLLC_SUCCESS; ++k) {
      b.salt = 32 + uint64_t(k);
      b.prepare();
      rc = collc_start(persistent);
      rc = rc ? rc : collc_wait(&persistent);
      s.expect(rc == COLLC_SUCCESS, collcFailure("a persistent request, op and type freed", rc));
      s.expect(b.verify().empty(), b.describe() + " with op and type freed: " + b.verify());
    }
    if (persistent)
      (void)collc_request_free(&persistent);
    MPI_Type_free(&swapped);
    MPI_Op_free(&zero);
  }
}

/// inout += in on int32 (any contiguous type of them).
void intSumOp(void *in, void *inout, int *len, MPI_Datatype *type) {
  int size = 0;
  MPI_Type_size(*type, &size);
  const int32_t *a = static_cast<const int32_t *>(in);
  int32_t *b = static_cast<int32_t *>(inout);
  for (size_t i = 0; i < size_t(*len) * size_t(size) / 4; ++i)
    b[i] += a[i];
}

/// Blocking calls on the same buffers and count whose user operation and
/// derived datatype are freed and made again between rounds — pairs of ints,
/// then triples, then pairs: the new handles may take the freed ones' values,
/// and the execution kept for a repeated call must not serve a triple as a
/// pair. Each round calls twice.
void remadeHandlesBlocking(Suite &s) {
  const uint32_t p = uint32_t(s.size());
  const int me = s.rank();
  constexpr int n = 300;
  std::vector<int32_t> in(3 * n), out(3 * n);
  for (const PlanAt &pa : allPlans(p)) {
    if (pa.alg->collective != ir::Collective::Allreduce)
      continue;
    for (int round = 0; round < 4; ++round) {
      const int ints = round % 2 ? 3 : 2;
      MPI_Op op;
      MPI_Op_create(&intSumOp, 1, &op);
      MPI_Datatype tuple;
      MPI_Type_contiguous(ints, MPI_INT32_T, &tuple);
      MPI_Type_commit(&tuple);
      for (int twice = 0; twice < 2; ++twice) {
        for (int i = 0; i < n * ints; ++i)
          in[size_t(i)] = me * 1000 + i + round, out[size_t(i)] = -1;
        const int rc =
            collc_allreduce(pa.plan.get(), in.data(), out.data(), n, tuple, op, MPI_COMM_WORLD);
        s.expect(rc == COLLC_SUCCESS,
                 collcFailure((pa.alg->name.str() + " with remade handles").c_str(), rc));
        int wrong = -1;
        for (int i = 0; i < n * ints && wrong < 0; ++i)
          if (out[size_t(i)] != int32_t(int(p) * (int(p) - 1) / 2 * 1000 + int(p) * (i + round)))
            wrong = i;
        s.expect(wrong < 0, pa.alg->name.str() + ", round " + std::to_string(round) +
                                " (tuples of " + std::to_string(ints) + "): int " +
                                std::to_string(wrong) + " wrong");
      }
      MPI_Type_free(&tuple);
      MPI_Op_free(&op);
    }
  }
}

void nonCommutative(Suite &s) {
  const uint32_t p = uint32_t(s.size());
  const Workload &mat = bench::matrixWorkload();
  for (const PlanAt &pa : allPlans(p)) {
    collc_plan_info info = pa.plan.info();
    if (!pa.alg->needsCommutative) {
      for (size_t n : countsFor(info.chunks)) {
        Case c(pa.plan, mat, n, false, MPI_COMM_WORLD, n);
        checkBlocking(s, c);
      }
      continue;
    }
    // Refused, blocking, non-blocking and persistent alike, with a message.
    Case c(pa.plan, mat, 100, false, MPI_COMM_WORLD, 1);
    std::string what = c.describe();
    s.expect(info.commutative == 1, what + ": the plan does not say it needs commutativity");
    int rc = c.runBlocking();
    std::string msg = collc_error_message();
    s.expect(rc == COLLC_ERR_UNSUPPORTED,
             what + ": blocking call returned " + std::to_string(rc) + ", not COLLC_ERR_UNSUPPORTED");
    s.expect(msg.find("commutative") != std::string::npos,
             what + ": the refusal does not say why: '" + msg + "'");
    collc_request req = COLLC_REQUEST_NULL;
    rc = c.start(&req);
    s.expect(rc == COLLC_ERR_UNSUPPORTED && req == COLLC_REQUEST_NULL,
             what + ": non-blocking call returned " + std::to_string(rc));
    rc = c.init(&req);
    s.expect(rc == COLLC_ERR_UNSUPPORTED && req == COLLC_REQUEST_NULL,
             what + ": persistent init returned " + std::to_string(rc));
  }
}

void communicators(Suite &s) {
  const int p = s.size(), rank = s.rank();
  using rt::ElemType;
  using rt::ReduceOp;
  const Workload sum = bench::builtinWorkload(ReduceOp::Sum, ElemType::Int64);
  const Workload &mat = bench::matrixWorkload();
  // Split by parity, and split again with the ranks reversed (key = p - rank):
  // rank order is the sub-communicator's, for the matrix product too.
  for (bool reversed : {false, true}) {
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, reversed ? p - rank : rank, &sub);
    const uint32_t q = uint32_t(commSize(sub));
    Plan ring = makePlan(algorithm(ir::Collective::Allreduce, "ring"), q);
    Plan tree = makePlan(algorithm(ir::Collective::Allreduce, "binary_tree"), q);
    Plan binomial = makePlan(algorithm(ir::Collective::Reduce, "binomial"), q, q - 1);
    for (size_t n : {size_t(1), size_t(1000)}) {
      Case a(ring, sum, n, false, sub, 300 + n);
      checkBlocking(s, a);
      Case b(tree, mat, n, false, sub, 400 + n);
      checkBlocking(s, b);
      Case c(binomial, mat, n, reversed, sub, 500 + n);
      checkBlocking(s, c);
    }
    MPI_Comm_free(&sub);
  }
  // A duplicate and its parent, alternately; then a new duplicate after the
  // first is freed (collc's private communicator goes with it).
  Plan rd = makePlan(algorithm(ir::Collective::Allreduce, "recursive_doubling"), uint32_t(p));
  for (int round = 0; round < 2; ++round) {
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    for (int k = 0; k < 3; ++k) {
      Case a(rd, sum, 777, false, dup, 600 + uint64_t(k));
      checkBlocking(s, a);
      Case b(rd, mat, 77, false, MPI_COMM_WORLD, 700 + uint64_t(k));
      checkBlocking(s, b);
    }
    // In flight on both at once.
    Case a(rd, sum, 2000, false, dup, 800), b(rd, sum, 2000, false, MPI_COMM_WORLD, 801);
    collc_request ra = COLLC_REQUEST_NULL, rb = COLLC_REQUEST_NULL;
    int rc1 = a.start(&ra), rc2 = b.start(&rb);
    s.expect(rc1 == COLLC_SUCCESS && rc2 == COLLC_SUCCESS, collcFailure("start", rc1 ? rc1 : rc2));
    if (rb)
      (void)collc_wait(&rb);
    if (ra)
      (void)collc_wait(&ra);
    s.expect(a.verify().empty(), a.describe() + " on a dup: " + a.verify());
    s.expect(b.verify().empty(), b.describe() + " beside a dup: " + b.verify());
    MPI_Comm_free(&dup);
  }
}

void refusals(Suite &s) {
  const uint32_t p = uint32_t(s.size());
  auto expectCode = [&](int rc, int want, const std::string &what) {
    std::string msg = collc_error_message();
    s.expect(rc == want, what + ": returned " + std::to_string(rc) + " (" + collc_strerror(rc) +
                             "), expected " + std::to_string(want) + " (" +
                             collc_strerror(want) + "); message '" + msg + "'");
    if (rc == want && want != COLLC_SUCCESS)
      s.expect(!msg.empty(), what + ": no error message");
  };
  const sched::Algorithm &ringAlg = algorithm(ir::Collective::Allreduce, "ring");
  const sched::Algorithm &binomialAlg = algorithm(ir::Collective::Reduce, "binomial");
  std::vector<int32_t> in(64, 1), out(64, 0);

  // Shapes: a plan for p+1 ranks (for p = 3: the plan for 4 ranks).
  Plan bigger = makePlan(ringAlg, p + 1);
  expectCode(collc_allreduce(bigger.get(), in.data(), out.data(), 64, MPI_INT32_T, MPI_SUM,
                             MPI_COMM_WORLD),
             COLLC_ERR_SHAPE, "a plan for " + std::to_string(p + 1) + " ranks on " +
                                  std::to_string(p));
  s.expect(std::string(collc_error_message()).find("ranks") != std::string::npos,
           "the shape refusal does not name the ranks");
  Plan ring = makePlan(ringAlg, p);
  expectCode(collc_reduce(ring.get(), in.data(), out.data(), 64, MPI_INT32_T, MPI_SUM, 0,
                          MPI_COMM_WORLD),
             COLLC_ERR_SHAPE, "an allreduce plan called as reduce");
  Plan binomial0 = makePlan(binomialAlg, p, 0);
  expectCode(collc_allreduce(binomial0.get(), in.data(), out.data(), 64, MPI_INT32_T, MPI_SUM,
                             MPI_COMM_WORLD),
             COLLC_ERR_SHAPE, "a reduce plan called as allreduce");
  if (p > 1)
    expectCode(collc_reduce(binomial0.get(), in.data(), out.data(), 64, MPI_INT32_T, MPI_SUM,
                            int(p) - 1, MPI_COMM_WORLD),
               COLLC_ERR_SHAPE, "a reduce plan for root 0 called with root p-1");

  // Datatypes: a vector with gaps, a resized int, a struct with a hole.
  MPI_Datatype vec, resized, holes;
  MPI_Type_vector(2, 1, 2, MPI_INT32_T, &vec);
  MPI_Type_commit(&vec);
  MPI_Type_create_resized(MPI_INT32_T, 0, 8, &resized);
  MPI_Type_commit(&resized);
  int blocks[2] = {1, 1};
  MPI_Aint displs[2] = {0, 8};
  MPI_Datatype types[2] = {MPI_INT32_T, MPI_INT32_T};
  MPI_Type_create_struct(2, blocks, displs, types, &holes);
  MPI_Type_commit(&holes);
  for (auto [type, name] : {std::pair{vec, "MPI_Type_vector(2, 1, 2)"},
                            std::pair{resized, "MPI_INT32_T resized to 8 bytes"},
                            std::pair{holes, "a struct of 2 ints 8 bytes apart"}}) {
    expectCode(collc_allreduce(ring.get(), in.data(), out.data(), 4, type, MPI_SUM,
                               MPI_COMM_WORLD),
               COLLC_ERR_UNSUPPORTED, std::string("the non-contiguous datatype ") + name);
    s.expect(std::string(collc_error_message()).find("contiguous") != std::string::npos,
             std::string("the refusal of ") + name + " does not say 'contiguous'");
    collc_request req = COLLC_REQUEST_NULL;
    expectCode(collc_allreduce_init(ring.get(), in.data(), out.data(), 4, type,
                                    bench::matrixWorkload().op, MPI_COMM_WORLD, &req),
               COLLC_ERR_UNSUPPORTED, std::string("persistent, user op, ") + name);
  }
  MPI_Type_free(&vec);
  MPI_Type_free(&resized);
  MPI_Type_free(&holes);

  // A contiguous derived datatype: served with a user operation (the matrix
  // product, in the sweeps above), refused with a predefined one, which MPI
  // defines on predefined datatypes only.
  {
    MPI_Datatype triple;
    MPI_Type_contiguous(3, MPI_INT32_T, &triple);
    MPI_Type_commit(&triple);
    expectCode(collc_allreduce(ring.get(), in.data(), out.data(), 4, triple, MPI_SUM,
                               MPI_COMM_WORLD),
               COLLC_ERR_UNSUPPORTED, "MPI_SUM on a contiguous derived datatype");
    MPI_Type_free(&triple);
  }

  // Operations MPI does not define on the type.
  expectCode(collc_allreduce(ring.get(), in.data(), out.data(), 8, MPI_DOUBLE, MPI_BAND,
                             MPI_COMM_WORLD),
             COLLC_ERR_UNSUPPORTED, "MPI_BAND on MPI_DOUBLE");
  expectCode(collc_allreduce(ring.get(), in.data(), out.data(), 8, MPI_INT, MPI_MAXLOC,
                             MPI_COMM_WORLD),
             COLLC_ERR_UNSUPPORTED, "MPI_MAXLOC on MPI_INT");

  // Arguments.
  expectCode(collc_allreduce(COLLC_PLAN_NULL, in.data(), out.data(), 8, MPI_INT32_T, MPI_SUM,
                             MPI_COMM_WORLD),
             COLLC_ERR_ARG, "COLLC_PLAN_NULL");
  expectCode(collc_allreduce(ring.get(), in.data(), out.data(), -1, MPI_INT32_T, MPI_SUM,
                             MPI_COMM_WORLD),
             COLLC_ERR_ARG, "a negative count");
  expectCode(collc_allreduce(ring.get(), in.data(), out.data(), 8, MPI_INT32_T, MPI_SUM,
                             MPI_COMM_NULL),
             COLLC_ERR_ARG, "MPI_COMM_NULL");
  expectCode(collc_allreduce(ring.get(), in.data(), MPI_IN_PLACE, 8, MPI_INT32_T, MPI_SUM,
                             MPI_COMM_WORLD),
             COLLC_ERR_ARG, "recvbuf MPI_IN_PLACE");
  expectCode(collc_allreduce(ring.get(), nullptr, out.data(), 8, MPI_INT32_T, MPI_SUM,
                             MPI_COMM_WORLD),
             COLLC_ERR_ARG, "a null sendbuf");
  if (p > 1) {
    Plan binomialLast = makePlan(binomialAlg, p, p - 1);
    // Only the root may pass MPI_IN_PLACE. The refusal is local (nothing is
    // sent), so rank 0, a non-root, can make the call alone.
    if (s.rank() == 0)
      expectCode(collc_reduce(binomialLast.get(), MPI_IN_PLACE, out.data(), 8, MPI_INT32_T,
                              MPI_SUM, int(p) - 1, MPI_COMM_WORLD),
                 COLLC_ERR_ARG, "MPI_IN_PLACE at a non-root of a reduce");
  }
  expectCode(collc_iallreduce(ring.get(), in.data(), out.data(), 8, MPI_INT32_T, MPI_SUM,
                              MPI_COMM_WORLD, nullptr),
             COLLC_ERR_ARG, "a null request pointer");
  expectCode(collc_start(COLLC_REQUEST_NULL), COLLC_ERR_ARG, "collc_start(NULL)");

  // Plans.
  collc_plan bad = COLLC_PLAN_NULL;
  const char garbage[] = "not a plan at all, just some bytes";
  expectCode(collc_plan_load_memory(garbage, sizeof garbage, &bad), COLLC_ERR_PLAN,
             "garbage bytes");
  s.expect(bad == COLLC_PLAN_NULL, "a refused load left a plan handle");
  expectCode(collc_plan_load_file("/nonexistent/dir/plan.cplan", &bad), COLLC_ERR_IO,
             "a missing file");
  std::vector<uint8_t> bytes = compiler::lower(ringAlg.build(sched::GenOptions{p, 0}));
  bytes[bytes.size() / 2] ^= 0x40;
  expectCode(collc_plan_load_memory(bytes.data(), bytes.size(), &bad), COLLC_ERR_PLAN,
             "a plan with a flipped bit");
  for (int code = 0; code <= 9; ++code)
    s.expect(collc_strerror(code) != nullptr, "collc_strerror returned NULL");
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int status = 1;
  {
    Suite s;
    if (s.rank() == 0)
      std::printf("collc MPI suite on %d ranks\n", s.size());
    try {
      s.test("sweep", [&] { sweep(s); });
      s.test("in_place", [&] { inPlace(s); });
      s.test("nonblocking", [&] { nonBlocking(s); });
      s.test("persistent", [&] { persistent(s); });
      s.test("repeated_blocking", [&] { repeatedBlocking(s); });
      s.test("mixed_plans_in_flight", [&] { mixedPlansInFlight(s); });
      s.test("freed_communicator", [&] { freedCommunicator(s); });
      s.test("noncommutative", [&] { nonCommutative(s); });
      s.test("freed_handles", [&] { freedHandles(s); });
      s.test("remade_handles_blocking", [&] { remadeHandlesBlocking(s); });
      s.test("communicators", [&] { communicators(s); });
      s.test("refusals", [&] { refusals(s); });
      status = s.finish();
    } catch (const collc::Error &e) {
      std::fprintf(stderr, "rank %d: unexpected collc error: %s\n", s.rank(), e.what());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  bench::freeMatrixWorkload();
  MPI_Finalize();
  return status;
}
