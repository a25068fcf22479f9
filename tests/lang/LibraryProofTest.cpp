// tests/lang/LibraryProofTest.cpp: every library file is proven for every p it accepts.
//
// For p = 1..64 and every root: each file's plans are proven (for operations
// that are only associative too, where the file does not declare
// `commutative`); its `require` accepts at least every power of two; the
// radix algorithms are proven for k = 2..5 as well, and recursive
// multiplying keeps rank order whenever p is a power of k.
#include "compiler/Verifier.h"
#include "lang/Instantiator.h"
#include "schedules/Generators.h"

#include "llvm/Support/MathExtras.h"

#include <gtest/gtest.h>

namespace collc {
namespace {

std::string firstError(const compiler::VerifyResult &r) {
  return r.diagnostics.empty() ? "" : compiler::toString(r.diagnostics[0]);
}

/// Proves `a` for p = 1..64 and all roots with `params`; returns how many
/// instantiations its `require` refused.
unsigned proveAll(const sched::Algorithm &a, lang::ParamValues params) {
  unsigned refused = 0;
  for (uint32_t p = 1; p <= 64; ++p)
    for (uint32_t root = 0; root < (ir::hasRoot(a.collective) ? p : 1); ++root) {
      const sched::GenOptions o{p, root, params};
      if (!a.accepts(o)) {
        EXPECT_FALSE(llvm::isPowerOf2_32(p)) << a.file.str() << " refuses p = " << p;
        ++refused;
        continue;
      }
      const ir::Plan plan = a.build(o);
      compiler::VerifyOptions vo;
      vo.noncommutative = !a.needsCommutative;
      compiler::VerifyResult r = compiler::verify(plan, vo);
      EXPECT_TRUE(r.proven()) << a.file.str() << " p = " << p << " root = " << root << ": "
                              << firstError(r);
    }
  return refused;
}

TEST(LibraryProof, EveryFileIsProvenForEveryRankCountAndRootItAccepts) {
  for (const sched::Algorithm &a : sched::algorithms())
    proveAll(a, {});
}

TEST(LibraryProof, SwingRefusesExactlyTheRankCountsThatAreNotPowersOfTwo) {
  for (const char *name : {"swing_latency", "swing_bandwidth"})
    EXPECT_EQ(proveAll(*sched::findAlgorithm(ir::Collective::Allreduce, name), {}), 64u - 7u);
}

TEST(LibraryProof, RadixAlgorithmsAreProvenForEveryRadix) {
  for (int64_t k = 2; k <= 5; ++k) {
    EXPECT_EQ(proveAll(*sched::findAlgorithm(ir::Collective::Reduce, "knomial"), {{"k", k}}), 0u);
    EXPECT_EQ(proveAll(*sched::findAlgorithm(ir::Collective::Allreduce, "recursive_multiplying"),
                       {{"k", k}}),
              0u);
  }
}

TEST(LibraryProof, RecursiveMultiplyingKeepsRankOrderForPowersOfK) {
  const sched::Algorithm *a =
      sched::findAlgorithm(ir::Collective::Allreduce, "recursive_multiplying");
  for (int64_t k = 2; k <= 5; ++k)
    for (uint32_t p = 1; p <= 64; p *= uint32_t(k)) {
      compiler::VerifyOptions vo;
      vo.noncommutative = true;
      vo.requireIdentical = true;
      compiler::VerifyResult r = compiler::verify(a->build({p, 0, {{"k", k}}}), vo);
      EXPECT_TRUE(r.proven()) << "k = " << k << " p = " << p << ": " << firstError(r);
    }
}

TEST(LibraryProof, RadixParametersBelowTwoAreRefusedWithTheirValue) {
  lang::InstantiateOptions o;
  o.ranks = 4;
  o.params = {{"k", 1}};
  llvm::Expected<ir::Plan> plan =
      lang::instantiate(*sched::findAlgorithm(ir::Collective::Reduce, "knomial")->module, o);
  ASSERT_FALSE(bool(plan));
  EXPECT_EQ(llvm::toString(plan.takeError()),
            "reduce_knomial.calgo:22:9: error: require k >= 2 does not hold (p = 4, root = 0, "
            "k = 1)\n  require k >= 2\n          ^");
}

} // namespace
} // namespace collc
