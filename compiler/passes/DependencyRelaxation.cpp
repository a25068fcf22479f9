// compiler/passes/DependencyRelaxation.cpp: step barriers become exact data dependencies.
//
// Preserves: every op, its listing position (so message matching), and every
// value each op reads — each pair of ops that touch a common place (one of
// them writing; a send reads until it completes; in and out as one memory in
// in-place plans) stays ordered as in listing order. Nothing else stays
// ordered.
//
// Why it is sound: in a proven (race-free) plan every such pair is already
// ordered by a dependency path, so the new dependencies are implied by the
// old ones — it only removes waits. Removing waits cannot deadlock a plan
// that did not (an op is posted no later than before, and a message completes
// once both ends are posted), and it never lengthens the critical path.
//
// Algorithm: one scan per rank in listing order, keeping per slot the last
// writer and the readers since; an op depends on the last writer of what it
// reads (RAW) and on the last writer and readers of what it writes (WAW,
// WAR). The lists are then transitively reduced, so they stay short.
#include "compiler/passes/Analysis.h"
#include "compiler/passes/Pass.h"

namespace collc::compiler {

namespace {

class DependencyRelaxation final : public Pass {
public:
  llvm::StringRef name() const override { return "relax-deps"; }

  bool run(ir::Plan &plan) override {
    bool changed = false;
    for (uint32_t r = 0; r < plan.programs.size(); ++r)
      if (!plan.programs[r].ops.empty())
        changed |= writeDeps(plan.programs[r].ops, dependenciesOf(plan, r));
    return changed;
  }

  bool replacesDependenciesOnly() const override { return true; }
  DepLists dependenciesOf(const ir::Plan &plan, uint32_t r) override {
    return dataDeps(plan.shape, r, plan.programs[r].ops);
  }
};

} // namespace

std::unique_ptr<Pass> createDependencyRelaxation() {
  return std::make_unique<DependencyRelaxation>();
}

} // namespace collc::compiler
