// compiler/VerifyRaces.cpp: the race check of the verifier (invariant 3).
//
// Within one rank, ops are visited in listing order (a topological order, as
// dependencies point backward). Per slot the check keeps the last writer and
// the readers since; an access conflicting with one of them that is not its
// ancestor is a race. Ancestry is decided with vector clocks over a greedy
// chain decomposition of the rank's DAG, stored sparsely (compiler/Clocks.h),
// so plans whose ranks run a few chains side by side (all generated plans)
// cost about O(ops · log slots).
#include "compiler/Clocks.h"
#include "compiler/SmallKeyMap.h"
#include "compiler/VerifierImpl.h"

#include "llvm/Support/FormatVariadic.h"

namespace collc::compiler::detail {

namespace {

struct Access {
  uint32_t writer = noOp;
  uint32_t readers = 0; ///< head of a reader list, 0 = none
  bool operator==(const Access &o) const {
    return writer == o.writer && readers == o.readers;
  }
};

} // namespace

void Verifier::checkRacesOfRank(uint32_t r, bool aliased) {
  const auto &ops = plan_.programs[r].ops;
  if (ops.size() < 2)
    return;
  Clocks clocks(graphs_[r]);
  std::array<SegmentMap<Access>, 3> maps;
  for (ir::Buffer b : {ir::Buffer::In, ir::Buffer::Out, ir::Buffer::Tmp}) {
    const uint32_t size = ir::bufferSlots(shape_, r, b).value_or(0);
    maps[int(b)].reset(size, Access{}, flatSlots(r, size));
  }
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
    if (raceProbe_) {
      raceFound_ = true;
      return;
    }
    if (!reportedPairs.insert((uint64_t(i) << 32) | other).second)
      return;
    // What the two ops compute depends on timing: poison it downstream.
    sim_[gid(r, i)].racy = sim_[gid(r, other)].racy = 1;
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
  // Per access, a map from reader lists met to what replaces them (reads)
  // or the set of lists walked (writes). An access meets one or two runs
  // almost always: a short list searched in place, a hash map beyond it.
  SmallKeyMap consed, walked;
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
        // Aliased: an earlier op wrote this input slot's place in out.
        if (alias && s.buf == ir::Buffer::In)
          inPlaceReadAfterWrite_ |= run.a.writer != noOp;
        uint32_t &head = consed.slot(run.a.readers);
        if (head == SmallKeyMap::none) {
          cells.push_back({i, run.a.readers});
          head = static_cast<uint32_t>(cells.size() - 1);
        }
        m->assign(run.b, run.e, Access{run.a.writer, head});
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
        if (uint32_t &seen = walked.slot(run.a.readers); seen != SmallKeyMap::none)
          continue;
        else
          seen = 1;
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
