// tests/runtime/InterpreterTest.cpp: the interpreter core on the threaded
// transport — p ranks as threads of this process, no MPI. Every generator is
// compiled to bytecode, loaded, and executed on concrete data for many rank
// counts and element counts, with an exact commutative operation (int64
// sum) and an exact non-commutative one (2×2 matrix product modulo 2^32).
#include "compiler/Lower.h"
#include "ir/PlanIO.h"
#include "runtime/bytecode/Loader.h"
#include "runtime/core/Executor.h"
#include "runtime/core/ThreadTransport.h"
#include "schedules/Generators.h"

#include <gtest/gtest.h>

#include <array>
#include <thread>

using namespace collc;

namespace {

/// The runner here models allreduce and reduce; the other collectives run in
/// tests/mpi/FamilyMpiTest.cpp, on MPI.
bool isReduction(const sched::Algorithm &a) {
  return a.collective == ir::Collective::Allreduce || a.collective == ir::Collective::Reduce;
}

using Mat = std::array<uint32_t, 4>; // [a b; c d]

Mat mul(const Mat &x, const Mat &y) {
  return {x[0] * y[0] + x[1] * y[2], x[0] * y[1] + x[1] * y[3], x[2] * y[0] + x[3] * y[2],
          x[2] * y[1] + x[3] * y[3]};
}

void matCombine(const void *, const void *a, const void *b, void *dst, size_t n, void *) {
  const Mat *x = static_cast<const Mat *>(a), *y = static_cast<const Mat *>(b);
  Mat *d = static_cast<Mat *>(dst);
  for (size_t i = 0; i < n; ++i)
    d[i] = mul(x[i], y[i]);
}
void sumCombine(const void *, const void *a, const void *b, void *dst, size_t n, void *) {
  const int64_t *x = static_cast<const int64_t *>(a), *y = static_cast<const int64_t *>(b);
  int64_t *d = static_cast<int64_t *>(dst);
  for (size_t i = 0; i < n; ++i)
    d[i] = x[i] + y[i];
}

Mat matInput(uint32_t r, size_t i) {
  return {1 + r, uint32_t(i) * 7 + r, r * uint32_t(i) + 3, 1 + uint32_t(i % 5)};
}
int64_t sumInput(uint32_t r, size_t i) { return int64_t(r + 1) * 1000003 + int64_t(i) * 31; }

struct RunOptions {
  bool matrix = false;
  bool inPlace = false;
  int starts = 1;
  int maxTag = 0x7fffffff;
};

/// Runs `plan` on p threads with n elements; returns "" or what went wrong.
std::string runPlan(const ir::Plan &plan, size_t n, const RunOptions &o) {
  std::vector<uint8_t> bytes = compiler::lower(plan);
  rt::LoadedPlan loaded;
  rt::Status st = rt::load(bytes, loaded);
  if (!st.ok())
    return "load: " + st.message();
  const uint32_t p = plan.shape.ranks;
  const bool isReduce = plan.shape.collective == ir::Collective::Reduce;
  const uint32_t root = plan.shape.root;
  const size_t ext = o.matrix ? sizeof(Mat) : sizeof(int64_t);
  rt::ThreadFabric fabric(p);
  std::vector<std::string> errors(p);
  std::vector<std::vector<char>> ins(p), outs(p);
  for (uint32_t r = 0; r < p; ++r) {
    ins[r].resize(n * ext + 1);
    outs[r].assign(n * ext + 1, 0);
    for (size_t i = 0; i < n; ++i) {
      if (o.matrix)
        reinterpret_cast<Mat *>(ins[r].data())[i] = matInput(r, i);
      else
        reinterpret_cast<int64_t *>(ins[r].data())[i] = sumInput(r, i);
    }
  }
  auto body = [&](uint32_t r) {
    rt::PreparedRank prep = rt::prepareRank(loaded, r);
    rt::ThreadTransport t(fabric, r, ext);
    t.setMaxTag(o.maxTag);
    bool hasOut = !isReduce || r == root;
    rt::Buffers b;
    b.count = n;
    b.extent = ext;
    b.out = hasOut ? outs[r].data() : nullptr;
    b.in = ins[r].data();
    if (o.inPlace && hasOut) {
      std::copy(ins[r].begin(), ins[r].end(), outs[r].begin());
      b.in = b.out;
    }
    rt::Combiner c{o.matrix ? matCombine : sumCombine, nullptr};
    rt::Executor ex;
    if (rt::Status s = ex.bind(prep, b, c, t); !s.ok()) {
      errors[r] = s.message();
      return;
    }
    for (int k = 0; k < o.starts; ++k) {
      if (o.inPlace && hasOut && k > 0) // restore the input the last run overwrote
        std::copy(ins[r].begin(), ins[r].end(), outs[r].begin());
      rt::Status s = ex.start(uint64_t(k));
      if (s.ok())
        s = ex.wait();
      if (!s.ok()) {
        errors[r] = s.message();
        return;
      }
    }
  };
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < p; ++r)
    threads.emplace_back(body, r);
  for (auto &t : threads)
    t.join();
  for (uint32_t r = 0; r < p; ++r)
    if (!errors[r].empty())
      return "rank " + std::to_string(r) + ": " + errors[r];
  // Compare with the sequential fold in rank order.
  for (uint32_t r = 0; r < p; ++r) {
    if (isReduce && r != root)
      continue;
    for (size_t i = 0; i < n; ++i) {
      bool ok;
      if (o.matrix) {
        Mat want = matInput(0, i);
        for (uint32_t q = 1; q < p; ++q)
          want = mul(want, matInput(q, i));
        ok = reinterpret_cast<const Mat *>(outs[r].data())[i] == want;
      } else {
        int64_t want = 0;
        for (uint32_t q = 0; q < p; ++q)
          want += sumInput(q, i);
        ok = reinterpret_cast<const int64_t *>(outs[r].data())[i] == want;
      }
      if (!ok)
        return "rank " + std::to_string(r) + " element " + std::to_string(i) + " is wrong";
    }
  }
  return "";
}

std::vector<size_t> countsFor(uint32_t chunks) {
  std::vector<size_t> ns = {0, 1, 7, 1000, 1003};
  if (chunks > 1)
    ns.push_back(chunks - 1);
  return ns;
}

TEST(Interpreter, EveryGeneratorComputesExactSumsOnThreads) {
  for (const sched::Algorithm &a : sched::algorithms())
    for (uint32_t p : {1u, 2u, 3u, 4u, 5u, 7u, 8u, 13u}) {
      if (!isReduction(a))
        continue;
      sched::GenOptions g;
      g.ranks = p;
      g.root = ir::hasRoot(a.collective) ? p / 2 : 0;
      if (!a.accepts(g))
        continue; // the file's `require` refuses this p
      ir::Plan plan = a.build(g);
      for (size_t n : countsFor(plan.shape.chunks))
        for (bool inPlace : {false, true}) {
          RunOptions o;
          o.inPlace = inPlace;
          EXPECT_EQ(runPlan(plan, n, o), "")
              << a.name.str() << " p=" << p << " n=" << n << (inPlace ? " in-place" : "");
        }
    }
}

TEST(Interpreter, OrderPreservingPlansAreExactForANonCommutativeOperation) {
  for (const sched::Algorithm &a : sched::algorithms()) {
    if (a.needsCommutative || !isReduction(a))
      continue;
    for (uint32_t p : {2u, 3u, 5u, 8u, 11u}) {
      sched::GenOptions g;
      g.ranks = p;
      g.root = ir::hasRoot(a.collective) ? p - 1 : 0;
      if (!a.accepts(g))
        continue;
      ir::Plan plan = a.build(g);
      RunOptions o;
      o.matrix = true;
      for (size_t n : {size_t(1), size_t(33)})
        EXPECT_EQ(runPlan(plan, n, o), "") << a.name.str() << " p=" << p << " n=" << n;
    }
  }
}

ir::Plan allreduce(const char *name, const sched::GenOptions &g) {
  return sched::findAlgorithm(ir::Collective::Allreduce, name)->build(g);
}

TEST(Interpreter, RingIsWrongForANonCommutativeOperation) {
  // The reason ring declares commutative: true.
  sched::GenOptions g;
  g.ranks = 4;
  RunOptions o;
  o.matrix = true;
  EXPECT_NE(runPlan(allreduce("ring", g), 64, o), "");
}

TEST(Interpreter, PersistentExecutionsRepeatWithWrappingTags) {
  sched::GenOptions g;
  g.ranks = 5;
  RunOptions o;
  o.starts = 40;
  o.maxTag = 3 * 8; // a handful of tag windows: executions reuse them
  for (const char *name : {"ring", "rabenseifner"})
    EXPECT_EQ(runPlan(allreduce(name, g), 100, o), "");
}

TEST(Interpreter, RefusesPlansWhoseTagsDoNotFit) {
  sched::GenOptions g;
  g.ranks = 6;
  RunOptions o;
  o.maxTag = 3; // ring sends 10 messages on each channel
  EXPECT_NE(runPlan(allreduce("ring", g), 10, o).find("more than the transport's 4 tags"),
            std::string::npos);
}

ir::Plan parseOrDie(const char *text) {
  llvm::Expected<ir::Plan> p = ir::parsePlan(text, "test.yaml");
  if (!p) {
    ADD_FAILURE() << llvm::toString(p.takeError());
    return ir::Plan{};
  }
  return std::move(*p);
}

// Both ranks list a receive into tmp before the send it waits for. A replay
// of each rank in listing order would stop at the receive and leave the tmp
// slot's chunk unknown (review finding); the dataflow replay finds it.
const char *const recvListedFirst = R"(format: collc-plan/1
collective: allreduce
algorithm: recv-listed-first
ranks: 2
chunks: 2
scratch: 1
commutative: true
programs:
  0:
    - {op: recv, from: 1, buf: tmp, chunk: 0}
    - {op: send, to: 1, buf: in, chunk: 0}
    - {after: [0], op: copy, buf: out, chunk: 0, src: tmp, src_chunk: 0}
    - {after: [2], op: reduce, buf: out, chunk: 0, src: in, src_chunk: 0}
    - {op: copy, buf: out, chunk: 1, src: in}
    - {op: send, to: 1, buf: in, chunk: 1}
    - {after: [4], op: recv_reduce, from: 1, buf: out, chunk: 1}
  1:
    - {op: recv, from: 0, buf: tmp, chunk: 0}
    - {op: send, to: 0, buf: in, chunk: 0}
    - {after: [0], op: copy, buf: out, chunk: 0, src: tmp, src_chunk: 0}
    - {after: [2], op: reduce, buf: out, chunk: 0, src: in, src_chunk: 0}
    - {op: copy, buf: out, chunk: 1, src: in}
    - {op: send, to: 0, buf: in, chunk: 1}
    - {after: [4], op: recv_reduce, from: 0, buf: out, chunk: 1}
)";

TEST(Interpreter, FindsTmpChunksWhenReceivesAreListedFirst) {
  ir::Plan plan = parseOrDie(recvListedFirst);
  for (size_t n : {size_t(1), size_t(3), size_t(4), size_t(5), size_t(1001)})
    EXPECT_EQ(runPlan(plan, n, RunOptions{}), "") << "n=" << n;
}

// Not verifiable (a chunk parked in another chunk's out slot), compiled
// anyway: binding refuses it rather than write past the slot.
const char *const misplacedTemporarily = R"(format: collc-plan/1
collective: allreduce
algorithm: misplaced-temp
ranks: 2
chunks: 2
scratch: 0
commutative: true
programs:
  0:
    - {op: copy, buf: out, chunk: 0, src: in, src_chunk: 1}
    - {after: [0], op: copy, buf: out, chunk: 0, count: 2, src: in}
    - {op: send, to: 1, buf: in, chunk: 0, count: 2}
    - {after: [1], op: recv_reduce, from: 1, buf: out, chunk: 0, count: 2}
  1:
    - {op: copy, buf: out, chunk: 0, src: in, src_chunk: 1}
    - {after: [0], op: copy, buf: out, chunk: 0, count: 2, src: in}
    - {op: send, to: 0, buf: in, chunk: 0, count: 2}
    - {after: [1], op: recv_reduce, from: 0, buf: out, chunk: 0, count: 2}
)";

TEST(Interpreter, RefusesToBindOpsWhoseRangesDifferInSize) {
  ir::Plan plan = parseOrDie(misplacedTemporarily);
  EXPECT_NE(runPlan(plan, 3, RunOptions{}).find("combines ranges of different sizes"),
            std::string::npos);
}

} // namespace
