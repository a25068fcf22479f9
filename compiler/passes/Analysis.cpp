// compiler/passes/Analysis.cpp: layout, accesses, dependency lists and message pairing.
#include "compiler/passes/Analysis.h"

#include "compiler/SegmentMap.h"
#include "compiler/SmallKeyMap.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>

namespace collc::compiler {

// --- memory layout ---------------------------------------------------------------

Layout::Layout(const ir::Shape &shape, uint32_t rank) {
  for (ir::Buffer b : {ir::Buffer::In, ir::Buffer::Out, ir::Buffer::Tmp})
    size_[int(b)] = ir::bufferSlots(shape, rank, b).value_or(0);
  aliased_ = shape.inPlace && ir::bufferSlots(shape, rank, ir::Buffer::In) &&
             ir::bufferSlots(shape, rank, ir::Buffer::Out);
  if (aliased_)
    aliasOffset_ = ir::inPlaceOffset(shape, rank);
}

Place Layout::place(const ir::Slots &s) const {
  if (s.buf == ir::Buffer::In && aliased_)
    return {1, s.chunk + aliasOffset_, s.end() + aliasOffset_};
  return {uint8_t(s.buf), s.chunk, s.end()};
}

Accesses accessesOf(const ir::Op &op) {
  Accesses a;
  switch (op.kind) {
  case ir::OpKind::Send:
    a.reads.push_back(op.slots());
    break;
  case ir::OpKind::Recv:
    a.write = op.slots();
    break;
  case ir::OpKind::RecvReduce:
    a.reads.push_back(op.slots());
    a.write = op.dstSlots();
    break;
  case ir::OpKind::Reduce:
    a.reads.push_back(op.srcSlots());
    a.reads.push_back(op.slots());
    a.write = op.dstSlots();
    break;
  case ir::OpKind::Copy:
    a.reads.push_back(op.srcSlots());
    a.write = op.slots();
    break;
  }
  return a;
}

void normalize(ir::Op &op) {
  if (!ir::hasSrc(op.kind)) {
    op.src = ir::Buffer::In;
    op.srcChunk = 0;
  }
  if (!ir::hasOrder(op.kind))
    op.order = ir::Order::OtherFirst;
  if (!ir::allowsDst(op.kind) || !op.hasDst) {
    op.hasDst = false;
    op.dst = ir::Buffer::Out;
    op.dstChunk = 0;
  }
  if (!ir::isMessage(op.kind))
    op.peer = 0;
  switch (op.deps) {
  case ir::DepKind::None:
    op.step = 0;
    op.after.clear();
    break;
  case ir::DepKind::Step:
    op.after.clear();
    break;
  case ir::DepKind::After:
    op.step = 0;
    break;
  }
}

// --- dependencies -----------------------------------------------------------------

DepLists explicitDeps(llvm::ArrayRef<ir::Op> ops) {
  ir::DepGraph g(ops);
  DepLists deps(ops.size());
  for (uint32_t i = 0; i < ops.size(); ++i) {
    deps[i].assign(g.preds(i).begin(), g.preds(i).end());
    std::sort(deps[i].begin(), deps[i].end());
    deps[i].erase(std::unique(deps[i].begin(), deps[i].end()), deps[i].end());
  }
  return deps;
}

bool writeDeps(llvm::MutableArrayRef<ir::Op> ops, const DepLists &deps) {
  bool changed = false;
  for (uint32_t i = 0; i < ops.size(); ++i) {
    ir::Op &op = ops[i];
    ir::Op before = op;
    if (deps[i].empty()) {
      op.deps = ir::DepKind::None;
      op.after.clear();
    } else {
      op.deps = ir::DepKind::After;
      op.after.assign(deps[i].begin(), deps[i].end());
    }
    op.step = 0;
    changed |= !(op == before);
  }
  return changed;
}

Ancestry::Ancestry(const DepLists &deps) {
  for (const auto &d : deps)
    clocks_.add(d);
}

void reduceTransitively(DepLists &deps) {
  Clocks clocks;
  llvm::SmallVector<uint32_t, 8> kept;
  for (auto &d : deps) {
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
    kept.clear();
    // Highest first: a candidate implied by another is an ancestor of a
    // higher one, which is then already kept.
    for (auto it = d.rbegin(); it != d.rend(); ++it) {
      const uint32_t c = *it;
      if (llvm::any_of(kept, [&](uint32_t k) { return clocks.before(c, k); }))
        continue;
      kept.push_back(c);
    }
    d.assign(kept.rbegin(), kept.rend());
    clocks.add(d);
  }
}

SlotUse slotUse(llvm::ArrayRef<ir::Op> ops) {
  SlotUse u;
  for (const ir::Op &op : ops) {
    const uint64_t ranges = 1 + ir::hasSrc(op.kind) + op.hasDst;
    u.accesses += ranges;
    u.slots += ranges * op.count;
  }
  return u;
}

bool SlotUse::flat(uint64_t size) const {
  return SegmentMap<int>::preferFlat(size, accesses, slots);
}

DepLists dataDeps(const ir::Shape &shape, uint32_t rank, llvm::ArrayRef<ir::Op> ops) {
  const Layout layout(shape, rank);
  // Per slot: the last writer and the readers since (a list of cells shared
  // by the runs that got the same readers).
  struct SlotState {
    int64_t writer = -1;
    uint32_t readers = 0; ///< head cell, 0 = none
    bool operator==(const SlotState &o) const {
      return writer == o.writer && readers == o.readers;
    }
  };
  struct Cell {
    uint32_t op, next;
  };
  std::vector<Cell> cells(1, Cell{~0u, 0});
  SegmentMap<SlotState> maps[3];
  const SlotUse use = slotUse(ops);
  for (uint8_t s = 0; s < 3; ++s)
    maps[s].reset(layout.spaceSize(s), SlotState{}, use.flat(layout.spaceSize(s)));
  struct Run {
    uint32_t b, e;
    SlotState st;
  };
  std::vector<Run> runs;
  SmallKeyMap consed, walked;
  // The runs of `s`'s place (clipped to its space); false when empty.
  auto collect = [&](const ir::Slots &s) -> SegmentMap<SlotState> * {
    const Place p = layout.place(s);
    SegmentMap<SlotState> &m = maps[p.space];
    runs.clear();
    const uint32_t e = std::min(p.end, m.size());
    if (p.begin >= e)
      return nullptr;
    m.visit(p.begin, e, [&](uint32_t rb, uint32_t re, const SlotState &st) {
      runs.push_back({rb, re, st});
    });
    return &m;
  };
  DepLists deps(ops.size());
  for (uint32_t i = 0; i < ops.size(); ++i) {
    const Accesses a = accessesOf(ops[i]);
    auto &d = deps[i];
    for (const ir::Slots &r : a.reads)
      if (collect(r))
        for (const Run &run : runs)
          if (run.st.writer >= 0)
            d.push_back(uint32_t(run.st.writer));
    if (a.write && collect(*a.write)) {
      walked.clear();
      for (const Run &run : runs) {
        if (run.st.writer >= 0)
          d.push_back(uint32_t(run.st.writer));
        if (uint32_t &seen = walked.slot(run.st.readers); seen != SmallKeyMap::none)
          continue;
        else
          seen = 1;
        for (uint32_t c = run.st.readers; c; c = cells[c].next)
          if (cells[c].op != i)
            d.push_back(cells[c].op);
      }
    }
    for (const ir::Slots &r : a.reads) {
      SegmentMap<SlotState> *m = collect(r);
      if (!m)
        continue;
      consed.clear();
      for (const Run &run : runs) {
        if (run.st.readers && cells[run.st.readers].op == i)
          continue;
        uint32_t &head = consed.slot(run.st.readers);
        if (head == SmallKeyMap::none) {
          cells.push_back({i, run.st.readers});
          head = static_cast<uint32_t>(cells.size() - 1);
        }
        m->assign(run.b, run.e, SlotState{run.st.writer, head});
      }
    }
    if (a.write)
      if (SegmentMap<SlotState> *m = collect(*a.write))
        m->assign(runs.front().b, runs.back().e, SlotState{int64_t(i), 0});
  }
  reduceTransitively(deps);
  return deps;
}

void eraseOps(ir::Program &prog, DepLists deps, const std::vector<bool> &keep) {
  const uint32_t n = static_cast<uint32_t>(prog.ops.size());
  std::vector<uint32_t> index(n, 0);
  uint32_t next = 0;
  for (uint32_t i = 0; i < n; ++i)
    if (keep[i])
      index[i] = next++;
  // Resolve each op's dependencies to kept ops, through erased ones.
  for (uint32_t i = 0; i < n; ++i) {
    llvm::SmallVector<uint32_t, 4> res;
    for (uint32_t p : deps[i]) {
      if (keep[p])
        res.push_back(p);
      else
        res.append(deps[p].begin(), deps[p].end()); // already resolved
    }
    std::sort(res.begin(), res.end());
    res.erase(std::unique(res.begin(), res.end()), res.end());
    deps[i] = std::move(res);
  }
  // The kept ops move down in place (index[i] <= i), their lists renumbered.
  DepLists outDeps;
  outDeps.reserve(next);
  for (uint32_t i = 0; i < n; ++i) {
    if (!keep[i])
      continue;
    if (index[i] != i)
      prog.ops[index[i]] = std::move(prog.ops[i]);
    llvm::SmallVector<uint32_t, 4> d;
    for (uint32_t p : deps[i])
      d.push_back(index[p]);
    outDeps.push_back(std::move(d));
  }
  prog.ops.resize(next);
  reduceTransitively(outDeps);
  writeDeps(prog.ops, outDeps);
}

// --- messages ------------------------------------------------------------------------

Messages::Messages(const ir::Plan &plan) {
  const uint32_t p = static_cast<uint32_t>(plan.programs.size());
  base_.assign(p + 1, 0);
  for (uint32_t r = 0; r < p; ++r)
    base_[r + 1] = base_[r] + static_cast<uint32_t>(plan.programs[r].ops.size());
  partner_.assign(base_[p], MsgEnd{});
  matched_.assign(base_[p], 0);
  struct Channel {
    std::vector<uint32_t> sends, recvs;
  };
  llvm::DenseMap<uint64_t, Channel> channels;
  for (uint32_t r = 0; r < p; ++r) {
    const auto &ops = plan.programs[r].ops;
    for (uint32_t i = 0; i < ops.size(); ++i) {
      const ir::Op &op = ops[i];
      if (!ir::isMessage(op.kind) || op.peer >= p || op.peer == r)
        continue;
      if (op.kind == ir::OpKind::Send)
        channels[(uint64_t(r) << 32) | op.peer].sends.push_back(i);
      else
        channels[(uint64_t(op.peer) << 32) | r].recvs.push_back(i);
    }
  }
  for (auto &kv : channels) {
    const uint32_t from = uint32_t(kv.first >> 32), to = uint32_t(kv.first);
    const Channel &c = kv.second;
    for (size_t k = 0; k < std::min(c.sends.size(), c.recvs.size()); ++k) {
      const uint32_t s = base_[from] + c.sends[k], rv = base_[to] + c.recvs[k];
      partner_[s] = {to, c.recvs[k]};
      partner_[rv] = {from, c.sends[k]};
      matched_[s] = matched_[rv] = 1;
    }
  }
}

std::optional<MsgEnd> Messages::partner(uint32_t rank, uint32_t op) const {
  const uint32_t g = base_[rank] + op;
  if (!matched_[g])
    return std::nullopt;
  return partner_[g];
}


} // namespace collc::compiler
