// compiler/passes/Pipeline.cpp: the pass registry and the -O1/-O2 pipelines.
#include "compiler/passes/Pipeline.h"

#include "compiler/passes/PassManager.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

namespace collc::compiler {

namespace {

/// Segments for `pipeline`: the explicit value, else 4 when the pass is named.
uint32_t segmentsFor(const PipelineOptions &opts) {
  return opts.pipelineSegments == 0 ? 4 : opts.pipelineSegments;
}

const PassInfo passTable[] = {
    {"dce", "remove ops whose results cannot reach a required output",
     [](const PipelineOptions &o) { return createDeadOpElimination(o.perRank); }},
    {"copy-elim", "fold copies away (three-address combines, direct receives)",
     [](const PipelineOptions &) { return createCopyElimination(); }},
    {"coalesce", "merge messages between the same ranks that are ready together",
     [](const PipelineOptions &o) { return createMessageCoalescing(o.perRank ? 1 : 0); }},
    {"relax-deps", "replace step barriers by exact data dependencies",
     [](const PipelineOptions &) { return createDependencyRelaxation(); }},
    {"pipeline", "split messages into segments so transfer and reduction overlap",
     [](const PipelineOptions &o) { return createPipelining(segmentsFor(o)); }},
    {"compact-scratch", "reuse tmp slots whose lifetimes are ordered",
     [](const PipelineOptions &o) { return createScratchCompaction(o.perRank); }},
};

/// The level pipelines, top to bottom.
std::vector<std::string> levelPipeline(const PipelineOptions &opts) {
  std::vector<std::string> p;
  if (opts.level == 0)
    return p;
  // Dead ops first, so no later pass spends effort on them.
  p.push_back("dce");
  // Before relax-deps: copy-elim moves reads and writes only where existing
  // orderings prove it safe, and barriers order the most.
  p.push_back("copy-elim");
  // Before relax-deps: under the waits the author wrote, the parts of a
  // message of one step are ready together; exact dependencies would tell
  // them apart by producer, and merging then would delay the earlier part.
  if (opts.level >= 2)
    p.push_back("coalesce");
  // After copy-elim and coalesce: exact dependencies of the accesses that
  // remain.
  p.push_back("relax-deps");
  // After coalesce, which would merge the segments of a leaf's send back.
  if (opts.level >= 2 && opts.pipelineSegments >= 2)
    p.push_back("pipeline");
  // Last: it reuses a slot only where the final dependencies already order
  // the two lifetimes, so it never costs the concurrency the others found.
  p.push_back("compact-scratch");
  return p;
}

} // namespace

llvm::ArrayRef<PassInfo> passInfos() { return passTable; }

std::unique_ptr<Pass> createPass(llvm::StringRef name, const PipelineOptions &opts) {
  for (const PassInfo &i : passTable)
    if (i.name == name)
      return i.create(opts);
  return nullptr;
}

llvm::Expected<std::vector<std::string>> parsePassList(llvm::StringRef list) {
  std::vector<std::string> names;
  llvm::SmallVector<llvm::StringRef, 8> items;
  list.split(items, ',');
  for (llvm::StringRef item : items) {
    item = item.trim();
    if (item.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "--passes: empty pass name in '%s'",
                                     list.str().c_str());
    names.push_back(item.str());
  }
  return names;
}

llvm::Expected<std::vector<std::string>> pipelineFor(const PipelineOptions &opts) {
  if (opts.passes.empty()) {
    if (opts.level > 2)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "-O%u: optimization level must be 0, 1 or 2",
                                     opts.level);
    return levelPipeline(opts);
  }
  for (const std::string &n : opts.passes)
    if (!llvm::any_of(passTable, [&](const PassInfo &i) { return i.name == n; })) {
      std::string known;
      for (const PassInfo &i : passTable)
        known += (known.empty() ? "" : ", ") + i.name.str();
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "unknown pass '%s' (known: %s)", n.c_str(),
                                     known.c_str());
    }
  return opts.passes;
}

llvm::Expected<ir::Plan> optimize(ir::Plan plan, const PipelineOptions &opts) {
  llvm::Expected<std::vector<std::string>> names = pipelineFor(opts);
  if (!names)
    return names.takeError();
  // -O0, and every barrier: the plan as it is, not even verified. A barrier's
  // ops move no data, and the passes keep what data needs (dce would drop
  // receives nobody reads, relax-deps the order they exist for).
  if (names->empty() || plan.shape.collective == ir::Collective::Barrier) {
    if (opts.resultProof && opts.inputProof)
      *opts.resultProof = *opts.inputProof;
    return plan;
  }
  PassManagerOptions pmo;
  pmo.verifyEach = opts.verifyEach;
  pmo.printAfterAll = opts.printAfterAll;
  pmo.inputProof = opts.inputProof;
  pmo.resultProof = opts.resultProof;
  pmo.keepLastProven = false; // an error drops the plan
  pmo.cost = opts.cost;
  pmo.costPoint = opts.costPoint;
  pmo.undone = opts.undone;
  PassManager pm(pmo);
  for (const std::string &n : *names)
    pm.add(createPass(n, opts));
  if (llvm::Error e = pm.run(plan))
    return e;
  return plan;
}

} // namespace collc::compiler
