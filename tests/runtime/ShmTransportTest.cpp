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

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
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

/// 2 slots of 64 bytes, 2 announcements, 2 eager slots of 48 bytes.
rt::ShmConfig tiny() { return rt::ShmConfig{2, 64, 2, 2, 48}; }
/// The same without an eager path: every message is announced and streamed.
rt::ShmConfig tinyRendezvous() { return rt::ShmConfig{2, 64, 2, 0, 48}; }

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

/// Waits until `k` more requests of `t` have completed.
std::string waitCount(rt::Transport &t, uint32_t k) {
  std::vector<uint32_t> done;
  while (done.size() < k)
    if (rt::Status s = t.poll(true, done); !s.ok())
      return s.message();
  return done.size() == k ? "" : "more requests completed than were posted";
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
  // Streamed (longer than an eager slot): the sender sees the announcement.
  Node node(2, rt::ShmConfig{});
  std::vector<int> x(800, 1), y(400, 0);
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
            "shared memory: a message of 3200 bytes to local rank 1 for a receive of 1600 bytes");
}

TEST(ShmChannels, ASizeMismatchOfAnEagerMessageIsAClearErrorAtTheReceiver) {
  Node node(2, rt::ShmConfig{});
  std::vector<int> x(8, 1), y(4, 0);
  rt::ShmTransport t0(*node.eps[0], node.localOf.data(), nullptr, sizeof(int), 1000);
  ASSERT_TRUE(t0.send(x.data(), x.size(), 1, 3, 0).ok()); // eager: done at once
  EXPECT_EQ(waitAll(t0, 1), "");
  rt::ShmTransport t1(*node.eps[1], node.localOf.data(), nullptr, sizeof(int), 1000);
  rt::Status s = t1.recv(y.data(), y.size(), 0, 3, 0);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "shared memory: a message of 32 bytes from local rank 0 for a receive of 16 bytes");
}

/// Two thread ranks over one region, each with one transport of ints.
struct Pair {
  explicit Pair(const rt::ShmConfig &c) : node(2, c) {
    for (uint32_t r = 0; r < 2; ++r)
      t.push_back(std::make_unique<rt::ShmTransport>(*node.eps[r], node.localOf.data(), nullptr,
                                                     sizeof(int), 1000));
  }
  /// Ids completed by one non-blocking poll of rank r.
  std::vector<uint32_t> poll(uint32_t r) {
    std::vector<uint32_t> done;
    EXPECT_TRUE(t[r]->poll(false, done).ok());
    return done;
  }
  Node node;
  std::vector<std::unique_ptr<rt::ShmTransport>> t;
};

TEST(ShmEager, ShortSendsCompleteBeforeTheirReceivesAreBoundedByTheSlots) {
  // 2 eager slots: of 5 short sends, 2 complete at once (their messages wait
  // in the slots); the other 3 wait for their receives, as unbuffered sends
  // do. The receives, posted in reverse order, each get their own message.
  Pair x(tiny());
  std::vector<std::vector<int>> sent(5), got(5);
  for (int m = 0; m < 5; ++m) {
    sent[size_t(m)] = {m * 10, m * 10 + 1, m * 10 + 2};
    got[size_t(m)].assign(3, -1);
    ASSERT_TRUE(x.t[0]->send(sent[size_t(m)].data(), 3, 1, m, uint32_t(m)).ok());
  }
  std::vector<uint32_t> early = x.poll(0);
  std::sort(early.begin(), early.end());
  EXPECT_EQ(early, (std::vector<uint32_t>{0, 1}));
  std::string e0, e1;
  std::thread a([&] { e0 = waitCount(*x.t[0], 3); });
  std::thread b([&] {
    for (int m = 5; m-- > 0;)
      if (rt::Status s = x.t[1]->recv(got[size_t(m)].data(), 3, 0, m, uint32_t(m)); !s.ok())
        e1 = s.message();
    if (e1.empty())
      e1 = waitAll(*x.t[1], 5);
  });
  a.join();
  b.join();
  EXPECT_EQ(e0 + e1, "");
  EXPECT_EQ(got, sent);
}

TEST(ShmEager, AFullSetOfSlotsFallsBackToRendezvousWithoutDeadlock) {
  // One eager slot. Rank 0 sends m1 then m2, both short: m1 takes the slot,
  // m2 must be announced. Rank 1 receives m2 first and m1 only after m2 is
  // complete — fine for unbuffered sends, so it must be fine here: m2 may
  // not wait behind m1.
  rt::ShmConfig c = tiny();
  c.eagerSlots = 1;
  Pair x(c);
  int m1 = 11, m2 = 22, g1 = 0, g2 = 0;
  std::string e0, e1;
  std::thread a([&] {
    if (!x.t[0]->send(&m1, 1, 1, 1, 0).ok() || !x.t[0]->send(&m2, 1, 1, 2, 1).ok())
      e0 = "send failed";
    else
      e0 = waitAll(*x.t[0], 2);
  });
  std::thread b([&] {
    if (rt::Status s = x.t[1]->recv(&g2, 1, 0, 2, 1); !s.ok())
      e1 = s.message();
    else {
      std::vector<uint32_t> done;
      while (done.empty() && e1.empty())
        if (rt::Status s = x.t[1]->poll(true, done); !s.ok())
          e1 = s.message();
      if (e1.empty() && (done != std::vector<uint32_t>{1}))
        e1 = "m2 did not complete first";
      if (rt::Status s = x.t[1]->recv(&g1, 1, 0, 1, 0); !s.ok())
        e1 = s.message();
      done.clear();
      while (done.empty() && e1.empty())
        if (rt::Status s = x.t[1]->poll(true, done); !s.ok())
          e1 = s.message();
    }
  });
  a.join();
  b.join();
  EXPECT_EQ(e0 + e1, "");
  EXPECT_EQ(g1, 11);
  EXPECT_EQ(g2, 22);
}

TEST(ShmEager, AStaleAnnouncementIsDroppedNotMatched) {
  // One eager slot. Rank 0 fills it (tag 7) and sends tag 9 short but
  // through the rendezvous path, so rank 1 announces its short receives: its
  // receive of tag 5 is announced. Then the slot frees up and tag 5 goes
  // eagerly after all: it serves the receive, and the announcement is stale.
  // Rank 0 sends tag 5 once more (as an execution a whole tag cycle later
  // does) while the slot is busy again (tag 11): that send must wait for the
  // new announcement, not stream into the stale one.
  // Rank 0 meets the stale announcement while tag 5 is still in its slot, or
  // (receiverFirst) only after rank 1 acknowledged it.
  for (bool receiverFirst : {false, true}) {
    SCOPED_TRACE(receiverFirst ? "acknowledged first" : "announcement first");
    rt::ShmConfig c = tiny();
    c.eagerSlots = 1;
    Pair x(c);
    int seven = 7, nine = 9, five = 5, eleven = 11, again = 55;
    int g7 = 0, g9 = 0, g5 = 0, g11 = 0, g5b = 0;
    ASSERT_TRUE(x.t[0]->send(&seven, 1, 1, 7, 0).ok()); // eager
    ASSERT_TRUE(x.t[0]->send(&nine, 1, 1, 9, 1).ok());  // the slot is busy: rendezvous
    EXPECT_EQ(x.poll(0), std::vector<uint32_t>{0});
    ASSERT_TRUE(x.t[1]->recv(&g5, 1, 0, 5, 2).ok()); // announced: rank 0 wants announcements
    ASSERT_TRUE(x.t[1]->recv(&g7, 1, 0, 7, 0).ok()); // from the slot at once
    EXPECT_EQ(x.poll(1), std::vector<uint32_t>{0});
    EXPECT_EQ(g7, 7);
    ASSERT_TRUE(x.t[0]->send(&five, 1, 1, 5, 2).ok()); // the slot is free again: eager
    if (receiverFirst) {
      EXPECT_EQ(x.poll(1), std::vector<uint32_t>{2});
      EXPECT_EQ(x.poll(0), std::vector<uint32_t>{2});
    } else {
      EXPECT_EQ(x.poll(0), std::vector<uint32_t>{2});
      EXPECT_EQ(x.poll(1), std::vector<uint32_t>{2});
    }
    EXPECT_EQ(g5, 5);
    ASSERT_TRUE(x.t[0]->send(&eleven, 1, 1, 11, 3).ok()); // tag 5 was taken: eager
    ASSERT_EQ(x.poll(0), std::vector<uint32_t>{3}) << "tag 11 did not go eagerly";
    std::vector<uint32_t> done0;
    ASSERT_TRUE(x.t[0]->send(&again, 1, 1, 5, 4).ok()); // the slot is busy: rendezvous
    for (int i = 0; i < 10; ++i) // the stale announcement must not complete it
      EXPECT_EQ(x.poll(0), std::vector<uint32_t>{});
    ASSERT_TRUE(x.t[1]->recv(&g5b, 1, 0, 5, 4).ok());
    ASSERT_TRUE(x.t[1]->recv(&g9, 1, 0, 9, 1).ok());
    ASSERT_TRUE(x.t[1]->recv(&g11, 1, 0, 11, 3).ok()); // waiting in its slot: done at once
    std::vector<uint32_t> done1;
    done0.clear();
    for (int i = 0; i < 1000 && (done0.size() < 2 || done1.size() < 3); ++i) {
      for (uint32_t id : x.poll(0))
        done0.push_back(id);
      for (uint32_t id : x.poll(1))
        done1.push_back(id);
    }
    std::sort(done0.begin(), done0.end());
    std::sort(done1.begin(), done1.end());
    EXPECT_EQ(done0, (std::vector<uint32_t>{1, 4}));
    EXPECT_EQ(done1, (std::vector<uint32_t>{1, 3, 4}));
    EXPECT_EQ(g9, 9);
    EXPECT_EQ(g11, 11);
    EXPECT_EQ(g5b, 55);
  }
}

TEST(ShmEager, TheSameTagTwiceInFlightArrivesInOrder) {
  // Two messages of tag 4 (an execution and the one a tag cycle later): the
  // second may not take an eager slot while the first holds one, or the
  // receiver could not tell them apart.
  Pair x(tiny());
  int a = 1, b = 2, ga = 0, gb = 0;
  ASSERT_TRUE(x.t[0]->send(&a, 1, 1, 4, 0).ok());
  ASSERT_TRUE(x.t[0]->send(&b, 1, 1, 4, 1).ok());
  EXPECT_EQ(x.poll(0), std::vector<uint32_t>{0});
  ASSERT_TRUE(x.t[1]->recv(&ga, 1, 0, 4, 0).ok());
  EXPECT_EQ(x.poll(1), std::vector<uint32_t>{0});
  ASSERT_TRUE(x.t[1]->recv(&gb, 1, 0, 4, 1).ok());
  std::vector<uint32_t> done0, done1;
  for (int i = 0; i < 1000 && (done0.empty() || done1.empty()); ++i) {
    for (uint32_t id : x.poll(0))
      done0.push_back(id);
    for (uint32_t id : x.poll(1))
      done1.push_back(id);
  }
  EXPECT_EQ(done0, std::vector<uint32_t>{1});
  EXPECT_EQ(done1, std::vector<uint32_t>{1});
  EXPECT_EQ(ga, 1);
  EXPECT_EQ(gb, 2);
}

TEST(ShmEager, SequenceNumbersWrapAround) {
  // 200 short messages through 2 eager slots, each received before the next
  // is sent: every slot is reused 100 times across the 31-bit wrap (which
  // fresh regions put 16 uses away).
  Pair x(tiny());
  for (int m = 0; m < 200; ++m) {
    int v = m * 3 + 1, got = -1;
    ASSERT_TRUE(x.t[0]->send(&v, 1, 1, m % 50, 0).ok());
    ASSERT_EQ(x.poll(0), std::vector<uint32_t>{0}) << "message " << m << " was not eager";
    ASSERT_TRUE(x.t[1]->recv(&got, 1, 0, m % 50, 0).ok());
    ASSERT_EQ(x.poll(1), std::vector<uint32_t>{0});
    ASSERT_EQ(got, v);
  }
}

TEST(ShmChannels, RefusesARegionItDidNotFormat) {
  std::vector<char> junk(8192, 'x');
  rt::ShmConfig c;
  rt::Status s = rt::checkRegion(junk.data(), junk.size(), 2, c);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "shared-memory region: not a collc region of version 2");
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
  for (const char *bad : {"0,,1", "a", "0;1", "-1,0", "1,", "0,x,1", "+1,0", " 0,1"}) {
    EXPECT_FALSE(rt::parseNodeMap(bad, m, why)) << bad;
    EXPECT_EQ(why, "COLLC_NODE_MAP='" + std::string(bad) +
                       "' is not a list of node numbers (0,0,1,1)");
    EXPECT_TRUE(m.empty());
  }
  // A map of N ranks numbers its nodes 0 .. N-1: a missing comma shows.
  EXPECT_TRUE(rt::parseNodeMap("2,1,0", m, why));
  EXPECT_FALSE(rt::parseNodeMap("0,0,11", m, why));
  EXPECT_EQ(why, "COLLC_NODE_MAP='0,0,11': rank 2's node 11 is not below 3 (a map of 3 ranks "
                 "numbers its nodes from 0 to 2)");
  EXPECT_TRUE(m.empty());
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
  /// The last execution in flight is started by startBlocking (the direct
  /// path where it applies) and waited for at once, before the others; 2:
  /// odd ranks' transports have no direct path (one rank direct, its
  /// neighbours through requests).
  int direct = 0;
};

/// What startBlocking did in runPlan, over all ranks and runs.
struct DirectCounts {
  uint64_t runs = 0, handOvers = 0;
};

/// Runs an allreduce/reduce plan on threads over shared memory with the
/// matrix product; returns "" or the first problem.
std::string runPlan(const ir::Plan &plan, const RunSpec &o, DirectCounts *counts = nullptr) {
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
  std::mutex countsMu;
  auto body = [&](uint32_t r) {
    if (r == 0 && o.slowMs)
      std::this_thread::sleep_for(std::chrono::milliseconds(o.slowMs));
    rt::PreparedRank prep = rt::prepareRank(loaded, r);
    std::vector<std::unique_ptr<rt::ShmTransport>> ts;
    std::vector<std::unique_ptr<rt::Executor>> exs;
    for (size_t e = 0; e < execs; ++e) {
      ts.push_back(std::make_unique<rt::ShmTransport>(*node.eps[r], node.localOf.data(),
                                                      nullptr, sizeof(Mat), 1 << 20,
                                                      !(o.direct == 2 && r % 2)));
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
      for (size_t e = 0; e < execs; ++e) { // disjoint tag windows, as the C API assigns them
        const int base = int((k * execs + e) * prep.tagStride);
        std::vector<int> bases(prep.channels.size(), base);
        rt::Status s = o.direct && e + 1 == execs ? exs[e]->startBlocking(bases)
                                                   : exs[e]->startAt(base);
        if (s.ok() && o.direct && e + 1 == execs)
          s = exs[e]->wait();
        if (!s.ok()) {
          errors[r] = s.message();
          return;
        }
      }
      for (size_t e = execs - (o.direct ? 1 : 0); e-- > 0;)
        if (rt::Status s = exs[e]->wait(); !s.ok()) {
          errors[r] = s.message();
          return;
        }
    }
    if (counts) {
      std::lock_guard<std::mutex> lock(countsMu);
      for (const auto &ex : exs) {
        counts->runs += ex->directRuns();
        counts->handOvers += ex->handOvers();
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
      // Mats of 16 bytes: n = 37 has messages above and below the eager
      // slots' 48 bytes.
      for (size_t n : {size_t(0), size_t(1), size_t(37)})
        for (bool eager : {true, false}) {
          RunSpec o;
          o.p = p;
          o.n = n;
          o.config = eager ? tiny() : tinyRendezvous();
          EXPECT_EQ(runPlan(plan, o), "")
              << a.name.str() << " p=" << p << " n=" << n << (eager ? "" : " no eager path");
        }
    }
  }
}

TEST(ShmDirect, TheDirectPathIsExactAndHandsOverWithoutDeadlock) {
  // Every order-preserving allreduce and reduce plan, blocking, with the
  // direct path on every rank and on even ranks only (odd ones through
  // requests), at counts whose messages fit the eager slots (48 bytes: up
  // to 3 Mats) and some that do not; with 2 eager slots, repeated calls
  // find them full and hand over to requests; with the default geometry
  // they stay direct.
  DirectCounts tinyCounts, defaultCounts;
  for (const sched::Algorithm &a : sched::algorithms()) {
    if (a.needsCommutative || (a.collective != ir::Collective::Allreduce &&
                               a.collective != ir::Collective::Reduce))
      continue;
    for (uint32_t p : {1u, 2u, 3u, 4u, 5u}) {
      sched::GenOptions g;
      g.ranks = p;
      g.root = ir::hasRoot(a.collective) ? p - 1 : 0;
      if (!a.accepts(g))
        continue;
      ir::Plan plan = a.build(g);
      for (size_t n : {size_t(1), size_t(2), size_t(3), size_t(7), size_t(30)})
        for (int direct : {1, 2})
          for (bool few : {true, false}) {
            RunSpec o;
            o.p = p;
            o.n = n;
            o.starts = 12;
            o.direct = direct;
            o.config = few ? tiny() : rt::ShmConfig{};
            DirectCounts c;
            EXPECT_EQ(runPlan(plan, o, &c), "")
                << a.name.str() << " p=" << p << " n=" << n << " direct=" << direct
                << (few ? " tiny" : "");
            DirectCounts &sum = few ? tinyCounts : defaultCounts;
            sum.runs += c.runs;
            sum.handOvers += c.handOvers;
          }
    }
  }
  // Both outcomes happened: whole executions on the direct path, and
  // hand-overs to requests (slots full, or a peer asking for announcements).
  EXPECT_GT(tinyCounts.runs, 0u);
  EXPECT_GT(tinyCounts.handOvers, 0u);
  EXPECT_GT(defaultCounts.runs, 100u);
  std::printf("direct path: tiny slots %llu runs, %llu hand-overs; default %llu runs, %llu "
              "hand-overs\n",
              (unsigned long long)tinyCounts.runs, (unsigned long long)tinyCounts.handOvers,
              (unsigned long long)defaultCounts.runs, (unsigned long long)defaultCounts.handOvers);
}

TEST(ShmDirect, ABlockingCallBesideOnesInFlightTakesRequests) {
  // Two executions started and left in flight, then a blocking one: the
  // endpoint is busy, so it goes through requests; all three are right.
  RunSpec o;
  o.p = 2;
  o.n = 2;
  o.inFlight = 3;
  o.starts = 10;
  o.direct = 1;
  o.config = rt::ShmConfig{};
  EXPECT_EQ(runPlan(build(ir::Collective::Allreduce, "recursive_doubling", 2), o), "");
  o.p = 3;
  o.direct = 2;
  EXPECT_EQ(runPlan(build(ir::Collective::Reduce, "binomial", 3, 1), o), "");
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
