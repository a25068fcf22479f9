// schedules/Registry.cpp: the table of algorithms and option checking.
#include "schedules/Generators.h"

#include "ir/PlanBuilder.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

namespace collc::sched {

namespace {
using ir::Collective;
const Algorithm table[] = {
    {"binary_tree", Collective::Allreduce, false, true,
     "reduce up an order-preserving pre-order binary tree to rank 0, broadcast back down",
     buildAllreduceBinaryTree},
    {"recursive_doubling", Collective::Allreduce, false, true,
     "fold to a power of two, then lg p exchanges of the whole vector at doubling distance",
     buildAllreduceRecursiveDoubling},
    {"rabenseifner", Collective::Allreduce, false, true,
     "fold to a power of two, recursive-halving reduce-scatter, recursive-doubling allgather",
     buildAllreduceRabenseifner},
    {"binary_blocks", Collective::Allreduce, true, true,
     "halving and doubling inside power-of-two blocks, chained from the smallest block up",
     buildAllreduceBinaryBlocks},
    {"ring", Collective::Allreduce, true, true,
     "p-1 reduce-scatter steps and p-1 allgather steps around a ring",
     buildAllreduceRing},
    {"binomial", Collective::Reduce, false, true,
     "order-preserving binomial tree to rank 0, then on to the root",
     buildReduceBinomial},
    {"binary_tree", Collective::Reduce, false, true,
     "order-preserving pre-order binary tree re-rooted at the root",
     buildReduceBinaryTree},
    {"rabenseifner", Collective::Reduce, false, true,
     "fold to a power of two, recursive-halving reduce-scatter, binomial gather to the root",
     buildReduceRabenseifner},
};
} // namespace

llvm::ArrayRef<Algorithm> algorithms() { return table; }

const Algorithm *findAlgorithm(ir::Collective c, llvm::StringRef name) {
  for (const Algorithm &a : table)
    if (a.collective == c && a.name == name)
      return &a;
  return nullptr;
}

llvm::Expected<ir::Plan> generate(ir::Collective c, llvm::StringRef name,
                                  const GenOptions &opts) {
  const Algorithm *a = findAlgorithm(c, name);
  if (!a) {
    std::string known;
    for (const Algorithm &x : table)
      if (x.collective == c)
        known += (known.empty() ? "" : ", ") + x.name.str();
    if (known.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "no generator for collective '%s'",
                                     ir::name(c).str().c_str());
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown %s algorithm '%s' (known: %s)",
                                   ir::name(c).str().c_str(), name.str().c_str(),
                                   known.c_str());
  }
  constexpr uint32_t maxRanks = 1u << 20;
  if (opts.ranks < 1 || opts.ranks > maxRanks)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--ranks %u out of range (1..%u)", opts.ranks, maxRanks);
  if (ir::hasRoot(c) ? opts.root >= opts.ranks : opts.root != 0)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        ir::hasRoot(c) ? llvm::formatv("--root {0} out of range (ranks = {1})", opts.root,
                                       opts.ranks)
                             .str()
                       : llvm::formatv("{0} has no root", ir::name(c)).str());
  try {
    return a->build(opts);
  } catch (const ir::PlanTooLarge &e) {
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("{0} {1} for {2} ranks has more than {3} ops (over {4} GB in memory); "
                      "refused (the limit is --max-ops)",
                      ir::name(c), name, opts.ranks, e.limit,
                      llvm::format("%.1f", double(e.limit) * double(sizeof(ir::Op)) / 1e9))
            .str());
  }
}

} // namespace collc::sched
