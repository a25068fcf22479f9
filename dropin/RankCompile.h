// dropin/RankCompile.h: one rank's compiled program of a library algorithm,
// without the whole plan (docs/design-notes.md, "First call independent of p").
//
// compileRank instantiates rank r's program and the programs of the ranks r
// exchanges messages with (lang::instantiateRanks), optimizes them with the
// drop-in's pipeline — -O2 in its per-rank form (compiler/passes/Pipeline.h),
// where a pass's result on rank r depends only on r's program and, for
// coalesce, its peers' — and lowers them as a partial plan
// (docs/bytecode.md, "Partial plans") that rank r's runtime loads and runs.
// When r's tmp slots hold values whose chunk only another rank's program
// names (a value relayed through r), the sections those values cross to or
// from are added (rt::missingSections) until every chunk is known.
//
// Guarantee: rank r's program equals rank r of optimizeWhole(instantiate(…))
// (tests/dropin/RankCompileTest.cpp proves that, and proves those whole plans,
// for every library algorithm, every p up to ciProvenRanks and every root).
// The partial plan records no proof; which proof covers it is for the caller
// (PlanLibrary: the CI bound, the proof cache, or COLLC_VERIFY).
// MPI-free.
#ifndef COLLC_DROPIN_RANKCOMPILE_H
#define COLLC_DROPIN_RANKCOMPILE_H

#include "lang/Instantiator.h"
#include "compiler/passes/Pipeline.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace collc::dropin {

/// Every library algorithm's drop-in form (the per-rank -O2 pipeline, each
/// pass's result proven) is proven by the test suite for every p up to this
/// and every root, with the library's default parameters.
inline constexpr uint32_t ciProvenRanks = 32;

/// The library allreduce algorithms whose ranks end with different reduction
/// trees at some p (so different bits from an operation sensitive to operand
/// order): the drop-in proves each of their plans whole before it runs one
/// (as with COLLC_VERIFY) and refuses those that are not identical. The test
/// suite checks this list against the verifier for every p up to
/// ciProvenRanks.
inline bool nonIdenticalAllreduce(std::string_view algorithm) {
  return algorithm == "swing_latency";
}

/// The drop-in's pipeline: -O2, per-rank form, pipelining off; `verifyEach`
/// proves the input and every pass's result (for whole plans).
compiler::PipelineOptions dropinPipeline(bool verifyEach);

/// What compileRank made.
struct RankPlan {
  std::vector<uint8_t> bytes;   ///< the partial .cplan
  uint32_t sections = 0;        ///< programs in it, the rank's own included
  uint64_t ownOps = 0;          ///< ops of the rank's compiled program
  uint64_t contextOps = 0;      ///< ops of the other sections
  unsigned identityRounds = 0;  ///< times sections were added for tmp chunks
};

/// Rank `rank`'s program of `m` for `opts`, compiled with dropinPipeline and
/// lowered as a partial plan. Fails like lang::instantiateRanks (a refused
/// shape, a `require` that does not hold, a rank out of range), and when
/// the chunk of a tmp value of the rank cannot be found even with every
/// rank's program (a plan that does not verify).
llvm::Expected<RankPlan> compileRank(const lang::Module &m, const lang::InstantiateOptions &opts,
                                     uint32_t rank);

/// The whole plan the drop-in's ranks run between them: instantiate(m, opts)
/// optimized with dropinPipeline(verifyEach). Rank r of it equals
/// compileRank(m, opts, r)'s program.
llvm::Expected<ir::Plan> compileWhole(const lang::Module &m, const lang::InstantiateOptions &opts,
                                      bool verifyEach);

} // namespace collc::dropin

#endif // COLLC_DROPIN_RANKCOMPILE_H
