// tests/draw/TimelineTest.cpp: the logical timeline, the critical path, the
// labels, diagnostic marks, and a diagram drawn at given (simulated) times.
#include "tools/draw/Contents.h"
#include "tools/draw/PlanDiagram.h"
#include "tools/draw/Timeline.h"

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
  const ir::Plan plan = parse(R"(format: collc-plan/1
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
)");
  draw::Timeline t;
  t.logical = false;
  t.unit = "us";
  t.times = {{{0, 1, 0, std::nullopt}, {1, 3.5, 3.5, OpRef{1, 0}}},
             {{0, 1, 1, std::nullopt}}};
  t.span = 3.5;
  const std::string svg = draw::planSvg(plan, t, {});
  EXPECT_NE(svg.find("time: simulated, in us"), std::string::npos);
  EXPECT_NE(svg.find("data-rank=\"0\" data-op=\"1\" data-start=\"1\""), std::string::npos);
  EXPECT_NE(svg.find("3.5 us"), std::string::npos) << "hover text gives the times";
  // The arrow leaves rank 1 at 1 us and reaches rank 0 at 3.5 us: 1400 px
  // over 3.5 us from the left margin of 84 px.
  EXPECT_NE(svg.find("x1=\"484\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("x2=\"1484\""), std::string::npos) << svg;
  // The critical path is rank 1's send, then rank 0's recv_reduce.
  EXPECT_NE(svg.find("class=\"msg crit\""), std::string::npos);
  EXPECT_NE(svg.find("x[0..1]"), std::string::npos);
}
