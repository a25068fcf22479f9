// lang/InstantiatorImpl.h: the instantiator's evaluation machine, shared by its sources.
//
// Private to lang/: Instantiator.cpp (the entry points and a rank's run),
// Evaluate.cpp (statements and expressions), Compose.cpp (runs, queries and
// the message check of composed plans) and Estimate.cpp (the size estimate).
#ifndef COLLC_LANG_INSTANTIATORIMPL_H
#define COLLC_LANG_INSTANTIATORIMPL_H

#include "lang/Instantiator.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace collc::lang::detail {

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

/// Thrown when `explain` has seen the op it asked about.
struct Found {};

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
    /// A run of the plan's own algorithm (not inside another run): its group,
    /// in the plan's ranks, and the ranks that ran it, in order.
    bool top = false;
    std::vector<uint32_t> group, ranAt;
  };
  std::vector<Instance> instances{Instance{nullptr, {}, "", false, {}, {}}};
  uint32_t planRank = 0; ///< the plan rank being instantiated
  std::map<std::vector<int64_t>, uint32_t> seen; ///< this rank's occurrences of each key
  uint32_t current = 0;                          ///< the innermost run instance
  std::vector<std::vector<uint32_t>> ctx;        ///< per rank, per op: its instance
  /// The evaluation budget of the header or of the rank's run in progress,
  /// shared by every machine of the instantiation (InstantiateOptions::fuel):
  /// the steps left, and those granted (for the message).
  uint64_t fuel = 0;
  uint64_t granted = 0;
};

inline uint64_t saturatingAdd(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/// The steps the header or one rank's run may take before any op:
/// fuel + fuelPerRank * p.
inline uint64_t baseBudget(const InstantiateOptions &o) {
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
  /// After the last rank: every rank of a top-level run's group ran it.
  void checkRunMembers();
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
  /// The run's parameters for `sub`: the arguments a parameter's value gives
  /// the algorithm it names, then the run's own, evaluated, choices qualified.
  ParamValues evalArgs(const AlgRef &ref, const Module &sub);
  /// An algorithm argument's value: the choice qualified, with the arguments
  /// it carries (integers evaluated only when `numbers`).
  ParamValue choiceValue(const AlgName &n, const std::vector<AlgRef::Arg> &args, bool numbers);
  /// The arguments bound to `n` when it is an algorithm parameter.
  const ParamValues &boundArgs(const AlgName &n) const;
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
  std::vector<ParamValue> algValues_; ///< per Module::params entry: an algorithm's choice
  std::vector<const Module *> chain_; ///< the modules running, outermost first (this last)
  Machine *parent_ = nullptr;         ///< the caller, for a run's machine
  RunMap *map_ = nullptr;             ///< how this machine's ops land in the caller's
  Machine *child_ = nullptr;          ///< the run in progress
  Loc loc_;                           ///< the op or run being executed
  uint64_t emitted_ = 0;              ///< ops of a run's machine (its nops)
  uint32_t scratchTop_ = 0;           ///< tmp slots of runs, above sh.scratch
  std::shared_ptr<RunState> runs_ = std::make_shared<RunState>();
};

// A template, here for both of its users: `for` loops (Evaluate.cpp) and
// group comprehensions (Compose.cpp).
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

} // namespace collc::lang::detail

#endif // COLLC_LANG_INSTANTIATORIMPL_H
