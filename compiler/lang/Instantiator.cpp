// compiler/lang/Instantiator.cpp: a tree-walking evaluator of the resolved AST.
#include "compiler/lang/Instantiator.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

namespace collc::lang {

char OpLimitError::ID = 0;

namespace {

/// Thrown to unwind to the API boundary with a positioned refusal.
struct EvalFailure {
  Loc loc;
  std::string message;
  bool opLimit = false; ///< the run emitted more than maxOps ops
  uint64_t estimate = 0, memoryLimit = 0; ///< refused before instantiating (OpLimitError)
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

/// Evaluation state of one instantiation: the header's values, then one run
/// of the body per rank.
class Machine {
public:
  Machine(const Module &m, const InstantiateOptions &o) : m_(m), opts_(o), fuel_(o.fuel) {}

  /// Evaluates parameters and `require` lines; false when one fails (with
  /// `failed` pointing at it).
  bool header();
  /// Evaluates chunks and scratch into the shape. Precondition: header().
  void shape();
  /// Runs the body for `rank`, appending to `prog`.
  void run(uint32_t rank, ir::Program &prog);
  /// estimateOps on this machine; leaves the op budget full. Precondition: shape().
  OpEstimate estimate();
  /// Refuses (throws) a plan whose estimate does not fit maxOps or memory.
  void refuseWhatCannotFit();

  [[noreturn, gnu::cold, gnu::noinline]] void fail(Loc at, const llvm::Twine &message) const;
  llvm::Error error(const EvalFailure &f) const {
    if (f.opLimit)
      return llvm::make_error<OpLimitError>(opts_.maxOps, m_.source.format(f.loc, f.message),
                                            f.estimate, f.memoryLimit);
    return m_.source.error(f.loc, f.message);
  }
  /// "r = 3, p = 8, root = 0, k = 2, s = 1" (without r in the header; only
  /// the loop variables with `withShape` false).
  std::string context(bool withShape) const;

  uint32_t p() const { return opts_.ranks; }

  const Stmt *failed = nullptr; ///< the `require` that refused
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
  void emit(const Stmt &s);
  ir::Slots slots(const SlotsExpr &s, llvm::StringRef role);
  uint32_t toU32(int64_t v, Loc at, llvm::StringRef what) {
    if (v < 0 || v > int64_t(UINT32_MAX))
      fail(at, llvm::formatv("{0} {1} is out of range", what, v));
    return uint32_t(v);
  }
  void burn(Loc at) {
    if (fuel_-- == 0)
      fail(at, llvm::formatv("evaluation budget of {0} steps used up (an endless loop?)",
                             opts_.fuel));
  }

  const Module &m_;
  const InstantiateOptions &opts_;
  uint64_t fuel_;
  uint64_t opsLeft_ = 0;
  std::vector<int64_t> globals_;
  std::vector<int64_t> locals_;
  size_t frame_ = 0;  ///< base of the current function's arguments in locals_
  unsigned calls_ = 0;
  struct LoopVar {
    const std::string *name;
    uint32_t slot;
  };
  std::vector<LoopVar> loops_;
  bool inBody_ = false;
  uint32_t rank_ = 0;
  ir::Program *prog_ = nullptr;
  std::optional<uint32_t> slotsOf_[3]; ///< rank_'s buffer sizes (ir::bufferSlots)
  int64_t step_ = 0;
  std::optional<uint32_t> lastStep_;
};

void Machine::fail(Loc at, const llvm::Twine &message) const {
  throw EvalFailure{at, message.str() + " (" + context(true) + ")"};
}

std::string Machine::context(bool withShape) const {
  std::string s;
  auto add = [&](llvm::StringRef name, int64_t v) {
    s += (s.empty() ? "" : ", ") + name.str() + " = " + std::to_string(v);
  };
  if (withShape) {
    if (inBody_)
      add("r", rank_);
    add("p", globals_.empty() ? opts_.ranks : globals_[SlotP]);
    if (ir::hasRoot(m_.collective))
      add("root", opts_.root);
    for (const Param &prm : m_.params)
      if (prm.slot < globals_.size())
        add(prm.name, globals_[prm.slot]);
  }
  for (const LoopVar &l : loops_)
    add(*l.name, globals_[l.slot]);
  return s;
}

bool Machine::header() {
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
  for (const Param &prm : m_.params)
    globals_[prm.slot] = prm.defaultValue;
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
    globals_[found->slot] = value;
  }
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
  sh.commutative = m_.commutative;
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

void Machine::run(uint32_t rank, ir::Program &prog) {
  inBody_ = true;
  rank_ = rank;
  prog_ = &prog;
  for (ir::Buffer b : {ir::Buffer::In, ir::Buffer::Out, ir::Buffer::Tmp})
    slotsOf_[size_t(b)] = ir::bufferSlots(sh, rank, b);
  step_ = 0;
  lastStep_.reset();
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
    run(sampleRank(k++, p), prog);
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
  }
}

void Machine::execFor(const Stmt &s) {
  const int64_t from = eval(*s.from), to = eval(*s.to);
  const int64_t stride = s.stride ? eval(*s.stride) : 1;
  if (s.geometric ? stride < 2 : stride < 1)
    fail(s.stride->start, llvm::formatv("a range's stride must be {0}, not {1}",
                                      s.geometric ? "*2 or more" : "1 or more", stride));
  if (s.geometric && from < 1)
    fail(s.from->start,
         llvm::formatv("a range with a stride '*{0}' must start at 1 or more, not {1}", stride,
                       from));
  loops_.push_back({&s.var, s.slot});
  auto body = [&](int64_t v) {
    burn(s.loc);
    globals_[s.slot] = v;
    exec(s.body);
  };
  if (from < to) {
    if (s.geometric) {
      // from, from*k, ... below `to`; reversed, from the largest down (each
      // value is the next one times k, so dividing walks back exactly).
      int64_t last = from;
      while (last <= (to - 1) / stride)
        last *= stride;
      if (!s.reverse) {
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
    } else if (!s.reverse) {
      for (int64_t v = from; v < to; v = v > to - stride ? to : v + stride)
        body(v);
    } else {
      for (int64_t v = from + (to - 1 - from) / stride * stride;; v -= stride) {
        body(v);
        if (v - from < stride)
          break;
      }
    }
  }
  loops_.pop_back();
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
  const uint32_t index = uint32_t(prog_->ops.size());
  if (s.hasAfter) {
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
  if (opsLeft_-- == 0)
    throw EvalFailure{s.loc,
                      llvm::formatv("more than {0} ops ({1})", opts_.maxOps, context(true)).str(),
                      /*opLimit=*/true};
  if (stopAt && index == *stopAt) {
    stopContext = context(false);
    throw Found{};
  }
  prog_->ops.push_back(std::move(op));
  // The common op — in range, no dst, a step, a combining op only where the
  // collective reduces — is checked here; anything else by ir::checkOp,
  // which also words the refusal.
  const ir::Op &added = prog_->ops.back();
  auto fits = [&](const ir::Slots &x) {
    const std::optional<uint32_t> n = slotsOf_[size_t(x.buf)];
    return n && x.end() <= *n;
  };
  const bool plain = !added.hasDst && added.deps == ir::DepKind::Step &&
                     (!ir::hasOrder(added.kind) || ir::reduces(sh.collective)) &&
                     fits(added.slots()) &&
                     (!ir::hasSrc(added.kind) ||
                      (fits(added.srcSlots()) && !added.srcSlots().overlaps(added.slots())));
  if (!plain)
    if (std::optional<std::string> e = ir::checkOp(sh, rank_, prog_->ops, index))
      fail(s.loc, llvm::formatv("{0}: {1}", kind, *e));
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
    for (uint32_t r = 0; r < mc.sh.ranks; ++r) {
      // Ranks of an SPMD program mostly emit alike: the previous rank's op
      // count saves most of the regrowing.
      if (r > 0)
        plan.programs[r].ops.reserve(plan.programs[r - 1].ops.size());
      mc.run(r, plan.programs[r]);
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
    requireAccepted(mc, m);
    if (rank >= mc.sh.ranks)
      throw EvalFailure{m.nameLoc, llvm::formatv("rank {0} is out of range (p = {1})", rank,
                                                 mc.sh.ranks)
                                       .str()};
    ir::Program prog;
    mc.run(rank, prog);
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
    for (uint32_t rank : ranks) {
      if (rank >= mc.sh.ranks)
        throw EvalFailure{m.nameLoc, llvm::formatv("rank {0} is out of range (p = {1})", rank,
                                                   mc.sh.ranks)
                                         .str()};
      plan.programs[rank] = ir::Program();
      mc.run(rank, plan.programs[rank]);
    }
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
    mc.run(rank, prog);
  } catch (const Found &) {
    return mc.stopContext;
  } catch (const EvalFailure &) {
  }
  return std::nullopt;
}

} // namespace collc::lang
