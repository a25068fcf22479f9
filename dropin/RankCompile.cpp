// dropin/RankCompile.cpp: one rank's compiled program (RankCompile.h).
#include "dropin/RankCompile.h"

#include "compiler/Lower.h"
#include "runtime/bytecode/Encoder.h"
#include "runtime/core/Prepared.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace collc::dropin {

namespace {

/// After this many rounds of adding sections for tmp chunks, every rank's
/// program is added at once (a value relayed along a long path).
constexpr unsigned maxIdentityRounds = 8;

/// The ranks `prog` exchanges messages with, added to `ranks` (kept sorted).
void addPeers(const ir::Program &prog, std::vector<uint32_t> &ranks) {
  for (const ir::Op &op : prog.ops)
    if (ir::isMessage(op.kind))
      ranks.push_back(op.peer);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
}

/// Instantiates the programs of `ranks` that `plan` does not hold yet, and
/// widens its scratch to the tmp regions their runs take.
llvm::Error instantiateMissing(const lang::Module &m, const lang::InstantiateOptions &opts,
                               const std::vector<uint32_t> &ranks, ir::Plan &plan,
                               std::vector<uint32_t> &have) {
  std::vector<uint32_t> missing;
  for (uint32_t r : ranks)
    if (!std::binary_search(have.begin(), have.end(), r))
      missing.push_back(r);
  have = ranks;
  if (missing.empty())
    return llvm::Error::success();
  llvm::Expected<ir::Plan> more = lang::instantiateRanks(m, opts, missing);
  if (!more)
    return more.takeError();
  for (uint32_t r : missing)
    plan.programs[r] = std::move(more->programs[r]);
  plan.shape.scratch = std::max(plan.shape.scratch, more->shape.scratch);
  return llvm::Error::success();
}

} // namespace

compiler::PipelineOptions dropinPipeline(bool verifyEach) {
  compiler::PipelineOptions o;
  o.level = 2;
  o.perRank = true;
  o.verifyEach = verifyEach;
  return o;
}

llvm::Expected<RankPlan> compileRank(const lang::Module &m, const lang::InstantiateOptions &opts,
                                     uint32_t rank) {
  llvm::Expected<ir::Plan> base = lang::instantiateRanks(m, opts, {rank});
  if (!base)
    return base.takeError();
  ir::Plan &plan = *base;
  std::vector<uint32_t> have{rank};
  std::vector<uint32_t> sections{rank};
  addPeers(plan.programs[rank], sections);
  if (llvm::Error e = instantiateMissing(m, opts, sections, plan, have))
    return e;

  RankPlan out;
  for (unsigned round = 0;; ++round) {
    // The plan goes into the pipeline whole (no copy: it holds the rank's
    // program and its peers', 3 x 4p ops for a ring); a further round, rare,
    // instantiates its sections again.
    llvm::Expected<ir::Plan> opt = compiler::optimize(std::move(plan), dropinPipeline(false));
    if (!opt)
      return opt.takeError();
    const rt::LoadedPlan part = compiler::toPartialBytecodePlan(*opt, rank, sections);
    const rt::PreparedRank prep = rt::prepareRank(part, rank);
    if (!prep.unknownTmp) {
      out.bytes = rt::encode(part);
      out.sections = static_cast<uint32_t>(sections.size());
      out.identityRounds = round;
      for (uint32_t r : sections)
        (r == rank ? out.ownOps : out.contextOps) += opt->programs[r].ops.size();
      return out;
    }
    std::vector<uint32_t> more = rt::missingSections(part);
    if (more.empty())
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          llvm::formatv("rank {0}'s program of {1} for {2} ranks uses tmp slots whose chunks "
                        "cannot be found{3}: the plan does not verify",
                        rank, m.name, plan.shape.ranks,
                        sections.size() == plan.shape.ranks ? " in the whole plan" : "")
              .str());
    if (round + 1 >= maxIdentityRounds) {
      more.resize(plan.shape.ranks);
      for (uint32_t r = 0; r < plan.shape.ranks; ++r)
        more[r] = r;
    }
    sections.insert(sections.end(), more.begin(), more.end());
    std::sort(sections.begin(), sections.end());
    sections.erase(std::unique(sections.begin(), sections.end()), sections.end());
    llvm::Expected<ir::Plan> again = lang::instantiateRanks(m, opts, sections);
    if (!again)
      return again.takeError();
    plan = std::move(*again);
  }
}

llvm::Expected<ir::Plan> compileWhole(const lang::Module &m, const lang::InstantiateOptions &opts,
                                      bool verifyEach) {
  llvm::Expected<ir::Plan> plan = lang::instantiate(m, opts);
  if (!plan)
    return plan.takeError();
  return compiler::optimize(std::move(*plan), dropinPipeline(verifyEach));
}

} // namespace collc::dropin
