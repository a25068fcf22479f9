// tests/dropin/SelectionTest.cpp: the default decision table and the
// precedence of COLLC_ALGORITHM, COLLC_RULES and plan files — above all, that
// no choice ever gives a non-commutative operation a plan that needs a
// commutative one.
#include "dropin/Selection.h"

#include "schedules/Generators.h"

#include <gtest/gtest.h>

using namespace collc;
using namespace collc::dropin;

namespace {

ir::Collective toIr(Coll c) {
  switch (c) {
  case Coll::Allreduce:
    return ir::Collective::Allreduce;
  case Coll::Reduce:
    return ir::Collective::Reduce;
  case Coll::ReduceScatter:
    return ir::Collective::ReduceScatterBlock;
  case Coll::Scan:
    return ir::Collective::Scan;
  case Coll::Exscan:
    return ir::Collective::Exscan;
  case Coll::Allgather:
    return ir::Collective::Allgather;
  case Coll::Bcast:
    return ir::Collective::Bcast;
  case Coll::Alltoall:
    return ir::Collective::Alltoall;
  case Coll::Gather:
    return ir::Collective::Gather;
  case Coll::Scatter:
    return ir::Collective::Scatter;
  case Coll::Barrier:
    return ir::Collective::Barrier;
  }
  return ir::Collective::Allreduce;
}

PlanQuery generators() {
  PlanQuery q;
  q.generator = [](Coll c, std::string_view n, bool &needs) {
    const sched::Algorithm *a = sched::findAlgorithm(toIr(c), llvm::StringRef(n.data(), n.size()));
    if (a)
      needs = a->needsCommutative;
    return a != nullptr;
  };
  return q;
}

CallTraits call(Coll c, uint32_t ranks, uint64_t bytes, bool commutative = true,
                bool predefined = true, uint32_t elemSize = 4) {
  CallTraits t;
  t.collective = c;
  t.ranks = ranks;
  t.bytes = bytes;
  t.count = bytes / elemSize;
  t.commutative = commutative;
  t.predefinedOp = predefined;
  return t;
}

std::string pick(const CallTraits &t) { return defaultAlgorithm(t).algorithm; }

} // namespace

TEST(DefaultTable, FollowsRabenseifnersAdaptiveChoice) {
  const Coll A = Coll::Allreduce, R = Coll::Reduce;
  EXPECT_EQ(pick(call(A, 8, 8)), "recursive_doubling");         // short
  EXPECT_EQ(pick(call(A, 8, 2047)), "recursive_doubling");
  EXPECT_EQ(pick(call(A, 8, 2048)), "rabenseifner");            // long, power of two
  EXPECT_EQ(pick(call(A, 2, 1 << 20)), "rabenseifner");
  EXPECT_EQ(pick(call(A, 3, 1 << 20)), "ring");                 // long, small p
  EXPECT_EQ(pick(call(A, 7, 64 << 10)), "ring");
  EXPECT_EQ(pick(call(A, 12, 64 << 10)), "binary_blocks");      // long, large p
  EXPECT_EQ(pick(call(A, 33, 1 << 20)), "binary_blocks");
  // Non-commutative: halving-doubling is order-preserving (proven), so a long
  // vector gets it at every p, with the fold where p is not a power of two.
  EXPECT_EQ(pick(call(A, 8, 1 << 20, false)), "rabenseifner");
  EXPECT_EQ(pick(call(A, 5, 1 << 20, false)), "rabenseifner");
  EXPECT_EQ(pick(call(A, 12, 1 << 20, false)), "rabenseifner");
  EXPECT_EQ(pick(call(A, 5, 1000, false)), "recursive_doubling");
  EXPECT_EQ(pick(call(A, 8, 16 << 10, true, false)), "rabenseifner"); // user op: 16 KiB
  EXPECT_EQ(pick(call(A, 8, (16 << 10) - 8, true, false)), "recursive_doubling");
  EXPECT_EQ(pick(call(A, 8, 4096, true, true)), "rabenseifner"); // predefined op: 2 KiB
  EXPECT_EQ(pick(call(A, 5, 4096, true, true, 4096)), "recursive_doubling"); // 1 element
  EXPECT_EQ(pick(call(A, 1, 1 << 20)), "recursive_doubling");
  EXPECT_EQ(pick(call(R, 8, 8)), "binomial");
  EXPECT_EQ(pick(call(R, 8, 1 << 20)), "rabenseifner");
  EXPECT_EQ(pick(call(R, 6, 1 << 20, false)), "rabenseifner");
  EXPECT_EQ(pick(call(R, 6, 100, false)), "binomial");
}

TEST(DefaultTable, TheRestOfTheFamily) {
  const Coll RS = Coll::ReduceScatter, S = Coll::Scan, X = Coll::Exscan, AG = Coll::Allgather,
             B = Coll::Bcast;
  EXPECT_EQ(pick(call(RS, 8, 8)), "recursive_halving");
  EXPECT_EQ(pick(call(RS, 8, 16 << 20)), "recursive_halving");
  EXPECT_EQ(pick(call(RS, 6, 1 << 20)), "ring");
  EXPECT_EQ(pick(call(RS, 8, 1 << 20, false)), "chain"); // order-preserving
  EXPECT_EQ(pick(call(RS, 1, 8, false)), "chain");
  EXPECT_EQ(pick(call(S, 8, 8)), "recursive_doubling");
  EXPECT_EQ(pick(call(S, 4, 16 << 20)), "recursive_doubling");
  EXPECT_EQ(pick(call(S, 8, 64 << 10)), "brent_kung");
  EXPECT_EQ(pick(call(X, 5, 1 << 20, false)), "brent_kung");
  EXPECT_EQ(pick(call(X, 5, 1000, false)), "recursive_doubling");
  EXPECT_EQ(pick(call(AG, 1, 1 << 20)), "ring");
  EXPECT_EQ(pick(call(AG, 4, 8)), "recursive_doubling");
  EXPECT_EQ(pick(call(AG, 4, (512 << 10) - 4)), "recursive_doubling");
  EXPECT_EQ(pick(call(AG, 4, 512 << 10)), "ring");
  EXPECT_EQ(pick(call(AG, 6, 8)), "bruck");
  EXPECT_EQ(pick(call(AG, 6, 80 << 10)), "ring");
  EXPECT_EQ(pick(call(B, 8, (12 << 10) - 4)), "binomial");
  EXPECT_EQ(pick(call(B, 8, 12 << 10)), "scatter_allgather");
  EXPECT_EQ(pick(call(B, 3, 16 << 20)), "binomial"); // few ranks
  EXPECT_EQ(pick(call(B, 7, 16 << 20)), "binomial");
  EXPECT_EQ(pick(call(B, 9, 16 << 20)), "scatter_allgather");
  EXPECT_EQ(pick(call(B, 64, 16 << 10, true, true, 1024)), "binomial"); // 16 elements
}

// The block movers decide by one block's bytes (the whole vector ÷ p), with
// MPICH's alltoall crossovers and Open MPI's gather/scatter block size.
TEST(DefaultTable, TheBlockMovers) {
  const Coll A = Coll::Alltoall, G = Coll::Gather, S = Coll::Scatter;
  EXPECT_EQ(pick(call(A, 1, 1 << 20)), "pairwise");
  EXPECT_EQ(pick(call(A, 8, 8 * 256)), "bruck");            // short blocks, 8 ranks
  EXPECT_EQ(pick(call(A, 8, 8 * 257)), "linear");
  EXPECT_EQ(pick(call(A, 7, 7 * 16)), "linear");            // short, but few ranks
  EXPECT_EQ(pick(call(A, 4, 4 * ((32 << 10) - 1))), "linear");
  EXPECT_EQ(pick(call(A, 4, 4 * (32 << 10))), "pairwise");  // long blocks
  EXPECT_EQ(pick(call(A, 64, 64 * (1 << 20))), "pairwise");
  for (Coll c : {G, S}) {
    EXPECT_EQ(pick(call(c, 1, 0)), "binomial");
    EXPECT_EQ(pick(call(c, 8, 8 * 5999)), "binomial");
    EXPECT_EQ(pick(call(c, 8, 8 * 6000)), "linear");
    EXPECT_EQ(pick(call(c, 3, 3 << 20)), "linear");
  }
}

// The barrier: dissemination at every rank count (MPICH's choice; Open MPI's
// tuned table picks recursive doubling or Bruck's, both ceil(lg p) rounds).
TEST(DefaultTable, TheBarrier) {
  for (uint32_t p : {1u, 2u, 3u, 64u, 1000u})
    EXPECT_EQ(pick(call(Coll::Barrier, p, 0)), "dissemination");
}

TEST(DefaultTable, EveryChoiceExistsAndKeepsOrderWhenItMust) {
  for (Coll c : {Coll::Allreduce, Coll::Reduce, Coll::ReduceScatter, Coll::Scan, Coll::Exscan,
                 Coll::Allgather, Coll::Bcast, Coll::Alltoall, Coll::Gather, Coll::Scatter,
                 Coll::Barrier})
    for (uint32_t p = 1; p <= 70; ++p)
      for (uint64_t bytes : {0ull, 4ull, 100ull, 2047ull, 2048ull, 5000ull, 65536ull, 1ull << 24})
        for (bool commutative : {true, false})
          for (bool predefined : {true, false}) {
            const CallTraits t = call(c, p, bytes, commutative, predefined);
            const DefaultChoice d = defaultAlgorithm(t);
            const sched::Algorithm *a = sched::findAlgorithm(toIr(c), d.algorithm);
            ASSERT_NE(a, nullptr) << d.algorithm;
            sched::GenOptions o;
            o.ranks = p;
            EXPECT_TRUE(a->accepts(o)) << name(c) << " p=" << p << ": " << d.algorithm;
            EXPECT_FALSE(!commutative && a->needsCommutative)
                << name(c) << " p=" << p << " bytes=" << bytes << ": " << d.algorithm;
            EXPECT_NE(std::string(d.reason), "");
          }
}

TEST(Select, PrecedenceForcedRulesFilesDefault) {
  Config cfg;
  Rule r;
  r.collective = Coll::Allreduce;
  r.maxBytes = 4096;
  r.algorithm = "binary_tree";
  r.where = "rules.yaml:3";
  cfg.rules.push_back(r);
  FileCandidate f;
  f.id = 7;
  f.algorithm = "myplan";
  f.origin = "plans/my.cplan";
  f.needsCommutative = false;
  f.minBytes = 0;
  f.maxBytes = 1 << 20;
  const FileCandidate files[] = {f};

  Selection s = select(cfg, call(Coll::Allreduce, 4, 100), files, generators());
  EXPECT_EQ(s.algorithm, "binary_tree");
  EXPECT_EQ(s.origin, Origin::Rule);
  EXPECT_EQ(s.detail, "binary_tree (rules.yaml:3)");

  s = select(cfg, call(Coll::Allreduce, 4, 8192), files, generators());
  EXPECT_EQ(s.fileId, 7);
  EXPECT_EQ(s.origin, Origin::File);
  EXPECT_EQ(s.detail, "myplan from plans/my.cplan");

  s = select(cfg, call(Coll::Allreduce, 4, 2 << 20), files, generators());
  EXPECT_EQ(s.origin, Origin::Default);
  EXPECT_EQ(s.algorithm, "rabenseifner");

  cfg.forced[0] = "ring";
  s = select(cfg, call(Coll::Allreduce, 4, 100), files, generators());
  EXPECT_EQ(s.algorithm, "ring");
  EXPECT_EQ(s.origin, Origin::Forced);
  EXPECT_EQ(s.fileId, -1);

  cfg.forced[0] = "myplan"; // a plan file's name can be forced too
  s = select(cfg, call(Coll::Allreduce, 4, 2 << 20), files, generators());
  EXPECT_EQ(s.fileId, 7);
  EXPECT_EQ(s.detail, "myplan from plans/my.cplan (COLLC_ALGORITHM)");

  cfg.forced[0] = "native";
  s = select(cfg, call(Coll::Allreduce, 4, 100), files, generators());
  EXPECT_TRUE(s.native);
  EXPECT_FALSE(s.noPlan);
}

TEST(Select, NeverGivesANonCommutativeOpAPlanThatNeedsCommutativity) {
  Config cfg;
  cfg.forced[0] = "ring";
  Selection s = select(cfg, call(Coll::Allreduce, 5, 1 << 20, false), {}, generators());
  EXPECT_EQ(s.algorithm, "rabenseifner");
  EXPECT_EQ(s.substitution, Substitution::NeedsCommutative);
  EXPECT_EQ(s.detail, "rabenseifner (default: long vector, non-commutative operation: "
                      "halving-doubling after a fold, order-preserving); instead of ring "
                      "(COLLC_ALGORITHM) needs a commutative operation, and the operation is "
                      "not commutative");

  // A commutative-only plan file is skipped for a non-commutative op; a later
  // order-preserving one that fits is taken.
  FileCandidate ring, tree;
  ring.id = 0;
  ring.algorithm = "ring";
  ring.origin = "a.cplan";
  ring.needsCommutative = true;
  tree.id = 1;
  tree.algorithm = "tree";
  tree.origin = "b.cplan";
  tree.needsCommutative = false;
  Config none;
  const FileCandidate both[] = {ring, tree};
  s = select(none, call(Coll::Allreduce, 5, 100, false), both, generators());
  EXPECT_EQ(s.fileId, 1);
  EXPECT_EQ(s.substitution, Substitution::NeedsCommutative);
  EXPECT_EQ(s.detail, "tree from b.cplan; instead of ring from a.cplan needs a commutative "
                      "operation, and the operation is not commutative");
  s = select(none, call(Coll::Allreduce, 5, 100, true), both, generators());
  EXPECT_EQ(s.fileId, 0);
  const FileCandidate onlyRing[] = {ring};
  s = select(none, call(Coll::Allreduce, 5, 100, false), onlyRing, generators());
  EXPECT_EQ(s.fileId, -1);
  EXPECT_EQ(s.algorithm, "recursive_doubling");
  EXPECT_EQ(s.substitution, Substitution::NeedsCommutative);
  EXPECT_EQ(s.origin, Origin::File);
}

TEST(Select, FilesMatchRootAndSize) {
  FileCandidate a, b;
  a.id = 0;
  a.root = 2;
  a.algorithm = "x";
  a.needsCommutative = false;
  a.maxBytes = 1000;
  b = a;
  b.id = 1;
  b.minBytes = 1000;
  b.maxBytes = ~uint64_t(0);
  const FileCandidate files[] = {a, b};
  Config cfg;
  CallTraits t = call(Coll::Reduce, 4, 999);
  t.root = 2;
  EXPECT_EQ(select(cfg, t, files, generators()).fileId, 0);
  t.bytes = 1000;
  EXPECT_EQ(select(cfg, t, files, generators()).fileId, 1);
  t.root = 1;
  EXPECT_EQ(select(cfg, t, files, generators()).fileId, -1);
}

TEST(Select, UnknownNamesAndFailedVerificationFallBackToTheDefault) {
  Config cfg;
  cfg.forced[1] = "mystery";
  Selection s = select(cfg, call(Coll::Reduce, 4, 100), {}, generators());
  EXPECT_EQ(s.substitution, Substitution::NoSuchPlan);
  EXPECT_EQ(s.algorithm, "binomial");

  PlanQuery q = generators();
  q.generatedVerifies = [](Coll, std::string_view n, uint32_t) { return n != "rabenseifner"; };
  cfg.forced[0] = "rabenseifner";
  s = select(cfg, call(Coll::Allreduce, 3, 1 << 20), {}, q);
  EXPECT_EQ(s.substitution, Substitution::Unverified);
  EXPECT_EQ(s.algorithm, "ring");
  EXPECT_FALSE(s.native);

  // Not even the default verifies: native, marked as "no plan".
  q.generatedVerifies = [](Coll, std::string_view, uint32_t) { return false; };
  Config none;
  s = select(none, call(Coll::Allreduce, 3, 8), {}, q);
  EXPECT_TRUE(s.native);
  EXPECT_TRUE(s.noPlan);
}

TEST(Select, AForcedAlgorithmWhoseRequireRefusesTheCommunicatorGivesWayToTheDefault) {
  Config cfg;
  cfg.forced[0] = "swing_latency"; // require p == pof2(p)
  PlanQuery q = generators();
  q.generatorFits = [](Coll c, std::string_view n, uint32_t root) {
    const sched::Algorithm *a = sched::findAlgorithm(toIr(c), llvm::StringRef(n.data(), n.size()));
    sched::GenOptions o;
    o.ranks = 6;
    o.root = root;
    return a && a->accepts(o);
  };
  Selection s = select(cfg, call(Coll::Allreduce, 6, 8), {}, q);
  EXPECT_EQ(s.substitution, Substitution::DoesNotFit);
  EXPECT_EQ(s.algorithm, "recursive_doubling");
  EXPECT_NE(s.detail.find("instead of swing_latency (COLLC_ALGORITHM) does not fit"), std::string::npos)
      << s.detail;
  // Where it fits it serves.
  q.generatorFits = [](Coll, std::string_view, uint32_t) { return true; };
  s = select(cfg, call(Coll::Allreduce, 8, 8), {}, q);
  EXPECT_EQ(s.substitution, Substitution::None);
  EXPECT_EQ(s.algorithm, "swing_latency");
}
