// compiler/Verifier.cpp: proves that a plan computes its collective.
//
// The verifier executes all ranks symbolically (docs/plan-format.md, "Verification") and
// reports every independent problem as a structured diagnostic. It proves:
//  1. structure (`invalid`): the shape is valid and every op names buffers its
//     rank has, slot ranges inside them and backward dependencies;
//  2. message matching (`mismatch`): the k-th send a→b pairs with the k-th
//     receive from a at b; no end is left over, both ends move the same number
//     of slots, no peer is outside 0..p-1 and no rank messages itself;
//  3. races (`race`): two ops of a rank touching overlapping slots, one of
//     them writing, are ordered by a dependency path (a send reads its slots
//     until it completes) — checked with in and out separate and, for
//     in-place plans, aliased;
//  4. deadlock freedom (`deadlock`): posting ops when their dependencies are
//     done, with unbuffered sends (a send completes only when its receive is
//     posted and vice versa), every op completes; a stuck state is reported
//     as its wait-for cycle across ranks;
//  5. values: no op reads an undefined slot (`uninitialized`), writes the
//     read-only input (`input-write`), combines different chunks or writes
//     into an in/out slot a chunk other than the slot's own — those slots are
//     sized for their chunk; only tmp slots hold any (`misplaced`), counts a
//     rank twice (`duplicate-contribution`) or — for
//     plans that must work with merely associative operations — combines
//     anything but adjacent rank intervals in rank order (`order`);
//  6. results: every required output slot holds exactly the collective's
//     value for its chunk (`missing-contribution`, `misplaced`);
//  7. in-place: with `in_place: true`, 3, 5 and 6 hold again with in and out
//     aliased, and no op reads input that was overwritten (`input-write`);
//  8. barriers (`unsynchronized`): every rank's ops wait, through messages
//     and dependencies, on an op of every other rank (VerifyBarrier.cpp);
//  9. reproducibility: whether all ranks end with the same reduction tree
//     for each result chunk — the same expression, operand order included,
//     even for commutative plans, since a user's commutative operation may
//     give other bits for b ∘ a (`nondeterministic` when required); for
//     in-place plans with in and out separate and aliased alike.
// Problems found only in the aliased run say "in-place". Diagnostics caused by
// an earlier one are suppressed: a faulty op yields a poison value that
// propagates silently.
#include "compiler/VerifierImpl.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace collc::compiler {

llvm::StringRef name(DiagClass c) {
  switch (c) {
#define COLLC_DIAG(Enum, Text)                                                           \
  case DiagClass::Enum:                                                                  \
    return Text;
#include "compiler/Diagnostics.def"
  }
  llvm_unreachable("bad diagnostic class");
}

void print(const Diagnostic &d, llvm::raw_ostream &os) {
  if (!d.location.empty())
    os << d.location << ": ";
  if (d.rank) {
    os << "rank " << *d.rank;
    if (!d.context.empty())
      os << " (" << d.context << ")";
    if (d.op && d.slots && d.cls == DiagClass::MissingContribution)
      os << ", " << ir::describe(*d.slots) << " ("
         << (d.lastWriter ? "last written by op " : "never written; the rank's last op is op ")
         << *d.op << ": " << d.opText << ")";
    else if (d.op)
      os << ", op " << *d.op << " (" << d.opText << ")";
    else if (d.slots)
      os << ", " << ir::describe(*d.slots);
  } else if (d.chunk)
    os << "chunk " << *d.chunk;
  else
    os << "plan";
  os << ": " << name(d.cls) << ": ";
  if (d.inPlace)
    os << "in-place (in and out aliased): ";
  os << d.message;
}

std::string toString(const Diagnostic &d) {
  std::string s;
  llvm::raw_string_ostream os(s);
  print(d, os);
  return os.str();
}

void printStats(const PlanStats &s, llvm::raw_ostream &os) {
  os << "ops: " << s.ops << '\n';
  os << "messages: " << s.messages << '\n';
  os << "chunks-moved: " << s.chunksMoved << '\n';
  os << "scratch: " << s.scratch << '\n';
  os << "critical-path: " << s.criticalPath << '\n';
  os << "identical: " << (s.identical ? "yes" : "no") << '\n';
}

namespace {
/// Fills in each diagnostic's source location from its op's line.
VerifyResult located(const ir::Plan &plan, VerifyResult result) {
  if (!plan.source.empty())
    for (Diagnostic &d : result.diagnostics)
      if (d.rank && d.op && *d.rank < plan.programs.size() &&
          *d.op < plan.programs[*d.rank].ops.size())
        if (uint32_t line = plan.programs[*d.rank].ops[*d.op].loc.line)
          d.location = plan.source + ":" + std::to_string(line);
  return result;
}
} // namespace

VerifyResult verify(const ir::Plan &plan, const VerifyOptions &opts) {
  return located(plan, detail::Verifier(plan).run(opts));
}

VerifyResult verifyReordered(const ir::Plan &plan, const VerifyOptions &opts,
                             const VerifyResult &before) {
  detail::Verifier v(plan);
  if (std::optional<VerifyResult> r = v.runReordered(opts, before))
    return located(plan, std::move(*r));
  if (v.reusable())
    return located(plan, v.run(opts));
  return verify(plan, opts);
}

Prover::Prover(const ir::Plan &plan) : plan_(plan) {}
Prover::~Prover() = default;

VerifyResult Prover::verify(const VerifyOptions &opts) {
  if (!v_ || !v_->reusable())
    v_ = std::make_unique<detail::Verifier>(plan_);
  return located(plan_, v_->run(opts));
}

namespace detail {

void Collector::add(Diagnostic d) {
  if (aliased) {
    for (size_t i = 0; i < baseline_ && i < diags_.size(); ++i) {
      const Diagnostic &b = diags_[i];
      if (b.cls == d.cls && b.rank == d.rank && b.op == d.op && b.chunk == d.chunk &&
          b.message == d.message)
        return;
    }
    d.inPlace = true;
  }
  if (!wants()) {
    ++dropped_;
    return;
  }
  diags_.push_back(std::move(d));
}

Verifier::Verifier(const ir::Plan &plan) : plan_(plan), shape_(plan.shape) {}

bool Verifier::reusable() const {
  if (!prepared_ || !clean_)
    return false;
  ir::Shape a = shape_, b = preparedShape_;
  a.commutative = b.commutative;
  a.inPlace = b.inPlace;
  return a == b && !ir::checkShape(shape_);
}

Diagnostic Verifier::opDiag(DiagClass cls, uint32_t g) const {
  Diagnostic d;
  d.cls = cls;
  d.rank = rankOf(g);
  d.op = indexOf(g);
  d.opText = ir::describe(opOf(g));
  return d;
}

std::string Verifier::opRef(uint32_t g) const {
  return llvm::formatv("rank {0} op {1} ({2})", rankOf(g), indexOf(g), ir::describe(opOf(g)))
      .str();
}

bool Verifier::checkStructure() {
  if (std::optional<ir::ShapeError> e = ir::checkShape(shape_)) {
    Diagnostic d;
    d.cls = DiagClass::Invalid;
    d.message = e->message;
    diags_.add(std::move(d));
    return false;
  }
  if (plan_.programs.size() != shape_.ranks) {
    Diagnostic d;
    d.cls = DiagClass::Invalid;
    d.message = llvm::formatv("{0} programs for {1} ranks", plan_.programs.size(),
                              shape_.ranks);
    diags_.add(std::move(d));
    return false;
  }
  bool ok = true;
  base_.resize(shape_.ranks + 1);
  uint64_t total = 0;
  for (uint32_t r = 0; r < shape_.ranks; ++r) {
    base_[r] = static_cast<uint32_t>(total);
    total += plan_.programs[r].ops.size();
  }
  if (total >= noOp) {
    Diagnostic d;
    d.cls = DiagClass::Invalid;
    d.message = llvm::formatv("{0} ops is more than the verifier handles", total);
    diags_.add(std::move(d));
    return false;
  }
  base_[shape_.ranks] = static_cast<uint32_t>(total);
  sim_.assign(total, SimOp{});
  access_.assign(shape_.ranks, {0, 0});
  size_t combining = 0;
  for (uint32_t r = 0; r < shape_.ranks; ++r) {
    const auto &ops = plan_.programs[r].ops;
    for (uint32_t g = base_[r]; g < base_[r + 1]; ++g)
      sim_[g].rank = r;
    for (uint32_t i = 0; i < ops.size(); ++i) {
      const ir::Op &op = ops[i];
      const uint64_t ranges = 1 + ir::hasSrc(op.kind) + op.hasDst;
      access_[r].first += ranges;
      access_[r].second += ranges * op.count;
      combining += op.kind == ir::OpKind::RecvReduce || op.kind == ir::OpKind::Reduce;
      if (std::optional<std::string> e = ir::checkOp(shape_, r, ops, i)) {
        Diagnostic d = opDiag(DiagClass::Invalid, gid(r, i));
        d.slots = ops[i].slots();
        d.message = *e;
        diags_.add(std::move(d));
        ok = false;
      }
    }
  }
  combining_ = combining;
  return ok;
}

void Verifier::matchMessages() {
  const uint32_t p = shape_.ranks;
  auto badPeer = [&](uint32_t g, const ir::Op &op, uint32_t r) {
    Diagnostic d = opDiag(DiagClass::Mismatch, g);
    d.slots = op.slots();
    if (op.peer >= p)
      d.message = llvm::formatv("peer {0} out of range (ranks = {1})", ir::peerValue(op.peer), p);
    else
      d.message = llvm::formatv("rank {0} {1} itself", r,
                                op.kind == ir::OpKind::Send ? "sends a message to"
                                                            : "receives a message from");
    diags_.add(std::move(d));
    mismatched_ = true;
  };
  // Message ends as (channel from << 32 | to, global id), sorted: each
  // channel's ends in listing order (ids grow with the listing), channels
  // in order — instead of a table of per-channel lists. Listed rank by rank,
  // sends are in (from, id) order and receives in (to, id) order, so stable
  // counting sorts by rank do it in O(ends + p): sends by `to` and then by
  // `from`, receives by `from`.
  std::vector<std::pair<uint64_t, uint32_t>> sendEnds, recvEnds;
  for (uint32_t r = 0; r < p; ++r) {
    const auto &ops = plan_.programs[r].ops;
    for (uint32_t i = 0; i < ops.size(); ++i) {
      const ir::Op &op = ops[i];
      if (!ir::isMessage(op.kind))
        continue;
      uint32_t g = gid(r, i);
      if (op.peer >= p || op.peer == r) {
        badPeer(g, op, r);
        continue;
      }
      if (op.kind == ir::OpKind::Send) {
        stats_.chunksMoved += op.count;
        sendEnds.push_back({(uint64_t(r) << 32) | op.peer, g});
      } else {
        recvEnds.push_back({(uint64_t(op.peer) << 32) | r, g});
      }
    }
  }
  stats_.messages = sendEnds.size();
  {
    std::vector<std::pair<uint64_t, uint32_t>> tmp;
    std::vector<uint32_t> at;
    auto sortBy = [&](std::vector<std::pair<uint64_t, uint32_t>> &v, int shift) {
      at.assign(p + 1, 0);
      for (const auto &x : v)
        ++at[uint32_t(x.first >> shift) + 1];
      for (uint32_t k = 0; k < p; ++k)
        at[k + 1] += at[k];
      tmp.resize(v.size());
      for (const auto &x : v)
        tmp[at[uint32_t(x.first >> shift)]++] = x;
      v.swap(tmp);
    };
    sortBy(sendEnds, 0);
    sortBy(sendEnds, 32);
    sortBy(recvEnds, 32);
  }
  size_t si = 0, ri = 0;
  llvm::SmallVector<uint32_t, 8> sends, recvs;
  while (si < sendEnds.size() || ri < recvEnds.size()) {
    // The next channel in key order, and its ends on either side.
    const uint64_t key = std::min(si < sendEnds.size() ? sendEnds[si].first : ~0ull,
                                  ri < recvEnds.size() ? recvEnds[ri].first : ~0ull);
    sends.clear();
    recvs.clear();
    for (; si < sendEnds.size() && sendEnds[si].first == key; ++si)
      sends.push_back(sendEnds[si].second);
    for (; ri < recvEnds.size() && recvEnds[ri].first == key; ++ri)
      recvs.push_back(recvEnds[ri].second);
    uint32_t from = uint32_t(key >> 32), to = uint32_t(key);
    size_t n = std::min(sends.size(), recvs.size());
    for (size_t k = 0; k < n; ++k) {
      uint32_t s = sends[k], rv = recvs[k];
      sim_[s].partner = rv;
      sim_[rv].partner = s;
      const ir::Op &so = opOf(s), &ro = opOf(rv);
      if (so.count == ro.count)
        continue;
      Diagnostic d = opDiag(DiagClass::Mismatch, rv);
      d.slots = ro.slots();
      if (ro.count < so.count)
        d.message = llvm::formatv("receive range {0} is too small: the matching send, "
                                  "{1}, sends {2} slots",
                                  ir::describe(ro.slots()), opRef(s), so.count);
      else
        d.message = llvm::formatv("receive range {0} holds {1} slots but the matching "
                                  "send, {2}, sends {3}",
                                  ir::describe(ro.slots()), ro.count, opRef(s), so.count);
      diags_.add(std::move(d));
      mismatched_ = true;
    }
    for (size_t k = n; k < sends.size(); ++k) {
      Diagnostic d = opDiag(DiagClass::Mismatch, sends[k]);
      d.slots = opOf(sends[k]).slots();
      d.message = llvm::formatv("send has no matching receive: rank {0} receives only {1} "
                                "message{2} from rank {3}",
                                to, recvs.size(), recvs.size() == 1 ? "" : "s", from);
      diags_.add(std::move(d));
      mismatched_ = true;
    }
    for (size_t k = n; k < recvs.size(); ++k) {
      Diagnostic d = opDiag(DiagClass::Mismatch, recvs[k]);
      d.slots = opOf(recvs[k]).slots();
      d.message = llvm::formatv("receive has no matching send: rank {0} sends only {1} "
                                "message{2} to rank {3}",
                                from, sends.size(), sends.size() == 1 ? "" : "s", to);
      diags_.add(std::move(d));
      mismatched_ = true;
    }
  }
}

void Verifier::checkRaces(bool aliased) {
  for (uint32_t r = 0; r < shape_.ranks; ++r) {
    checkRacesOfRank(r, aliased);
    if ((opts_.stopAtFirstError && diags_.total()) || (raceProbe_ && raceFound_))
      return;
  }
}

namespace {
/// What rank r's out slots must hold at the end.
struct Expectation {
  bool required = false;
  uint32_t lo = 0, hi = 0; ///< contributing ranks (reductions)
};
Expectation expectationFor(const ir::Shape &s, uint32_t r) {
  const uint32_t p = s.ranks;
  const bool required = ir::outRequired(s, r);
  switch (s.collective) {
  case ir::Collective::Allreduce:
  case ir::Collective::ReduceScatterBlock:
  case ir::Collective::Reduce:
    return {required, 0, p - 1};
  case ir::Collective::Scan:
    return {required, 0, r};
  case ir::Collective::Exscan:
    return {required, 0, r >= 1 ? r - 1 : 0};
  case ir::Collective::Allgather:
  case ir::Collective::Bcast:
  case ir::Collective::Alltoall:
  case ir::Collective::Gather:
  case ir::Collective::Scatter:
  case ir::Collective::Barrier:
    return {required, 0, 0};
  }
  llvm_unreachable("bad collective");
}
} // namespace

void Verifier::checkResults() {
  const uint32_t p = shape_.ranks;
  for (uint32_t r = 0; r < p; ++r) {
    Expectation want = expectationFor(shape_, r);
    if (!want.required)
      continue;
    const SegmentMap<SymVal> &out = bufs_[r][1];
    // Per class, the first bad run and how many slots are bad.
    struct Bad {
      std::optional<ir::Slots> first;
      std::string message;
      uint64_t slots = 0;
    };
    std::array<Bad, 3> bad; // missing, misplaced, extra
    auto note = [&](int k, uint32_t b, uint32_t e, std::string msg) {
      if (!bad[k].first) {
        bad[k].first = ir::Slots{ir::Buffer::Out, b, e - b};
        bad[k].message = std::move(msg);
      }
      bad[k].slots += e - b;
    };
    // Runs of out with one expected chunk offset (ir::outChunk(r, j) - j)
    // and, when data moves, one owner (ir::outOwner): the whole buffer, or
    // a block where they change per block.
    auto visitRun = [&](uint32_t b, uint32_t e, const SymVal &sv) {
      const int64_t expOff = int64_t(ir::outChunk(shape_, r, b)) - int64_t(b);
      const uint32_t owner = ir::outOwner(shape_, r, b);
      if (sv.v == undefValue) {
        note(0, b, e,
             llvm::formatv("holds nothing, expected {0}",
                           dataCollective()
                               ? llvm::formatv("d[{0}]", owner).str()
                               : llvm::formatv("x[{0}..{1}]", want.lo, want.hi).str()));
        return;
      }
      if (sv.off != expOff) {
        int64_t got = int64_t(b) + sv.off, exp = int64_t(b) + expOff;
        note(1, b, e,
             llvm::formatv("holds {0} of chunk {1}, expected chunk {2}",
                           values_.show(sv.v, dataCollective()), got, exp));
        return;
      }
      if (dataCollective()) {
        if (!(values_.isLeaf(sv.v) && values_.leafRank(sv.v) == owner))
          note(1, b, e,
               llvm::formatv("holds {0}, expected d[{1}]", values_.show(sv.v, true), owner));
        return;
      }
      if (values_.coversExactly(sv.v, want.lo, want.hi))
        return;
      std::string missing = values_.missingRanks(sv.v, want.lo, want.hi);
      std::string extra = values_.extraRanks(sv.v, want.lo, want.hi);
      std::string exp = llvm::formatv("x[{0}..{1}]", want.lo, want.hi);
      if (!missing.empty())
        note(0, b, e,
             llvm::formatv("holds {0}, expected {1} (lacks {2})",
                           values_.show(sv.v), exp, ranksPhrase(missing)));
      else
        note(2, b, e,
             llvm::formatv("holds {0}, expected {1} ({2} {3} not belong here)",
                           values_.show(sv.v), exp, ranksPhrase(extra),
                           extra.find_first_of(".,") == std::string::npos ? "does" : "do"));
    };
    out.visit(0, out.size(), [&](uint32_t b, uint32_t e, const SymVal &sv) {
      if (sv.v == poisonValue)
        return;
      for (uint32_t s = b; s < e; s = std::min(e, outRunEnd(s)))
        visitRun(s, std::min(e, outRunEnd(s)), sv);
    });
    const DiagClass classes[] = {DiagClass::MissingContribution, DiagClass::Misplaced,
                                 DiagClass::Misplaced};
    for (int k = 0; k < 3; ++k) {
      if (!bad[k].first)
        continue;
      Diagnostic d;
      d.cls = classes[k];
      d.rank = r;
      d.slots = bad[k].first;
      d.message = bad[k].message;
      if (bad[k].slots > bad[k].first->count)
        d.message += llvm::formatv(" ({0} slots of out in all)", bad[k].slots).str();
      if (k == 0) {
        // Where the author looks: the op that last wrote the slots (in the
        // rank's program order), or the rank's last op when none did.
        const auto &ops = plan_.programs[r].ops;
        std::optional<uint32_t> w;
        for (uint32_t i = uint32_t(ops.size()); i-- > 0;)
          if (ir::writesBuf(ops[i].kind) && ops[i].dstSlots().overlaps(*d.slots)) {
            w = i;
            break;
          }
        d.lastWriter = w.has_value();
        if (!w && !ops.empty())
          w = uint32_t(ops.size() - 1);
        if (w) {
          d.op = *w;
          d.opText = ir::describe(ops[*w]);
        }
      }
      diags_.add(std::move(d));
    }
  }
}

void Verifier::checkIdentical() {
  if (shape_.collective != ir::Collective::Allreduce || shape_.ranks < 2)
    return;
  const SegmentMap<SymVal> &ref = bufs_[0][1];
  for (uint32_t r = 1; r < shape_.ranks && stats_.identical; ++r) {
    const SegmentMap<SymVal> &out = bufs_[r][1];
    out.visit(0, out.size(), [&](uint32_t b, uint32_t e, const SymVal &sv) {
      if (!stats_.identical || sv.v <= poisonValue)
        return;
      ref.visit(b, e, [&](uint32_t rb, uint32_t, const SymVal &rv) {
        if (!stats_.identical || rv.v <= poisonValue || rv == sv)
          return;
        stats_.identical = false;
        if (!opts_.requireIdentical)
          return;
        Diagnostic d;
        d.cls = DiagClass::Nondeterministic;
        d.chunk = uint32_t(int64_t(rb) + sv.off);
        d.message = llvm::formatv("rank 0 and rank {0} compute different reduction trees: "
                                  "{1} vs {2}",
                                  r, values_.showTree(rv.v), values_.showTree(sv.v));
        diags_.add(std::move(d));
      });
    });
  }
}

bool Verifier::conflict(uint32_t r, const ir::Op &a, const ir::Op &b, bool aliased) const {
  // The accesses as the race check sees them: a send (and a three-address
  // combine) reads buf, src is read, dst (or buf) is written.
  struct Access {
    ir::Slots s;
    bool write;
  };
  const bool alias = aliased && ir::bufferSlots(shape_, r, ir::Buffer::Out) &&
                     ir::bufferSlots(shape_, r, ir::Buffer::In);
  const uint32_t offset = ir::inPlaceOffset(shape_, r);
  auto accesses = [&](const ir::Op &op, llvm::SmallVectorImpl<Access> &out) {
    if (op.kind == ir::OpKind::Send || op.hasDst)
      out.push_back({op.slots(), false});
    if (ir::hasSrc(op.kind))
      out.push_back({op.srcSlots(), false});
    if (ir::writesBuf(op.kind))
      out.push_back({op.dstSlots(), true});
    if (alias)
      for (Access &x : out)
        if (x.s.buf == ir::Buffer::In)
          x.s = ir::Slots{ir::Buffer::Out, x.s.chunk + offset, x.s.count};
  };
  llvm::SmallVector<Access, 3> xa, xb;
  accesses(a, xa);
  accesses(b, xb);
  for (const Access &x : xa)
    for (const Access &y : xb)
      if ((x.write || y.write) && x.s.overlaps(y.s))
        return true;
  return false;
}

std::optional<VerifyResult> Verifier::runReordered(const VerifyOptions &opts,
                                                   const VerifyResult &before) {
  // A barrier's proof is its happens-before order, which reordering changes.
  if (!before.proven() || shape_.collective == ir::Collective::Barrier)
    return std::nullopt;
  opts_ = opts;
  diags_ = Collector(opts.maxErrors);
  if (!prepared_)
    prepare();
  if (!clean_)
    return std::nullopt;
  // Every dependency joins two conflicting ops (in listing order, which the
  // structure check guarantees): in the layout the race check of the plan
  // proven before used, in and out aliased for in-place plans.
  for (uint32_t r = 0; r < shape_.ranks; ++r) {
    const auto &ops = plan_.programs[r].ops;
    for (uint32_t i = 0; i < ops.size(); ++i)
      for (uint32_t d : graphs_[r].preds(i))
        if (!conflict(r, ops[d], ops[i], shape_.inPlace))
          return std::nullopt;
  }
  // Race-free, as a probe (a race is reported by the full run).
  raceProbe_ = true;
  raceFound_ = false;
  checkRaces(shape_.inPlace);
  raceProbe_ = false;
  if (raceFound_)
    return std::nullopt;
  // The times alone, for the critical path (and every op completes).
  simulate(false, /*values=*/false);
  for (const SimOp &so : sim_)
    if (so.state != 2)
      return std::nullopt;
  VerifyResult result;
  result.stats = stats_;
  result.stats.identical = before.stats.identical;
  result.aliasedByOrder = before.aliasedByOrder;
  result.reordered = true;
  return result;
}

void Verifier::prepare() {
  prepared_ = true;
  stats_.ops = plan_.numOps();
  stats_.scratch = shape_.scratch;
  preparedShape_ = shape_;
  structureOk_ = checkStructure();
  if (structureOk_) {
    // Global successor lists.
    graphs_.reserve(shape_.ranks);
    for (uint32_t r = 0; r < shape_.ranks; ++r)
      graphs_.emplace_back(plan_.programs[r].ops);
    const size_t n = sim_.size();
    std::vector<uint32_t> fill(n, 0); // successor counts, then where the next goes
    for (uint32_t r = 0; r < shape_.ranks; ++r)
      for (uint32_t i = 0; i < graphs_[r].size(); ++i)
        for (uint32_t pr : graphs_[r].preds(i))
          ++fill[gid(r, pr)];
    uint32_t edges = 0;
    for (size_t g = 0; g < n; ++g) {
      sim_[g].succBegin = edges;
      edges += fill[g];
      fill[g] = sim_[g].succBegin;
    }
    succ_.resize(edges);
    for (uint32_t r = 0; r < shape_.ranks; ++r)
      for (uint32_t i = 0; i < graphs_[r].size(); ++i)
        for (uint32_t pr : graphs_[r].preds(i))
          succ_[fill[gid(r, pr)]++] = gid(r, i);
    matchMessages();
  }
  clean_ = structureOk_ && diags_.total() == 0;
  preparedStats_ = stats_;
}

VerifyResult Verifier::run(const VerifyOptions &opts) {
  opts_ = opts;
  diags_ = Collector(opts.maxErrors);
  if (!prepared_) {
    prepare();
  } else {
    // A later run (reusable()): what the last one changed starts afresh.
    assert(reusable() && "a run reusing an unclean or changed plan's preparation");
    stats_ = preparedStats_;
    values_ = ValueTable();
    reported_.clear();
    for (SimOp &so : sim_)
      so.racy = 0;
    inPlaceReadAfterWrite_ = aliasedByOrder_ = raceProbe_ = raceFound_ = false;
  }
  if (structureOk_) {
    // Each combining op makes about one value (hash-consing shares the rest).
    values_.reserve(combining_);
    // With stopAtFirstError the simulation comes before the race check: a
    // plan with a race is refused either way, and without one the
    // simulation is the same, while a fault it finds (e.g. `order`, when a
    // stronger claim is tried) usually shows in the first steps.
    const bool stop = opts_.stopAtFirstError;
    auto failed = [&] { return stop && diags_.total() != 0; };
    [&] {
      if (failed())
        return;
      // In-place plans: one race check with in and out aliased first,
      // reporting nothing. Aliasing only merges slots, so it finds every
      // conflict the check with separate buffers would; when it finds none,
      // both checks are done (and its order of input reads is known).
      bool raceFree = false;
      if (shape_.inPlace && !opts_.alwaysSimulateAliased) {
        raceProbe_ = true;
        raceFound_ = false;
        inPlaceReadAfterWrite_ = false;
        checkRaces(true);
        raceProbe_ = false;
        raceFree = !raceFound_;
      }
      if (!stop && !raceFree)
        checkRaces(false);
      simulate(false);
      if (failed())
        return;
      reportDeadlocks();
      checkResults();
      checkIdentical();
      checkSynchronized();
      if (stop && !raceFree) {
        checkRaces(false);
        if (failed())
          return;
      }
      if (shape_.inPlace) {
        // Prove it again with in and out aliased; report only what is new.
        diags_.setBaseline(diags_.diags().size());
        diags_.aliased = true;
        const bool clean = diags_.total() == 0;
        if (!raceFree && (!stop || clean)) {
          inPlaceReadAfterWrite_ = false;
          checkRaces(true);
        }
        if (failed())
          return;
        // Without the second simulation when it cannot differ from the
        // first: the plain run found nothing, the aliased race check
        // nothing, and every read of an input slot comes before (is an
        // ancestor of, or is) every write of its place in out. Then each
        // read sees in the aliased run what it saw in the plain one — the
        // input for reads of in; for reads of out the last write before
        // them, which exists because the plain run found no read of an
        // undefined slot — so values, results and trees are the same
        // (docs/plan-format.md, "Verification"). Not for bcast, whose root
        // starts with out defined.
        if (clean && diags_.total() == 0 && !inPlaceReadAfterWrite_ &&
            shape_.collective != ir::Collective::Bcast && !opts_.alwaysSimulateAliased) {
          aliasedByOrder_ = true;
          return;
        }
        simulate(true);
        if (failed())
          return;
        checkResults();
        checkIdentical(); // identical must hold both ways
      }
    }();
  }
  VerifyResult result;
  result.diagnostics = std::move(diags_.diags());
  result.dropped = diags_.dropped();
  result.stats = stats_;
  result.aliasedByOrder = aliasedByOrder_;
  return result;
}

} // namespace detail
} // namespace collc::compiler
