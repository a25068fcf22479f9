// tests/oracle/Oracle.h: the C++ generators the algorithm library replaced.
//
// Until the library was written in the language (schedules/*.calgo), these
// functions were the product's generators. They stay as a test oracle: for
// p = 1..64 and every root each library file must instantiate to exactly the
// plan its generator builds (tests/lang/LibraryOracleTest.cpp), and the
// instantiation benchmark (bench/lang) times the language against them.
#ifndef COLLC_TESTS_ORACLE_ORACLE_H
#define COLLC_TESTS_ORACLE_ORACLE_H

#include "ir/Plan.h"

namespace collc::oracle {

/// What a generator is asked for. Preconditions: ranks >= 1, root < ranks.
struct GenOptions {
  uint32_t ranks = 1;
  uint32_t root = 0; ///< reduce only
  uint64_t maxOps = UINT64_MAX; ///< ir::PlanBuilder throws PlanTooLarge past it
};

using GeneratorFn = ir::Plan (*)(const GenOptions &);

struct Generator {
  llvm::StringRef name;
  ir::Collective collective;
  GeneratorFn build;
};

/// The eight generators, in the order of the old registry.
llvm::ArrayRef<Generator> generators();

ir::Plan buildAllreduceBinaryTree(const GenOptions &o);
ir::Plan buildAllreduceRecursiveDoubling(const GenOptions &o);
ir::Plan buildAllreduceRabenseifner(const GenOptions &o);
ir::Plan buildAllreduceBinaryBlocks(const GenOptions &o);
ir::Plan buildAllreduceRing(const GenOptions &o);
ir::Plan buildReduceBinomial(const GenOptions &o);
ir::Plan buildReduceBinaryTree(const GenOptions &o);
ir::Plan buildReduceRabenseifner(const GenOptions &o);

} // namespace collc::oracle

#endif // COLLC_TESTS_ORACLE_ORACLE_H
