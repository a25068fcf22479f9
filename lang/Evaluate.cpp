// lang/Evaluate.cpp: the statements and expressions of one rank's run, and its ops.
#include "lang/InstantiatorImpl.h"

#include <climits>
#include <numeric>

namespace collc::lang::detail {

namespace {

/// Slots as the language writes them: "out[2]", "out[0..2]" (half-open).
std::string written(const ir::Slots &s) {
  const std::string b = ir::name(s.buf).str();
  if (s.count == 1)
    return b + "[" + std::to_string(s.chunk) + "]";
  return b + "[" + std::to_string(s.chunk) + ".." + std::to_string(s.end()) + "]";
}

constexpr unsigned maxCallDepth = 256;

} // namespace

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
#include "lang/Builtins.def"
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

} // namespace collc::lang::detail
