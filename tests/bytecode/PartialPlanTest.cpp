// tests/bytecode/PartialPlanTest.cpp: partial plans (docs/bytecode.md, "Partial
// plans") — one rank's program with the sections of the ranks it exchanges
// messages with: they round-trip, are validated as strictly as whole plans
// (every malformed header field, a missing peer, unpaired messages between
// sections), are refused where only whole plans make sense (disassembly,
// bundles), and prepare to exactly what the whole plan prepares for the
// rank (tmp chunk identity included) when their sections are enough.
#include "compiler/Disasm.h"
#include "compiler/Lower.h"
#include "compiler/passes/Pipeline.h"
#include "runtime/bytecode/Bundle.h"
#include "runtime/bytecode/Encoder.h"
#include "runtime/bytecode/Loader.h"
#include "runtime/core/Prepared.h"
#include "schedules/Generators.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace collc;

namespace {

ir::Plan optimized(ir::Collective c, const char *name, uint32_t p, uint32_t root = 0) {
  sched::GenOptions o;
  o.ranks = p;
  o.root = root;
  llvm::Expected<ir::Plan> plan = sched::generate(c, name, o);
  EXPECT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  compiler::PipelineOptions po;
  po.verifyEach = false;
  po.perRank = true;
  llvm::Expected<ir::Plan> opt = compiler::optimize(std::move(*plan), po);
  EXPECT_TRUE(bool(opt)) << llvm::toString(opt.takeError());
  return std::move(*opt);
}

/// `r` and the ranks it exchanges messages with, in rank order.
std::vector<uint32_t> withPeers(const ir::Plan &plan, uint32_t r) {
  std::vector<uint32_t> s{r};
  for (const ir::Op &op : plan.programs[r].ops)
    if (ir::isMessage(op.kind))
      s.push_back(op.peer);
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

std::string refusal(const std::vector<uint8_t> &bytes) {
  rt::LoadedPlan p;
  rt::Status s = rt::load(bytes, p);
  EXPECT_FALSE(s.ok()) << "accepted";
  EXPECT_TRUE(p.programs.empty() && !p.partial);
  return s.message();
}

/// Re-encodes `p` (which need not be valid) and returns the bytes.
std::vector<uint8_t> bytesOf(const rt::LoadedPlan &p) { return rt::encode(p); }

TEST(PartialPlan, RoundTripsAndHoldsTheRanksProgram) {
  for (const char *name : {"ring", "rabenseifner", "recursive_doubling", "binary_tree"})
    for (uint32_t p : {1u, 2u, 5u, 8u}) {
      const ir::Plan plan = optimized(ir::Collective::Allreduce, name, p);
      const rt::LoadedPlan whole = compiler::toBytecodePlan(plan);
      for (uint32_t r = 0; r < p; ++r) {
        SCOPED_TRACE(std::string(name) + " p=" + std::to_string(p) + " r=" + std::to_string(r));
        const std::vector<uint32_t> sections = withPeers(plan, r);
        const std::vector<uint8_t> bytes = compiler::lowerPartial(plan, r, sections);
        rt::LoadedPlan loaded;
        rt::Status s = rt::load(bytes, loaded);
        ASSERT_TRUE(s.ok()) << s.message();
        EXPECT_TRUE(loaded.partial);
        EXPECT_EQ(loaded.own, r);
        EXPECT_EQ(loaded.sections, sections);
        EXPECT_EQ(loaded.proof, rt::Proof{});
        EXPECT_TRUE(loaded.runsOn(r));
        EXPECT_FALSE(loaded.runsOn((r + 1) % p) && p > 1);
        EXPECT_EQ(rt::encode(loaded), bytes);
        // The own section decodes to the whole plan's program, field for
        // field but the byte offsets.
        rt::Program own = *loaded.programOf(r), ref = whole.programs[r];
        for (rt::Op &op : own.ops)
          op.offset = 0;
        for (rt::Op &op : ref.ops)
          op.offset = 0;
        EXPECT_EQ(own, ref);
        EXPECT_EQ(loaded.programOf(r + p), nullptr);
        // Only whole plans disassemble.
        llvm::Expected<ir::Plan> dis = compiler::disassemble(bytes);
        ASSERT_FALSE(bool(dis));
        EXPECT_NE(llvm::toString(dis.takeError()).find("a partial plan (rank " + std::to_string(r)),
                  std::string::npos);
      }
    }
}

TEST(PartialPlan, PreparesWhatTheWholePlanPreparesForTheRank) {
  // Every library algorithm, p up to 12: the own rank's prepared program —
  // channels, sequence numbers, dependencies and the chunk of every tmp slot
  // the executor binds — equals the whole plan's for that rank, once the
  // sections the rank's tmp values pass through are there (missingSections).
  for (const sched::Algorithm &a : sched::algorithms())
    for (uint32_t p = 1; p <= 12; ++p) {
      const uint32_t root = ir::hasRoot(a.collective) ? p / 2 : 0;
      sched::GenOptions g{p, root, {}};
      if (!a.accepts(g))
        continue;
      const ir::Plan plan = optimized(a.collective, a.name.data(), p, root);
      const rt::LoadedPlan whole = compiler::toBytecodePlan(plan);
      for (uint32_t r = 0; r < p; ++r) {
        SCOPED_TRACE(ir::name(a.collective).str() + " " + a.name.str() + " p=" +
                     std::to_string(p) + " r=" + std::to_string(r));
        const rt::PreparedRank w = rt::prepareRank(whole, r);
        ASSERT_FALSE(w.unknownTmp);
        std::vector<uint32_t> sections = withPeers(plan, r);
        rt::PreparedRank q;
        for (int round = 0;; ++round) {
          ASSERT_LT(round, int(p)) << "missingSections does not converge";
          const rt::LoadedPlan part = compiler::toPartialBytecodePlan(plan, r, sections);
          q = rt::prepareRank(part, r);
          const std::vector<uint32_t> more = rt::missingSections(part);
          EXPECT_EQ(q.unknownTmp, !more.empty());
          if (!q.unknownTmp)
            break;
          for (uint32_t x : more)
            EXPECT_FALSE(std::binary_search(sections.begin(), sections.end(), x));
          sections.insert(sections.end(), more.begin(), more.end());
          std::sort(sections.begin(), sections.end());
        }
        EXPECT_EQ(q.channels, w.channels);
        EXPECT_EQ(q.longestChannel, w.longestChannel);
        EXPECT_EQ(q.predCount, w.predCount);
        EXPECT_EQ(q.succ, w.succ);
        ASSERT_EQ(q.ops.size(), w.ops.size());
        for (size_t i = 0; i < q.ops.size(); ++i) {
          const rt::PreparedOp &x = q.ops[i], &y = w.ops[i];
          EXPECT_EQ(x.seq, y.seq) << "op " << i;
          EXPECT_EQ(x.chan, y.chan) << "op " << i;
          // The chunks of the tmp operands the executor binds.
          auto same = [&](rt::Buffer b, uint32_t xi, uint32_t yi, const char *what) {
            if (b != rt::Buffer::Tmp)
              return;
            for (uint32_t j = 0; j < x.count; ++j)
              EXPECT_EQ(q.tmpChunks[xi + j], w.tmpChunks[yi + j]) << "op " << i << " " << what;
          };
          if (x.kind == rt::OpKind::Send || x.kind == rt::OpKind::RecvReduce ||
              x.kind == rt::OpKind::Reduce)
            same(x.buf, x.bufIds, y.bufIds, "buf");
          if (x.kind == rt::OpKind::Reduce || x.kind == rt::OpKind::Copy)
            same(x.src, x.srcIds, y.srcIds, "src");
          if (x.kind != rt::OpKind::Send)
            same(x.dst, x.dstIds, y.dstIds, "dst");
        }
      }
    }
}

TEST(PartialPlan, MalformedHeadersAreRefusedWithTheirOffset) {
  const ir::Plan plan = optimized(ir::Collective::Allreduce, "recursive_doubling", 8);
  const rt::LoadedPlan good = compiler::toPartialBytecodePlan(plan, 5, withPeers(plan, 5));
  ASSERT_EQ(good.sections, (std::vector<uint32_t>{1, 4, 5, 7}));
  {
    // (The encoder asserts there is no proof: patch the flags byte instead.)
    std::vector<uint8_t> b = bytesOf(good);
    b[rt::format::offFlags] |= rt::format::flagVerified;
    b.resize(b.size() - 4);
    rt::storeU32(b, rt::format::offSize, uint32_t(b.size() + 4));
    rt::appendU32(b, rt::crc32(b));
    EXPECT_EQ(refusal(b), "offset 0x5: flag partial (0x10) set with a proof status (0x04/0x08): "
                          "a partial plan records no proof");
  }
  {
    rt::LoadedPlan p = good;
    p.own = 8;
    EXPECT_NE(refusal(bytesOf(p)).find("own rank 8 out of range (ranks = 8)"),
              std::string::npos);
  }
  {
    rt::LoadedPlan p = good;
    p.own = 2; // not among the sections
    EXPECT_NE(refusal(bytesOf(p)).find("the own rank 2 has no section"), std::string::npos);
  }
  {
    rt::LoadedPlan p = good;
    std::swap(p.sections[0], p.sections[1]);
    EXPECT_NE(refusal(bytesOf(p)).find("section rank 1 after 4 (the ranks must increase)"),
              std::string::npos);
  }
  {
    // (The encoder asserts its ranks are in range: patch the last section
    // rank's byte of the header — own 5, 4 sections: 1 4 5 7 — instead.)
    std::vector<uint8_t> b = bytesOf(good);
    const uint8_t header[] = {5, 4, 1, 4, 5, 7};
    auto at = std::search(b.begin() + rt::format::offSize + 4, b.end(), std::begin(header),
                          std::end(header));
    ASSERT_NE(at, b.end());
    at[5] = 9;
    b.resize(b.size() - 4);
    rt::appendU32(b, rt::crc32(b));
    EXPECT_NE(refusal(b).find("section rank 9 out of range (ranks = 8)"), std::string::npos)
        << refusal(b);
  }
  {
    rt::LoadedPlan p = good;
    p.sections.clear();
    p.programs.clear();
    EXPECT_NE(refusal(bytesOf(p)).find("section count 0 out of range (1..8)"),
              std::string::npos);
  }
}

TEST(PartialPlan, EveryMessageOfTheOwnRankIsPaired) {
  const ir::Plan plan = optimized(ir::Collective::Allreduce, "recursive_doubling", 8);
  const rt::LoadedPlan good = compiler::toPartialBytecodePlan(plan, 5, withPeers(plan, 5));
  {
    // A peer's section missing: own's messages with it cannot be checked.
    rt::LoadedPlan p = good;
    p.sections.erase(p.sections.begin()); // rank 1
    p.programs.erase(p.programs.begin());
    EXPECT_NE(refusal(bytesOf(p)).find("peer 1 has no section in this partial plan"),
              std::string::npos);
  }
  {
    // A context rank's send to the own rank dropped: unpaired.
    rt::LoadedPlan p = good;
    auto &ops = p.programs[1].ops; // rank 4
    auto it = std::find_if(ops.begin(), ops.end(), [](const rt::Op &o) {
      return o.kind == rt::OpKind::Send && o.peer == 5;
    });
    ASSERT_NE(it, ops.end());
    it->peer = 6; // now a send to a rank without a section, unchecked
    const std::string m = refusal(bytesOf(p));
    EXPECT_NE(m.find("has no matching send"), std::string::npos) << m;
  }
  {
    // The context ranks' messages with ranks that have no section are not
    // paired: that is what a partial plan leaves out.
    rt::LoadedPlan loaded;
    EXPECT_TRUE(rt::load(bytesOf(good), loaded).ok());
  }
}

TEST(PartialPlan, BundlesTakeWholePlansOnly) {
  const ir::Plan plan = optimized(ir::Collective::Allreduce, "ring", 4);
  std::vector<rt::BundleEntry> entries(1);
  entries[0].plan = compiler::lowerPartial(plan, 1, withPeers(plan, 1));
  entries[0].minBytes = 0;
  entries[0].maxBytes = ~uint64_t(0);
  std::vector<uint8_t> out;
  rt::Status s = rt::writeBundle(entries, out);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("a partial plan (rank 1's program) cannot be bundled"),
            std::string::npos)
      << s.message();
}

} // namespace
