// tests/mpi/FamilyMpiTest.cpp: the C API's reduce_scatter_block,
// reduce_scatter, scan, exscan, allgather and bcast on real MPI.
//
// Every rank runs this program (one ctest per rank count). The plans are the
// test plans of tests/support/FamilyPlans.h, proven and optimized at -O2 as
// `collc compile` would, then loaded from memory. Each case fills every
// rank's input from (rank, index) (tools/collc-bench/Workload.h), poisons the
// output, runs the call blocking, non-blocking or persistent (three starts
// with new inputs), in place or not, and compares every rank's output with a
// sequential model of the collective:
//   reduce_scatter(_block)  block r of the fold x_0 ∘ … ∘ x_{p-1}
//   scan                    x_0 ∘ … ∘ x_r          exscan  x_0 ∘ … ∘ x_{r-1}
//                                                   (rank 0's output untouched)
//   allgather               block q is rank q's input
//   bcast                   the root's input
// Counts include 0, 1, fewer elements than chunks, a prime and uneven
// recvcounts with zeros; operations include the non-commutative matrix
// product (order-preserving plans only; the ring reduce-scatter refuses it).
#include "collc/collc.h"
#include "compiler/Lower.h"
#include "compiler/Prove.h"
#include "compiler/passes/Pipeline.h"
#include "tests/mpi/MpiSuite.h"
#include "tests/support/FamilyPlans.h"
#include "tools/collc-bench/Workload.h"

#include <cstring>
#include <functional>

using namespace collc;
using bench::Workload;
using mpitest::allocate;
using mpitest::Bytes;
using mpitest::Suite;

namespace {

enum class Kind { ReduceScatterBlock, ReduceScatter, Scan, Exscan, Allgather, Bcast };

const char *kindName(Kind k) {
  switch (k) {
  case Kind::ReduceScatterBlock:
    return "reduce_scatter_block";
  case Kind::ReduceScatter:
    return "reduce_scatter";
  case Kind::Scan:
    return "scan";
  case Kind::Exscan:
    return "exscan";
  case Kind::Allgather:
    return "allgather";
  case Kind::Bcast:
    return "bcast";
  }
  return "?";
}

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

/// One call of one collective with its buffers.
struct Case {
  Kind kind;
  collc_plan plan;
  const Workload *w;
  int rank = 0, size = 1, root = 0;
  uint64_t count = 0;                 ///< count / recvcount / per-rank count
  std::vector<MPI_Count> recvcounts;  ///< reduce_scatter
  std::vector<uint64_t> blockStart;   ///< prefix sums of the blocks
  bool inPlace = false;
  uint64_t salt = 0;
  Bytes in, out, want, scratch;
  uint64_t inElems = 0, outElems = 0, total = 0;

  Case(Kind k, collc_plan pl, const Workload &wl, uint64_t n, std::vector<MPI_Count> counts,
       bool place, int rt)
      : kind(k), plan(pl), w(&wl), root(rt), count(n), recvcounts(std::move(counts)),
        inPlace(place) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const uint64_t p = uint64_t(size);
    blockStart.assign(p + 1, 0);
    for (uint64_t b = 0; b < p; ++b)
      blockStart[b + 1] = blockStart[b] + (kind == Kind::ReduceScatter ? uint64_t(recvcounts[b])
                                                                       : count);
    switch (kind) {
    case Kind::ReduceScatterBlock:
    case Kind::ReduceScatter:
      total = blockStart[p];
      inElems = total;
      outElems = blockStart[r() + 1] - blockStart[r()];
      break;
    case Kind::Allgather:
      total = p * count;
      inElems = count;
      outElems = total;
      break;
    default:
      total = inElems = outElems = count;
      break;
    }
    const size_t ext = w->extent;
    const uint64_t big = std::max<uint64_t>(total, 1);
    in = allocate(big * ext);
    out = allocate(big * ext);
    want = allocate(big * ext);
    scratch = allocate(big * ext);
  }
  uint64_t r() const { return uint64_t(rank); }

  /// New inputs, poisoned output; in place, the input goes where MPI wants it.
  void prepare() {
    const size_t ext = w->extent;
    if (kind == Kind::Bcast) {
      std::memset(out.get(), 0xa5, total * ext + 1);
      if (rank == root)
        bench::fillInput(*w, root, salt, out.get(), count);
      return;
    }
    bench::fillInput(*w, rank, salt, in.get(), inElems);
    std::memset(out.get(), 0xa5, std::max(total, outElems) * ext + 1);
    if (!inPlace)
      return;
    char *at = out.get() + (kind == Kind::Allgather ? r() * count * ext : 0);
    std::memcpy(at, in.get(), inElems * ext);
  }

  const void *sendbuf() const { return inPlace ? MPI_IN_PLACE : in.get(); }

  int call(int mode, collc_request *req) {
    void *o = out.get();
    const void *s = sendbuf();
    const MPI_Datatype t = w->type;
    const MPI_Op op = w->op;
    const MPI_Comm c = MPI_COMM_WORLD;
    const MPI_Count n = MPI_Count(count);
    const MPI_Count *rc = recvcounts.data();
    switch (kind) {
    case Kind::ReduceScatterBlock:
      return mode == 0   ? collc_reduce_scatter_block(plan, s, o, n, t, op, c)
             : mode == 1 ? collc_ireduce_scatter_block(plan, s, o, n, t, op, c, req)
                         : collc_reduce_scatter_block_init(plan, s, o, n, t, op, c, req);
    case Kind::ReduceScatter:
      return mode == 0   ? collc_reduce_scatter(plan, s, o, rc, t, op, c)
             : mode == 1 ? collc_ireduce_scatter(plan, s, o, rc, t, op, c, req)
                         : collc_reduce_scatter_init(plan, s, o, rc, t, op, c, req);
    case Kind::Scan:
      return mode == 0   ? collc_scan(plan, s, o, n, t, op, c)
             : mode == 1 ? collc_iscan(plan, s, o, n, t, op, c, req)
                         : collc_scan_init(plan, s, o, n, t, op, c, req);
    case Kind::Exscan:
      return mode == 0   ? collc_exscan(plan, s, o, n, t, op, c)
             : mode == 1 ? collc_iexscan(plan, s, o, n, t, op, c, req)
                         : collc_exscan_init(plan, s, o, n, t, op, c, req);
    case Kind::Allgather:
      return mode == 0   ? collc_allgather(plan, s, o, n, t, c)
             : mode == 1 ? collc_iallgather(plan, s, o, n, t, c, req)
                         : collc_allgather_init(plan, s, o, n, t, c, req);
    case Kind::Bcast:
      return mode == 0   ? collc_bcast(plan, o, n, t, root, c)
             : mode == 1 ? collc_ibcast(plan, o, n, t, root, c, req)
                         : collc_bcast_init(plan, o, n, t, root, c, req);
    }
    return -1;
  }

  /// "" if this rank's output is what the collective defines.
  std::string verify() {
    const size_t ext = w->extent;
    const uint64_t p = uint64_t(size);
    uint64_t at = 0, n = outElems;
    switch (kind) {
    case Kind::ReduceScatterBlock:
    case Kind::ReduceScatter:
      bench::referenceFold(*w, size, salt, want.get(), scratch.get(), total);
      at = blockStart[r()];
      break;
    case Kind::Scan:
      bench::referenceFold(*w, rank + 1, salt, want.get(), scratch.get(), count);
      break;
    case Kind::Exscan:
      if (rank == 0) { // MPI: undefined; collc leaves it as it was
        if (inPlace)
          return std::memcmp(out.get(), in.get(), count * ext) ? "rank 0's buffer changed" : "";
        for (size_t i = 0; i < count * ext; ++i)
          if (uint8_t(out.get()[i]) != 0xa5)
            return "rank 0's output was written";
        return "";
      }
      bench::referenceFold(*w, rank, salt, want.get(), scratch.get(), count);
      break;
    case Kind::Allgather:
      for (uint64_t q = 0; q < p; ++q)
        bench::fillInput(*w, int(q), salt, want.get() + q * count * ext, count);
      break;
    case Kind::Bcast:
      bench::fillInput(*w, root, salt, want.get(), count);
      break;
    }
    size_t bad = bench::firstMismatch(*w, out.get(), want.get() + at * ext, n);
    if (bad == n)
      return "";
    return "element " + std::to_string(bad) + " is " + bench::formatElement(*w, out.get(), bad) +
           ", expected " + bench::formatElement(*w, want.get() + at * ext, bad);
  }

  std::string describe(int mode) const {
    static const char *modes[] = {"blocking", "non-blocking", "persistent"};
    std::string s = std::string(kindName(kind)) + " p=" + std::to_string(size) + " " +
                    w->opName + "/" + w->typeName + " " + modes[mode];
    if (kind == Kind::ReduceScatter) {
      s += " recvcounts";
      for (MPI_Count c : recvcounts)
        s += " " + std::to_string(c);
    } else {
      s += " count " + std::to_string(count);
    }
    if (kind == Kind::Bcast)
      s += " root " + std::to_string(root);
    return s + (inPlace ? " in-place" : "");
  }
};

/// Runs `c` in every mode and records what is wrong.
void runAllModes(Suite &s, Case &c) {
  for (int mode = 0; mode < 3; ++mode) {
    const int runs = mode == 2 ? 3 : 1;
    collc_request req = COLLC_REQUEST_NULL;
    for (int k = 0; k < runs; ++k) {
      c.salt = uint64_t(100 * mode + k + 1);
      c.prepare();
      int rc = COLLC_SUCCESS;
      if (mode == 0)
        rc = c.call(0, nullptr);
      else if (mode == 1)
        rc = c.call(1, &req);
      else if (k == 0)
        rc = c.call(2, &req);
      if (rc == COLLC_SUCCESS && mode == 2)
        rc = collc_start(req);
      if (rc == COLLC_SUCCESS && mode != 0)
        rc = collc_wait(&req);
      s.expect(rc == COLLC_SUCCESS, c.describe(mode) + ": returned " + std::to_string(rc) + " (" +
                                        collc_error_message() + ")");
      if (rc != COLLC_SUCCESS)
        break;
      const std::string wrong = c.verify();
      s.expect(wrong.empty(), c.describe(mode) + ": " + wrong);
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

  for (bool inPlace : {false, true}) {
    for (const Workload *w : {&sumI, &maxD}) {
      for (uint64_t n : countsFor(p)) {
        Case a(Kind::ReduceScatterBlock, rsb.plan, *w, n, {}, inPlace, 0);
        runAllModes(s, a);
      }
      for (const std::vector<MPI_Count> &counts : recvcountPatterns(p)) {
        Case a(Kind::ReduceScatter, rsb.plan, *w, 0, counts, inPlace, 0);
        runAllModes(s, a);
      }
    }
    for (const Workload *w : {&sumI, &mat})
      for (uint64_t n : countsFor(p))
        for (Kind k : {Kind::Scan, Kind::Exscan}) {
          Case a(k, k == Kind::Scan ? scan.plan : exscan.plan, *w, n, {}, inPlace, 0);
          runAllModes(s, a);
        }
    for (const Workload *w : {&maxD, &mat})
      for (uint64_t n : countsFor(p)) {
        Case a(Kind::Allgather, ag.plan, *w, n, {}, inPlace, 0);
        runAllModes(s, a);
      }
  }
  for (const Workload *w : {&sumI, &mat})
    for (uint64_t n : countsFor(p))
      for (int root : {0, int(p) - 1}) {
        Case a(Kind::Bcast, root == 0 ? bcast0.plan : bcastLast.plan, *w, n, {}, false, root);
        runAllModes(s, a);
      }
}

/// Refusals: a commutative-only plan and a non-commutative operation, shape
/// mismatches, bad recvcounts — each before anything is sent.
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
    s.test("refusals", [&] { refusals(s); });
    status = s.finish();
  }
  bench::freeMatrixWorkload();
  MPI_Finalize();
  return status;
}
