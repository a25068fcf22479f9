// tests/passes/OptimizedExecutionTest.cpp: optimized plans compute the collective when they run.
//
// The verifier proves each optimized plan symbolically; here the plans are
// lowered to bytecode and executed by the runtime interpreter on threads
// (one per rank), with exact integer sums and, for plans that promise any
// associative operation, a non-commutative 2x2 matrix product — at -O2 and
// with pipelining, in and out separate and aliased (MPI_IN_PLACE), for
// element counts 0, 1, fewer than the chunks and a prime.
#include "compiler/Lower.h"
#include "compiler/passes/Pipeline.h"
#include "runtime/bytecode/Loader.h"
#include "runtime/core/Executor.h"
#include "runtime/core/ThreadTransport.h"
#include "schedules/Generators.h"

#include <gtest/gtest.h>

#include <array>
#include <thread>
#include <vector>

namespace collc::test {
namespace {

/// The runner here models allreduce and reduce; the other collectives run in
/// tests/mpi/FamilyMpiTest.cpp, on MPI.
bool isReduction(const sched::Algorithm &a) {
  return a.collective == ir::Collective::Allreduce || a.collective == ir::Collective::Reduce;
}

using Mat = std::array<uint32_t, 4>; // [a b; c d], entries mod 2^32

Mat matMul(const Mat &x, const Mat &y) {
  return {x[0] * y[0] + x[1] * y[2], x[0] * y[1] + x[1] * y[3], x[2] * y[0] + x[3] * y[2],
          x[2] * y[1] + x[3] * y[3]};
}
Mat matOf(uint32_t r, size_t i) {
  return {2 + r, uint32_t(i) + 3 * r, 5 * r + uint32_t(i), 1 + uint32_t(i % 3)};
}
void combineMat(const void *, const void *a, const void *b, void *dst, size_t n, void *) {
  for (size_t i = 0; i < n; ++i)
    static_cast<Mat *>(dst)[i] =
        matMul(static_cast<const Mat *>(a)[i], static_cast<const Mat *>(b)[i]);
}
int64_t sumOf(uint32_t r, size_t i) { return int64_t(r + 1) * 1000033 + int64_t(i) * 17; }
void combineSum(const void *, const void *a, const void *b, void *dst, size_t n, void *) {
  for (size_t i = 0; i < n; ++i)
    static_cast<int64_t *>(dst)[i] =
        static_cast<const int64_t *>(a)[i] + static_cast<const int64_t *>(b)[i];
}

/// Runs `plan` (allreduce or reduce) on threads; "" when every required
/// output equals the rank-order fold of the inputs.
std::string execute(const ir::Plan &plan, size_t n, bool matrix, bool inPlace) {
  rt::LoadedPlan loaded;
  if (rt::Status s = rt::load(compiler::lower(plan), loaded); !s.ok())
    return "load: " + s.message();
  const uint32_t p = plan.shape.ranks;
  const bool reduce = plan.shape.collective == ir::Collective::Reduce;
  const size_t ext = matrix ? sizeof(Mat) : sizeof(int64_t);
  auto hasOut = [&](uint32_t r) { return !reduce || r == plan.shape.root; };
  std::vector<std::vector<char>> ins(p), outs(p);
  for (uint32_t r = 0; r < p; ++r) {
    ins[r].resize(n * ext + 1);
    outs[r].assign(n * ext + 1, 0);
    for (size_t i = 0; i < n; ++i) {
      if (matrix)
        reinterpret_cast<Mat *>(ins[r].data())[i] = matOf(r, i);
      else
        reinterpret_cast<int64_t *>(ins[r].data())[i] = sumOf(r, i);
    }
    if (inPlace && hasOut(r))
      outs[r] = ins[r];
  }
  rt::ThreadFabric fabric(p);
  std::vector<std::string> errors(p);
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < p; ++r)
    threads.emplace_back([&, r] {
      rt::PreparedRank prep = rt::prepareRank(loaded, r);
      rt::ThreadTransport transport(fabric, r, ext);
      rt::Buffers b;
      b.count = n;
      b.extent = ext;
      b.out = hasOut(r) ? outs[r].data() : nullptr;
      b.in = inPlace && hasOut(r) ? b.out : ins[r].data();
      rt::Combiner c{matrix ? combineMat : combineSum, nullptr};
      rt::Executor ex;
      rt::Status s = ex.bind(prep, b, c, transport);
      if (s.ok())
        s = ex.start(0);
      if (s.ok())
        s = ex.wait();
      if (!s.ok())
        errors[r] = s.message();
    });
  for (std::thread &t : threads)
    t.join();
  for (uint32_t r = 0; r < p; ++r)
    if (!errors[r].empty())
      return "rank " + std::to_string(r) + ": " + errors[r];
  for (uint32_t r = 0; r < p; ++r) {
    if (!hasOut(r))
      continue;
    for (size_t i = 0; i < n; ++i) {
      bool ok;
      if (matrix) {
        Mat want = matOf(0, i);
        for (uint32_t q = 1; q < p; ++q)
          want = matMul(want, matOf(q, i));
        ok = reinterpret_cast<const Mat *>(outs[r].data())[i] == want;
      } else {
        int64_t want = 0;
        for (uint32_t q = 0; q < p; ++q)
          want += sumOf(q, i);
        ok = reinterpret_cast<const int64_t *>(outs[r].data())[i] == want;
      }
      if (!ok)
        return "rank " + std::to_string(r) + ", element " + std::to_string(i) + " is wrong";
    }
  }
  return "";
}

// Every generator × p ∈ {1..17, 32, 64} (issue [6/6]); pipelined plans up to 17 ranks.
TEST(OptimizedExecution, EveryGeneratorAtO2ComputesExactResultsOnThreads) {
  std::vector<uint32_t> ranks;
  for (uint32_t p = 1; p <= 17; ++p)
    ranks.push_back(p);
  ranks.insert(ranks.end(), {32, 64});
  for (const sched::Algorithm &a : sched::algorithms())
    for (uint32_t p : ranks)
      for (unsigned segments : {0u, 3u}) {
        if ((segments && p > 17) || !isReduction(a))
          continue;
        sched::GenOptions g;
        g.ranks = p;
        g.root = ir::hasRoot(a.collective) ? p - 1 : 0;
        if (!a.accepts(g))
          continue; // the file's `require` refuses this p
        compiler::PipelineOptions o;
        o.pipelineSegments = segments;
        llvm::Expected<ir::Plan> plan = compiler::optimize(a.build(g), o);
        ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
        const std::string what = (a.name + " " + ir::name(a.collective) + " p=" +
                                  std::to_string(p) + " k=" + std::to_string(segments))
                                     .str();
        for (size_t n : {size_t(0), size_t(1), size_t(plan->shape.chunks - 1), size_t(1009)})
          for (bool inPlace : {false, true}) {
            EXPECT_EQ(execute(*plan, n, false, inPlace), "")
                << what << " n=" << n << (inPlace ? " in place" : "");
            if (!a.needsCommutative) {
              EXPECT_EQ(execute(*plan, n, true, inPlace), "")
                  << what << " n=" << n << (inPlace ? " in place" : "") << " (matrices)";
            }
          }
      }
}

} // namespace
} // namespace collc::test
