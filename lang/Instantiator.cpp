// lang/Instantiator.cpp: entry points of the tree-walking evaluator of the resolved AST.
//
// The machine (InstantiatorImpl.h) is set up and each rank's run driven
// here; its statements and expressions are Evaluate.cpp, its runs of other
// algorithms Compose.cpp, the size estimate before instantiating Estimate.cpp.
#include "lang/Instantiator.h"

#include "lang/InstantiatorImpl.h"

#include <algorithm>
#include <tuple>

namespace collc::lang {

char OpLimitError::ID = 0;

Resolver::~Resolver() = default;

namespace detail {

void Machine::fail(Loc at, const llvm::Twine &message) const {
  const std::string c = context(true);
  EvalFailure f{at, message.str() + (c.empty() ? "" : " (" + c + ")")};
  f.source = &m_.source;
  throw f;
}

std::string Machine::context(bool withShape) const {
  std::string s;
  auto add = [&](llvm::StringRef name, const std::string &v) {
    s += (s.empty() ? "" : ", ") + name.str() + " = " + v;
  };
  if (withShape) {
    if (inBody_)
      add("r", std::to_string(rank_));
    if (!planless) {
      add("p", std::to_string(globals_.empty() ? opts_.ranks : globals_[SlotP]));
      if (ir::hasRoot(m_.collective))
        add("root", std::to_string(opts_.root));
    }
    for (size_t i = 0; i < m_.params.size(); ++i) {
      const Param &prm = m_.params[i];
      if (prm.isAlgorithm) {
        if (i < algValues_.size())
          add(prm.name, formatParamValue(algValues_[i]));
      } else if (prm.slot < globals_.size()) {
        add(prm.name, std::to_string(globals_[prm.slot]));
      }
    }
  }
  for (const LoopVar &l : loops_)
    add(*l.name, std::to_string(globals_[l.slot]));
  return s;
}

std::string Machine::fullContext() const {
  std::string s = context(false);
  for (const Machine *c = child_; c; c = c->child_) {
    const std::string inner = c->context(false);
    s += (s.empty() ? "" : "; ") + c->m_.source.name + ":" + std::to_string(c->loc_.line) +
         (inner.empty() ? "" : ", " + inner);
  }
  return s;
}

void Machine::params() {
  globals_.assign(m_.globalSlots, 0);
  opsLeft_ = opts_.maxOps;
  const Loc at = m_.nameLoc;
  if (opts_.ranks < 1 || opts_.ranks > ir::maxRanks)
    fail(at, llvm::formatv("p = {0} is out of range (1..{1})", opts_.ranks, ir::maxRanks));
  globals_[SlotP] = opts_.ranks;
  if (ir::hasRoot(m_.collective) ? opts_.root >= opts_.ranks : opts_.root != 0)
    fail(at, ir::hasRoot(m_.collective)
                 ? llvm::formatv("root {0} is out of range (p = {1})", opts_.root, opts_.ranks)
                       .str()
                 : llvm::formatv("{0} has no root", ir::name(m_.collective)).str());
  globals_[SlotRoot] = opts_.root;
  if (const Layout *l = opts_.layout.get()) {
    if (l->ranks != opts_.ranks)
      fail(at, llvm::formatv("the layout places {0} ranks, not p = {1}", l->ranks, opts_.ranks));
    globals_[SlotNnodes] = l->nnodes;
    globals_[SlotPpn] = l->ppn;
    globals_[SlotNlevels] = int64_t(l->sizes.size());
  } else {
    globals_[SlotNnodes] = 1;
    globals_[SlotPpn] = opts_.ranks;
    globals_[SlotNlevels] = 1;
  }
  algValues_.assign(m_.params.size(), ParamValue(0));
  for (size_t i = 0; i < m_.params.size(); ++i) {
    const Param &prm = m_.params[i];
    if (prm.isAlgorithm)
      algValues_[i] = ParamValue(qualify(prm.defaultAlgorithm));
    else
      globals_[prm.slot] = prm.defaultValue;
  }
  for (const auto &[name, value] : opts_.params) {
    const Param *found = nullptr;
    for (const Param &prm : m_.params)
      if (prm.name == name)
        found = &prm;
    if (!found) {
      std::string known;
      for (const Param &prm : m_.params)
        known += (known.empty() ? "" : ", ") + prm.name;
      fail(at, llvm::formatv("'{0}' has no parameter '{1}' ({2})", m_.name, name,
                             known.empty() ? "it has none" : "parameters: " + known));
    }
    if (found->isAlgorithm != value.isAlgorithm())
      fail(at, found->isAlgorithm
                   ? llvm::formatv("'{0}' is an algorithm parameter: its value names an "
                                   "algorithm, not the number {1}",
                                   name, value.number)
                         .str()
                   : llvm::formatv("'{0}' is an integer parameter, not an algorithm ('{1}')",
                                   name, formatParamValue(value))
                         .str());
    if (found->isAlgorithm)
      algValues_[size_t(found - m_.params.data())] = value;
    else
      globals_[found->slot] = value.number;
  }
}

bool Machine::header() {
  params();
  for (const Stmt &s : m_.prelude) {
    if (s.kind == StmtKind::Let) {
      globals_[s.slot] = eval(*s.value);
    } else if (!eval(*s.cond)) {
      failed = &s;
      return false;
    }
  }
  return true;
}

void Machine::shape() {
  sh.collective = m_.collective;
  sh.ranks = opts_.ranks;
  sh.root = opts_.root;
  sh.commutative = composedCommutative();
  sh.inPlace = m_.inPlace;
  const int64_t chunks = eval(*m_.chunks);
  if (chunks < 1 || chunks > int64_t(ir::maxChunks))
    fail(m_.chunks->start, llvm::formatv("chunks = {0} is out of range (1..{1})", chunks,
                                       ir::maxChunks));
  sh.chunks = uint32_t(chunks);
  const int64_t scratch = m_.scratch ? eval(*m_.scratch) : 0;
  if (scratch < 0 || scratch > int64_t(ir::maxScratch))
    fail(m_.scratch->start, llvm::formatv("scratch = {0} is out of range (0..{1})", scratch,
                                        ir::maxScratch));
  sh.scratch = uint32_t(scratch);
  if (std::optional<ir::ShapeError> e = ir::checkShape(sh))
    fail(m_.chunks->start, e->message);
}

void Machine::run(uint32_t rank, ir::Program *prog) {
  inBody_ = true;
  rank_ = rank;
  prog_ = prog;
  scratchTop_ = 0;
  emitted_ = 0;
  if (!parent_ && runs_->track) {
    runs_->seen.clear();
    runs_->current = 0;
    if (runs_->ctx.size() <= rank)
      runs_->ctx.resize(rank + 1);
    runs_->ctx[rank].clear();
  }
  for (ir::Buffer b : {ir::Buffer::In, ir::Buffer::Out, ir::Buffer::Tmp})
    slotsOf_[size_t(b)] = ir::bufferSlots(sh, rank, b);
  step_ = 0;
  lastStep_.reset();
  if (!parent_) // each rank's run has a budget of its own; a run's shares its caller's
    runs_->fuel = runs_->granted = baseBudget(opts_);
  exec(m_.body);
  inBody_ = false;
}

} // namespace detail

llvm::Expected<std::shared_ptr<const Layout>>
makeLayout(std::vector<uint32_t> sizes, std::vector<uint32_t> coords, uint32_t ranks) {
  auto error = [](const llvm::Twine &m) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), m.str());
  };
  const size_t levels = sizes.size();
  if (levels == 0 || coords.size() != size_t(ranks) * levels)
    return error("layout: one coordinate per level and rank expected");
  auto l = std::make_shared<Layout>();
  l->ranks = ranks;
  std::vector<std::pair<uint64_t, uint32_t>> slots; // (slot, rank)
  for (uint32_t r = 0; r < ranks; ++r) {
    uint64_t slot = 0, scale = 1;
    for (size_t j = 0; j < levels; ++j) {
      const uint32_t c = coords[size_t(r) * levels + j];
      if (c >= sizes[j])
        return error(llvm::formatv("layout: rank {0}'s coordinate {1} at level {2} is out of "
                                   "range 0..{3}",
                                   r, c, j, sizes[j] - 1));
      slot += c * scale;
      scale *= sizes[j];
    }
    slots.emplace_back(slot, r);
  }
  std::sort(slots.begin(), slots.end());
  l->node.assign(ranks, 0);
  l->local.assign(ranks, 0);
  uint32_t nodes = 0, onNode = 0, ppn = 0;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (i > 0 && slots[i].first == slots[i - 1].first)
      return error(llvm::formatv("layout: ranks {0} and {1} share a slot", slots[i - 1].second,
                                 slots[i].second));
    const bool newNode = i == 0 || slots[i].first / sizes[0] != slots[i - 1].first / sizes[0];
    if (newNode) {
      nodes += i > 0;
      onNode = 0;
    }
    l->node[slots[i].second] = nodes;
    l->local[slots[i].second] = onNode++;
    ppn = std::max(ppn, onNode);
  }
  l->nnodes = ranks == 0 ? 1 : nodes + 1;
  l->ppn = std::max(ppn, 1u);
  l->rankAt.assign(size_t(l->nnodes) * l->ppn, -1);
  for (uint32_t r = 0; r < ranks; ++r)
    l->rankAt[size_t(l->node[r]) * l->ppn + l->local[r]] = r;
  // Lines: per level j, the ranks sorted by (their slot without coordinate
  // j, coordinate j); a line is a run of equal keys.
  l->lines.assign(levels, {});
  l->lineStart.assign(levels * ranks, 0);
  l->lineIndex.assign(levels * ranks, 0);
  l->lineCount.assign(levels * ranks, 0);
  std::vector<uint64_t> slotOf(ranks);
  for (const auto &[slot, r] : slots)
    slotOf[r] = slot;
  uint64_t scale = 1;
  for (size_t j = 0; j < levels; ++j) {
    std::vector<std::tuple<uint64_t, uint32_t, uint32_t>> keyed; // (key, coord, rank)
    keyed.reserve(ranks);
    for (uint32_t r = 0; r < ranks; ++r) {
      const uint32_t c = coords[size_t(r) * levels + j];
      keyed.emplace_back(slotOf[r] - c * scale, c, r);
    }
    std::sort(keyed.begin(), keyed.end());
    std::vector<uint32_t> &line = l->lines[j];
    for (size_t i = 0; i < keyed.size();) {
      size_t e = i;
      while (e < keyed.size() && std::get<0>(keyed[e]) == std::get<0>(keyed[i]))
        ++e;
      for (size_t q = i; q < e; ++q) {
        const uint32_t r = std::get<2>(keyed[q]);
        line.push_back(r);
        l->lineStart[j * ranks + r] = uint32_t(i);
        l->lineIndex[j * ranks + r] = uint32_t(q - i);
        l->lineCount[j * ranks + r] = uint32_t(e - i);
      }
      i = e;
    }
    scale *= sizes[j];
  }
  l->sizes = std::move(sizes);
  l->coords = std::move(coords);
  return std::shared_ptr<const Layout>(std::move(l));
}

using detail::EvalFailure;
using detail::Found;
using detail::Machine;

namespace {

/// Runs the header or fails with the refusal of a `require`.
void requireAccepted(Machine &mc) {
  if (!mc.header()) {
    const Stmt &req = *mc.failed;
    throw EvalFailure{req.loc, llvm::formatv("require {0} does not hold ({1})", req.var,
                                             mc.context(true))
                                   .str()};
  }
  mc.shape();
}

} // namespace

llvm::Expected<OpEstimate> estimateOps(const Module &m, const InstantiateOptions &opts) {
  Machine mc(m, opts);
  try {
    requireAccepted(mc);
    return mc.estimate();
  } catch (const EvalFailure &f) {
    return mc.error(f);
  }
}

llvm::Expected<bool> needsCommutative(const Module &m, const InstantiateOptions &opts) {
  Machine mc(m, opts);
  mc.planless = true;
  try {
    mc.params();
    return mc.composedCommutative();
  } catch (const EvalFailure &f) {
    return mc.error(f);
  }
}

llvm::Expected<const Module *> resolveAlgorithm(const Module &m, const AlgRef &ref,
                                                const InstantiateOptions &opts) {
  Machine mc(m, opts);
  mc.planless = true;
  try {
    mc.params();
    return &mc.resolve(ref);
  } catch (const EvalFailure &f) {
    return mc.error(f);
  }
}

llvm::Expected<bool> accepts(const Module &m, const InstantiateOptions &opts) {
  Machine mc(m, opts);
  try {
    return mc.header();
  } catch (const EvalFailure &f) {
    return mc.error(f);
  }
}

llvm::Expected<ir::Plan> instantiate(const Module &m, const InstantiateOptions &opts) {
  Machine mc(m, opts);
  try {
    requireAccepted(mc);
    // Above 64 ranks a plan may not fit: its size is estimated from a few
    // ranks' programs (a small fraction of the whole) and refused early.
    if (mc.sh.ranks > 64)
      mc.refuseWhatCannotFit();
    ir::Plan plan;
    plan.shape = mc.sh;
    plan.algorithm = m.name;
    plan.source = m.source.name;
    plan.programs.resize(mc.sh.ranks);
    mc.runs().track = !m.runs.empty();
    uint32_t scratchTop = 0;
    for (uint32_t r = 0; r < mc.sh.ranks; ++r) {
      // Ranks of an SPMD program mostly emit alike: the previous rank's op
      // count saves most of the regrowing.
      if (r > 0)
        plan.programs[r].ops.reserve(plan.programs[r - 1].ops.size());
      mc.runs().planRank = r;
      mc.run(r, &plan.programs[r]);
      scratchTop = std::max(scratchTop, mc.scratchTop());
    }
    // The runs' tmp regions lie above the declared slots.
    plan.shape.scratch += scratchTop;
    if (mc.runs().track) {
      mc.checkRunMessages(plan);
      mc.checkRunMembers();
    }
    return plan;
  } catch (const EvalFailure &f) {
    return mc.error(f);
  }
}

llvm::Expected<ir::Program> instantiateRank(const Module &m, const InstantiateOptions &opts,
                                            uint32_t rank) {
  Machine mc(m, opts);
  try {
    requireAccepted(mc);
    if (rank >= mc.sh.ranks)
      throw EvalFailure{m.nameLoc, llvm::formatv("rank {0} is out of range (p = {1})", rank,
                                                 mc.sh.ranks)
                                       .str()};
    ir::Program prog;
    mc.run(rank, &prog);
    return prog;
  } catch (const EvalFailure &f) {
    return mc.error(f);
  }
}

llvm::Expected<ir::Plan> instantiateRanks(const Module &m, const InstantiateOptions &opts,
                                          llvm::ArrayRef<uint32_t> ranks) {
  Machine mc(m, opts);
  try {
    requireAccepted(mc);
    ir::Plan plan;
    plan.shape = mc.sh;
    plan.algorithm = m.name;
    plan.source = m.source.name;
    plan.programs.resize(mc.sh.ranks);
    uint32_t scratchTop = 0;
    for (uint32_t rank : ranks) {
      if (rank >= mc.sh.ranks)
        throw EvalFailure{m.nameLoc, llvm::formatv("rank {0} is out of range (p = {1})", rank,
                                                   mc.sh.ranks)
                                         .str()};
      plan.programs[rank] = ir::Program();
      mc.run(rank, &plan.programs[rank]);
      scratchTop = std::max(scratchTop, mc.scratchTop());
    }
    // As in instantiate, for these ranks' runs: the whole plan's scratch
    // may be larger (other ranks' runs), never smaller.
    plan.shape.scratch += scratchTop;
    return plan;
  } catch (const EvalFailure &f) {
    return mc.error(f);
  }
}

std::optional<std::string> explain(const Module &m, const InstantiateOptions &opts,
                                   uint32_t rank, uint32_t op) {
  Machine mc(m, opts);
  mc.stopAt = op;
  try {
    requireAccepted(mc);
    if (rank >= mc.sh.ranks)
      return std::nullopt;
    ir::Program prog;
    mc.run(rank, &prog);
  } catch (const Found &) {
    return mc.stopContext;
  } catch (const EvalFailure &) {
  }
  return std::nullopt;
}

} // namespace collc::lang
