// tests/lang/CompositionTest.cpp: `run` — how a run's ops land in its caller's plan,
// and the hierarchical library built with it.
//
// The mapping (docs/language.md, "Composition") is checked op by op on a
// small caller: peers through the group, chunks scaled and offset, tmp in a
// region of the run's own, steps renumbered from the caller's, the first
// copy elided when in and out are one. Then the library: the composed
// two-level allreduce with two_level's phases equals two_level.calgo op for
// op; n_level equals multi_leader on two levels; every choice of every
// algorithm parameter is proven on several topologies; rank order holds
// under block mapping and breaks under round-robin.
#include "compiler/Verifier.h"
#include "lang/Instantiator.h"
#include "lang/Parser.h"
#include "ir/PlanIO.h"
#include "schedules/Generators.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <map>

namespace collc {
namespace {

/// Finds modules by name among a test's own, then in the library.
class TestResolver : public lang::Resolver {
public:
  void add(const std::string &name, const std::string &text) {
    llvm::Expected<lang::Module> m = lang::parse(text, name + ".calgo");
    ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
    modules_[name] = std::make_unique<lang::Module>(std::move(*m));
    modules_[name]->resolver = this;
  }
  llvm::Expected<const lang::Module *> resolve(ir::Collective c, llvm::StringRef name,
                                               const lang::Module &caller) const override {
    if (auto it = modules_.find(name.str()); it != modules_.end())
      return it->second.get();
    return sched::libraryResolver().resolve(c, name, caller);
  }

private:
  std::map<std::string, std::unique_ptr<lang::Module>> modules_;
};

lang::Module parseWith(const std::string &text, const lang::Resolver &r) {
  llvm::Expected<lang::Module> m = lang::parse(text, "caller.calgo");
  if (!m) {
    ADD_FAILURE() << llvm::toString(m.takeError());
    return lang::Module{};
  }
  m->resolver = &r;
  return std::move(*m);
}

/// Ranks placed in slot order on levels of `sizes` (innermost first).
std::shared_ptr<const lang::Layout> blockLayout(std::vector<uint32_t> sizes, uint32_t p) {
  std::vector<uint32_t> coords;
  for (uint32_t r = 0; r < p; ++r)
    for (uint32_t j = 0, rest = r; j < sizes.size(); rest /= sizes[j], ++j)
      coords.push_back(rest % sizes[j]);
  return *lang::makeLayout(sizes, coords, p);
}

/// Ranks dealt over `nodes` nodes of `ppn` slots, as mpirun --map-by node.
std::shared_ptr<const lang::Layout> roundRobinLayout(uint32_t ppn, uint32_t nodes, uint32_t p) {
  std::vector<uint32_t> coords;
  for (uint32_t r = 0; r < p; ++r) {
    coords.push_back(r / nodes);
    coords.push_back(r % nodes);
  }
  return *lang::makeLayout({ppn, nodes}, coords, p);
}

std::string describeOps(const ir::Program &prog) {
  std::string s;
  for (const ir::Op &op : prog.ops)
    s += ir::describe(op) + " @" + std::to_string(op.step) + "\n";
  return s;
}

/// Two ranks swap their values and combine them in rank order: rank 0
/// puts its own first, rank 1 the one it received.
const char *pairText = R"(algorithm pair
collective allreduce
chunks 1
scratch 1
copy in[0] to out[0]
step
send out[0] to 1 - r
recv tmp[0] from 1 - r
step
step
reduce out[0] with tmp[0] buf_first(r == 0)
)";

/// A caller instantiated for p ranks, `pair` found by name.
struct PairCaller {
  PairCaller(const char *text, uint32_t p) {
    res.add("pair", pairText);
    m = parseWith(text, res);
    o.ranks = p;
    llvm::Expected<ir::Plan> got = lang::instantiate(m, o);
    if (!got)
      ADD_FAILURE() << llvm::toString(got.takeError());
    else
      plan = std::move(*got);
  }
  TestResolver res;
  lang::Module m;
  lang::InstantiateOptions o;
  ir::Plan plan;
};

TEST(Composition, MapsPeersChunksTmpAndStepsOfARun) {
  // Ranks 3 and 1 (in that order) allreduce chunks 2..4 in place; each of
  // pair's chunks is two of the caller's, its tmp slot the two slots after
  // the caller's own two.
  PairCaller c(R"(algorithm caller
collective allreduce
chunks 4
scratch 2
copy in[0..4] to out[0..4]
step
if r == 1 or r == 3 {
  run allreduce pair on [3, 1] chunks 2..4 from out to out
}
copy out[0] to tmp[0]
)",
               4);
  const ir::Plan *plan = &c.plan;
  EXPECT_EQ(plan->shape.scratch, 4u); // 2 declared + pair's one slot, two chunks wide
  // Rank 3 is pair's rank 0: its first copy (in and out both the caller's
  // out) is gone, steps 1 and 3 of pair are the caller's 1 and 2, and the
  // caller's next op takes the run's last step.
  EXPECT_EQ(describeOps(plan->programs[3]), "copy out[0..3] from in[0..3] @0\n"
                                            "send out[2..3] to 1 @1\n"
                                            "recv tmp[2..3] from 1 @1\n"
                                            "reduce out[2..3] from tmp[2..3] @2\n"
                                            "copy tmp[0] from out[0] @2\n");
  EXPECT_EQ(plan->programs[3].ops[3].order, ir::Order::BufFirst);
  EXPECT_EQ(plan->programs[1].ops[3].order, ir::Order::OtherFirst); // pair's rank 1
  EXPECT_EQ(describeOps(plan->programs[0]), "copy out[0..3] from in[0..3] @0\n"
                                            "copy tmp[0] from out[0] @1\n");
  for (const ir::Op &op : plan->programs[3].ops)
    EXPECT_EQ(op.loc.line, op.kind == ir::OpKind::Copy && op.src == ir::Buffer::In ? 5u
                           : op.kind == ir::OpKind::Copy                         ? 10u
                                                                                  : 8u);
  // The caller is not commutative, and pair is not either.
  EXPECT_FALSE(plan->shape.commutative);
  // One rank alone is that rank of the whole plan.
  for (uint32_t r = 0; r < 4; ++r) {
    llvm::Expected<ir::Program> one = lang::instantiateRank(c.m, c.o, r);
    ASSERT_TRUE(bool(one)) << llvm::toString(one.takeError());
    EXPECT_TRUE(*one == plan->programs[r]) << "rank " << r;
  }
}

TEST(Composition, RunsOfARankGetDisjointTmpAndTheGroupOrderIsTheRunsRankOrder) {
  PairCaller c(R"(algorithm caller
collective allreduce
chunks 2
copy in[0..2] to out[0..2]
step
run allreduce pair on [0, 1] chunks 0 from out to out
step
run allreduce pair on [1, 0] chunks 1 from out to out
)",
               2);
  const ir::Plan *plan = &c.plan;
  EXPECT_EQ(plan->shape.scratch, 2u);
  EXPECT_EQ(describeOps(plan->programs[0]), "copy out[0..1] from in[0..1] @0\n"
                                            "send out[0] to 1 @1\n"
                                            "recv tmp[0] from 1 @1\n"
                                            "reduce out[0] from tmp[0] @2\n"
                                            "send out[1] to 1 @3\n"
                                            "recv tmp[1] from 1 @3\n"
                                            "reduce out[1] from tmp[1] @4\n");
  // Rank 0 is pair's rank 0 in the first run and its rank 1 in the second,
  // where it puts its own value second.
  EXPECT_EQ(plan->programs[0].ops[3].order, ir::Order::BufFirst);
  EXPECT_EQ(plan->programs[0].ops[6].order, ir::Order::OtherFirst);
  // The group's order is the run's rank order: [1, 0] combines chunk 1 as
  // x1 ∘ x0, right for commutative operations only, and the proof for the
  // others fails at the second run's line.
  compiler::VerifyOptions vo;
  vo.noncommutative = true;
  compiler::VerifyResult r = compiler::verify(*plan, vo);
  ASSERT_FALSE(r.proven());
  EXPECT_EQ(r.diagnostics[0].cls, compiler::DiagClass::Order);
  EXPECT_EQ(r.diagnostics[0].location, "caller.calgo:8");
  EXPECT_EQ(r.diagnostics[0].got, "x[1..1] ∘ x[0..0]");
  ir::Plan commutative = *plan;
  commutative.shape.commutative = true;
  EXPECT_TRUE(compiler::verify(commutative).proven());
}

TEST(Composition, ACommutativeRunMakesThePlanNeedCommutativity) {
  TestResolver res;
  lang::Module m = parseWith(R"(algorithm caller
collective allreduce
param inner = rabenseifner
chunks chunks_of(allreduce inner, p)
copy in[0..chunks_of(allreduce inner, p)] to out[0..chunks_of(allreduce inner, p)]
step
run allreduce inner on [q for q in 0..p] from out to out
)",
                             res);
  for (const char *inner : {"rabenseifner", "ring", "chain", "binary_blocks"}) {
    lang::InstantiateOptions o;
    o.ranks = 6;
    o.params = {{"inner", inner}};
    llvm::Expected<ir::Plan> plan = lang::instantiate(m, o);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    const bool commutative = sched::findAlgorithm(ir::Collective::Allreduce, inner)->needsCommutative;
    EXPECT_EQ(plan->shape.commutative, commutative) << inner;
    EXPECT_EQ(*lang::needsCommutative(m, o), commutative) << inner;
    compiler::VerifyOptions vo;
    vo.noncommutative = !commutative;
    EXPECT_TRUE(compiler::verify(*plan, vo).proven()) << inner;
  }
}

const sched::Algorithm &algorithm(ir::Collective c, const char *name);
ir::Plan buildOk(const sched::Algorithm &a, sched::GenOptions o);

/// Whether `require (expr) == (value)` holds in a caller of p ranks on `layout`.
bool holdsIn(const std::string &expr, int64_t value, uint32_t p,
             std::shared_ptr<const lang::Layout> layout = nullptr) {
  TestResolver res;
  lang::Module m = parseWith("algorithm caller\ncollective allreduce\nchunks p\nrequire (" +
                                 expr + ") == (" + std::to_string(value) + ")\n",
                             res);
  lang::InstantiateOptions o;
  o.ranks = p;
  o.layout = std::move(layout);
  llvm::Expected<bool> ok = lang::accepts(m, o);
  if (!ok) {
    ADD_FAILURE() << expr << ": " << llvm::toString(ok.takeError());
    return false;
  }
  return *ok;
}

TEST(Composition, QueriesAnswerForAFlatMachineOfThatManyRanks) {
  auto expectValue = [](const std::string &expr, int64_t v, uint32_t p = 4,
                        std::shared_ptr<const lang::Layout> layout = nullptr) {
    EXPECT_TRUE(holdsIn(expr, v, p, layout)) << expr << " = " << v;
    EXPECT_FALSE(holdsIn(expr, v + 1, p, layout)) << expr << " != " << v + 1;
  };
  expectValue("chunks_of(allreduce ring, 5)", 5);
  expectValue("chunks_of(allreduce rabenseifner, 6)", 4);
  expectValue("chunks_of(allreduce recursive_doubling, 6)", 1);
  expectValue("chunks_of(reduce_scatter_block pairwise, 3)", 3);
  expectValue("accepts(allreduce swing_latency, 8)", 1);
  expectValue("accepts(allreduce swing_latency, 6)", 0);
  expectValue("accepts(allreduce recursive_multiplying(k = 1), 4)", 0);
  expectValue("accepts(allreduce recursive_multiplying(k = 2 + 1), 4)", 1);
  // The caller's topology does not reach the query: two_level for 8 ranks
  // is one node of 8 (8 chunks), not the caller's 2 nodes of 4.
  expectValue("chunks_of(allreduce two_level, 8)", 8, 8, blockLayout({4, 2}, 8));
  expectValue("chunks_of(allreduce two_level, 8)", 8);
}

TEST(Composition, ARunSeesItsGroupAsAFlatMachine) {
  // A caller on 2 nodes x 4 runs two_level on all its ranks: the run is
  // two_level for one node of 8, as chunks_of counted it, op for op.
  TestResolver res;
  lang::Module m = parseWith(R"(algorithm caller
collective allreduce
chunks chunks_of(allreduce two_level, p)
run allreduce two_level on [q for q in 0..p]
)",
                             res);
  lang::InstantiateOptions o;
  o.ranks = 8;
  o.layout = blockLayout({4, 2}, 8);
  llvm::Expected<ir::Plan> plan = lang::instantiate(m, o);
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  sched::GenOptions g{8};
  const ir::Plan flat = buildOk(algorithm(ir::Collective::Allreduce, "two_level"), g);
  EXPECT_EQ(plan->shape.chunks, flat.shape.chunks);
  EXPECT_EQ(plan->shape.scratch, flat.shape.scratch);
  for (uint32_t r = 0; r < 8; ++r) {
    EXPECT_EQ(describeOps(plan->programs[r]), describeOps(flat.programs[r])) << "rank " << r;
    for (const ir::Op &op : plan->programs[r].ops)
      EXPECT_EQ(op.loc.line, 4u); // the run's line
  }
  // On the caller's topology two_level would cut the vector into 4.
  lang::InstantiateOptions direct = o;
  direct.resolver = &sched::libraryResolver();
  EXPECT_EQ(lang::instantiate(*algorithm(ir::Collective::Allreduce, "two_level").module, direct)
                ->shape.chunks,
            4u);
}

TEST(Composition, ExplainNamesTheCallersLoopsAndTheRunsLine) {
  TestResolver res;
  lang::Module m = parseWith(R"(algorithm caller
collective allreduce
chunks 4
copy in[0..4] to out[0..4]
for j in 0..1 {
  step
  run allreduce ring on [q for q in 0..p] from out to out
}
)",
                             res);
  lang::InstantiateOptions o;
  o.ranks = 4;
  // Rank 0's op 2 is ring's recv_reduce at s = 0 (ring.calgo line 31).
  EXPECT_EQ(lang::explain(m, o, 0, 2).value_or("none"), "j = 0; ring.calgo:31, s = 0");
  EXPECT_EQ(lang::explain(m, o, 0, 0).value_or("none"), "");
}

TEST(Composition, RunsFindFilesBesideTheirCaller) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("collc-compose", dir));
  auto write = [&](const char *name, const char *text) {
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, name);
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    os << text;
    return path.str().str();
  };
  write("sub.calgo", pairText);
  const std::string caller = write("caller.calgo", R"(algorithm caller
collective allreduce
chunks 1
copy in[0] to out[0]
step
run allreduce "sub.calgo" on [0, 1] from out to out
)");
  llvm::Expected<lang::Module> m = lang::parseFile(caller);
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  m->resolver = &sched::libraryResolver();
  lang::InstantiateOptions o;
  o.ranks = 2;
  llvm::Expected<ir::Plan> plan = lang::instantiate(*m, o);
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_TRUE(compiler::verify(*plan).proven());
  llvm::sys::fs::remove_directories(dir);
}

TEST(Composition, WithoutAResolverARunIsAPositionedError) {
  llvm::Expected<lang::Module> m = lang::parse(
      "algorithm t\ncollective allreduce\nchunks 1\nrun allreduce ring on [0]\n", "t.calgo");
  ASSERT_TRUE(bool(m));
  llvm::Expected<ir::Plan> plan = lang::instantiate(*m, {});
  ASSERT_FALSE(bool(plan));
  EXPECT_EQ(llvm::toString(plan.takeError()),
            "t.calgo:4:15: error: 'allreduce ring' needs an algorithm library to find it in, "
            "and this instantiation has none (p = 1)\n  run allreduce ring on [0]\n"
            "                ^");
}

// --- the hierarchical library ---------------------------------------------------------

const sched::Algorithm &algorithm(ir::Collective c, const char *name) {
  const sched::Algorithm *a = sched::findAlgorithm(c, name);
  EXPECT_NE(a, nullptr) << name;
  return *a;
}

/// Two-level places: (ppn, nodes) full, block and round-robin.
struct Place {
  uint32_t ppn, nodes;
  bool roundRobin;
};
const Place twoLevelPlaces[] = {{2, 2, false}, {2, 2, true},  {4, 2, false}, {2, 4, true},
                                {3, 3, false}, {4, 4, false}, {4, 4, true},  {8, 2, false},
                                {1, 5, false}, {5, 1, false}, {2, 8, true}};

std::shared_ptr<const lang::Layout> layoutOf(const Place &pl) {
  const uint32_t p = pl.ppn * pl.nodes;
  return pl.roundRobin ? roundRobinLayout(pl.ppn, pl.nodes, p) : blockLayout({pl.ppn, pl.nodes}, p);
}

std::string placeText(const Place &pl) {
  return std::to_string(pl.nodes) + " nodes x " + std::to_string(pl.ppn) +
         (pl.roundRobin ? " round-robin" : " block");
}

ir::Plan buildOk(const sched::Algorithm &a, sched::GenOptions o) {
  llvm::Expected<ir::Plan> plan = sched::generate(a.collective, a.name, o);
  if (!plan) {
    ADD_FAILURE() << a.name.str() << ": " << llvm::toString(plan.takeError());
    return ir::Plan{};
  }
  return std::move(*plan);
}

/// two_level.calgo declares its one tmp slot for every shape; with one rank
/// per node no reduce-scatter uses it, and the composed plan, whose scratch
/// is what its runs take, has none.
void sameButUnusedScratch(ir::Plan &composed, const ir::Plan &byHand, uint32_t ppn) {
  if (ppn > 1)
    return;
  EXPECT_EQ(composed.shape.scratch, 0u);
  EXPECT_EQ(byHand.shape.scratch, 1u);
  composed.shape.scratch = byHand.shape.scratch;
}

TEST(HierarchicalLibrary, MultiLeaderWithTwoLevelsPhasesIsTwoLevel) {
  // The composed allreduce with two_level's three phases (pairwise
  // reduce-scatter, linear chain, pairwise allgather) is the hand-written
  // two_level.calgo, op for op: the same peers, slots, orders and steps.
  const sched::Algorithm &composed = algorithm(ir::Collective::Allreduce, "multi_leader");
  const sched::Algorithm &byHand = algorithm(ir::Collective::Allreduce, "two_level");
  for (const Place &pl : twoLevelPlaces) {
    sched::GenOptions o;
    o.ranks = pl.ppn * pl.nodes;
    o.layout = layoutOf(pl);
    ir::Plan want = buildOk(byHand, o);
    o.params = {{"intra_rs", "pairwise"}, {"inter", "linear"}, {"intra_ag", "pairwise"}};
    ir::Plan got = buildOk(composed, o);
    got.algorithm = want.algorithm;
    sameButUnusedScratch(got, want, pl.ppn);
    EXPECT_TRUE(got == want) << placeText(pl);
  }
  // Flat: one node of p ranks.
  for (uint32_t p : {1u, 2u, 3u, 5u, 8u}) {
    sched::GenOptions o{p};
    ir::Plan want = buildOk(byHand, o);
    o.params = {{"intra_rs", "pairwise"}, {"inter", "linear"}, {"intra_ag", "pairwise"}};
    ir::Plan got = buildOk(composed, o);
    got.algorithm = want.algorithm;
    sameButUnusedScratch(got, want, p);
    EXPECT_TRUE(got == want) << "flat p = " << p;
  }
}

TEST(HierarchicalLibrary, NLevelOnTwoLevelsIsMultiLeader) {
  const sched::Algorithm &n = algorithm(ir::Collective::Allreduce, "n_level");
  const sched::Algorithm &ml = algorithm(ir::Collective::Allreduce, "multi_leader");
  for (const Place &pl : twoLevelPlaces) {
    if (pl.nodes < 2) // one node: n_level runs `inter` there, multi_leader scatters and gathers
      continue;
    for (const char *inter : {"rabenseifner", "ring", "linear"}) {
      sched::GenOptions o;
      o.ranks = pl.ppn * pl.nodes;
      o.layout = layoutOf(pl);
      o.params = {{"inter", inter}, {"intra_rs", "ring"}};
      ir::Plan a = buildOk(n, o), b = buildOk(ml, o);
      a.algorithm = b.algorithm;
      EXPECT_TRUE(a == b) << placeText(pl) << " inter = " << inter;
    }
  }
}

/// The composed algorithms of the library: those with an algorithm parameter.
std::vector<const sched::Algorithm *> composedAlgorithms() {
  std::vector<const sched::Algorithm *> v;
  for (const sched::Algorithm &a : sched::algorithms())
    for (const sched::Parameter &prm : a.parameters())
      if (prm.isAlgorithm) {
        v.push_back(&a);
        break;
      }
  return v;
}

TEST(HierarchicalLibrary, ParametersListEveryChoiceButTheAlgorithmItself) {
  const std::vector<const sched::Algorithm *> composed = composedAlgorithms();
  ASSERT_EQ(composed.size(), 4u);
  const sched::Algorithm &ml = algorithm(ir::Collective::Allreduce, "multi_leader");
  std::map<std::string, sched::Parameter> byName;
  for (sched::Parameter &prm : ml.parameters())
    byName[prm.name] = prm;
  ASSERT_EQ(byName.size(), 3u);
  EXPECT_EQ(byName["intra_rs"].defaultAlgorithm, "pairwise");
  EXPECT_EQ(byName["intra_rs"].collectives,
            std::vector<ir::Collective>{ir::Collective::ReduceScatterBlock});
  EXPECT_EQ(byName["intra_rs"].choices,
            (std::vector<std::string>{"ring", "recursive_halving", "chain", "pairwise"}));
  EXPECT_EQ(byName["intra_ag"].choices,
            (std::vector<std::string>{"ring", "recursive_doubling", "bruck", "pairwise"}));
  // Every allreduce but multi_leader itself (which would run itself).
  std::vector<std::string> inter;
  for (const sched::Algorithm &a : sched::algorithms())
    if (a.collective == ir::Collective::Allreduce && a.name != "multi_leader")
      inter.push_back(a.name.str());
  EXPECT_EQ(byName["inter"].choices, inter);
  // Integer parameters have no choices.
  const std::vector<sched::Parameter> k =
      algorithm(ir::Collective::Reduce, "knomial").parameters();
  ASSERT_EQ(k.size(), 1u);
  EXPECT_FALSE(k[0].isAlgorithm);
  EXPECT_EQ(k[0].defaultValue, 2);
  EXPECT_TRUE(k[0].choices.empty());
}

TEST(HierarchicalLibrary, EveryChoiceAtEveryLevelIsProven) {
  // Each composed algorithm with each choice of each of its parameters (the
  // others at their defaults), on two- and three-level topologies and flat:
  // proven for any associative operation where the plan does not need
  // commutativity, for commutative ones where it does.
  struct Machine {
    std::vector<uint32_t> sizes;
    uint32_t p;
  };
  const Machine machines[] = {{{4, 2}, 8}, {{2, 4}, 8}, {{2, 2, 2}, 8}, {{3, 2}, 6}, {{6}, 6}};
  unsigned proven = 0;
  for (const sched::Algorithm *a : composedAlgorithms())
    for (const sched::Parameter &prm : a->parameters()) {
      if (!prm.isAlgorithm)
        continue;
      for (const std::string &choice : prm.choices)
        for (const Machine &mc : machines) {
          sched::GenOptions o;
          o.ranks = mc.p;
          o.root = ir::hasRoot(a->collective) ? mc.p - 1 : 0;
          o.layout = blockLayout(mc.sizes, mc.p);
          o.params = {{prm.name, choice}};
          if (!a->accepts(o)) // e.g. a power-of-two algorithm on 3 nodes
            continue;
          const ir::Plan plan = buildOk(*a, o);
          compiler::VerifyOptions vo;
          vo.noncommutative = !plan.shape.commutative;
          compiler::VerifyResult r = compiler::verify(plan, vo);
          EXPECT_TRUE(r.proven())
              << a->name.str() << " " << prm.name << " = " << choice << " p = " << mc.p << ": "
              << (r.diagnostics.empty() ? "" : compiler::toString(r.diagnostics[0]));
          proven += r.proven();
        }
    }
  EXPECT_GT(proven, 150u);
}

TEST(HierarchicalLibrary, RankOrderHoldsUnderBlockMappingAndBreaksUnderRoundRobin) {
  // 4 nodes x 4 ranks: block keeps each node's ranks consecutive, so the
  // order-preserving defaults are proven for non-commutative operations;
  // round-robin interleaves the nodes, and the same proofs fail with an
  // order diagnostic.
  for (const sched::Algorithm *a : composedAlgorithms()) {
    for (bool rr : {false, true}) {
      sched::GenOptions o;
      o.ranks = 16;
      o.root = ir::hasRoot(a->collective) ? 5 : 0;
      o.layout = rr ? roundRobinLayout(4, 4, 16) : blockLayout({4, 4}, 16);
      const ir::Plan plan = buildOk(*a, o);
      ASSERT_FALSE(plan.shape.commutative) << a->name.str();
      compiler::VerifyOptions vo;
      vo.noncommutative = true;
      compiler::VerifyResult r = compiler::verify(plan, vo);
      if (!rr) {
        EXPECT_TRUE(r.proven()) << a->name.str() << ": "
                                << (r.diagnostics.empty() ? ""
                                                          : compiler::toString(r.diagnostics[0]));
        continue;
      }
      ASSERT_FALSE(r.proven()) << a->name.str();
      EXPECT_EQ(r.diagnostics[0].cls, compiler::DiagClass::Order) << a->name.str();
      // For commutative operations the round-robin plan is still right.
      vo.noncommutative = false;
      ir::Plan commutative = plan;
      commutative.shape.commutative = true;
      EXPECT_TRUE(compiler::verify(commutative, vo).proven()) << a->name.str();
    }
  }
}

TEST(HierarchicalLibrary, OneRankAloneEqualsThatRankOnATopology) {
  for (const sched::Algorithm *a : composedAlgorithms())
    for (const Place &pl : {Place{4, 4, false}, Place{2, 4, true}}) {
      lang::InstantiateOptions o;
      o.ranks = pl.ppn * pl.nodes;
      o.root = ir::hasRoot(a->collective) ? 3 : 0;
      o.layout = layoutOf(pl);
      llvm::Expected<ir::Plan> whole = lang::instantiate(*a->module, o);
      ASSERT_TRUE(bool(whole)) << llvm::toString(whole.takeError());
      for (uint32_t r = 0; r < o.ranks; ++r) {
        llvm::Expected<ir::Program> one = lang::instantiateRank(*a->module, o, r);
        ASSERT_TRUE(bool(one)) << llvm::toString(one.takeError());
        EXPECT_TRUE(*one == whole->programs[r]) << a->name.str() << " rank " << r;
      }
    }
}

TEST(HierarchicalLibrary, NLevelRefusesLinesOfUnequalSize) {
  // 2 x 2 x 2 slots with 6 ranks: the level-0 lines of the last rack hold
  // fewer ranks than the first's.
  const sched::Algorithm &n = algorithm(ir::Collective::Allreduce, "n_level");
  for (uint32_t p = 1; p <= 8; ++p) {
    sched::GenOptions o;
    o.ranks = p;
    o.layout = blockLayout({2, 2, 2}, p);
    EXPECT_EQ(n.accepts(o), p == 1 || p == 2 || p == 4 || p == 8) << "p = " << p;
  }
}

TEST(Composition, ParameterValuesReadAndWriteTheirArgumentsNested) {
  llvm::Expected<lang::ParamValue> v =
      lang::parseParamValue(" torus2d.calgo( a = 2 , line=multi_leader(inter=ring, k=-3))");
  ASSERT_TRUE(bool(v)) << llvm::toString(v.takeError());
  EXPECT_EQ(v->algorithm, "torus2d.calgo");
  ASSERT_EQ(v->args.size(), 2u);
  EXPECT_EQ(v->args[0].first, "a");
  EXPECT_EQ(v->args[0].second.number, 2);
  EXPECT_FALSE(v->args[0].second.isAlgorithm());
  const lang::ParamValue &line = v->args[1].second;
  EXPECT_EQ(line.algorithm, "multi_leader");
  ASSERT_EQ(line.args.size(), 2u);
  EXPECT_EQ(line.args[0].second.algorithm, "ring");
  EXPECT_EQ(line.args[1].second.number, -3);
  const std::string text = lang::formatParamValue(*v);
  EXPECT_EQ(text, "torus2d.calgo(a=2,line=multi_leader(inter=ring,k=-3))");
  llvm::Expected<lang::ParamValue> again = lang::parseParamValue(text);
  ASSERT_TRUE(bool(again));
  EXPECT_EQ(*again, *v);
  EXPECT_EQ(lang::formatParamValue(*lang::parseParamValue("17")), "17");
  for (const char *bad : {"", "ring(", "ring(a)", "ring(a=1", "ring(a=1))", "ring()", "a b",
                          "ring(a=1,a=2)", "no/such", "ring(x.calgo=1)"}) {
    llvm::Expected<lang::ParamValue> r = lang::parseParamValue(bad);
    EXPECT_FALSE(bool(r)) << bad;
    if (!r) {
      EXPECT_FALSE(llvm::toString(r.takeError()).empty()) << bad;
    }
  }
}

} // namespace
} // namespace collc
