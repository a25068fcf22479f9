// compiler/VerifyRaces.cpp: the race check of the verifier (invariant 3).
//
// Within one rank, ops are visited in listing order (a topological order, as
// dependencies point backward). Per slot the check keeps the last writer and
// the readers since; an access conflicting with one of them that is not its
// ancestor is a race. Ancestry is decided with vector clocks over a greedy
// chain decomposition of the rank's DAG, stored sparsely, so plans whose
// ranks run a few chains side by side (all generated plans) cost about
// O(ops · log slots).
#include "compiler/VerifierImpl.h"

#include "llvm/Support/FormatVariadic.h"

namespace collc::compiler::detail {

namespace {

/// Ancestry within one rank's DAG.
class Clocks {
public:
  explicit Clocks(const ir::DepGraph &g) {
    const uint32_t n = g.size();
    chain_.resize(n);
    pos_.resize(n);
    begin_.assign(n + 1, 0);
    std::vector<uint32_t> dense, touched;
    llvm::ArrayRef<uint32_t> lastPreds;
    std::vector<std::pair<uint32_t, uint32_t>> merged;
    for (uint32_t i = 0; i < n; ++i) {
      llvm::ArrayRef<uint32_t> preds = g.preds(i);
      // Ops of one step share their predecessors: reuse the merged clock.
      if (i == 0 || preds != lastPreds) {
        merged.clear();
        for (uint32_t p : preds) {
          auto visit = [&](uint32_t c, uint32_t v) {
            if (c >= dense.size())
              dense.resize(c + 1, 0);
            if (dense[c] == 0)
              touched.push_back(c);
            dense[c] = std::max(dense[c], v);
          };
          for (auto [c, v] : clock(p))
            visit(c, v);
          visit(chain_[p], pos_[p] + 1);
        }
        std::sort(touched.begin(), touched.end());
        for (uint32_t c : touched) {
          merged.push_back({c, dense[c]});
          dense[c] = 0;
        }
        touched.clear();
        lastPreds = preds;
      }
      // Extend the chain of a predecessor that is still its chain's tail.
      uint32_t chain = noOp;
      for (uint32_t p : preds)
        if (chainLen_[chain_[p]] == pos_[p] + 1) {
          chain = chain_[p];
          break;
        }
      if (chain == noOp) {
        chain = static_cast<uint32_t>(chainLen_.size());
        chainLen_.push_back(0);
      }
      chain_[i] = chain;
      pos_[i] = chainLen_[chain]++;
      pool_.insert(pool_.end(), merged.begin(), merged.end());
      begin_[i + 1] = static_cast<uint32_t>(pool_.size());
    }
  }

  /// True when op a is an ancestor of op b (a != b).
  bool before(uint32_t a, uint32_t b) const {
    if (a >= b)
      return false;
    auto c = clock(b);
    auto it = std::lower_bound(c.begin(), c.end(), std::make_pair(chain_[a], 0u));
    if (it != c.end() && it->first == chain_[a] && it->second > pos_[a])
      return true;
    return chain_[a] == chain_[b] && pos_[a] < pos_[b];
  }

private:
  llvm::ArrayRef<std::pair<uint32_t, uint32_t>> clock(uint32_t i) const {
    return llvm::ArrayRef<std::pair<uint32_t, uint32_t>>(pool_).slice(
        begin_[i], begin_[i + 1] - begin_[i]);
  }
  std::vector<uint32_t> chain_, pos_, chainLen_;
  std::vector<uint32_t> begin_;
  std::vector<std::pair<uint32_t, uint32_t>> pool_; ///< (chain, ops of it before)
};

struct Access {
  uint32_t writer = noOp;
  uint32_t readers = 0; ///< head of a reader list, 0 = none
  bool operator==(const Access &o) const {
    return writer == o.writer && readers == o.readers;
  }
};

} // namespace

void Verifier::checkRacesOfRank(uint32_t r, bool aliased) {
  racy_.resize(rankOf_.size(), 0);
  const auto &ops = plan_.programs[r].ops;
  if (ops.size() < 2)
    return;
  Clocks clocks(graphs_[r]);
  std::array<SegmentMap<Access>, 3> maps;
  for (ir::Buffer b : {ir::Buffer::In, ir::Buffer::Out, ir::Buffer::Tmp})
    maps[int(b)].reset(ir::bufferSlots(shape_, r, b).value_or(0), Access{});
  const bool alias = aliased && ir::bufferSlots(shape_, r, ir::Buffer::Out) &&
                     ir::bufferSlots(shape_, r, ir::Buffer::In);
  const uint32_t aliasOffset = ir::inPlaceOffset(shape_, r);
  struct Cell {
    uint32_t op, next;
  };
  std::vector<Cell> cells(1, Cell{noOp, 0});
  llvm::DenseSet<uint64_t> reportedPairs;

  auto race = [&](uint32_t i, uint32_t other, bool iWrites, bool otherWrites,
                  const ir::Slots &where) {
    if (!reportedPairs.insert((uint64_t(i) << 32) | other).second)
      return;
    // What the two ops compute depends on timing: poison it downstream.
    racy_[gid(r, i)] = racy_[gid(r, other)] = 1;
    Diagnostic d = opDiag(DiagClass::Race, gid(r, i));
    d.slots = where;
    d.message = llvm::formatv("{0} {1} while op {2} ({3}) may still {4} it; no dependency "
                              "orders the two",
                              iWrites ? "writes" : "reads", ir::describe(where), other,
                              ir::describe(ops[other]), otherWrites ? "write" : "read");
    diags_.add(std::move(d));
  };

  struct Run {
    uint32_t b, e;
    Access a;
  };
  std::vector<Run> runs;
  llvm::DenseMap<uint32_t, uint32_t> consed;
  llvm::DenseSet<uint32_t> walked;
  for (uint32_t i = 0; i < ops.size(); ++i) {
    const ir::Op &op = ops[i];
    auto locate = [&](const ir::Slots &s) {
      if (alias && s.buf == ir::Buffer::In)
        return std::make_pair(&maps[int(ir::Buffer::Out)], aliasOffset);
      return std::make_pair(&maps[int(s.buf)], 0u);
    };
    auto collect = [&](SegmentMap<Access> &m, uint32_t b, uint32_t e) {
      runs.clear();
      m.visit(b, e, [&](uint32_t rb, uint32_t re, const Access &a) { runs.push_back({rb, re, a}); });
    };
    auto read = [&](const ir::Slots &s) {
      auto [m, off] = locate(s);
      collect(*m, s.chunk + off, s.end() + off);
      consed.clear();
      for (const Run &run : runs) {
        if (run.a.writer != noOp && run.a.writer != i && !clocks.before(run.a.writer, i))
          race(i, run.a.writer, false, true, ir::Slots{s.buf, run.b - off, run.e - run.b});
        auto [it, fresh] = consed.try_emplace(run.a.readers, 0);
        if (fresh) {
          cells.push_back({i, run.a.readers});
          it->second = static_cast<uint32_t>(cells.size() - 1);
        }
        m->assign(run.b, run.e, Access{run.a.writer, it->second});
      }
    };
    auto write = [&](const ir::Slots &s) {
      auto [m, off] = locate(s);
      collect(*m, s.chunk + off, s.end() + off);
      walked.clear();
      for (const Run &run : runs) {
        ir::Slots where{s.buf, run.b - off, run.e - run.b};
        if (run.a.writer != noOp && run.a.writer != i && !clocks.before(run.a.writer, i))
          race(i, run.a.writer, true, true, where);
        if (!walked.insert(run.a.readers).second)
          continue;
        for (uint32_t c = run.a.readers; c; c = cells[c].next)
          if (cells[c].op != i && !clocks.before(cells[c].op, i))
            race(i, cells[c].op, true, false, where);
      }
      m->assign(s.chunk + off, s.end() + off, Access{i, 0});
    };
    if (op.kind == ir::OpKind::Send || op.hasDst)
      read(op.slots());
    if (ir::hasSrc(op.kind))
      read(op.srcSlots());
    if (ir::writesBuf(op.kind))
      write(op.dstSlots());
  }
}

} // namespace collc::compiler::detail
