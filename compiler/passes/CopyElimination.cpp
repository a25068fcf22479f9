// compiler/passes/CopyElimination.cpp: folds copies, and receives into scratch, away.
//
// Preserves: every value each remaining op combines, sends or leaves in a
// required out slot, the operand order of every combination (so reduction
// trees, hence bitwise-identical results, stay as they were), every message
// and its matching, and every existing wait. No dependency is added: a
// rewrite is made only when the orderings the plan already has prove it
// race-free, which is why this pass runs before relax-deps.
//
// Three rewrites, each removing one op, tried per rank in listing order until
// none applies (for a copy, 2 before 1):
//  1. Forward a copy's source. `copy D ← S` followed by ops that read D
//     before it is overwritten: readers read S instead, and a two-address
//     combine of D (recv_reduce/reduce buf: D) becomes three-address
//     (buf: S, dst: D); the copy goes. This turns the initial
//     `copy out ← in` of generated plans into `recv_reduce buf: in, dst: out`.
//     Needs: every read of D's copied value covers copied slots only; nothing
//     writes S between the copy and a redirected read, and everything that
//     writes S later is ordered after that read; D's copied value is not
//     what a required out slot holds at the end.
//  2. Retarget a copy's producer. `P: ... → X; copy Y ← X`: P writes Y
//     itself (a two-address combine becomes three-address) and the other
//     readers of P's value read Y. Needs: every earlier op touching Y is
//     ordered before P (P now writes Y sooner), the moved reads are safe as
//     in 1, and X's value from P is not a result.
//  3. Combine on arrival. `recv X from q; reduce B ← X` where the reduce is
//     the only reader: one `recv_reduce B from q` (same order, same dst) in
//     the receive's place. Needs: every earlier op that conflicts with the
//     reduce's accesses of B (and dst) is ordered before the receive.
//
// In-place plans: all checks use the layout in which `in` and `out` are one
// memory (Analysis.h), so every rewrite is proven for both layouts and
// `in_place` never has to be given up. (With the buffers aliased, forwarding
// `copy out ← in` reads in[c] where out[c] still holds the input; a later
// write of out[c] must be ordered after every such read, which check 1 asks.)
#include "compiler/passes/Analysis.h"
#include "compiler/passes/Pass.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

namespace collc::compiler {

namespace {

/// The ops accessing each part of one space: the space cut at every end of
/// an access into elementary segments, each with the ops touching it in
/// listing order (an op may be listed twice). Costs O(accesses · segments
/// each covers), not O(slots): a range op is one entry per segment.
class AccessIndex {
public:
  void note(const Place &p, uint32_t op) {
    if (p.begin < p.end)
      entries_.push_back({p.begin, p.end, op});
  }
  /// Builds the index; no note() after it. `size` clips the accesses.
  void finish(uint32_t size) {
    for (Entry &e : entries_)
      e.end = std::min(e.end, size);
    llvm::erase_if(entries_, [](const Entry &e) { return e.begin >= e.end; });
    // The bounds, sorted and unique, and each one's segment: by marking
    // them in a table of the space's slots when it is not much larger than
    // the accesses (a ring's p chunks, 4p accesses), else by sorting and
    // searching.
    const bool dense = size_t(size) <= 4 * entries_.size();
    std::vector<uint32_t> segAt;
    if (dense) {
      segAt.assign(size_t(size) + 1, 0);
      for (const Entry &e : entries_)
        segAt[e.begin] = segAt[e.end] = 1;
      for (uint32_t x = 0; x <= size; ++x)
        if (segAt[x]) {
          segAt[x] = static_cast<uint32_t>(bounds_.size());
          bounds_.push_back(x);
        }
    } else {
      for (const Entry &e : entries_) {
        bounds_.push_back(e.begin);
        bounds_.push_back(e.end);
      }
      std::sort(bounds_.begin(), bounds_.end());
      bounds_.erase(std::unique(bounds_.begin(), bounds_.end()), bounds_.end());
    }
    if (bounds_.empty())
      return;
    start_.assign(bounds_.size(), 0);
    auto segs = [&](const Entry &e) {
      if (dense)
        return std::make_pair(size_t(segAt[e.begin]), size_t(segAt[e.end]));
      return std::make_pair(segment(e.begin), segment(e.end));
    };
    for (const Entry &e : entries_) {
      auto [a, b] = segs(e);
      for (size_t k = a; k < b; ++k)
        ++start_[k + 1];
    }
    for (size_t k = 1; k < start_.size(); ++k)
      start_[k] += start_[k - 1];
    ops_.resize(start_.back());
    std::vector<uint32_t> fill(start_.begin(), start_.end() - 1);
    for (const Entry &e : entries_) {
      auto [a, b] = segs(e);
      for (size_t k = a; k < b; ++k)
        ops_[fill[k]++] = e.op;
    }
    entries_.clear();
    entries_.shrink_to_fit();
  }
  /// Calls fn(op) for every op touching [b, e), possibly more than once;
  /// stops when fn returns false.
  template <typename Fn> bool forEach(uint32_t b, uint32_t e, Fn fn) const {
    if (bounds_.empty() || b >= e)
      return true;
    size_t k = size_t(std::upper_bound(bounds_.begin(), bounds_.end(), b) - bounds_.begin());
    k = k == 0 ? 0 : k - 1;
    for (; k + 1 < bounds_.size() && bounds_[k] < e; ++k) {
      if (bounds_[k + 1] <= b)
        continue;
      for (uint32_t x = start_[k]; x < start_[k + 1]; ++x)
        if (!fn(ops_[x]))
          return false;
    }
    return true;
  }

private:
  struct Entry {
    uint32_t begin, end, op;
  };
  /// The index of the segment starting at bound x (x is a bound).
  size_t segment(uint32_t x) const {
    return size_t(std::lower_bound(bounds_.begin(), bounds_.end(), x) - bounds_.begin());
  }
  std::vector<Entry> entries_;
  std::vector<uint32_t> bounds_; ///< segment k is [bounds_[k], bounds_[k+1])
  std::vector<uint32_t> start_;  ///< segment k's ops are ops_[start_[k] .. start_[k+1])
  std::vector<uint32_t> ops_;
};

/// One rank's program and the facts the rewrites consult.
struct RankView {
  RankView(const ir::Plan &plan, uint32_t rank)
      : shape(plan.shape), rank(rank), ops(plan.programs[rank].ops),
        deps(explicitDeps(ops)), anc(deps), layout(plan.shape, rank) {
    acc.reserve(ops.size());
    for (uint32_t j = 0; j < ops.size(); ++j) {
      acc.push_back(accessesOf(ops[j]));
      for (const ir::Slots &r : acc[j].reads) {
        const Place pl = layout.place(r);
        touchers[pl.space].note(pl, j);
      }
      if (acc[j].write) {
        const Place w = layout.place(*acc[j].write);
        touchers[w.space].note(w, j);
        writers[w.space].note(w, j);
      }
    }
    for (uint8_t sp = 0; sp < 3; ++sp) {
      writers[sp].finish(layout.spaceSize(sp));
      touchers[sp].finish(layout.spaceSize(sp));
    }
  }

  const ir::Shape &shape;
  uint32_t rank;
  llvm::ArrayRef<ir::Op> ops;
  DepLists deps;
  Ancestry anc;
  Layout layout;
  std::vector<Accesses> acc; ///< per op
  /// Per space: the ops writing / touching each part of it.
  AccessIndex writers[3], touchers[3];

  /// Calls fn(j) for every op j that writes (or, with !writersOnly, touches)
  /// a slot of `p`, possibly more than once; stops when fn returns false.
  template <typename Fn> bool forEachAccess(const Place &p, bool writersOnly, Fn fn) const {
    return (writersOnly ? writers[p.space] : touchers[p.space]).forEach(p.begin, p.end, fn);
  }
  /// The op that last wrote all of `x` before op `at`, if one op wrote
  /// exactly `x` and nothing overwrote part of it since.
  std::optional<uint32_t> producerOf(const ir::Slots &x, uint32_t at) const {
    for (uint32_t j = at; j-- > 0;) {
      const std::optional<ir::Slots> &w = acc[j].write;
      if (!w || !w->overlaps(x))
        continue;
      if (*w == x)
        return j;
      return std::nullopt;
    }
    return std::nullopt;
  }
  /// True when every op before `limit` other than `skip1`/`skip2` that
  /// touches `p` (or, with `writersOnly`, writes it) is ordered before `first`.
  bool earlierAccessesBefore(const Place &p, bool writersOnly, uint32_t limit, uint32_t first,
                             uint32_t skip1, uint32_t skip2) const {
    return forEachAccess(p, writersOnly, [&](uint32_t j) {
      return j >= limit || j == skip1 || j == skip2 || anc.before(j, first);
    });
  }
  /// True when every changed op of `ops2` is well-formed.
  bool wellFormed(llvm::ArrayRef<ir::Op> ops2, llvm::ArrayRef<uint32_t> changed) const {
    for (uint32_t i : changed)
      if (ir::checkOp(shape, rank, ops2, i))
        return false;
    return true;
  }
};

/// A read of a value that a rewrite moves: op `op` reads `slots` (its src
/// operand, or its buf operand — a two-address combine when `rmw`).
struct Use {
  uint32_t op;
  bool src;
  bool rmw;
  ir::Slots slots;
};

/// The reads of the value that op `def` left in `x`, up to where every slot
/// of it is overwritten; nullopt when a read covers only part of the value.
/// `liveOut` tells whether some slot still holds it at the end.
std::optional<std::vector<Use>> usesOf(const RankView &v, const ir::Slots &x, uint32_t def,
                                       bool &liveOut) {
  std::vector<Use> uses;
  std::vector<bool> alive(x.count, true);
  uint32_t left = x.count;
  for (uint32_t i = def + 1; i < v.ops.size() && left > 0; ++i) {
    const ir::Op &op = v.ops[i];
    // -1: reads part of the value (cannot be moved), 0: not a use, 1: a use.
    auto classify = [&](const ir::Slots &r) {
      if (!r.overlaps(x))
        return 0;
      uint32_t hit = 0;
      for (uint32_t c = std::max(r.chunk, x.chunk); c < std::min(r.end(), x.end()); ++c)
        hit += alive[c - x.chunk];
      if (hit == 0)
        return 0;
      return r.chunk >= x.chunk && r.end() <= x.end() && hit == r.count ? 1 : -1;
    };
    auto use = [&](const ir::Slots &r, bool src) {
      const int c = classify(r);
      if (c == 1)
        uses.push_back({i, src, !src && isReadModifyWrite(op), r});
      return c >= 0;
    };
    if (op.kind == ir::OpKind::Send || ir::hasOrder(op.kind))
      if (!use(op.slots(), false))
        return std::nullopt;
    if (ir::hasSrc(op.kind))
      if (!use(op.srcSlots(), true))
        return std::nullopt;
    if (ir::writesBuf(op.kind)) {
      const ir::Slots w = op.dstSlots();
      if (w.overlaps(x))
        for (uint32_t c = std::max(w.chunk, x.chunk); c < std::min(w.end(), x.end()); ++c)
          if (alive[c - x.chunk]) {
            alive[c - x.chunk] = false;
            --left;
          }
    }
  }
  liveOut = left > 0;
  return uses;
}

/// `r` (inside `from`) moved to the same offset inside `to`.
ir::Slots moved(const ir::Slots &r, const ir::Slots &from, const ir::Slots &to) {
  return {to.buf, to.chunk + (r.chunk - from.chunk), r.count};
}

/// True when each use after op `after` can read `to` instead: nothing
/// writes the moved range between `after` and the use, and everything that
/// writes it later is ordered after the use.
bool movedReadsSafe(const RankView &v, llvm::ArrayRef<Use> uses, const ir::Slots &from,
                    const ir::Slots &to, uint32_t after) {
  for (const Use &u : uses) {
    if (u.op < after)
      continue;
    const Place p = v.layout.place(moved(u.slots, from, to));
    const bool ok = v.forEachAccess(p, /*writersOnly=*/true, [&](uint32_t j) {
      return j <= after || j == u.op || (j > u.op && v.anc.before(u.op, j));
    });
    if (!ok)
      return false;
  }
  return true;
}

/// Points each use's operand at `to` (a two-address combine becomes
/// three-address, writing where it read).
void redirect(ir::Program &prog, llvm::ArrayRef<Use> uses, const ir::Slots &from,
              const ir::Slots &to, llvm::SmallVectorImpl<uint32_t> &changed) {
  for (const Use &u : uses) {
    ir::Op &op = prog.ops[u.op];
    const ir::Slots m = moved(u.slots, from, to);
    if (u.src) {
      op.src = m.buf;
      op.srcChunk = m.chunk;
    } else {
      if (u.rmw) {
        op.hasDst = true;
        op.dst = op.buf;
        op.dstChunk = op.chunk;
      }
      op.buf = m.buf;
      op.chunk = m.chunk;
    }
    changed.push_back(u.op);
  }
}

/// Rewrite 1: readers of `copy D ← S` (op k) read S. Returns the new program.
std::optional<ir::Program> forwardSource(const RankView &v, uint32_t k) {
  const ir::Op &cp = v.ops[k];
  const ir::Slots D = cp.slots(), S = cp.srcSlots();
  bool liveOut = false;
  std::optional<std::vector<Use>> uses = usesOf(v, D, k, liveOut);
  if (!uses)
    return std::nullopt;
  if (liveOut && D.buf == ir::Buffer::Out && ir::outRequired(v.shape, v.rank))
    return std::nullopt; // the copy is (part of) the result
  // The source must still hold the copied value at each redirected read, and
  // stay unwritten until the read is done.
  if (!movedReadsSafe(v, *uses, D, S, k))
    return std::nullopt;
  ir::Program prog;
  prog.ops.assign(v.ops.begin(), v.ops.end());
  llvm::SmallVector<uint32_t, 8> changed;
  redirect(prog, *uses, D, S, changed);
  if (!v.wellFormed(prog.ops, changed))
    return std::nullopt;
  std::vector<bool> keep(prog.ops.size(), true);
  keep[k] = false;
  eraseOps(prog, v.deps, keep);
  return prog;
}

/// Rewrite 2: the producer of `copy Y ← X` (op k) writes Y, and every other
/// reader of its value reads Y.
std::optional<ir::Program> retargetProducer(const RankView &v, uint32_t k) {
  const ir::Op &cp = v.ops[k];
  const ir::Slots X = cp.srcSlots(), Y = cp.slots();
  if (X.buf == ir::Buffer::In)
    return std::nullopt;
  std::optional<uint32_t> p = v.producerOf(X, k);
  if (!p)
    return std::nullopt;
  bool liveOut = false;
  std::optional<std::vector<Use>> uses = usesOf(v, X, *p, liveOut);
  if (!uses || (liveOut && X.buf == ir::Buffer::Out && ir::outRequired(v.shape, v.rank)))
    return std::nullopt;
  // The copy itself goes; the other reads move to Y.
  llvm::erase_if(*uses, [&](const Use &u) { return u.op == k; });
  std::vector<bool> isUse(v.ops.size(), false);
  for (const Use &u : *uses) {
    if (u.rmw)
      return std::nullopt; // a later combine of X would have to move too
    isUse[u.op] = true;
  }
  // P now writes Y sooner: every earlier op touching Y, other than the reads
  // that move with it, must be done by then.
  const bool earlierDone = v.forEachAccess(v.layout.place(Y), /*writersOnly=*/false,
                                           [&](uint32_t j) {
                                             return j >= k || j == *p || isUse[j] ||
                                                    v.anc.before(j, *p);
                                           });
  if (!earlierDone)
    return std::nullopt;
  if (!movedReadsSafe(v, *uses, X, Y, k))
    return std::nullopt;
  ir::Program prog;
  prog.ops.assign(v.ops.begin(), v.ops.end());
  ir::Op &op = prog.ops[*p];
  switch (op.kind) {
  case ir::OpKind::Recv:
  case ir::OpKind::Copy:
    op.buf = Y.buf;
    op.chunk = Y.chunk;
    break;
  case ir::OpKind::RecvReduce:
  case ir::OpKind::Reduce:
    op.hasDst = true;
    op.dst = Y.buf;
    op.dstChunk = Y.chunk;
    break;
  case ir::OpKind::Send:
    return std::nullopt;
  }
  llvm::SmallVector<uint32_t, 8> changed{*p};
  redirect(prog, *uses, X, Y, changed);
  if (!v.wellFormed(prog.ops, changed))
    return std::nullopt;
  std::vector<bool> keep(prog.ops.size(), true);
  keep[k] = false;
  eraseOps(prog, v.deps, keep);
  return prog;
}

/// Rewrite 3: `recv X; reduce B ← X` (the reduce is op c) becomes recv_reduce B.
std::optional<ir::Program> combineOnArrival(const RankView &v, uint32_t c) {
  const ir::Op &red = v.ops[c];
  const ir::Slots X = red.srcSlots();
  if (X.buf == ir::Buffer::In)
    return std::nullopt;
  std::optional<uint32_t> p = v.producerOf(X, c);
  if (!p || v.ops[*p].kind != ir::OpKind::Recv)
    return std::nullopt;
  bool liveOut = false;
  std::optional<std::vector<Use>> uses = usesOf(v, X, *p, liveOut);
  if (!uses || uses->size() != 1 || (*uses)[0].op != c ||
      (liveOut && X.buf == ir::Buffer::Out && ir::outRequired(v.shape, v.rank)))
    return std::nullopt; // the received value is read elsewhere too
  // The receive now reads B and writes dst when the message arrives.
  if (!v.earlierAccessesBefore(v.layout.place(red.slots()), /*writersOnly=*/true, c, *p, *p,
                               c) ||
      !v.earlierAccessesBefore(v.layout.place(red.dstSlots()), /*writersOnly=*/false, c, *p,
                               *p, c))
    return std::nullopt;
  ir::Program prog;
  prog.ops.assign(v.ops.begin(), v.ops.end());
  ir::Op fused = red;
  fused.kind = ir::OpKind::RecvReduce;
  fused.peer = v.ops[*p].peer;
  fused.deps = v.ops[*p].deps;
  fused.step = v.ops[*p].step;
  fused.after = v.ops[*p].after;
  normalize(fused);
  prog.ops[*p] = fused;
  if (!v.wellFormed(prog.ops, {*p}))
    return std::nullopt;
  std::vector<bool> keep(prog.ops.size(), true);
  keep[c] = false;
  eraseOps(prog, v.deps, keep);
  return prog;
}

class CopyElimination final : public Pass {
public:
  llvm::StringRef name() const override { return "copy-elim"; }

  bool run(ir::Plan &plan) override {
    bool changed = false;
    for (uint32_t r = 0; r < plan.programs.size(); ++r)
      while (!plan.programs[r].ops.empty() && rewriteOne(plan, r))
        changed = true;
    return changed;
  }

private:
  /// Applies the first rewrite that is safe, in listing order.
  static bool rewriteOne(ir::Plan &plan, uint32_t r) {
    // Every rewrite removes a copy or a reduce: without one, nothing to
    // analyse (a rank's last round, after its copies went, usually).
    if (llvm::none_of(plan.programs[r].ops, [](const ir::Op &op) {
          return op.kind == ir::OpKind::Copy || op.kind == ir::OpKind::Reduce;
        }))
      return false;
    std::optional<ir::Program> result;
    {
      const RankView v(plan, r);
      for (uint32_t i = 0; i < v.ops.size() && !result; ++i) {
        if (v.ops[i].kind == ir::OpKind::Copy) {
          // Retargeting first: it keeps the copy's destination, the slot the
          // author meant the value for, and frees the staging slot.
          result = retargetProducer(v, i);
          if (!result)
            result = forwardSource(v, i);
        } else if (v.ops[i].kind == ir::OpKind::Reduce) {
          result = combineOnArrival(v, i);
        }
      }
    }
    if (!result)
      return false;
    plan.programs[r] = std::move(*result);
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> createCopyElimination() { return std::make_unique<CopyElimination>(); }

} // namespace collc::compiler
