// tests/runtime/ShmTransportTest.cpp: the shared-memory channels and
// ShmTransport with ranks as threads over one region in this process's memory
// (the protocol does not care whether the region is shared between processes
// or threads). Small geometries force segmentation, full rings and counter
// wrap-around; every library plan runs on it with exact operations.
#include "compiler/Lower.h"
#include "runtime/bytecode/Loader.h"
#include "runtime/core/Executor.h"
#include "runtime/shm/ShmChannels.h"
#include "runtime/shm/ShmNode.h"
#include "schedules/Generators.h"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

using namespace collc;

namespace {

/// A region for p thread ranks and their endpoints.
struct Node {
  Node(uint32_t p, const rt::ShmConfig &c) : bytes(rt::regionBytes(p, c)) {
    mem.reset(new (std::align_val_t(4096)) char[bytes]());
    rt::formatRegion(mem.get(), p, c);
    rt::ShmConfig checked;
    EXPECT_TRUE(rt::checkRegion(mem.get(), bytes, p, checked).ok());
    for (uint32_t r = 0; r < p; ++r)
      eps.push_back(std::make_unique<rt::ShmEndpoint>(mem.get(), r, p, checked));
    for (uint32_t r = 0; r < p; ++r)
      localOf.push_back(int32_t(r));
  }
  struct Free {
    void operator()(char *p) const { operator delete[](p, std::align_val_t(4096)); }
  };
  size_t bytes;
  std::unique_ptr<char[], Free> mem;
  std::vector<std::unique_ptr<rt::ShmEndpoint>> eps;
  std::vector<int32_t> localOf;
};

rt::ShmConfig tiny() { return rt::ShmConfig{2, 64, 2}; } // 2 slots of 64 bytes, 2 announcements

/// Waits for every request id in [0, n) of `t`.
std::string waitAll(rt::Transport &t, uint32_t n) {
  std::vector<uint32_t> done;
  std::vector<bool> seen(n);
  uint32_t count = 0;
  while (count < n) {
    done.clear();
    if (rt::Status s = t.poll(true, done); !s.ok())
      return s.message();
    for (uint32_t id : done) {
      if (id >= n || seen[id])
        return "request " + std::to_string(id) + " completed twice or is unknown";
      seen[id] = true;
      ++count;
    }
  }
  return "";
}

TEST(ShmChannels, MessagesMatchByTagWhateverTheOrderOfPosting) {
  // Rank 0 sends messages of 0..40 ints with tags 0..9 in order; rank 1
  // posts its receives in reverse order. Each arrives whole, in its buffer,
  // through a ring of 2 slots of 16 ints (many segments, many wraps).
  Node node(2, tiny());
  const uint32_t k = 10;
  std::vector<std::vector<int>> sent(k), got(k);
  for (uint32_t m = 0; m < k; ++m) {
    sent[m].resize(m * 4 + (m % 3));
    for (size_t i = 0; i < sent[m].size(); ++i)
      sent[m][i] = int(m * 1000 + i);
    got[m].assign(sent[m].size(), -1);
  }
  std::string e0, e1;
  std::thread a([&] {
    rt::ShmTransport t(*node.eps[0], node.localOf.data(), nullptr, sizeof(int), 1000);
    for (uint32_t m = 0; m < k; ++m)
      if (rt::Status s = t.send(sent[m].data(), sent[m].size(), 1, int(m), m); !s.ok())
        e0 = s.message();
    if (e0.empty())
      e0 = waitAll(t, k);
  });
  std::thread b([&] {
    rt::ShmTransport t(*node.eps[1], node.localOf.data(), nullptr, sizeof(int), 1000);
    for (uint32_t m = k; m-- > 0;)
      if (rt::Status s = t.recv(got[m].data(), got[m].size(), 0, int(m), m); !s.ok())
        e1 = s.message();
    if (e1.empty())
      e1 = waitAll(t, k);
  });
  a.join();
  b.join();
  EXPECT_EQ(e0, "");
  EXPECT_EQ(e1, "");
  for (uint32_t m = 0; m < k; ++m)
    EXPECT_EQ(got[m], sent[m]) << "message " << m;
}

TEST(ShmChannels, CountersWrapAroundManyTimes) {
  // 3000 segments through 2 slots: the 32-bit counters start 16 below the
  // wrap, and the ring index wraps every 2 segments.
  Node node(2, tiny());
  std::vector<double> src(3000 * 8), dst(src.size());
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = double(i) * 0.5;
  std::string e0, e1;
  std::thread a([&] {
    rt::ShmTransport t(*node.eps[0], node.localOf.data(), nullptr, sizeof(double), 1000);
    if (rt::Status s = t.send(src.data(), src.size(), 1, 7, 0); !s.ok())
      e0 = s.message();
    else
      e0 = waitAll(t, 1);
  });
  std::thread b([&] {
    rt::ShmTransport t(*node.eps[1], node.localOf.data(), nullptr, sizeof(double), 1000);
    if (rt::Status s = t.recv(dst.data(), dst.size(), 0, 7, 0); !s.ok())
      e1 = s.message();
    else
      e1 = waitAll(t, 1);
  });
  a.join();
  b.join();
  EXPECT_EQ(e0 + e1, "");
  EXPECT_EQ(src, dst);
}

TEST(ShmChannels, ASizeMismatchIsAClearError) {
  Node node(2, rt::ShmConfig{});
  std::vector<int> x(8, 1), y(4, 0);
  std::string e0, e1;
  std::thread b([&] {
    rt::ShmTransport t(*node.eps[1], node.localOf.data(), nullptr, sizeof(int), 1000);
    if (rt::Status s = t.recv(y.data(), y.size(), 0, 3, 0); !s.ok())
      e1 = s.message();
  });
  b.join(); // the announcement is in the ring
  rt::ShmTransport t(*node.eps[0], node.localOf.data(), nullptr, sizeof(int), 1000);
  rt::Status s = t.send(x.data(), x.size(), 1, 3, 0);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "shared memory: a message of 32 bytes to local rank 1 for a receive of 16 bytes");
}

TEST(ShmChannels, RefusesARegionItDidNotFormat) {
  std::vector<char> junk(8192, 'x');
  rt::ShmConfig c;
  rt::Status s = rt::checkRegion(junk.data(), junk.size(), 2, c);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "shared-memory region: not a collc region of version 1");
  Node node(3, tiny());
  s = rt::checkRegion(node.mem.get(), node.bytes, 4, c);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "shared-memory region: made for 3 ranks, not 4");
  s = rt::checkRegion(node.mem.get(), 100, 3, c);
  EXPECT_EQ(s.message(), "shared-memory region: smaller than its header");
}

TEST(ShmNodeMap, ParsesListsAndRefusesTheRest) {
  std::vector<int> m;
  std::string why;
  EXPECT_TRUE(rt::parseNodeMap("0,0,1,1", m, why));
  EXPECT_EQ(m, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_TRUE(rt::parseNodeMap("", m, why));
  EXPECT_TRUE(m.empty());
  for (const char *bad : {"0,,1", "a", "0;1", "-1,0", "1,"}) {
    EXPECT_FALSE(rt::parseNodeMap(bad, m, why)) << bad;
    EXPECT_EQ(why, "COLLC_NODE_MAP='" + std::string(bad) +
                       "' is not a list of node numbers (0,0,1,1)");
  }
}

// --- plans on the shared-memory transport --------------------------------------

using Mat = std::array<uint32_t, 4>; // [a b; c d], product modulo 2^32: not commutative

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
Mat matInput(uint32_t r, size_t i) {
  return {1 + r, uint32_t(i) * 7 + r, r * uint32_t(i) + 3, 1 + uint32_t(i % 5)};
}

struct RunSpec {
  uint32_t p = 2;
  size_t n = 100;
  int starts = 1;
  /// Executions started together on one rank (each its own plan instance);
  /// waited for in reverse order.
  int inFlight = 1;
  /// Rank 0 arrives this late.
  int slowMs = 0;
  rt::ShmConfig config = tiny();
};

/// Runs an allreduce/reduce plan on threads over shared memory with the
/// matrix product; returns "" or the first problem.
std::string runPlan(const ir::Plan &plan, const RunSpec &o) {
  std::vector<uint8_t> bytes = compiler::lower(plan);
  rt::LoadedPlan loaded;
  if (rt::Status st = rt::load(bytes, loaded); !st.ok())
    return "load: " + st.message();
  const uint32_t p = o.p;
  const bool isReduce = plan.shape.collective == ir::Collective::Reduce;
  const uint32_t root = plan.shape.root;
  Node node(p, o.config);
  std::vector<std::string> errors(p);
  const size_t n = o.n, execs = size_t(o.inFlight);
  // outs[r][e]: rank r's output of the e-th execution in flight.
  std::vector<std::vector<std::vector<Mat>>> outs(p, std::vector<std::vector<Mat>>(execs));
  std::vector<std::vector<Mat>> ins(p);
  for (uint32_t r = 0; r < p; ++r) {
    for (size_t i = 0; i < n; ++i)
      ins[r].push_back(matInput(r, i));
    for (auto &out : outs[r])
      out.assign(n, Mat{});
  }
  auto body = [&](uint32_t r) {
    if (r == 0 && o.slowMs)
      std::this_thread::sleep_for(std::chrono::milliseconds(o.slowMs));
    rt::PreparedRank prep = rt::prepareRank(loaded, r);
    std::vector<std::unique_ptr<rt::ShmTransport>> ts;
    std::vector<std::unique_ptr<rt::Executor>> exs;
    for (size_t e = 0; e < execs; ++e) {
      ts.push_back(std::make_unique<rt::ShmTransport>(*node.eps[r], node.localOf.data(),
                                                      nullptr, sizeof(Mat), 1 << 20));
      exs.push_back(std::make_unique<rt::Executor>());
      rt::Buffers b;
      b.count = n;
      b.extent = sizeof(Mat);
      b.in = ins[r].data();
      b.out = !isReduce || r == root ? outs[r][e].data() : nullptr;
      if (rt::Status s = exs[e]->bind(prep, b, rt::Combiner{matCombine, nullptr}, *ts[e]);
          !s.ok()) {
        errors[r] = s.message();
        return;
      }
    }
    for (int k = 0; k < o.starts; ++k) {
      for (size_t e = 0; e < execs; ++e) // disjoint tag windows, as the C API assigns them
        if (rt::Status s = exs[e]->startAt(int((k * execs + e) * prep.tagStride)); !s.ok()) {
          errors[r] = s.message();
          return;
        }
      for (size_t e = execs; e-- > 0;)
        if (rt::Status s = exs[e]->wait(); !s.ok()) {
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
  for (uint32_t r = 0; r < p; ++r) {
    if (isReduce && r != root)
      continue;
    for (size_t e = 0; e < execs; ++e)
      for (size_t i = 0; i < n; ++i) {
        Mat want = matInput(0, i);
        for (uint32_t q = 1; q < p; ++q)
          want = mul(want, matInput(q, i));
        if (outs[r][e][i] != want)
          return "rank " + std::to_string(r) + " execution " + std::to_string(e) + " element " +
                 std::to_string(i) + " is wrong";
      }
  }
  return "";
}

ir::Plan build(ir::Collective c, const char *name, uint32_t p, uint32_t root = 0) {
  sched::GenOptions g;
  g.ranks = p;
  g.root = root;
  return sched::findAlgorithm(c, name)->build(g);
}

TEST(ShmTransport, OrderPreservingPlansAreExactForANonCommutativeOperation) {
  for (const sched::Algorithm &a : sched::algorithms()) {
    if (a.needsCommutative || (a.collective != ir::Collective::Allreduce &&
                               a.collective != ir::Collective::Reduce))
      continue;
    for (uint32_t p : {1u, 2u, 3u, 4u, 5u, 8u}) {
      sched::GenOptions g;
      g.ranks = p;
      g.root = ir::hasRoot(a.collective) ? p - 1 : 0;
      if (!a.accepts(g))
        continue;
      ir::Plan plan = a.build(g);
      for (size_t n : {size_t(0), size_t(1), size_t(37)}) {
        RunSpec o;
        o.p = p;
        o.n = n;
        EXPECT_EQ(runPlan(plan, o), "") << a.name.str() << " p=" << p << " n=" << n;
      }
    }
  }
}

TEST(ShmTransport, ManyExecutionsInFlightOnOneEndpoint) {
  RunSpec o;
  o.p = 4;
  o.n = 300;
  o.inFlight = 3;
  o.starts = 5;
  EXPECT_EQ(runPlan(build(ir::Collective::Allreduce, "rabenseifner", 4), o), "");
  o.p = 3;
  EXPECT_EQ(runPlan(build(ir::Collective::Reduce, "binomial", 3, 1), o), "");
}

TEST(ShmTransport, ARankThatArrivesLateIsWaitedFor) {
  RunSpec o;
  o.p = 3;
  o.slowMs = 50;
  o.config = rt::ShmConfig{};
  EXPECT_EQ(runPlan(build(ir::Collective::Allreduce, "recursive_doubling", 3), o), "");
}

TEST(ShmTransport, TwoCommunicatorsAtOnce) {
  // Two regions (two communicators of the same threads), both busy at once.
  std::string a, b;
  std::thread t1([&] {
    RunSpec o;
    o.p = 3;
    o.starts = 20;
    a = runPlan(build(ir::Collective::Allreduce, "rabenseifner", 3), o);
  });
  std::thread t2([&] {
    RunSpec o;
    o.p = 3;
    o.starts = 20;
    b = runPlan(build(ir::Collective::Reduce, "binomial", 3, 2), o);
  });
  t1.join();
  t2.join();
  EXPECT_EQ(a, "");
  EXPECT_EQ(b, "");
}

} // namespace
