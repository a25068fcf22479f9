// tests/passes/PassManagerTest.cpp: the pipeline proves every pass's result and names the one that breaks it.
#include "PassTestSupport.h"

#include "model/Simulator.h"
#include "compiler/passes/Analysis.h"
#include "compiler/passes/PassManager.h"
#include "compiler/passes/Pipeline.h"

#include "schedules/Generators.h"

#include "llvm/Support/raw_ostream.h"

namespace collc::test {
namespace {

// Rank 0 combines the two chunks (in different orders) and sends each back
// as soon as it is combined.
const char *const gatherBack = R"(format: collc-plan/1
collective: allreduce
algorithm: gather_back
ranks: 2
chunks: 2
commutative: true
programs:
  0:
    - {op: recv_reduce, from: 1, buf: in, chunk: 0, dst: out, order: buf_first}
    - {op: recv_reduce, from: 1, buf: in, chunk: 1, dst: out, order: recv_first}
    - {after: [0], op: send, to: 1, buf: out, chunk: 0}
    - {after: [1], op: send, to: 1, buf: out, chunk: 1}
  1:
    - {op: send, to: 0, buf: in, chunk: 0}
    - {op: send, to: 0, buf: in, chunk: 1}
    - {op: recv, from: 0, buf: out, chunk: 0}
    - {op: recv, from: 0, buf: out, chunk: 1}
)";

// Barrier-style pair exchange (as a generator writes it).
const char *const pairSteps = pairPlan;

/// Coalescing done wrong: merges the first two adjacent sends of rank 0 to
/// one peer and their receives whatever they wait for — the merged send then
/// reads out[1] while the combine that writes it may still run.
class BrokenCoalescing final : public compiler::Pass {
public:
  llvm::StringRef name() const override { return "broken-coalesce"; }
  bool run(ir::Plan &plan) override {
    auto &a = plan.programs[0].ops, &b = plan.programs[1].ops;
    auto firstTwo = [](llvm::SmallVectorImpl<ir::Op> &ops, ir::OpKind kind) {
      std::vector<uint32_t> at;
      for (uint32_t i = 0; i < ops.size() && at.size() < 2; ++i)
        if (ops[i].kind == kind)
          at.push_back(i);
      return at;
    };
    std::vector<uint32_t> s = firstTwo(a, ir::OpKind::Send), r = firstTwo(b, ir::OpKind::Recv);
    if (s.size() < 2 || r.size() < 2)
      return false;
    a[s[0]].count = b[r[0]].count = 2;
    a.erase(a.begin() + s[1]);
    b.erase(b.begin() + r[1]);
    return true;
  }
};

/// Relaxation done wrong: keeps read-after-write and write-after-write
/// dependencies but drops write-after-read ones.
class BrokenRelaxation final : public compiler::Pass {
public:
  llvm::StringRef name() const override { return "broken-relax"; }
  bool run(ir::Plan &plan) override {
    for (uint32_t r = 0; r < plan.programs.size(); ++r) {
      auto &ops = plan.programs[r].ops;
      const compiler::Layout layout(plan.shape, r);
      std::vector<int64_t> writer[3];
      for (uint8_t s = 0; s < 3; ++s)
        writer[s].assign(layout.spaceSize(s), -1);
      compiler::DepLists deps(ops.size());
      for (uint32_t i = 0; i < ops.size(); ++i) {
        compiler::Accesses acc = compiler::accessesOf(ops[i]);
        llvm::SmallVector<ir::Slots, 3> all(acc.reads.begin(), acc.reads.end());
        if (acc.write)
          all.push_back(*acc.write);
        for (const ir::Slots &x : all) {
          compiler::Place p = layout.place(x);
          for (uint32_t c = p.begin; c < p.end; ++c)
            if (writer[p.space][c] >= 0)
              deps[i].push_back(uint32_t(writer[p.space][c]));
        }
        if (acc.write) {
          compiler::Place p = layout.place(*acc.write);
          for (uint32_t c = p.begin; c < p.end; ++c)
            writer[p.space][c] = i;
        }
      }
      compiler::reduceTransitively(deps);
      compiler::writeDeps(ops, deps);
    }
    return true;
  }
};

std::string runBroken(std::unique_ptr<compiler::Pass> pass, const char *text,
                      bool verifyEach = true) {
  compiler::PassManagerOptions o;
  o.verifyEach = verifyEach;
  compiler::PassManager pm(o);
  pm.add(compiler::createDependencyRelaxation());
  pm.add(std::move(pass));
  ir::Plan plan = parse(text);
  llvm::Error e = pm.run(plan);
  return e ? llvm::toString(std::move(e)) : std::string();
}

TEST(PassManager, CatchesCoalescingAcrossADependency) {
  const std::string err = runBroken(std::make_unique<BrokenCoalescing>(), gatherBack);
  EXPECT_EQ(err.rfind("pass 'broken-coalesce' broke the plan: its result does not verify (", 0),
            0u)
      << err;
  EXPECT_NE(err.find("rank 0, op 2 (send out[0..1] to 1): race: reads out[1] while op 1 "
                     "(recv_reduce in[1] from 1 into out[1]) may still write it"),
            std::string::npos)
      << err;
}

TEST(PassManager, CatchesRelaxationThatDropsAWriteAfterReadEdge) {
  const std::string err = runBroken(std::make_unique<BrokenRelaxation>(), pairSteps);
  EXPECT_EQ(err.rfind("pass 'broken-relax' broke the plan", 0), 0u) << err;
  EXPECT_NE(err.find("rank 0, op 4 (recv out[1] from 1): race: writes out[1] while op 1 (send "
                     "out[1] to 1) may still read it"),
            std::string::npos)
      << err;
}

TEST(PassManager, KeepsTheLastProvenPlanWhenAPassBreaksIt) {
  compiler::PassManager pm;
  pm.add(compiler::createDependencyRelaxation());
  pm.add(std::make_unique<BrokenCoalescing>());
  ir::Plan plan = parse(gatherBack);
  llvm::Error e = pm.run(plan);
  EXPECT_TRUE(bool(e));
  llvm::consumeError(std::move(e));
  EXPECT_TRUE(compiler::verify(plan).proven());
  EXPECT_EQ(ir::printPlan(plan), ir::printPlan(parse(gatherBack)));
}

TEST(PassManager, WithoutVerifyEachABrokenPassGoesUnnoticed) {
  EXPECT_EQ(runBroken(std::make_unique<BrokenCoalescing>(), gatherBack, false), "");
}

TEST(PassManager, RefusesAnInputThatDoesNotVerify) {
  std::string text = pairSteps;
  text.replace(text.find("count: 2"), 8, "count: 1"); // rank 0 never fills out[1]
  const std::string err = runBroken(compiler::createDeadOpElimination(), text.c_str());
  EXPECT_EQ(err.rfind("the input plan does not verify (", 0), 0u) << err;
}

TEST(PassManager, PrintsThePlanAfterEachPassThatChangedIt) {
  std::string printed;
  llvm::raw_string_ostream os(printed);
  compiler::PipelineOptions o;
  o.passes = {"dce", "relax-deps", "compact-scratch"};
  o.printAfterAll = &os;
  llvm::Expected<ir::Plan> plan = compiler::optimize(parse(pairSteps), o);
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_EQ(os.str(), "# *** after relax-deps ***\n" + ir::printPlan(*plan));
}

/// A fake cost: 1 for the plan as written, `changed` for any other plan.
std::function<std::vector<double>(const ir::Plan &)> costOfChange(double changed) {
  const std::string input = ir::printPlan(parse(pairSteps));
  return [input, changed](const ir::Plan &p) {
    return std::vector<double>{1.0, ir::printPlan(p) == input ? 1.0 : changed};
  };
}

TEST(PassManager, UndoesAPassItsCostCallsSlower) {
  for (bool verifyEach : {true, false}) {
    std::vector<std::string> undone;
    compiler::PassManagerOptions o;
    o.verifyEach = verifyEach;
    o.cost = costOfChange(2.0);
    o.costPoint = [](size_t i) { return "at point " + std::to_string(i); };
    o.undone = &undone;
    compiler::PassManager pm(o);
    pm.add(compiler::createDependencyRelaxation());
    ir::Plan plan = parse(pairSteps);
    ASSERT_FALSE(bool(pm.run(plan)));
    EXPECT_EQ(ir::printPlan(plan), ir::printPlan(parse(pairSteps))) << verifyEach;
    ASSERT_EQ(undone.size(), 1u);
    EXPECT_EQ(undone[0].rfind("relax-deps: predicted ", 0), 0u) << undone[0];
    EXPECT_NE(undone[0].find(" before it at point 1"), std::string::npos) << undone[0];
  }
}

TEST(PassManager, KeepsAPassItsCostCallsNoSlower) {
  std::vector<std::string> undone;
  compiler::PassManagerOptions o;
  o.cost = costOfChange(0.5);
  o.undone = &undone;
  compiler::PassManager pm(o);
  pm.add(compiler::createDependencyRelaxation());
  ir::Plan plan = parse(pairSteps);
  ASSERT_FALSE(bool(pm.run(plan)));
  EXPECT_NE(ir::printPlan(plan), ir::printPlan(parse(pairSteps)));
  EXPECT_TRUE(undone.empty());
}

// The optimizer question: relaxing a plan's dependencies once made the
// simulator predict it up to 3x slower (ops competed for ports in a fixed
// rank order, not in the order each rank issues them). A relaxed pairwise
// allgather on 8 one-rank nodes must be predicted no slower than as written.
TEST(Pipeline, RelaxedPairwiseAllgatherIsPredictedNoSlower) {
  const sched::Algorithm *alg = sched::findAlgorithm(ir::Collective::Allgather, "pairwise");
  ASSERT_NE(alg, nullptr);
  sched::GenOptions g;
  g.ranks = 8;
  ir::Plan input = alg->build(g);
  compiler::PipelineOptions o;
  o.passes = {"relax-deps"};
  llvm::Expected<ir::Plan> relaxed = compiler::optimize(ir::Plan(input), o);
  ASSERT_TRUE(bool(relaxed)) << llvm::toString(relaxed.takeError());
  ASSERT_NE(ir::printPlan(*relaxed), ir::printPlan(input));
  model::Topology t;
  t.name = "eight-nodes";
  t.levels.push_back({"node", 1, 0.5e-6, 1e-10, 1});
  t.levels.push_back({"network", 8, 50e-6, 8e-9, 1});
  const std::vector<uint64_t> sizes = {8, 64 << 10, 1 << 20, 16 << 20};
  const std::vector<double> before = model::predictTimes(input, t, sizes, 8, 0);
  const std::vector<double> after = model::predictTimes(*relaxed, t, sizes, 8, 0);
  for (size_t i = 0; i < sizes.size(); ++i) {
    ASSERT_TRUE(std::isfinite(before[i]));
    EXPECT_LE(after[i], before[i] * (1 + 1e-9)) << sizes[i] << " bytes";
  }
}

TEST(Pipeline, LevelsListTheirPasses) {
  auto names = [](unsigned level, unsigned segments) {
    compiler::PipelineOptions o;
    o.level = level;
    o.pipelineSegments = segments;
    llvm::Expected<std::vector<std::string>> n = compiler::pipelineFor(o);
    EXPECT_TRUE(bool(n));
    return n ? *n : std::vector<std::string>{};
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names(0, 0), V{});
  EXPECT_EQ(names(1, 0), (V{"dce", "copy-elim", "relax-deps", "compact-scratch"}));
  EXPECT_EQ(names(2, 0), (V{"dce", "copy-elim", "coalesce", "relax-deps", "compact-scratch"}));
  EXPECT_EQ(names(2, 4),
            (V{"dce", "copy-elim", "coalesce", "relax-deps", "pipeline", "compact-scratch"}));
  EXPECT_EQ(names(1, 4), (V{"dce", "copy-elim", "relax-deps", "compact-scratch"}));
  EXPECT_EQ(compiler::passInfos().size(), 6u);
  for (const compiler::PassInfo &i : compiler::passInfos()) {
    std::unique_ptr<compiler::Pass> p = compiler::createPass(i.name, {});
    ASSERT_TRUE(p) << i.name.str();
    EXPECT_EQ(p->name(), i.name);
  }
}

TEST(Pipeline, RejectsUnknownPassesAndLevels) {
  compiler::PipelineOptions o;
  o.passes = {"relax-deps", "inline"};
  llvm::Expected<std::vector<std::string>> n = compiler::pipelineFor(o);
  ASSERT_FALSE(bool(n));
  EXPECT_EQ(llvm::toString(n.takeError()),
            "unknown pass 'inline' (known: dce, copy-elim, coalesce, relax-deps, pipeline, "
            "compact-scratch)");
  compiler::PipelineOptions o3;
  o3.level = 3;
  llvm::Expected<ir::Plan> p = compiler::optimize(parse(pairSteps), o3);
  ASSERT_FALSE(bool(p));
  EXPECT_EQ(llvm::toString(p.takeError()), "-O3: optimization level must be 0, 1 or 2");
  llvm::Expected<std::vector<std::string>> list = compiler::parsePassList("dce,,coalesce");
  ASSERT_FALSE(bool(list));
  EXPECT_EQ(llvm::toString(list.takeError()), "--passes: empty pass name in 'dce,,coalesce'");
  list = compiler::parsePassList("dce, coalesce");
  ASSERT_TRUE(bool(list));
  EXPECT_EQ(*list, (std::vector<std::string>{"dce", "coalesce"}));
}

TEST(Pipeline, O0ReturnsThePlanUntouched) {
  compiler::PipelineOptions o;
  o.level = 0;
  llvm::Expected<ir::Plan> plan = compiler::optimize(parse(pairSteps), o);
  ASSERT_TRUE(bool(plan));
  EXPECT_EQ(*plan, parse(pairSteps));
}

} // namespace
} // namespace collc::test
