// compiler/lang/Instantiator.cpp: a tree-walking evaluator of the resolved AST.
#include "compiler/lang/Instantiator.h"

#include "ir/Wording.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <map>
#include <numeric>
#include <tuple>

namespace collc::lang {

char OpLimitError::ID = 0;

Resolver::~Resolver() = default;

namespace {

/// Thrown to unwind to the API boundary with a positioned refusal.
struct EvalFailure {
  EvalFailure(Loc at, std::string text, bool limit = false, uint64_t est = 0, uint64_t mem = 0)
      : loc(at), message(std::move(text)), opLimit(limit), estimate(est), memoryLimit(mem) {}
  Loc loc;
  std::string message;
  bool opLimit = false; ///< the run emitted more than maxOps ops
  uint64_t estimate = 0, memoryLimit = 0; ///< refused before instantiating (OpLimitError)
  /// The file `loc` is in: null for the instantiated module's own; a run's
  /// algorithm's when the failure is inside that run.
  const Source *source = nullptr;
  /// Formatted notes printed after the error (each starting with '\n'):
  /// where the runs around the failure are.
  std::string notes;
};

/// Slots as the language writes them: "out[2]", "out[0..2]" (half-open).
std::string written(const ir::Slots &s) {
  const std::string b = ir::name(s.buf).str();
  if (s.count == 1)
    return b + "[" + std::to_string(s.chunk) + "]";
  return b + "[" + std::to_string(s.chunk) + ".." + std::to_string(s.end()) + "]";
}

/// Thrown when `explain` has seen the op it asked about.
struct Found {};

constexpr unsigned maxCallDepth = 256;

class Machine;

/// How the ops of a run's algorithm land in its caller's program
/// (docs/language.md, "Composition"): peers through the group, in and out
/// slots by vector chunk into the caller's `from` / `to` buffers (each of
/// the algorithm's chunks is `k` of the caller's, from chunk `first` on),
/// tmp slots into a region of the caller's tmp of its own, steps renumbered
/// densely from the caller's current step.
struct RunMap {
  const Stmt *stmt = nullptr; ///< the `run`
  std::vector<uint32_t> group;
  uint32_t subRank = 0;
  ir::Shape subShape;
  uint32_t first = 0, k = 1;
  ir::Buffer from = ir::Buffer::In, to = ir::Buffer::Out;
  uint32_t tmpBase = 0;
  uint32_t s0 = 0;
  bool any = false; ///< an op landed: lastSubStep and mappedStep are set
  uint32_t lastSubStep = 0, mappedStep = 0;
};

/// What the runs of a whole instantiation share: resolved algorithms and,
/// when the module has runs, which run instance every op came from (for the
/// message-matching check).
struct RunState {
  std::map<std::pair<int, std::string>, const Module *> resolved;
  bool track = false;
  std::map<std::vector<int64_t>, uint32_t> ids; ///< run instance key -> id (0: none)
  struct Instance {
    const Source *source;
    Loc loc;
    std::string text; ///< "allreduce ring on [0, 4] chunks 0..2"
  };
  std::vector<Instance> instances{Instance{nullptr, {}, ""}};
  std::map<std::vector<int64_t>, uint32_t> seen; ///< this rank's occurrences of each key
  uint32_t current = 0;                          ///< the innermost run instance
  std::vector<std::vector<uint32_t>> ctx;        ///< per rank, per op: its instance
  /// The evaluation budget of the header or of the rank's run in progress,
  /// shared by every machine of the instantiation (InstantiateOptions::fuel):
  /// the steps left, and those granted (for the message).
  uint64_t fuel = 0;
  uint64_t granted = 0;
};

uint64_t saturatingAdd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

/// The steps the header or one rank's run may take before any op:
/// fuel + fuelPerRank * p.
uint64_t baseBudget(const InstantiateOptions &o) {
  const uint64_t perRanks =
      o.fuelPerRank > UINT64_MAX / std::max<uint64_t>(o.ranks, 1) ? UINT64_MAX
                                                                   : o.fuelPerRank * o.ranks;
  return saturatingAdd(o.fuel, perRanks);
}

/// Evaluation state of one instantiation: the header's values, then one run
/// of the body per rank.
class Machine {
public:
  Machine(const Module &m, const InstantiateOptions &o)
      : m_(m), opts_(o), resolver_(o.resolver ? o.resolver : m.resolver) {
    chain_.push_back(&m);
    fuel_ = &runs_->fuel;
    runs_->fuel = runs_->granted = baseBudget(o);
  }

  /// Sets p, root, the topology names and the parameters.
  void params();
  /// params(), then `const` and `require` lines; false when one fails
  /// (with `failed` pointing at it).
  bool header();
  /// Evaluates chunks and scratch into the shape. Precondition: header().
  void shape();
  /// Runs the body for `rank`, appending to `prog` (null: a run's machine,
  /// whose ops go to its caller).
  void run(uint32_t rank, ir::Program *prog);
  /// Whether the file or an algorithm its runs name needs commutativity.
  bool composedCommutative();
  /// The module `ref` names, resolved; fails at the name when there is none.
  const Module &resolve(const AlgRef &ref);
  /// Tmp slots the runs of the last run() took above the declared scratch.
  uint32_t scratchTop() const { return scratchTop_; }
  /// After instantiating every rank: refuses runs whose messages would be
  /// confused (Instantiator.h).
  void checkRunMessages(const ir::Plan &plan);
  RunState &runs() { return *runs_; }
  /// estimateOps on this machine; leaves the op budget full. Precondition: shape().
  OpEstimate estimate();
  /// Refuses (throws) a plan whose estimate does not fit maxOps or memory.
  void refuseWhatCannotFit();

  [[noreturn, gnu::cold, gnu::noinline]] void fail(Loc at, const llvm::Twine &message) const;
  llvm::Error error(const EvalFailure &f) const {
    const Source &src = f.source ? *f.source : m_.source;
    std::string text = src.format(f.loc, f.message) + f.notes;
    if (f.opLimit)
      return llvm::make_error<OpLimitError>(opts_.maxOps, std::move(text), f.estimate,
                                            f.memoryLimit);
    return llvm::createStringError(llvm::inconvertibleErrorCode(), text);
  }
  /// "r = 3, p = 8, root = 0, k = 2, s = 1" (without r in the header; only
  /// the loop variables with `withShape` false).
  std::string context(bool withShape) const;
  /// context(false) and, for an op of a run, "; ring.calgo:31, s = 0" for
  /// each run it is inside.
  std::string fullContext() const;

  uint32_t p() const { return opts_.ranks; }

  const Stmt *failed = nullptr; ///< the `require` that refused
  /// Evaluating parameters only, for no shape: errors name no p or root.
  bool planless = false;
  ir::Shape sh;
  std::optional<uint32_t> stopAt; ///< explain(): the op index to stop at
  std::string stopContext;

private:
  /// The hot kinds (literals, variables, arithmetic that cannot fail) are
  /// evaluated here; the rest, and every error, out of line, so this
  /// function's frame stays small.
  int64_t eval(const Expr &e);
  [[gnu::noinline]] int64_t evalOther(const Expr &e);
  [[gnu::noinline]] int64_t evalBinary(const Expr &e, int64_t a, int64_t b);
  int64_t evalBuiltin(const Expr &e);
  void exec(const Block &b);
  void exec(const Stmt &s);
  void execFor(const Stmt &s);
  struct LoopVar {
    const std::string *name;
    uint32_t slot;
  };
  template <typename Body>
  void eachInRange(const Expr &from, const Expr &to, const Expr *stride, bool geometric,
                   bool reverse, const LoopVar &var, Body body);
  void emit(const Stmt &s);
  /// Appends an op to the rank's program (the root machine) or hands it to
  /// the caller (a run's machine).
  void deliver(ir::Op op);
  /// An op of the run `child` is doing: maps, checks and delivers it.
  void acceptRunOp(ir::Op op, const Machine &child);
  void execRun(const Stmt &s);
  std::vector<uint32_t> evalGroup(const GroupExpr &g);
  ir::Buffer evalBuffer(const BufferExpr &b);
  /// The run's parameters for `sub`: its arguments evaluated, choices qualified.
  ParamValues evalArgs(const AlgRef &ref, const Module &sub);
  /// chunks_of / accepts.
  int64_t evalQuery(const Expr &e);
  /// A name as `ref` or a choice gives it: a file relative to this file.
  std::string qualify(const AlgName &n) const;
  std::string describe(const AlgRef &ref) const;
  /// The machine of `sub` for a run or a query, sharing this one's budget.
  void adopt(Machine &child, const Module &sub);
  /// True when `sub` (or what it runs) needs commutativity.
  bool needsCommutativeFrom(const AlgRef &ref, const Module &sub, std::vector<const Module *> &chain);
  uint64_t nops() const { return prog_ ? prog_->ops.size() : emitted_; }
  ir::Slots slots(const SlotsExpr &s, llvm::StringRef role);
  uint32_t toU32(int64_t v, Loc at, llvm::StringRef what) {
    if (v < 0 || v > int64_t(UINT32_MAX))
      fail(at, llvm::formatv("{0} {1} is out of range", what, v));
    return uint32_t(v);
  }
  void burn(Loc at) {
    if ((*fuel_)-- == 0)
      outOfFuel(at);
  }
  [[noreturn, gnu::cold, gnu::noinline]] void outOfFuel(Loc at) {
    *fuel_ = 0;
    fail(at, llvm::formatv("evaluation budget of {0} steps used up (an endless loop?)",
                           runs_->granted));
  }

  const Module &m_;
  const InstantiateOptions &opts_;
  uint64_t *fuel_; ///< runs_->fuel: a run's or a query's machine shares its caller's
  uint64_t opsLeft_ = 0;
  std::vector<int64_t> globals_;
  std::vector<int64_t> locals_;
  size_t frame_ = 0;  ///< base of the current function's arguments in locals_
  unsigned calls_ = 0;
  std::vector<LoopVar> loops_;
  bool inBody_ = false;
  uint32_t rank_ = 0;
  ir::Program *prog_ = nullptr;
  std::optional<uint32_t> slotsOf_[3]; ///< rank_'s buffer sizes (ir::bufferSlots)
  int64_t step_ = 0;
  std::optional<uint32_t> lastStep_;
  // Composition.
  const Resolver *resolver_;
  std::vector<std::string> algNames_; ///< per Module::params entry: an algorithm's choice
  std::vector<const Module *> chain_; ///< the modules running, outermost first (this last)
  Machine *parent_ = nullptr;         ///< the caller, for a run's machine
  RunMap *map_ = nullptr;             ///< how this machine's ops land in the caller's
  Machine *child_ = nullptr;          ///< the run in progress
  Loc loc_;                           ///< the op or run being executed
  uint64_t emitted_ = 0;              ///< ops of a run's machine (its nops)
  uint32_t scratchTop_ = 0;           ///< tmp slots of runs, above sh.scratch
  std::shared_ptr<RunState> runs_ = std::make_shared<RunState>();
};

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
        if (i < algNames_.size())
          add(prm.name, algNames_[i]);
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
  algNames_.assign(m_.params.size(), "");
  for (size_t i = 0; i < m_.params.size(); ++i) {
    const Param &prm = m_.params[i];
    if (prm.isAlgorithm)
      algNames_[i] = qualify(prm.defaultAlgorithm);
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
                                   name, value.algorithm)
                         .str());
    if (found->isAlgorithm)
      algNames_[size_t(found - m_.params.data())] = value.algorithm;
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

namespace {
/// The k-th rank of the estimate's sample: 0, p-1, then p/2, p/4, 3p/4, p/8,
/// ... (bit-reversed counters scaled to p, so any prefix is spread evenly).
uint32_t sampleRank(uint32_t k, uint32_t p) {
  if (k == 0)
    return 0;
  if (k == 1)
    return p - 1;
  uint32_t j = k - 1, rev = 0;
  for (int b = 0; b < 32; ++b, j >>= 1)
    rev = (rev << 1) | (j & 1);
  return uint32_t((uint64_t(rev) * p) >> 32);
}

/// "4.00e+10" for a count too long to read at a glance, else the number.
std::string approx(uint64_t n) {
  if (n < 100000000)
    return std::to_string(n);
  return llvm::formatv("{0}", llvm::format("%.2e", double(n))).str();
}

std::string gigabytes(uint64_t bytes) {
  return llvm::formatv("{0} GB", llvm::format("%.1f", double(bytes) / 1e9)).str();
}
} // namespace

OpEstimate Machine::estimate() {
  constexpr uint32_t maxSamples = 16;
  constexpr uint64_t sampleBudget = uint64_t(4) << 20;
  const uint32_t p = sh.ranks;
  const uint32_t samples = std::min(p, maxSamples);
  ir::Program prog;
  uint64_t sum = 0;
  uint32_t k = 0;
  while (k < samples) {
    prog.ops.clear();
    opsLeft_ = opts_.maxOps;
    run(sampleRank(k++, p), &prog);
    sum += prog.ops.size();
    if (k >= 2 && sum >= sampleBudget)
      break;
  }
  opsLeft_ = opts_.maxOps;
  const double total = double(sum) / k * p;
  return {total >= 1.8e19 ? UINT64_MAX : uint64_t(total), k};
}

void Machine::refuseWhatCannotFit() {
  const OpEstimate e = estimate();
  const uint64_t bytes = e.ops > UINT64_MAX / planBytesPerOp ? UINT64_MAX : e.ops * planBytesPerOp;
  const std::string about =
      llvm::formatv("about {0} ops (estimated from {1} ranks' programs; {2} in memory)",
                    approx(e.ops), e.sampledRanks, gigabytes(bytes))
          .str();
  EvalFailure f{m_.nameLoc, "", /*opLimit=*/true, e.ops, 0};
  // Twice the limit: a sample's mean may overshoot (a root emitting more
  // than its peers), and a plan near the limit is counted exactly instead.
  if (e.ops / 2 > opts_.maxOps) {
    f.message = llvm::formatv("the plan for p = {0} would have {1}, more than the limit of {2} "
                              "ops; refused before instantiating",
                              p(), about, opts_.maxOps)
                    .str();
    throw f;
  }
  const uint64_t avail = availableMemory();
  if (bytes / 2 > avail) {
    f.memoryLimit = avail;
    f.message = llvm::formatv("the plan for p = {0} would have {1}, more than the {2} this "
                              "process may use; refused before instantiating",
                              p(), about, gigabytes(avail))
                    .str();
    throw f;
  }
}

// --- statements -------------------------------------------------------------------

void Machine::exec(const Block &b) {
  for (const Stmt &s : b)
    exec(s);
}

void Machine::exec(const Stmt &s) {
  burn(s.loc);
  switch (s.kind) {
  case StmtKind::Let:
    globals_[s.slot] = eval(*s.value);
    return;
  case StmtKind::Require: // only in the prelude
    return;
  case StmtKind::For:
    execFor(s);
    return;
  case StmtKind::While:
    while (eval(*s.cond)) {
      burn(s.loc);
      exec(s.body);
    }
    return;
  case StmtKind::If:
    exec(eval(*s.cond) ? s.body : s.orElse);
    return;
  case StmtKind::Step: {
    const int64_t v = s.value ? eval(*s.value) : step_ + 1;
    if (v < 0 || v > int64_t(UINT32_MAX))
      fail(s.loc, llvm::formatv("step {0} is out of range (0..{1})", v, UINT32_MAX));
    step_ = v;
    return;
  }
  case StmtKind::Op:
    emit(s);
    return;
  case StmtKind::Run:
    execRun(s);
    return;
  }
}

template <typename Body>
void Machine::eachInRange(const Expr &fromE, const Expr &toE, const Expr *strideE,
                          bool geometric, bool reverse, const LoopVar &var, Body body) {
  const int64_t from = eval(fromE), to = eval(toE);
  const int64_t stride = strideE ? eval(*strideE) : 1;
  if (geometric ? stride < 2 : stride < 1)
    fail(strideE->start, llvm::formatv("a range's stride must be {0}, not {1}",
                                       geometric ? "*2 or more" : "1 or more", stride));
  if (geometric && from < 1)
    fail(fromE.start,
         llvm::formatv("a range with a stride '*{0}' must start at 1 or more, not {1}", stride,
                       from));
  if (from >= to)
    return;
  // The variable is named in errors from the first iteration on.
  loops_.push_back(var);
  if (geometric) {
    // from, from*k, ... below `to`; reversed, from the largest down (each
    // value is the next one times k, so dividing walks back exactly).
    int64_t last = from;
    while (last <= (to - 1) / stride)
      last *= stride;
    if (!reverse) {
      for (int64_t v = from;; v *= stride) {
        body(v);
        if (v == last)
          break;
      }
    } else {
      for (int64_t v = last;; v /= stride) {
        body(v);
        if (v == from)
          break;
      }
    }
  } else if (!reverse) {
    for (int64_t v = from; v < to; v = v > to - stride ? to : v + stride)
      body(v);
  } else {
    for (int64_t v = from + (to - 1 - from) / stride * stride;; v -= stride) {
      body(v);
      if (v - from < stride)
        break;
    }
  }
  loops_.pop_back();
}

void Machine::execFor(const Stmt &s) {
  eachInRange(*s.from, *s.to, s.stride.get(), s.geometric, s.reverse, {&s.var, s.slot},
              [&](int64_t v) {
                globals_[s.slot] = v; // an error names the iteration it stops
                burn(s.loc);
                exec(s.body);
              });
}

ir::Slots Machine::slots(const SlotsExpr &s, llvm::StringRef role) {
  ir::Buffer buffer = s.buf;
  if (s.bufValue) {
    const int64_t v = eval(*s.bufValue);
    if (v < 0 || v > int64_t(ir::Buffer::Tmp))
      fail(s.loc, llvm::formatv("{0}: {1} is not a buffer (in, out or tmp)", role, v));
    buffer = ir::Buffer(v);
  }
  const int64_t first = eval(*s.first);
  const int64_t end = s.end ? eval(*s.end) : first + 1;
  if (first >= 0 && end > first && end <= int64_t(UINT32_MAX))
    return ir::Slots{buffer, uint32_t(first), uint32_t(end - first)};
  const char *b = ir::name(buffer).data();
  if (first < 0)
    fail(s.loc, llvm::formatv("{0}: slot {1}[{2}] is negative", role, b, first));
  if (end <= first)
    fail(s.loc, llvm::formatv("{0}: slot range {1}[{2}..{3}] is empty", role, b, first, end));
  if (end > int64_t(UINT32_MAX))
    fail(s.loc, llvm::formatv("{0}: slot range {1}[{2}..{3}] is out of range", role, b, first,
                              end));
  return ir::Slots{buffer, uint32_t(first), uint32_t(end - first)};
}

void Machine::emit(const Stmt &s) {
  const llvm::StringRef kind = ir::name(s.op);
  ir::Op op;
  op.kind = s.op;
  op.loc.line = s.loc.line;
  const ir::Slots buf = slots(*s.slots, kind);
  op.buf = buf.buf;
  op.chunk = buf.chunk;
  op.count = buf.count;
  if (s.peer) {
    const int64_t peer = eval(*s.peer);
    if (peer < 0 || peer >= int64_t(sh.ranks))
      fail(s.peer->start, llvm::formatv("{0}: peer {1} is out of range 0..{2}", kind, peer,
                                      sh.ranks - 1));
    if (peer == rank_)
      fail(s.peer->start, llvm::formatv("{0}: peer {1} is the rank itself", kind, peer));
    op.peer = uint32_t(peer);
  }
  auto sameSize = [&](const SlotsExpr &e, const ir::Slots &x, llvm::StringRef what) {
    if (x.count != buf.count)
      fail(e.loc, llvm::formatv("{0}: {1} {2} has {3} slot{4}, {5} has {6}", kind, what,
                                written(x), x.count, x.count == 1 ? "" : "s", written(buf),
                                buf.count));
  };
  if (s.src) {
    const ir::Slots src = slots(*s.src, kind);
    sameSize(*s.src, src, "source");
    op.src = src.buf;
    op.srcChunk = src.chunk;
  }
  if (s.dst) {
    const ir::Slots dst = slots(*s.dst, kind);
    sameSize(*s.dst, dst, "destination");
    op.hasDst = true;
    op.dst = dst.buf;
    op.dstChunk = dst.chunk;
  }
  if (s.order)
    op.order = !s.orderCond || eval(*s.orderCond)
                   ? *s.order
                   : (*s.order == ir::Order::BufFirst ? ir::Order::OtherFirst
                                                      : ir::Order::BufFirst);
  loc_ = s.loc;
  const uint32_t index = uint32_t(nops());
  if (s.hasAfter) {
    if (parent_)
      fail(s.loc, llvm::formatv("{0}: 'after' in an algorithm that is run: a run places its "
                                "ops among the caller's by their steps (write it with steps)",
                                kind));
    op.deps = s.after.empty() ? ir::DepKind::None : ir::DepKind::After;
    for (const ExprPtr &a : s.after) {
      const int64_t i = eval(*a);
      if (i < 0 || i >= int64_t(index))
        fail(a->start, llvm::formatv("{0}: 'after' names op {1}, not one of this rank's {2} "
                                   "earlier ops",
                                   kind, i, index));
      op.after.push_back(uint32_t(i));
    }
  } else {
    if (lastStep_ && step_ < int64_t(*lastStep_))
      fail(s.loc, llvm::formatv("{0}: step {1} is lower than step {2} of this rank's "
                                "previous op (steps never go back)",
                                kind, step_, *lastStep_));
    op.deps = ir::DepKind::Step;
    op.step = uint32_t(step_);
    lastStep_ = op.step;
  }
  // The common op — in range, no dst, a step, a combining op only where the
  // collective reduces — is checked here; anything else by ir::checkOp,
  // which also words the refusal.
  auto fits = [&](const ir::Slots &x) {
    const std::optional<uint32_t> n = slotsOf_[size_t(x.buf)];
    return n && x.end() <= *n;
  };
  auto plain = [&](const ir::Op &o) {
    return !o.hasDst && o.deps == ir::DepKind::Step &&
           (!ir::hasOrder(o.kind) || ir::reduces(sh.collective)) && fits(o.slots()) &&
           (!ir::hasSrc(o.kind) || (fits(o.srcSlots()) && !o.srcSlots().overlaps(o.slots())));
  };
  if (parent_) {
    // An op of a run: it fits this algorithm's own shape, then the caller's.
    if (!plain(op))
      if (std::optional<std::string> e = ir::checkOp(sh, rank_, llvm::ArrayRef(&op, 1), 0))
        fail(s.loc, llvm::formatv("{0}: {1}", kind, *e));
    ++emitted_;
    parent_->acceptRunOp(std::move(op), *this);
    return;
  }
  deliver(std::move(op));
  const ir::Op &added = prog_->ops.back();
  if (!plain(added))
    if (std::optional<std::string> e = ir::checkOp(sh, rank_, prog_->ops, index))
      fail(s.loc, llvm::formatv("{0}: {1}", kind, *e));
}

void Machine::deliver(ir::Op op) {
  const uint32_t index = uint32_t(prog_->ops.size());
  if (opsLeft_-- == 0)
    throw EvalFailure{loc_,
                      llvm::formatv("more than {0} ops ({1})", opts_.maxOps, context(true)).str(),
                      /*opLimit=*/true};
  if (stopAt && index == *stopAt) {
    stopContext = fullContext();
    throw Found{};
  }
  prog_->ops.push_back(std::move(op));
  runs_->fuel = saturatingAdd(runs_->fuel, opts_.fuelPerOp);
  runs_->granted = saturatingAdd(runs_->granted, opts_.fuelPerOp);
  if (runs_->track)
    runs_->ctx[rank_].push_back(runs_->current);
}

// --- composition --------------------------------------------------------------------

namespace {
/// "[0, 4, 8]", the first eight ranks of a longer group then "... (N ranks)".
std::string groupText(llvm::ArrayRef<uint32_t> g) {
  std::string s = "[";
  for (size_t i = 0; i < g.size() && i < 8; ++i)
    s += (i ? ", " : "") + std::to_string(g[i]);
  if (g.size() > 8)
    s += ", ... (" + std::to_string(g.size()) + " ranks)";
  return s + "]";
}
} // namespace

void Machine::acceptRunOp(ir::Op op, const Machine &child) {
  RunMap &m = *child.map_;
  const Loc at = m.stmt->loc;
  const ir::Op inner = op;
  auto refuse = [&](const std::string &why) {
    EvalFailure f{at, llvm::formatv("run: {0} of {1} becomes {2}: {3} ({4})", ir::describe(inner),
                                    child.m_.name, ir::describe(op), why, context(true))
                          .str()};
    f.source = &m_.source;
    f.notes = "\n" + child.m_.source.format(child.loc_,
                                            "the op is here (" + child.context(true) + ")",
                                            "note");
    throw f;
  };
  // In and out slots hold vector chunks: each of the algorithm's chunks is
  // k of the caller's, from chunk `first`; tmp slots go to the run's region.
  auto place = [&](ir::Buffer b, uint32_t slot, ir::Buffer &outBuf, uint32_t &outSlot) {
    uint64_t pos = 0;
    ir::Buffer target = ir::Buffer::Tmp;
    if (b == ir::Buffer::Tmp) {
      pos = m.tmpBase + uint64_t(slot) * m.k;
    } else {
      const uint32_t chunk = b == ir::Buffer::In ? ir::inChunk(m.subShape, m.subRank, slot)
                                                 : ir::outChunk(m.subShape, m.subRank, slot);
      target = b == ir::Buffer::In ? m.from : m.to;
      pos = m.first + uint64_t(chunk) * m.k;
      // The caller's in (allgather) or out (reduce_scatter_block) may hold
      // only its own block: its slot 0 is that block's first chunk.
      const uint32_t base = target == ir::Buffer::In    ? ir::inChunk(sh, rank_, 0)
                            : target == ir::Buffer::Out ? ir::outChunk(sh, rank_, 0)
                                                        : 0;
      if (pos < base)
        refuse(llvm::formatv("chunk {0} is not in this rank's {1}", pos, ir::name(target)));
      pos -= base;
    }
    if (pos + uint64_t(op.count) * m.k > UINT32_MAX)
      refuse("its slots are out of range");
    outBuf = target;
    outSlot = uint32_t(pos);
  };
  place(inner.buf, inner.chunk, op.buf, op.chunk);
  if (ir::hasSrc(inner.kind))
    place(inner.src, inner.srcChunk, op.src, op.srcChunk);
  if (inner.hasDst)
    place(inner.dst, inner.dstChunk, op.dst, op.dstChunk);
  op.count = inner.count * m.k;
  if (ir::isMessage(inner.kind))
    op.peer = m.group[inner.peer];
  op.loc.line = at.line;
  // The algorithm's first copy `in -> out` is no op when the run maps both
  // to the same slots (from out to out); a three-address op into its own
  // slots is the two-address one.
  if (op.kind == ir::OpKind::Copy && op.srcSlots() == op.slots())
    return;
  if (op.hasDst && op.dstSlots() == op.slots()) {
    op.hasDst = false;
    op.dst = ir::Buffer::Out;
    op.dstChunk = 0;
  }
  // The caller's own tmp slots (from tmp / to tmp) are those it declared.
  auto declared = [&](ir::Buffer inBuf, ir::Buffer b, uint32_t slot) {
    if (inBuf != ir::Buffer::Tmp && b == ir::Buffer::Tmp && slot + op.count > sh.scratch)
      refuse(llvm::formatv("past the {0} tmp slots the caller declares", sh.scratch));
  };
  declared(inner.buf, op.buf, op.chunk);
  if (ir::hasSrc(inner.kind))
    declared(inner.src, op.src, op.srcChunk);
  if (inner.hasDst)
    declared(inner.dst, op.dst, op.dstChunk);
  // Steps, densely from the caller's current step.
  if (!m.any) {
    m.any = true;
    m.mappedStep = m.s0;
  } else if (inner.step != m.lastSubStep) {
    ++m.mappedStep;
  }
  m.lastSubStep = inner.step;
  op.step = m.mappedStep;
  if (lastStep_ && op.step < *lastStep_)
    refuse(llvm::formatv("its step {0} is lower than step {1} of this rank's previous op",
                         op.step, *lastStep_));
  lastStep_ = op.step;
  ir::Shape wide = sh; // the runs' tmp regions lie above the declared slots
  wide.scratch = ir::maxScratch;
  if (std::optional<std::string> e = ir::checkOp(wide, rank_, llvm::ArrayRef(&op, 1), 0))
    refuse(*e);
  if (parent_) {
    ++emitted_;
    parent_->acceptRunOp(std::move(op), *this);
    return;
  }
  deliver(std::move(op));
}

std::string Machine::qualify(const AlgName &n) const {
  if (n.param >= 0)
    return algNames_[size_t(n.param)];
  if (!llvm::StringRef(n.name).endswith(".calgo") || llvm::sys::path::is_absolute(n.name))
    return n.name;
  llvm::StringRef dir = llvm::sys::path::parent_path(m_.source.name);
  if (dir.empty())
    return n.name;
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, n.name);
  return path.str().str();
}

std::string Machine::describe(const AlgRef &ref) const {
  std::string s = ir::name(ref.collective).str() + " ";
  if (ref.alg.param >= 0)
    return s + m_.params[size_t(ref.alg.param)].name + " = " + algNames_[size_t(ref.alg.param)];
  return s + ref.alg.name;
}

const Module &Machine::resolve(const AlgRef &ref) {
  const std::string name = qualify(ref.alg);
  const Loc at = ref.alg.loc;
  const auto key = std::make_pair(int(ref.collective), name);
  const Module *sub = nullptr;
  if (auto it = runs_->resolved.find(key); it != runs_->resolved.end()) {
    sub = it->second;
  } else {
    if (!resolver_)
      fail(at, llvm::formatv("'{0}' needs an algorithm library to find it in, and this "
                             "instantiation has none",
                             describe(ref)));
    llvm::Expected<const Module *> found = resolver_->resolve(ref.collective, name, m_);
    if (!found)
      fail(at, llvm::toString(found.takeError()));
    sub = *found;
    runs_->resolved.emplace(key, sub);
  }
  if (sub->collective != ref.collective)
    fail(at, llvm::formatv("collective mismatch: '{0}' is {1} {2} algorithm, named as {3}", name,
                           ir::article(ir::name(sub->collective)), ir::name(sub->collective),
                           ir::name(ref.collective)));
  // The same file read twice (by a tool, then by a run) is one algorithm.
  auto same = [&](const Module *c) {
    return c == sub || (c->name == sub->name && c->source.text == sub->source.text);
  };
  if (std::any_of(chain_.begin(), chain_.end(), same)) {
    std::string path;
    for (const Module *c : chain_)
      path += "'" + c->name + "' runs ";
    fail(at, llvm::formatv("recursion: {0}'{1}' (an algorithm cannot run itself)", path,
                           sub->name));
  }
  return *sub;
}

ParamValues Machine::evalArgs(const AlgRef &ref, const Module &sub) {
  ParamValues out;
  for (const AlgRef::Arg &a : ref.args) {
    const Param *prm = nullptr;
    for (const Param &q : sub.params)
      if (q.name == a.name)
        prm = &q;
    if (!prm) {
      std::string known;
      for (const Param &q : sub.params)
        known += (known.empty() ? "" : ", ") + q.name;
      fail(a.loc, llvm::formatv("'{0}' has no parameter '{1}' ({2})", sub.name, a.name,
                                known.empty() ? "it has none" : "parameters: " + known));
    }
    if (prm->isAlgorithm != a.choice.has_value())
      fail(a.loc, prm->isAlgorithm
                      ? llvm::formatv("'{0}' of '{1}' is an algorithm parameter: give it an "
                                      "algorithm's name",
                                      a.name, sub.name)
                            .str()
                      : llvm::formatv("'{0}' of '{1}' is an integer parameter, not an algorithm",
                                      a.name, sub.name)
                            .str());
    if (a.choice)
      out.emplace_back(a.name, ParamValue(qualify(*a.choice)));
    else
      out.emplace_back(a.name, ParamValue(eval(*a.value)));
  }
  return out;
}

void Machine::adopt(Machine &child, const Module &sub) {
  child.runs_ = runs_;
  child.chain_ = chain_;
  child.chain_.push_back(&sub);
  child.fuel_ = fuel_;
}

std::vector<uint32_t> Machine::evalGroup(const GroupExpr &g) {
  std::vector<uint32_t> ranks;
  auto add = [&](int64_t v, Loc at) {
    if (v < 0 || v >= int64_t(p()))
      fail(at, llvm::formatv("run: rank {0} of the group is out of range 0..{1}", v, p() - 1));
    ranks.push_back(uint32_t(v));
  };
  if (!g.comprehension) {
    for (const ExprPtr &e : g.items)
      add(eval(*e), e->start);
  } else {
    eachInRange(*g.from, *g.to, g.stride.get(), g.geometric, g.reverse, {&g.var, g.slot},
                [&](int64_t v) {
                  burn(g.loc);
                  globals_[g.slot] = v;
                  if (!g.filter || eval(*g.filter))
                    add(eval(*g.item), g.item->start);
                });
  }
  if (ranks.empty())
    fail(g.loc, "run: the group is empty");
  std::vector<uint32_t> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i] == sorted[i - 1])
      fail(g.loc, llvm::formatv("run: rank {0} appears twice in the group {1}", sorted[i],
                                groupText(ranks)));
  return ranks;
}

ir::Buffer Machine::evalBuffer(const BufferExpr &b) {
  if (!b.value)
    return b.buf;
  const int64_t v = eval(*b.value);
  if (v < 0 || v > int64_t(ir::Buffer::Tmp))
    fail(b.loc, llvm::formatv("run: {0} is not a buffer (in, out or tmp)", v));
  return ir::Buffer(v);
}

void Machine::execRun(const Stmt &s) {
  const RunSpec &run = *s.run;
  loc_ = s.loc;
  const Module &sub = resolve(run.alg);
  const std::string what = describe(run.alg);
  if (ir::reduces(sub.collective) && !ir::reduces(m_.collective))
    fail(run.alg.loc, llvm::formatv("collective mismatch: {0} combines values, which {1} "
                                    "plans do not",
                                    what, ir::name(m_.collective)));
  RunMap map;
  map.stmt = &s;
  map.group = evalGroup(run.group);
  const auto me = std::find(map.group.begin(), map.group.end(), rank_);
  if (me == map.group.end())
    fail(run.group.loc, llvm::formatv("run: rank {0} is not in the group {1} (a rank runs "
                                      "only the runs it takes part in)",
                                      rank_, groupText(map.group)));
  map.subRank = uint32_t(me - map.group.begin());
  int64_t first = 0, end = sh.chunks;
  if (run.first) {
    first = eval(*run.first);
    end = run.end ? eval(*run.end) : first + 1;
    if (first < 0 || end > int64_t(sh.chunks) || first >= end)
      fail(run.chunksLoc, llvm::formatv("run: chunks {0}..{1} are {2} (the plan has chunks "
                                        "0..{3})",
                                        first, end, first >= end ? "empty" : "out of range",
                                        sh.chunks));
  }
  uint32_t subRoot = 0;
  if (ir::hasRoot(sub.collective)) {
    if (!run.root)
      fail(s.loc, llvm::formatv("run: {0} has a root: say which rank with 'root R'", what));
    const int64_t root = eval(*run.root);
    const auto at = std::find(map.group.begin(), map.group.end(), root);
    if (at == map.group.end())
      fail(run.root->start, llvm::formatv("run: root {0} is not in the group {1}", root,
                                          groupText(map.group)));
    subRoot = uint32_t(at - map.group.begin());
  } else if (run.root) {
    fail(run.root->start, llvm::formatv("run: {0} has no root", what));
  }
  if (run.from && sub.collective == ir::Collective::Bcast)
    fail(run.from->loc, llvm::formatv("run: {0} reads no input buffer (its data starts in the "
                                      "root's 'to'): 'from' does not apply",
                                      what));
  map.from = run.from ? evalBuffer(*run.from) : ir::Buffer::In;
  map.to = run.to ? evalBuffer(*run.to) : ir::Buffer::Out;
  InstantiateOptions o;
  o.ranks = uint32_t(map.group.size());
  o.root = subRoot;
  o.params = evalArgs(run.alg, sub);
  o.resolver = resolver_;
  o.maxOps = UINT64_MAX; // counted where the ops land
  // The run's algorithm sees its group as a machine of its own, flat, as
  // chunks_of and accepts count it (o.layout stays null).
  Machine child(sub, o);
  adopt(child, sub);
  child.parent_ = this;
  child.map_ = &map;
  const uint32_t savedRun = runs_->current;
  try {
    if (!child.header()) {
      EvalFailure f{s.loc, llvm::formatv("run: {0} refuses its group: require {1} does not "
                                         "hold there ({2}) ({3})",
                                         what, child.failed->var, child.context(true),
                                         context(true))
                               .str()};
      f.source = &m_.source;
      f.notes = "\n" + sub.source.format(child.failed->loc, "the require is here", "note");
      throw f;
    }
    child.shape();
    const uint32_t subChunks = child.sh.chunks;
    if ((end - first) % subChunks != 0)
      fail(run.chunksLoc.line ? run.chunksLoc : s.loc,
           llvm::formatv("run: chunks {0}..{1} ({2}) are not a multiple of the {3} of {4} "
                         "for {5}",
                         first, end, ir::counted(uint64_t(end - first), "chunk"),
                         ir::counted(subChunks, "chunk"), what, ir::counted(o.ranks, "rank")));
    map.subShape = child.sh;
    map.first = uint32_t(first);
    map.k = uint32_t((end - first) / subChunks);
    map.tmpBase = sh.scratch + scratchTop_;
    map.s0 = uint32_t(step_);
    if (runs_->track) {
      // A run instance: the same key on every rank that takes part (the
      // buffers it maps are each rank's own business).
      std::vector<int64_t> key = {int64_t(runs_->current), int64_t(intptr_t(&s)),
                                  int64_t(intptr_t(&sub)), first, end, subRoot};
      key.insert(key.end(), map.group.begin(), map.group.end());
      for (const auto &[name, v] : o.params)
        key.push_back(v.isAlgorithm() ? int64_t(std::hash<std::string>()(v.algorithm))
                                      : v.number);
      key.push_back(runs_->seen[key]++);
      auto [it, fresh] = runs_->ids.try_emplace(std::move(key), runs_->instances.size());
      if (fresh)
        runs_->instances.push_back(
            {&m_.source, s.loc,
             llvm::formatv("run {0} on {1} chunks {2}..{3}", what, groupText(map.group), first,
                           end)
                 .str()});
      runs_->current = it->second;
    }
    child_ = &child;
    child.run(map.subRank, nullptr);
    child_ = nullptr;
  } catch (EvalFailure &f) {
    child_ = nullptr;
    if (f.source != &m_.source)
      f.notes += "\n" + m_.source.format(s.loc,
                                         "in this run of " + what + " (" + context(true) + ")",
                                         "note");
    throw;
  }
  runs_->current = savedRun;
  const uint64_t top =
      uint64_t(scratchTop_) + (uint64_t(child.sh.scratch) + child.scratchTop_) * map.k;
  if (top + sh.scratch > ir::maxScratch)
    fail(s.loc, llvm::formatv("run: the runs' tmp slots pass {0}", ir::maxScratch));
  scratchTop_ = uint32_t(top);
  step_ = map.any ? map.mappedStep : map.s0;
}

bool Machine::composedCommutative() {
  if (m_.commutative)
    return true;
  for (const RunSpec *run : m_.runs) {
    const Module &sub = resolve(run->alg);
    // Only the choices of algorithm parameters matter here, which are known
    // before the body runs.
    InstantiateOptions o;
    for (const AlgRef::Arg &a : run->alg.args)
      for (const Param &prm : sub.params)
        if (a.choice && prm.isAlgorithm && prm.name == a.name) // else the run refuses it
          o.params.emplace_back(a.name, ParamValue(qualify(*a.choice)));
    o.resolver = resolver_;
    Machine q(sub, o);
    adopt(q, sub);
    q.planless = true;
    try {
      q.params();
      if (q.composedCommutative())
        return true;
    } catch (EvalFailure &f) {
      if (f.source != &m_.source)
        f.notes += "\n" + m_.source.format(run->alg.loc, "in this run of " + describe(run->alg),
                                           "note");
      throw;
    }
  }
  return false;
}

int64_t Machine::evalQuery(const Expr &e) {
  const Module &sub = resolve(*e.alg);
  const bool chunksOf = e.kind == ExprKind::ChunksOf;
  const char *fn = chunksOf ? "chunks_of" : "accepts";
  const int64_t n = eval(*e.args[0]);
  if (n < 1 || n > int64_t(ir::maxRanks))
    fail(e.args[0]->start, llvm::formatv("{0}: {1} ranks are out of range (1..{2})", fn, n,
                                         ir::maxRanks));
  InstantiateOptions o;
  o.ranks = uint32_t(n);
  o.params = evalArgs(*e.alg, sub);
  o.resolver = resolver_;
  o.maxOps = UINT64_MAX;
  Machine q(sub, o);
  adopt(q, sub);
  try {
    const bool ok = q.header();
    if (ok && chunksOf)
      q.shape();
    if (!chunksOf)
      return ok;
    if (!ok) {
      EvalFailure f{e.loc, llvm::formatv("chunks_of: {0} refuses {1}: require {2} does "
                                         "not hold ({3})",
                                         describe(*e.alg), ir::counted(uint64_t(n), "rank"),
                                         q.failed->var, context(true))
                               .str()};
      f.source = &m_.source;
      f.notes = "\n" + sub.source.format(q.failed->loc, "the require is here", "note");
      throw f;
    }
    return q.sh.chunks;
  } catch (EvalFailure &f) {
    if (f.source != &m_.source)
      f.notes += "\n" + m_.source.format(e.loc, llvm::formatv("in this {0} of {1}", fn,
                                                              describe(*e.alg))
                                                    .str(),
                                         "note");
    throw;
  }
}

void Machine::checkRunMessages(const ir::Plan &plan) {
  const RunState &rs = *runs_;
  // Per channel a -> b: the run instance of each send, in a's order.
  llvm::DenseMap<uint64_t, std::vector<uint32_t>> sends;
  for (uint32_t a = 0; a < plan.programs.size(); ++a) {
    const auto &ops = plan.programs[a].ops;
    for (uint32_t i = 0; i < ops.size(); ++i)
      if (ops[i].kind == ir::OpKind::Send)
        sends[(uint64_t(a) << 32) | ops[i].peer].push_back(rs.ctx[a][i]);
  }
  auto where = [&](uint32_t ctx, uint32_t line) {
    if (ctx == 0)
      return llvm::formatv("by the caller's own op (line {0})", line).str();
    const RunState::Instance &in = rs.instances[ctx];
    return llvm::formatv("in '{0}' ({1}:{2})", in.text, in.source->name, in.loc.line).str();
  };
  for (uint32_t b = 0; b < plan.programs.size(); ++b) {
    llvm::DenseMap<uint32_t, uint32_t> seen; // per sender: receives so far
    const auto &ops = plan.programs[b].ops;
    for (uint32_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind != ir::OpKind::Recv && ops[i].kind != ir::OpKind::RecvReduce)
        continue;
      const uint32_t a = ops[i].peer;
      const uint32_t k = seen[a]++;
      auto it = sends.find((uint64_t(a) << 32) | b);
      if (it == sends.end() || k >= it->second.size() || it->second[k] == rs.ctx[b][i])
        continue; // unmatched messages are the verifier's to report
      const uint32_t sent = it->second[k], got = rs.ctx[b][i];
      uint32_t sendLine = 0;
      for (uint32_t j = 0, n = 0; j < plan.programs[a].ops.size(); ++j)
        if (plan.programs[a].ops[j].kind == ir::OpKind::Send && plan.programs[a].ops[j].peer == b &&
            n++ == k)
          sendLine = plan.programs[a].ops[j].loc.line;
      const uint32_t at = sent ? sent : got;
      EvalFailure f{rs.instances[at].loc,
                    llvm::formatv("run: message {0} from rank {1} to rank {2} is sent {3} but "
                                  "received {4}: the k-th send from one rank to another matches "
                                  "the k-th receive, so ranks must run what they share, and "
                                  "their own messages around it, in the same order",
                                  k + 1, a, b, where(sent, sendLine), where(got, ops[i].loc.line))
                        .str()};
      f.source = rs.instances[at].source;
      if (sent && got)
        f.notes = "\n" + rs.instances[got].source->format(rs.instances[got].loc,
                                                          "the receiving run is here", "note");
      throw f;
    }
  }
}

// --- expressions ------------------------------------------------------------------

int64_t Machine::eval(const Expr &e) {
  switch (e.kind) {
  case ExprKind::Int:
    return e.value;
  case ExprKind::Global:
    return globals_[e.value];
  case ExprKind::Local:
    return locals_[frame_ + e.value];
  case ExprKind::Rank:
    if (inBody_)
      return rank_;
    break;
  case ExprKind::Binary: {
    const int64_t a = eval(*e.a), b = eval(*e.b);
    int64_t v = 0;
    switch (BinOp(e.op)) {
    case BinOp::Add:
      if (!__builtin_add_overflow(a, b, &v))
        return v;
      break;
    case BinOp::Sub:
      if (!__builtin_sub_overflow(a, b, &v))
        return v;
      break;
    case BinOp::Mul:
      if (!__builtin_mul_overflow(a, b, &v))
        return v;
      break;
    case BinOp::Div:
      if (b > 0)
        return a / b - (a % b < 0); // floor
      break;
    case BinOp::Mod:
      if (b > 0)
        return a % b < 0 ? a % b + b : a % b;
      break;
    case BinOp::Xor: return a ^ b;
    case BinOp::BitAnd: return a & b;
    case BinOp::BitOr: return a | b;
    case BinOp::Eq: return a == b;
    case BinOp::Ne: return a != b;
    case BinOp::Lt: return a < b;
    case BinOp::Le: return a <= b;
    case BinOp::Gt: return a > b;
    case BinOp::Ge: return a >= b;
    default:
      break;
    }
    return evalBinary(e, a, b);
  }
  case ExprKind::And:
    return eval(*e.a) && eval(*e.b);
  case ExprKind::Or:
    return eval(*e.a) || eval(*e.b);
  case ExprKind::Cond:
    return eval(*e.a) ? eval(*e.b) : eval(*e.c);
  default:
    break;
  }
  return evalOther(e);
}

int64_t Machine::evalOther(const Expr &e) {
  switch (e.kind) {
  case ExprKind::Rank:
    fail(e.loc, "'r' has no value in the header (it is the same for every rank)");
  case ExprKind::Nops:
    if (!inBody_)
      fail(e.loc, "'nops' has no value in the header");
    return int64_t(prog_->ops.size());
  case ExprKind::Unary: {
    const int64_t a = eval(*e.a);
    switch (UnOp(e.op)) {
    case UnOp::Neg:
      if (a == INT64_MIN)
        fail(e.loc, "-(-2^63) overflows 64 bits");
      return -a;
    case UnOp::Not:
      return !a;
    case UnOp::BitNot:
      return ~a;
    }
    break;
  }
  case ExprKind::Call: {
    burn(e.loc);
    if (calls_ >= maxCallDepth)
      fail(e.loc, llvm::formatv("calls nested more than {0} deep (endless recursion?)",
                                maxCallDepth));
    const Function &f = m_.functions[e.value];
    const size_t base = locals_.size();
    for (const ExprPtr &a : e.args) {
      const int64_t v = eval(*a);
      locals_.push_back(v);
    }
    const size_t savedFrame = frame_;
    frame_ = base;
    ++calls_;
    const int64_t v = eval(*f.body);
    --calls_;
    frame_ = savedFrame;
    locals_.resize(base);
    return v;
  }
  case ExprKind::Builtin:
    return evalBuiltin(e);
  case ExprKind::ChunksOf:
  case ExprKind::Accepts:
    burn(e.loc);
    return evalQuery(e);
  default: // the kinds eval() handles itself
    break;
  }
  llvm_unreachable("evalOther: a kind eval() handles");
}

int64_t Machine::evalBinary(const Expr &e, int64_t a, int64_t b) {
  int64_t v = 0;
  auto overflow = [&](const char *op) {
    fail(e.loc, llvm::formatv("{0} {1} {2} overflows 64 bits", a, op, b));
  };
  switch (BinOp(e.op)) {
  case BinOp::Add:
    if (__builtin_add_overflow(a, b, &v))
      overflow("+");
    return v;
  case BinOp::Sub:
    if (__builtin_sub_overflow(a, b, &v))
      overflow("-");
    return v;
  case BinOp::Mul:
    if (__builtin_mul_overflow(a, b, &v))
      overflow("*");
    return v;
  case BinOp::Div:
  case BinOp::Mod: {
    const bool div = BinOp(e.op) == BinOp::Div;
    if (b == 0)
      fail(e.loc, llvm::formatv("{0} by zero ({1} {2} 0)", div ? "division" : "modulo", a,
                                div ? "/" : "%"));
    if (a == INT64_MIN && b == -1) {
      if (div)
        overflow("/");
      return 0;
    }
    int64_t q = a / b, m = a % b;
    if (div)
      return (m != 0 && ((m < 0) != (b < 0))) ? q - 1 : q; // floor
    return m < 0 ? m + (b < 0 ? -b : b) : m;               // in 0..|b|-1
  }
  case BinOp::Pow: {
    if (b < 0)
      fail(e.loc, llvm::formatv("negative exponent ({0} ** {1})", a, b));
    int64_t result = 1, base = a;
    for (int64_t x = b; x > 0; x >>= 1) {
      if ((x & 1) && __builtin_mul_overflow(result, base, &result))
        overflow("**");
      if (x > 1 && __builtin_mul_overflow(base, base, &base))
        overflow("**");
    }
    return result;
  }
  case BinOp::Xor:
    return a ^ b;
  case BinOp::BitAnd:
    return a & b;
  case BinOp::BitOr:
    return a | b;
  case BinOp::Shl:
  case BinOp::Shr: {
    const bool left = BinOp(e.op) == BinOp::Shl;
    if (b < 0 || b > 63)
      fail(e.loc, llvm::formatv("shift by {0} ({1} {2} {0}; shifts are 0..63)", b, a,
                                left ? "<<" : ">>"));
    if (!left)
      return a >> b;
    v = int64_t(uint64_t(a) << b);
    if ((v >> b) != a)
      overflow("<<");
    return v;
  }
  case BinOp::Eq: return a == b;
  case BinOp::Ne: return a != b;
  case BinOp::Lt: return a < b;
  case BinOp::Le: return a <= b;
  case BinOp::Gt: return a > b;
  case BinOp::Ge: return a >= b;
  }
  return 0;
}

int64_t Machine::evalBuiltin(const Expr &e) {
  llvm::SmallVector<int64_t, 4> x;
  for (const ExprPtr &a : e.args)
    x.push_back(eval(*a));
  const char *name = "";
  switch (Builtin(e.op)) {
#define COLLC_BUILTIN(Enum, Text, MinArgs, MaxArgs, Meaning)                               \
  case Builtin::Enum:                                                                      \
    name = Text;                                                                           \
    break;
#include "compiler/lang/Builtins.def"
  }
  auto domain = [&](bool ok, const char *what) {
    if (!ok)
      fail(e.loc, llvm::formatv("{0}({1}): {2}", name,
                                x.size() == 1 ? std::to_string(x[0])
                                              : std::to_string(x[0]) + ", " +
                                                    std::to_string(x[1]),
                                what));
  };
  switch (Builtin(e.op)) {
  case Builtin::Log2:
    domain(x[0] >= 1, "needs x >= 1");
    return 63 - __builtin_clzll(uint64_t(x[0]));
  case Builtin::Clog2:
    domain(x[0] >= 1, "needs x >= 1");
    return x[0] == 1 ? 0 : 64 - __builtin_clzll(uint64_t(x[0] - 1));
  case Builtin::Pof2:
    domain(x[0] >= 1, "needs x >= 1");
    return int64_t(1) << (63 - __builtin_clzll(uint64_t(x[0])));
  case Builtin::Logk:
  case Builtin::Pofk: {
    domain(x[0] >= 1 && x[1] >= 2, "needs x >= 1 and k >= 2");
    int64_t power = 1, log = 0;
    while (power <= x[0] / x[1]) {
      power *= x[1];
      ++log;
    }
    return Builtin(e.op) == Builtin::Logk ? log : power;
  }
  case Builtin::Popcount:
    domain(x[0] >= 0, "needs x >= 0");
    return __builtin_popcountll(uint64_t(x[0]));
  case Builtin::Ctz:
    domain(x[0] >= 1, "needs x >= 1");
    return __builtin_ctzll(uint64_t(x[0]));
  case Builtin::Abs:
    domain(x[0] != INT64_MIN, "overflows 64 bits");
    return x[0] < 0 ? -x[0] : x[0];
  case Builtin::Min:
    return *std::min_element(x.begin(), x.end());
  case Builtin::Max:
    return *std::max_element(x.begin(), x.end());
  case Builtin::Gcd: {
    int64_t g = 0;
    for (int64_t v : x) {
      domain(v >= 0, "needs arguments >= 0");
      g = std::gcd(g, v);
    }
    return g;
  }
  case Builtin::Lcm: {
    int64_t l = 1;
    for (int64_t v : x) {
      domain(v >= 1, "needs arguments >= 1");
      if (__builtin_mul_overflow(l / std::gcd(l, v), v, &l))
        domain(false, "overflows 64 bits");
    }
    return l;
  }
  case Builtin::LevelCount:
  case Builtin::LevelIndex:
  case Builtin::LevelRank: {
    domain(x[0] >= 0 && x[0] < int64_t(p()), "needs a rank 0 <= x < p");
    const Layout *l = opts_.layout.get();
    const int64_t levels = l ? int64_t(l->sizes.size()) : 1;
    domain(x[1] >= 0 && x[1] < levels, "needs a level 0 <= j < nlevels");
    const size_t at = size_t(x[1]) * p() + size_t(x[0]);
    const int64_t count = l ? l->lineCount[at] : p();
    if (Builtin(e.op) == Builtin::LevelCount)
      return count;
    if (Builtin(e.op) == Builtin::LevelIndex)
      return l ? l->lineIndex[at] : x[0];
    if (x[2] < 0 || x[2] >= count)
      fail(e.loc, llvm::formatv("level_rank({0}, {1}, {2}): needs 0 <= i < level_count(x, j) "
                                "= {3}",
                                x[0], x[1], x[2], count));
    return l ? l->lines[size_t(x[1])][l->lineStart[at] + size_t(x[2])] : x[2];
  }
  case Builtin::Node:
  case Builtin::Local:
  case Builtin::Coord: {
    domain(x[0] >= 0 && x[0] < int64_t(p()), "needs a rank 0 <= x < p");
    const Layout *l = opts_.layout.get();
    const auto r = size_t(x[0]);
    if (Builtin(e.op) == Builtin::Coord) {
      const int64_t levels = l ? int64_t(l->sizes.size()) : 1;
      domain(x[1] >= 0 && x[1] < levels, "needs a level 0 <= j < nlevels");
      return l ? l->coords[r * l->sizes.size() + size_t(x[1])] : x[0];
    }
    if (Builtin(e.op) == Builtin::Node)
      return l ? l->node[r] : 0;
    return l ? l->local[r] : x[0];
  }
  case Builtin::RankAt: {
    const Layout *l = opts_.layout.get();
    const int64_t nnodes = l ? l->nnodes : 1, ppn = l ? l->ppn : p();
    domain(x[0] >= 0 && x[0] < nnodes && x[1] >= 0 && x[1] < ppn,
           "needs a node 0 <= n < nnodes and a local index 0 <= l < ppn");
    const int64_t rank = l ? l->rankAt[size_t(x[0] * ppn + x[1])] : x[1];
    domain(rank >= 0, "no rank sits there (the node holds fewer than ppn ranks)");
    return rank;
  }
  case Builtin::LevelSize: {
    const Layout *l = opts_.layout.get();
    domain(x[0] >= 0 && x[0] < (l ? int64_t(l->sizes.size()) : 1),
           "needs a level 0 <= j < nlevels");
    return l ? l->sizes[size_t(x[0])] : p();
  }
  }
  return 0;
}

} // namespace

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

namespace {

/// Runs the header or fails with the refusal of a `require`.
void requireAccepted(Machine &mc, const Module &m) {
  if (!mc.header()) {
    const Stmt &req = *mc.failed;
    throw EvalFailure{req.loc, llvm::formatv("require {0} does not hold ({1})", req.var,
                                             mc.context(true))
                                   .str()};
  }
  mc.shape();
}

} // namespace

uint64_t availableMemory() {
  uint64_t avail = UINT64_MAX;
  const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageSize > 0)
    avail = uint64_t(pages) * uint64_t(pageSize);
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit rl{};
    if (getrlimit(resource, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
      avail = std::min<uint64_t>(avail, rl.rlim_cur);
  }
  return avail;
}

llvm::Expected<OpEstimate> estimateOps(const Module &m, const InstantiateOptions &opts) {
  Machine mc(m, opts);
  try {
    requireAccepted(mc, m);
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
    requireAccepted(mc, m);
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
      mc.run(r, &plan.programs[r]);
      scratchTop = std::max(scratchTop, mc.scratchTop());
    }
    // The runs' tmp regions lie above the declared slots.
    plan.shape.scratch += scratchTop;
    if (mc.runs().track)
      mc.checkRunMessages(plan);
    return plan;
  } catch (const EvalFailure &f) {
    return mc.error(f);
  }
}

llvm::Expected<ir::Program> instantiateRank(const Module &m, const InstantiateOptions &opts,
                                            uint32_t rank) {
  Machine mc(m, opts);
  try {
    requireAccepted(mc, m);
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
    requireAccepted(mc, m);
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
    requireAccepted(mc, m);
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
