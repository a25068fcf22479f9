// tests/draw/TimelineTest.cpp: the logical timeline, the critical path, the
// labels, diagnostic marks, and a diagram drawn at given (simulated) times.
#include "tools/draw/Contents.h"
#include "tools/draw/PlanDiagram.h"
#include "tools/draw/Timeline.h"

#include "model/Simulator.h"
#include "ir/PlanIO.h"
#include "schedules/Generators.h"

#include <gtest/gtest.h>

using namespace collc;
using draw::OpRef;

namespace {

ir::Plan generate(llvm::StringRef name, uint32_t p) {
  sched::GenOptions o;
  o.ranks = p;
  llvm::Expected<ir::Plan> plan = sched::generate(ir::Collective::Allreduce, name, o);
  EXPECT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  return std::move(*plan);
}

ir::Plan parse(llvm::StringRef text) {
  llvm::Expected<ir::Plan> plan = ir::parsePlan(text, "test.yaml");
  EXPECT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  return std::move(*plan);
}

// Each rank receives before it sends: a wait-for cycle.
const char *deadlock = R"(format: collc-plan/1
collective: allreduce
algorithm: cycle
ranks: 2
chunks: 1
scratch: 1
programs:
  0:
    - {op: copy, buf: out, chunk: 0, src: in}
    - {after: [0], op: recv, from: 1, buf: tmp, chunk: 0}
    - {after: [1], op: send, to: 1, buf: out, chunk: 0}
  1:
    - {op: copy, buf: out, chunk: 0, src: in}
    - {after: [0], op: recv, from: 0, buf: tmp, chunk: 0}
    - {after: [1], op: send, to: 0, buf: out, chunk: 0}
)";

// Rank 1 sends its vector to the root, which combines it after its copy.
const char *oneMessage = R"(format: collc-plan/1
collective: reduce
algorithm: one_message
ranks: 2
root: 0
chunks: 1
programs:
  0:
    - {op: copy, buf: out, chunk: 0, src: in}
    - {after: [0], op: recv_reduce, from: 1, buf: out, chunk: 0, order: buf_first}
  1:
    - {op: send, to: 0, buf: in, chunk: 0}
)";

} // namespace

TEST(Timeline, ReceivesStartAfterTheirSendsAndLocalPredecessors) {
  for (llvm::StringRef alg : {"ring", "rabenseifner", "recursive_doubling", "binary_blocks"})
    for (uint32_t p : {1u, 2u, 3u, 5u, 8u}) {
      const ir::Plan plan = generate(alg, p);
      const compiler::Messages msgs(plan);
      const draw::Timeline t = draw::logicalTimeline(plan, msgs);
      for (uint32_t r = 0; r < p; ++r) {
        const ir::DepGraph deps(plan.programs[r].ops);
        for (uint32_t i = 0; i < plan.programs[r].ops.size(); ++i) {
          const draw::OpTime &ot = t.times[r][i];
          EXPECT_FALSE(ot.stuck);
          EXPECT_EQ(ot.end, ot.start + 1);
          for (uint32_t d : deps.preds(i)) {
            EXPECT_GE(ot.start, t.times[r][d].end) << alg.str() << " p=" << p;
          }
          const ir::Op &op = plan.programs[r].ops[i];
          if (ir::isMessage(op.kind) && op.kind != ir::OpKind::Send) {
            std::optional<compiler::MsgEnd> s = msgs.partner(r, i);
            ASSERT_TRUE(s);
            EXPECT_GE(ot.start, t.times[s->rank][s->op].start + 1);
          }
        }
      }
    }
}

TEST(Timeline, CriticalPathIsABindingChainAsLongAsTheSpan) {
  const ir::Plan plan = generate("ring", 4);
  const draw::Timeline t = draw::logicalTimeline(plan, compiler::Messages(plan));
  // Copy, then 2 (p - 1) steps of a send and a receive.
  EXPECT_EQ(t.span, 1 + 2 * 3 * 2);
  const std::vector<OpRef> path = t.criticalPath();
  ASSERT_EQ(path.size(), size_t(t.span));
  for (size_t k = 1; k < path.size(); ++k) {
    EXPECT_EQ(t.at(path[k]).binding, path[k - 1]);
    EXPECT_EQ(t.at(path[k]).start, t.at(path[k - 1]).end);
  }
  EXPECT_EQ(t.at(path.back()).end, t.span);
}

TEST(Timeline, MarksTheOpsOfAWaitForCycleStuck) {
  const ir::Plan plan = parse(deadlock);
  const draw::Timeline t = draw::logicalTimeline(plan, compiler::Messages(plan));
  for (uint32_t r = 0; r < 2; ++r) {
    EXPECT_FALSE(t.times[r][0].stuck);
    EXPECT_TRUE(t.times[r][1].stuck);
    EXPECT_TRUE(t.times[r][2].stuck);
    EXPECT_GT(t.times[r][2].start, t.times[r][1].start); // still after its predecessor
  }
  EXPECT_EQ(t.criticalPath().size(), 1u); // only the copies run
}

TEST(Contents, RingReductionsGrowToEveryRank) {
  const ir::Plan plan = generate("ring", 4);
  const compiler::Messages msgs(plan);
  const draw::Timeline t = draw::logicalTimeline(plan, msgs);
  const auto c = draw::computeContents(plan, t, msgs);
  for (uint32_t r = 0; r < 4; ++r) {
    // The last recv_reduce of the reduce-scatter phase holds all four ranks.
    std::string last;
    for (uint32_t i = 0; i < plan.programs[r].ops.size(); ++i)
      if (plan.programs[r].ops[i].kind == ir::OpKind::RecvReduce) {
        EXPECT_TRUE(c[r][i].reduction);
        last = c[r][i].value;
      }
    EXPECT_EQ(last, "x[0..3]") << "rank " << r;
    // Every message carries one chunk.
    for (uint32_t i = 0; i < plan.programs[r].ops.size(); ++i)
      if (ir::isMessage(plan.programs[r].ops[i].kind)) {
        EXPECT_EQ(c[r][i].chunks.substr(0, 1), "c");
      }
  }
}

TEST(Marks, FollowTheOpsADiagnosticMessageNames) {
  const ir::Plan plan = parse(deadlock);
  const std::vector<draw::Mark> m = draw::marksFor(
      plan, 0, 1,
      "rank 0 op 1 (recv tmp[0] from 1) waits for rank 1 op 2 (send out[0] to 0), which waits "
      "for rank 1 op 1 (recv tmp[0] from 0), then op 7 (nothing) and rank 9 op 0 (no rank)",
      "deadlock", "the whole text");
  ASSERT_EQ(m.size(), 3u);
  EXPECT_TRUE(m[0].primary);
  EXPECT_EQ(m[0].op, (OpRef{0, 1}));
  EXPECT_EQ(m[1].op, (OpRef{1, 2}));
  EXPECT_EQ(m[2].op, (OpRef{1, 1}));
  EXPECT_FALSE(m[1].primary);
  EXPECT_EQ(m[2].detail, "the whole text");
}

TEST(PlanDiagram, DrawsAGivenTimelineAtItsTimes) {
  // A simulated timeline, as a machine model would give it: rank 1's send
  // leaves at 1 us and arrives at rank 0 at 3.5 us.
  const ir::Plan plan = parse(oneMessage);
  draw::Timeline t;
  t.logical = false;
  t.unit = "us";
  auto at = [](double start, double end, double wire, std::optional<OpRef> binding) {
    draw::OpTime o;
    o.start = start;
    o.end = end;
    o.wire = wire;
    o.binding = binding;
    return o;
  };
  t.times = {{at(0, 1, 0, std::nullopt), at(1, 3.5, 3.5, OpRef{1, 0})},
             {at(0, 1, 1, std::nullopt)}};
  t.span = 3.5;
  const std::string svg = draw::planSvg(plan, t, {});
  EXPECT_NE(svg.find("time: simulated, in µs"), std::string::npos);
  EXPECT_NE(svg.find("data-rank=\"0\" data-op=\"1\" data-start=\"1\" data-end=\"3.5\""),
            std::string::npos);
  EXPECT_NE(svg.find("1.000 .. 3.500 µs"), std::string::npos) << "hover text gives the times";
  EXPECT_NE(svg.find("class=\"axis\" data-unit=\"us\" data-origin=\"84\" data-scale=\"400\""),
            std::string::npos);
  // Rank 1 has nothing to do after its send until its end: no idle stretch;
  // rank 0 waits for the message from 1 to 1 us (it is on its way in).
  EXPECT_EQ(svg.find("class=\"idle\""), std::string::npos);
  // The arrow leaves rank 1 at 1 us and reaches rank 0 at 3.5 us: 1400 px
  // over 3.5 us from the left margin of 84 px.
  EXPECT_NE(svg.find("x1=\"484\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("x2=\"1484\""), std::string::npos) << svg;
  // The critical path is rank 1's send, then rank 0's recv_reduce.
  EXPECT_NE(svg.find("class=\"msg crit\""), std::string::npos);
  EXPECT_NE(svg.find("x[0..1]"), std::string::npos);
}

namespace {
/// One level, α = 1 us, 1 GB/s; combining 500 MB/s, copying 1 GB/s.
model::Topology smallMachine() {
  model::Topology t;
  t.name = "small";
  t.levels.push_back({"system", 4, 1e-6, 1e-9, 1});
  t.gamma = 2e-9;
  t.copyBeta = 1e-9;
  return t;
}

draw::Timeline simulated(const ir::Plan &plan, const model::Topology &topo, uint64_t bytes) {
  llvm::Expected<model::Placement> pl = model::place(topo, plan.shape.ranks);
  EXPECT_TRUE(bool(pl));
  model::SimOptions o;
  o.bytes = bytes;
  o.elemBytes = 1;
  o.gamma = topo.gamma;
  o.opTimes = true;
  llvm::Expected<model::SimResult> r = model::simulate(plan, topo, *pl, o);
  EXPECT_TRUE(bool(r)) << (r ? "" : llvm::toString(r.takeError()));
  return draw::simulatedTimeline(plan, compiler::Messages(plan), topo, *r, "test");
}
} // namespace

// The one-message reduce by hand: the root copies 0..1 us, so its receive is
// posted at 1; rank 1's message goes then (unbuffered) and arrives at 3; the
// combination runs 3..5. The critical path is the simulator's.
TEST(SimulatedTimeline, TakesTheSimulatorsTimesAndPath) {
  const ir::Plan plan = parse(oneMessage);
  const draw::Timeline t = simulated(plan, smallMachine(), 1000);
  EXPECT_FALSE(t.logical);
  EXPECT_EQ(t.unit, "us");
  EXPECT_NEAR(t.span, 5, 1e-9);
  EXPECT_NEAR(t.times[0][0].end, 1, 1e-9);
  EXPECT_NEAR(t.times[1][0].start, 1, 1e-9);
  EXPECT_NEAR(t.times[1][0].wire, 1, 1e-9);
  EXPECT_NEAR(t.times[0][1].wire, 3, 1e-9) << "the message arrives at 3";
  EXPECT_NEAR(t.times[0][1].start, 3, 1e-9);
  EXPECT_NEAR(t.times[0][1].end, 5, 1e-9);
  EXPECT_EQ(t.times[1][0].binding, (OpRef{0, 0})) << "held by the receive's posting";
  EXPECT_EQ(t.times[0][1].binding, (OpRef{1, 0}));
  EXPECT_EQ(t.criticalPath(), (std::vector<OpRef>{{0, 0}, {1, 0}, {0, 1}}));
  EXPECT_NE(t.times[1][0].detail.find("starts when rank 0 op 0 is done"), std::string::npos);
  EXPECT_NE(t.times[0][1].detail.find("combines 1000 bytes"), std::string::npos);
  // Drawn: rank 1 idles 0..1 us, the box of the combination starts at
  // 84 + 3 × 1400 / 5 px.
  const std::string svg = draw::planSvg(plan, t, {});
  EXPECT_NE(svg.find("class=\"idle\" data-rank=\"1\" data-from=\"0\" data-to=\"1\""),
            std::string::npos)
      << svg;
  EXPECT_EQ(svg.find("class=\"idle\" data-rank=\"0\""), std::string::npos);
  EXPECT_NE(svg.find("<rect class=\"box\" x=\"924\""), std::string::npos);
}

// The unit follows the span: the same plan in ns, us, ms and s.
TEST(SimulatedTimeline, PicksAUnitInWhichTheSpanIsAtLeastOne) {
  const ir::Plan plan = generate("ring", 3);
  model::Topology topo = smallMachine();
  topo.levels[0].alpha = 0;
  topo.gamma = topo.copyBeta = 0;
  const std::pair<double, const char *> cases[] = {
      {1e-12, "ns"}, {1e-9, "us"}, {1e-6, "ms"}, {1e-3, "s"}};
  for (const auto &[beta, unit] : cases) {
    topo.levels[0].beta = beta;
    const draw::Timeline t = simulated(plan, topo, 3000);
    EXPECT_EQ(t.unit, unit) << beta;
    EXPECT_GE(t.span, 1);
    EXPECT_LT(t.span, 1000);
  }
}
