// compiler/VerifySimulation.cpp: symbolic execution and deadlock detection
// (invariants 4, 5 and 7 of Verifier.cpp).
//
// Ops are posted when their dependencies are done; a local op completes when
// posted; a send and its matched receive complete together once both are
// posted (unbuffered sends). Values move at completion. Buffers are segment
// maps of SymVal, so a range op costs O(log segments + pieces).
#include "compiler/VerifierImpl.h"

#include "llvm/Support/FormatVariadic.h"

namespace collc::compiler::detail {

Verifier::Loc Verifier::locate(uint32_t rank, ir::Buffer b) {
  auto &bb = bufs_[rank];
  if (b == ir::Buffer::In && aliased_ && bb[int(ir::Buffer::Out)].size() != 0) {
    return {&bb[int(ir::Buffer::Out)], ir::inPlaceOffset(shape_, rank), true};
  }
  return {&bb[int(b)], 0, false};
}

void Verifier::readRange(uint32_t rank, const ir::Slots &s,
                         llvm::SmallVectorImpl<Piece> &out) {
  Loc L = locate(rank, s.buf);
  const uint32_t start = s.chunk + L.offset;
  out.clear();
  L.map->visit(start, s.end() + L.offset, [&](uint32_t b, uint32_t e, const SymVal &sv) {
    out.push_back({e - b, sv.v, sv.v > poisonValue ? int64_t(start) + sv.off : 0});
  });
}

void Verifier::readChecked(uint32_t g, const ir::Slots &s,
                           llvm::SmallVectorImpl<Piece> &out) {
  const uint32_t rank = sim_[g].rank;
  readRange(rank, s, out);
  Loc L = locate(rank, s.buf);
  uint32_t t = 0;
  for (Piece &pc : out) {
    ir::Slots where{s.buf, s.chunk + t, pc.len};
    if (pc.v == undefValue) {
      if (report(g, DiagClass::Uninitialized)) {
        Diagnostic d = opDiag(DiagClass::Uninitialized, g);
        d.slots = where;
        d.message = llvm::formatv("{0} {1}, which holds nothing",
                                  opOf(g).kind == ir::OpKind::Send ? "sends" : "reads",
                                  ir::describe(where));
        diags_.add(std::move(d));
      }
      pc.v = poisonValue;
    } else if (L.aliasedIn && pc.v != poisonValue) {
      // In-place: `in` must still hold this rank's input.
      int64_t inChunk0 = ir::inChunk(shape_, rank, s.chunk + t) - int64_t(t);
      if (!(pc.v == values_.leaf(rank) && pc.roff == inChunk0)) {
        if (report(g, DiagClass::InputWrite)) {
          uint32_t w = writers_[rank].at(s.chunk + t + L.offset);
          Diagnostic d = opDiag(DiagClass::InputWrite, g);
          d.slots = where;
          d.got = values_.show(pc.v);
          d.message = llvm::formatv(
              "reads {0} after op {1} ({2}) overwrote it with {3}", ir::describe(where),
              w ? w - 1 : 0, w ? ir::describe(plan_.programs[rank].ops[w - 1]) : "?",
              d.got);
          diags_.add(std::move(d));
        }
        pc.v = poisonValue;
      }
    }
    if (pc.v == poisonValue)
      pc.roff = 0;
    t += pc.len;
  }
}

void Verifier::writeRange(uint32_t g, const ir::Slots &s, llvm::ArrayRef<Piece> pieces) {
  const uint32_t rank = sim_[g].rank;
  Loc L = locate(rank, s.buf);
  bool poison = sim_[g].racy != 0;
  if (s.buf == ir::Buffer::In) {
    if (report(g, DiagClass::InputWrite)) {
      Diagnostic d = opDiag(DiagClass::InputWrite, g);
      d.slots = s;
      d.message = llvm::formatv("writes {0}, but in (the user's send buffer) is read-only",
                                ir::describe(s));
      diags_.add(std::move(d));
    }
    poison = true;
  }
  const uint32_t start = s.chunk + L.offset;
  // Slots of in and out are sized for their own chunk (chunks differ by up to
  // one element), so they may only ever hold it; tmp slots hold any chunk.
  const bool ownChunkOnly = L.map == &bufs_[rank][int(ir::Buffer::Out)];
  uint32_t t = 0;
  for (const Piece &pc : pieces) {
    SymVal sv;
    if (poison || pc.v == poisonValue)
      sv.v = poisonValue;
    else if (pc.v != undefValue)
      sv = SymVal{pc.v, pc.roff - int64_t(start)};
    // Out slots are checked a run of one expected chunk offset at a time
    // (one block in alltoall, where the offset changes per block).
    for (uint32_t at = start + t, end = start + t + pc.len; at < end;) {
      uint32_t runEnd = end;
      SymVal w = sv;
      if (ownChunkOnly && sv.v > poisonValue) {
        runEnd = std::min(end, outRunEnd(at));
        const int64_t ownOff = int64_t(ir::outChunk(shape_, rank, at)) - int64_t(at);
        if (sv.off != ownOff) {
          if (report(g, DiagClass::Misplaced)) {
            ir::Slots where{s.buf, at - L.offset, runEnd - at};
            Diagnostic d = opDiag(DiagClass::Misplaced, g);
            d.slots = where;
            d.message = llvm::formatv("writes {0} of chunk {1} into {2}, whose slots hold "
                                      "chunk {3} (only tmp slots may hold any chunk)",
                                      values_.show(sv.v, dataCollective()),
                                      int64_t(at) + sv.off, ir::describe(where),
                                      int64_t(at) + ownOff)
                            .str();
            diags_.add(std::move(d));
          }
          w = SymVal{poisonValue, 0};
        }
      }
      L.map->assign(at, runEnd, w);
      at = runEnd;
    }
    t += pc.len;
  }
  assert(t == s.count && "write pieces do not cover the range");
  if (aliased_ && L.map == &bufs_[rank][int(ir::Buffer::Out)])
    writers_[rank].assign(start, start + s.count, indexOf(g) + 1);
}

void Verifier::combineInto(uint32_t g, const ir::Slots &operand, const ir::Slots &dst,
                           llvm::ArrayRef<Piece> other, bool otherFirst) {
  llvm::SmallVector<Piece, 8> mine, result;
  readChecked(g, operand, mine);
  const bool order = checkOrder();
  size_t i = 0, j = 0;
  uint32_t ti = 0, tj = 0, t = 0; // consumed lengths within mine[i], other[j]; position
  while (i < mine.size() && j < other.size()) {
    const Piece &a = mine[i], &b = other[j];
    uint32_t len = std::min(a.len - ti, b.len - tj);
    ir::Slots where{operand.buf, operand.chunk + t, len};
    Piece out{len, poisonValue, 0};
    if (a.v != poisonValue && b.v != poisonValue) {
      if (a.roff != b.roff) {
        if (report(g, DiagClass::Misplaced)) {
          Diagnostic d = opDiag(DiagClass::Misplaced, g);
          d.slots = where;
          d.message = llvm::formatv("combines {0} of chunk {1} into {2} of chunk {3}",
                                    values_.show(b.v), b.roff + t, values_.show(a.v),
                                    a.roff + t);
          diags_.add(std::move(d));
        }
      } else {
        ValueId l = otherFirst ? b.v : a.v, r = otherFirst ? a.v : b.v;
        ValueTable::Combined c = values_.combine(l, r, order);
        auto shown = [&] { return values_.show(l) + " ∘ " + values_.show(r); };
        if (c.fault == ValueTable::Fault::Duplicate) {
          if (report(g, DiagClass::DuplicateContribution)) {
            Diagnostic d = opDiag(DiagClass::DuplicateContribution, g);
            d.slots = where;
            d.got = shown();
            d.message = llvm::formatv("{0} counts {1} twice", d.got,
                                      ranksPhrase(values_.commonRanks(l, r)));
            diags_.add(std::move(d));
          }
        } else if (c.fault == ValueTable::Fault::Order) {
          if (report(g, DiagClass::Order)) {
            Diagnostic d = opDiag(DiagClass::Order, g);
            d.slots = where;
            d.got = shown();
            auto sl = values_.ranks(l), sr = values_.ranks(r);
            if (sl.size() == 1 && sr.size() == 1 && sr[0].hi + 1 == sl[0].lo) {
              d.expected = values_.show(r) + " ∘ " + values_.show(l);
              d.message = d.got + ", expected " + d.expected;
            } else {
              d.message = d.got + ": not adjacent rank intervals in rank order, which an "
                                "operation that is not commutative needs";
            }
            diags_.add(std::move(d));
          }
        } else {
          out = Piece{len, c.value, a.roff};
        }
      }
    }
    if (!result.empty() && result.back().v == out.v && result.back().roff == out.roff)
      result.back().len += len;
    else
      result.push_back(out);
    t += len;
    ti += len;
    tj += len;
    if (ti == a.len) {
      ++i;
      ti = 0;
    }
    if (tj == b.len) {
      ++j;
      tj = 0;
    }
  }
  writeRange(g, dst, result);
}

void Verifier::executeLocal(uint32_t g) {
  const ir::Op &op = simOp(g);
  llvm::SmallVector<Piece, 8> src;
  readChecked(g, op.srcSlots(), src);
  if (op.kind == ir::OpKind::Copy)
    writeRange(g, op.slots(), src);
  else
    combineInto(g, op.slots(), op.dstSlots(), src, op.order == ir::Order::OtherFirst);
}

void Verifier::transfer(uint32_t send, uint32_t recv) {
  const ir::Op &so = simOp(send), &ro = simOp(recv);
  llvm::SmallVector<Piece, 8> payload;
  readChecked(send, so.slots(), payload);
  if (so.count != ro.count || sim_[send].racy) { // reported as a mismatch or race
    payload.clear();
    payload.push_back({ro.count, poisonValue, 0});
  }
  if (ro.kind == ir::OpKind::Recv)
    writeRange(recv, ro.slots(), payload);
  else
    combineInto(recv, ro.slots(), ro.dstSlots(), payload, ro.order == ir::Order::OtherFirst);
}

void Verifier::simulate(bool aliased, bool values) {
  const uint32_t p = shape_.ranks;
  aliased_ = aliased;
  reported_.clear();
  bufs_.resize(values ? p : 0);
  writers_.clear();
  if (aliased && values)
    writers_.resize(p);
  for (uint32_t r = 0; r < bufs_.size(); ++r) {
    auto &bb = bufs_[r];
    uint32_t inSlots = ir::bufferSlots(shape_, r, ir::Buffer::In).value_or(0);
    uint32_t outSlots = ir::bufferSlots(shape_, r, ir::Buffer::Out).value_or(0);
    ValueId me = values_.leaf(r);
    bb[0].reset(inSlots, SymVal{me, int64_t(ir::inChunk(shape_, r, 0))}, flatSlots(r, inSlots));
    bb[1].reset(outSlots, SymVal{}, flatSlots(r, outSlots));
    bb[2].reset(shape_.scratch, SymVal{}, flatSlots(r, shape_.scratch));
    if (shape_.collective == ir::Collective::Bcast && r == shape_.root)
      bb[1].assign(0, outSlots, SymVal{me, 0});
    if (aliased && outSlots && inSlots) {
      Loc L = locate(r, ir::Buffer::In);
      bb[1].assign(L.offset, L.offset + inSlots,
                   SymVal{me, int64_t(ir::inChunk(shape_, r, 0)) - int64_t(L.offset)});
      writers_[r].reset(outSlots, 0, flatSlots(r, outSlots));
    }
  }

  const size_t n = sim_.size();
  std::vector<uint32_t> queue; // FIFO from `head`; the done prefix is dropped now and then
  for (uint32_t r = 0; r < p; ++r)
    for (uint32_t i = 0, g = base_[r]; g < base_[r + 1]; ++i, ++g) {
      SimOp &so = sim_[g];
      so.pending = static_cast<uint32_t>(graphs_[r].preds(i).size());
      so.time = 0;
      so.state = 0;
      if (so.pending == 0)
        queue.push_back(g);
    }
  // A done op's successors become ready no earlier than it finished.
  auto complete = [&](uint32_t g, uint32_t t) {
    sim_[g].state = 2;
    sim_[g].time = t;
    const uint32_t end = succEnd(g);
    for (uint32_t k = sim_[g].succBegin; k < end; ++k) {
      SimOp &s = sim_[succ_[k]];
      s.time = std::max(s.time, t);
      if (--s.pending == 0)
        queue.push_back(succ_[k]);
    }
  };
  for (size_t head = 0; head < queue.size(); ++head) {
    if (opts_.stopAtFirstError && diags_.total())
      return;
    if (head >= 4096 && 2 * head >= queue.size()) {
      queue.erase(queue.begin(), queue.begin() + head);
      head = 0;
    }
    // The queue says which ops come next: fetch what they touch ahead, as
    // the ranks' state is far apart in memory (a wavefront over p ranks).
    // (Addresses by pointer arithmetic, not operator[]: an op without
    // successors may have succBegin at the end of an empty list.)
    if (head + 16 < queue.size())
      __builtin_prefetch(sim_.data() + queue[head + 16]);
    if (head + 8 < queue.size()) {
      const uint32_t ahead = queue[head + 8];
      const SimOp &sa = sim_[ahead];
      __builtin_prefetch(plan_.programs[sa.rank].ops.data() + (ahead - base_[sa.rank]));
      __builtin_prefetch(succ_.data() + sa.succBegin);
      if (sa.partner != noOp)
        __builtin_prefetch(sim_.data() + sa.partner);
      if (values)
        for (const SegmentMap<SymVal> &m : bufs_[sa.rank])
          m.prefetch();
    }
    uint32_t g = queue[head];
    SimOp &so = sim_[g];
    const uint32_t ready = so.time;
    const ir::Op &op = plan_.programs[so.rank].ops[g - base_[so.rank]];
    if (!ir::isMessage(op.kind)) {
      if (values)
        executeLocal(g);
      complete(g, ready + 1);
      continue;
    }
    so.state = 1; // posted at `ready`
    uint32_t q = so.partner;
    if (q == noOp || sim_[q].state != 1)
      continue;
    uint32_t t = std::max(ready, sim_[q].time) + 1;
    if (!values)
      ; // only the times
    else if (op.kind == ir::OpKind::Send)
      transfer(g, q);
    else
      transfer(q, g);
    complete(g, t);
    complete(q, t);
  }
  // Ops that never complete (deadlock, unmatched messages) leave what they
  // would have written poisoned, so nothing downstream is reported again.
  for (uint32_t g = 0; g < n && values; ++g) {
    const ir::Op &op = opOf(g);
    if (sim_[g].state != 2 && ir::writesBuf(op.kind)) {
      ir::Slots w = op.dstSlots();
      Loc L = locate(rankOf(g), w.buf);
      L.map->assign(w.chunk + L.offset, w.end() + L.offset, SymVal{poisonValue, 0});
    }
  }
  if (!aliased) {
    uint32_t longest = 0;
    for (uint32_t g = 0; g < n; ++g)
      if (sim_[g].state == 2)
        longest = std::max(longest, sim_[g].time);
    stats_.criticalPath = longest;
  }
}

void Verifier::reportDeadlocks() {
  const size_t n = sim_.size();
  // What a stuck op waits for: a posted message end for its partner; an op
  // not yet posted for a dependency that is not done (a posted one if any,
  // which keeps cycles short).
  auto next = [&](uint32_t g) -> uint32_t {
    if (sim_[g].state == 1)
      return sim_[g].partner;
    uint32_t pick = noOp;
    for (uint32_t pr : graphs_[rankOf(g)].preds(indexOf(g))) {
      uint32_t d = base_[rankOf(g)] + pr;
      if (sim_[d].state == 2)
        continue;
      if (sim_[d].state == 1)
        return d;
      if (pick == noOp)
        pick = d;
    }
    return pick;
  };
  std::vector<uint8_t> color(n, 0);
  std::vector<uint32_t> path;
  size_t stuck = 0;
  bool cycleFound = false;
  for (uint32_t g0 = 0; g0 < n; ++g0) {
    if (sim_[g0].state == 2 || color[g0])
      continue;
    path.clear();
    uint32_t g = g0;
    while (g != noOp && color[g] == 0 && sim_[g].state != 2) {
      color[g] = 1;
      path.push_back(g);
      g = next(g);
    }
    if (g != noOp && color[g] == 1) {
      auto at = std::find(path.begin(), path.end(), g);
      std::vector<uint32_t> cycle(at, path.end());
      std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
      cycleFound = true;
      Diagnostic d = opDiag(DiagClass::Deadlock, cycle[0]);
      std::string text = opRef(cycle[0]);
      const size_t shown = std::min<size_t>(cycle.size(), 16);
      for (size_t k = 1; k < shown; ++k)
        text += (k == 1 ? " waits for " : ", which waits for ") + opRef(cycle[k]);
      if (shown < cycle.size())
        text += llvm::formatv(", ... ({0} ops in the cycle)", cycle.size()).str();
      text += (cycle.size() == 1 ? " waits for " : ", which waits for ") + opRef(cycle[0]);
      if (shown < cycle.size() || cycle.size() > 1)
        text += " again";
      d.message = text;
      diags_.add(std::move(d));
    }
    for (uint32_t x : path)
      color[x] = 2;
    stuck += path.size();
  }
  if (stuck && !cycleFound && !mismatched_) {
    Diagnostic d;
    d.cls = DiagClass::Deadlock;
    d.message = llvm::formatv("{0} ops never complete", stuck);
    diags_.add(std::move(d));
  }
}

} // namespace collc::compiler::detail
