// tests/dropin/PlanLibraryTest.cpp: the plans the drop-in builds for library
// algorithms (PlanLibrary::build) and which proof covers them — the CI bound,
// a proof record, none, or the whole plan proven on load — as libcollc_mpi.so
// calls it, without MPI.
#include "dropin/PlanLibrary.h"
#include "dropin/ProofCache.h"
#include "dropin/RankCompile.h"

#include "runtime/bytecode/Loader.h"
#include "schedules/Generators.h"

#include "tests/dropin/TempDir.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace collc;
using namespace collc::dropin;

namespace {

namespace fs = std::filesystem;

/// The record `collc verify rabenseifner --ranks P --cache` writes.
ProofRecord rabenseifnerRecord(uint32_t p) {
  const sched::Algorithm &a = *sched::findAlgorithm(ir::Collective::Allreduce, "rabenseifner");
  ProofRecord r;
  r.key.algorithm = "rabenseifner";
  r.key.collective = "allreduce";
  r.key.sourceHash = sha256Hex(a.module->source.text);
  r.key.ranks = p;
  r.roots = {0};
  r.anyAssociative = !a.needsCommutative;
  r.inPlace = a.inPlace;
  r.identical = true;
  return r;
}

TEST(PlanLibrary, BuildsTheRanksOwnProgramWithTheGuaranteeThatHolds) {
  PlanLibrary lib;
  Config config;
  std::vector<std::string> warnings;
  BuiltPlan b;
  std::string error;
  // At the bound: proven in CI, a partial plan of the rank.
  ASSERT_TRUE(lib.build(Coll::Allreduce, "rabenseifner", ciProvenRanks, 0, 3, config, b, error,
                        warnings))
      << error;
  EXPECT_FALSE(b.whole);
  EXPECT_EQ(b.guarantee, Guarantee::ProvenInCi);
  rt::LoadedPlan loaded;
  ASSERT_TRUE(rt::load(*b.bytes, loaded).ok());
  EXPECT_TRUE(loaded.partial && loaded.own == 3);
  // Above it, without a cache: not proven (and still built per rank).
  ASSERT_TRUE(lib.build(Coll::Allreduce, "rabenseifner", ciProvenRanks + 1, 0, 3, config, b,
                        error, warnings));
  EXPECT_EQ(b.guarantee, Guarantee::None);
  EXPECT_FALSE(b.whole);
  EXPECT_TRUE(warnings.empty());
  // The same shape again: the kept bytes, no new build.
  const auto bytes = b.bytes;
  ASSERT_TRUE(lib.build(Coll::Allreduce, "rabenseifner", ciProvenRanks + 1, 0, 3, config, b,
                        error, warnings));
  EXPECT_EQ(b.bytes, bytes);
  EXPECT_EQ(b.seconds, 0);
}

TEST(PlanLibrary, AProofRecordCoversItsShapeAndRootOnly) {
  const std::string dir = test::freshDir("planlib-record");
  std::string error;
  ASSERT_TRUE(writeProof(dir, rabenseifnerRecord(100), error)) << error;
  Config config;
  config.proofCache = dir;
  PlanLibrary lib;
  std::vector<std::string> warnings;
  BuiltPlan b;
  ASSERT_TRUE(lib.build(Coll::Allreduce, "rabenseifner", 100, 0, 57, config, b, error, warnings));
  EXPECT_EQ(b.guarantee, Guarantee::ProofRecord);
  EXPECT_EQ(b.record, dir + "/" + recordFileName(rabenseifnerRecord(100).key));
  // Another p, or the record of another algorithm's text: none.
  ASSERT_TRUE(lib.build(Coll::Allreduce, "rabenseifner", 101, 0, 57, config, b, error, warnings));
  EXPECT_EQ(b.guarantee, Guarantee::None);
  ASSERT_TRUE(
      lib.build(Coll::Allreduce, "recursive_doubling", 100, 0, 57, config, b, error, warnings));
  EXPECT_EQ(b.guarantee, Guarantee::None);
  EXPECT_TRUE(warnings.empty());
  fs::remove_all(dir);
}

TEST(PlanLibrary, ABadRecordIsOneWarningNamingItAndNoGuarantee) {
  const std::string dir = test::freshDir("planlib-bad");
  Config config;
  config.proofCache = dir;
  const std::string path = dir + "/" + recordFileName(rabenseifnerRecord(200).key);
  std::ofstream(path) << "not a record\n";
  PlanLibrary lib;
  std::vector<std::string> warnings;
  BuiltPlan b;
  std::string error;
  for (uint32_t rank : {0u, 1u, 199u}) // three communicators' first calls
    ASSERT_TRUE(
        lib.build(Coll::Allreduce, "rabenseifner", 200, 0, rank, config, b, error, warnings));
  EXPECT_EQ(b.guarantee, Guarantee::None);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "COLLC_PROOF_CACHE: '" + path +
                             "' is not a proof record (line 1: expected 'format: ...'); it is "
                             "not used");
  // A record that proves less than the plan claims is refused alike.
  ProofRecord weak = rabenseifnerRecord(300);
  weak.identical = false;
  ASSERT_TRUE(writeProof(dir, weak, error)) << error;
  ASSERT_TRUE(lib.build(Coll::Allreduce, "rabenseifner", 300, 0, 1, config, b, error, warnings));
  EXPECT_EQ(b.guarantee, Guarantee::None);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[1].find("proves less than the plan claims"), std::string::npos);
  fs::remove_all(dir);
}

TEST(PlanLibrary, VerifyBuildsTheWholePlanProvenOnLoad) {
  PlanLibrary lib;
  Config config;
  config.verify = true;
  std::vector<std::string> warnings;
  BuiltPlan b;
  std::string error;
  ASSERT_TRUE(lib.build(Coll::Reduce, "binomial", 6, 2, 4, config, b, error, warnings)) << error;
  EXPECT_TRUE(b.whole);
  EXPECT_EQ(b.guarantee, Guarantee::ProvenOnLoad);
  rt::LoadedPlan loaded;
  ASSERT_TRUE(rt::load(*b.bytes, loaded).ok());
  EXPECT_FALSE(loaded.partial);
  EXPECT_TRUE(loaded.proof.verified);
  // Its rank 4 is what the rank would run without COLLC_VERIFY.
  Config plain;
  BuiltPlan part;
  ASSERT_TRUE(lib.build(Coll::Reduce, "binomial", 6, 2, 4, plain, part, error, warnings));
  rt::LoadedPlan p;
  ASSERT_TRUE(rt::load(*part.bytes, p).ok());
  rt::Program a = loaded.programs[4], c = *p.programOf(4);
  for (rt::Op &op : a.ops)
    op.offset = 0;
  for (rt::Op &op : c.ops)
    op.offset = 0;
  EXPECT_EQ(a, c);
}

TEST(PlanLibrary, AnAllreduceIdenticalOnlyAtSomeRankCountsIsProvenWhole) {
  PlanLibrary lib;
  Config config;
  std::vector<std::string> warnings;
  BuiltPlan b;
  std::string error;
  ASSERT_TRUE(lib.build(Coll::Allreduce, "swing_latency", 4, 0, 1, config, b, error, warnings))
      << error;
  EXPECT_TRUE(b.whole);
  EXPECT_EQ(b.guarantee, Guarantee::ProvenOnLoad);
  // Where its ranks would compute different trees, there is no plan.
  EXPECT_FALSE(lib.build(Coll::Allreduce, "swing_latency", 16, 0, 1, config, b, error, warnings));
  EXPECT_NE(error.find("does not verify"), std::string::npos) << error;
}

} // namespace
