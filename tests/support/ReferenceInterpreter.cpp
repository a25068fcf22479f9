// tests/support/ReferenceInterpreter.cpp: concrete dataflow execution of plans on token values.
#include "tests/support/ReferenceInterpreter.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <array>
#include <compare>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace collc::test {

using ir::Buffer;
using ir::Collective;
using ir::Op;
using ir::OpKind;

const char *name(RefErrorKind k) {
  switch (k) {
  case RefErrorKind::None:
    return "ok";
  case RefErrorKind::Invalid:
    return "invalid";
  case RefErrorKind::Mismatch:
    return "mismatch";
  case RefErrorKind::InputWrite:
    return "input-write";
  case RefErrorKind::Race:
    return "race";
  case RefErrorKind::Uninitialized:
    return "uninitialized";
  case RefErrorKind::Deadlock:
    return "deadlock";
  case RefErrorKind::MissingContribution:
    return "missing-contribution";
  case RefErrorKind::DuplicateContribution:
    return "duplicate-contribution";
  case RefErrorKind::Misplaced:
    return "misplaced";
  case RefErrorKind::Order:
    return "order";
  case RefErrorKind::Nondeterministic:
    return "nondeterministic";
  case RefErrorKind::Unsynchronized:
    return "unsynchronized";
  }
  return "?";
}

namespace {

// --- what the ops do (docs/plan-format.md, "Ops"), kept independent of ir/Ops.def ------------

bool isSendOp(OpKind k) { return k == OpKind::Send; }
bool isRecvOp(OpKind k) { return k == OpKind::Recv || k == OpKind::RecvReduce; }
bool isMessageOp(OpKind k) { return isSendOp(k) || isRecvOp(k); }
bool hasSource(OpKind k) { return k == OpKind::Reduce || k == OpKind::Copy; }
bool combines(OpKind k) { return k == OpKind::RecvReduce || k == OpKind::Reduce; }
bool writesDest(OpKind k) { return k != OpKind::Send; }
bool readsDest(OpKind k) {
  return k == OpKind::Send || k == OpKind::RecvReduce || k == OpKind::Reduce;
}
/// Where an op's result goes: dst in the three-address form of recv_reduce
/// and reduce (buf is then only read), else buf.
Buffer resultBuf(const Op &op) { return op.hasDst ? op.dst : op.buf; }
uint32_t resultChunk(const Op &op) { return op.hasDst ? op.dstChunk : op.chunk; }

bool combinesValues(Collective c) {
  return c == Collective::Allreduce || c == Collective::Reduce ||
         c == Collective::ReduceScatterBlock || c == Collective::Scan ||
         c == Collective::Exscan;
}
bool hasRootRank(Collective c) {
  return c == Collective::Reduce || c == Collective::Bcast || c == Collective::Gather ||
         c == Collective::Scatter;
}
/// The shape's buffers are p blocks of chunks/p slots.
bool inBlocks(Collective c) {
  return c == Collective::ReduceScatterBlock || c == Collective::Allgather ||
         c == Collective::Alltoall || c == Collective::Gather || c == Collective::Scatter;
}

// --- values ---------------------------------------------------------------------------

struct Token {
  uint32_t rank = 0;
  uint32_t chunk = 0;
  auto operator<=>(const Token &) const = default;
};

struct Value {
  std::vector<Token> tokens;
  uint64_t tree = 0; ///< hash-consed reduction tree
};
using Slot = std::optional<Value>;

/// "x[0..2,5] of chunk 3", or "x[0:1, 2:0]" (rank:chunk) when chunks differ.
std::string format(const std::vector<Token> &ts) {
  if (ts.empty())
    return "x[]";
  bool oneChunk = std::all_of(ts.begin(), ts.end(),
                              [&](const Token &t) { return t.chunk == ts[0].chunk; });
  std::string s = "x[";
  if (!oneChunk) {
    for (size_t i = 0; i < ts.size(); ++i)
      s += llvm::formatv("{0}{1}:{2}", i ? ", " : "", ts[i].rank, ts[i].chunk).str();
    return s + "]";
  }
  for (size_t i = 0; i < ts.size();) {
    size_t j = i;
    while (j + 1 < ts.size() && ts[j + 1].rank == ts[j].rank + 1)
      ++j;
    s += (i ? "," : "");
    s += j > i ? llvm::formatv("{0}..{1}", ts[i].rank, ts[j].rank).str()
               : std::to_string(ts[i].rank);
    i = j + 1;
  }
  return s + llvm::formatv("] of chunk {0}", ts[0].chunk).str();
}

struct Failure {
  RefErrorKind kind;
  std::string text;
};

enum class Region : uint8_t { In, Out, Tmp };
constexpr unsigned numRegions = 3;

struct Loc {
  Region region;
  uint32_t index;
};

/// A half-open range of one memory region of one rank.
struct Extent {
  Region region;
  uint32_t begin, end;
  bool overlaps(const Extent &o) const {
    return region == o.region && begin < o.end && o.begin < end;
  }
};

class Interpreter {
public:
  Interpreter(const ir::Plan &plan, const RefOptions &opts)
      : plan_(plan), opts_(opts), shape_(plan.shape) {}

  RefOutcome run();

private:
  // Layout (docs/plan-format.md, "Buffers").
  std::optional<uint32_t> slotCount(uint32_t rank, Buffer buf) const;
  uint32_t inputChunk(uint32_t rank, uint32_t slot) const;
  Loc locate(uint32_t rank, Buffer buf, uint32_t slot) const;
  Extent extent(uint32_t rank, Buffer buf, uint32_t chunk, uint32_t count) const;
  Slot &at(uint32_t rank, Buffer buf, uint32_t slot);

  std::string where(uint32_t rank, uint32_t i) const;
  Failure fail(RefErrorKind k, uint32_t rank, uint32_t i, const std::string &what) const;

  std::optional<Failure> checkStructure();
  std::optional<Failure> checkPeersAndMatching();
  std::optional<Failure> checkInputWrites() const;
  void computeDeps();
  std::optional<Failure> checkRaces() const;
  std::optional<Failure> execute();
  std::optional<Failure> executeLocal(uint32_t rank, uint32_t i);
  std::optional<Failure> transfer(uint32_t sRank, uint32_t sIdx, uint32_t rRank,
                                  uint32_t rIdx);
  std::optional<Failure> checkResults();
  std::optional<Failure> checkOneResult(uint32_t rank, uint32_t slot, uint32_t chunk,
                                        const std::vector<uint32_t> &ranks);

  Value leaf(uint32_t rank, uint32_t chunk) const {
    return Value{{Token{rank, chunk}}, 1 + uint64_t(rank) * shape_.chunks + chunk};
  }
  Value combine(const Value &first, const Value &second);

  const ir::Plan &plan_;
  const RefOptions &opts_;
  const ir::Shape &shape_;

  /// preds_[r][i]: the ops op i of rank r waits for; succs_ the reverse.
  std::vector<std::vector<std::vector<uint32_t>>> preds_, succs_;
  /// The matching end of every message op.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> partner_;
  /// mem_[r][region][index].
  std::vector<std::array<std::vector<Slot>, numRegions>> mem_;
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> trees_;
  /// heard_[r][i][q]: an op of rank q happened before op i of rank r
  /// completed (q = r included), by dependencies and received messages.
  /// Barriers only (empty otherwise).
  std::vector<std::vector<std::vector<bool>>> heard_;
  uint64_t nextTree_ = 0;
  size_t completed_ = 0;
};

// --- layout ---------------------------------------------------------------------------

std::optional<uint32_t> Interpreter::slotCount(uint32_t rank, Buffer buf) const {
  const uint32_t C = shape_.chunks, P = shape_.ranks;
  switch (buf) {
  case Buffer::In:
    if (shape_.collective == Collective::Bcast ||
        (shape_.collective == Collective::Scatter && rank != shape_.root))
      return std::nullopt;
    return shape_.collective == Collective::Allgather || shape_.collective == Collective::Gather
               ? C / P
               : C;
  case Buffer::Out:
    if ((shape_.collective == Collective::Reduce || shape_.collective == Collective::Gather) &&
        rank != shape_.root)
      return std::nullopt;
    return shape_.collective == Collective::ReduceScatterBlock ||
                   shape_.collective == Collective::Scatter
               ? C / P
               : C;
  case Buffer::Tmp:
    return shape_.scratch;
  }
  return std::nullopt;
}

uint32_t Interpreter::inputChunk(uint32_t rank, uint32_t slot) const {
  if (shape_.collective == Collective::Allgather || shape_.collective == Collective::Gather)
    return rank * (shape_.chunks / shape_.ranks) + slot;
  return slot;
}

Loc Interpreter::locate(uint32_t rank, Buffer buf, uint32_t slot) const {
  switch (buf) {
  case Buffer::In:
    if (opts_.aliasInOut && slotCount(rank, Buffer::Out))
      return {Region::Out, inputChunk(rank, slot)};
    return {Region::In, slot};
  case Buffer::Out:
    return {Region::Out, slot};
  case Buffer::Tmp:
    return {Region::Tmp, slot};
  }
  return {Region::Tmp, slot};
}

Extent Interpreter::extent(uint32_t rank, Buffer buf, uint32_t chunk, uint32_t count) const {
  Loc l = locate(rank, buf, chunk); // aliasing keeps ranges contiguous
  return {l.region, l.index, l.index + count};
}

Slot &Interpreter::at(uint32_t rank, Buffer buf, uint32_t slot) {
  Loc l = locate(rank, buf, slot);
  return mem_[rank][static_cast<unsigned>(l.region)][l.index];
}

std::string Interpreter::where(uint32_t rank, uint32_t i) const {
  return llvm::formatv("rank {0}, op {1} ({2})", rank, i,
                       ir::describe(plan_.programs[rank].ops[i]))
      .str();
}

Failure Interpreter::fail(RefErrorKind k, uint32_t rank, uint32_t i,
                          const std::string &what) const {
  return {k, where(rank, i) + ": " + what};
}

Value Interpreter::combine(const Value &first, const Value &second) {
  Value v;
  v.tokens = first.tokens;
  v.tokens.insert(v.tokens.end(), second.tokens.begin(), second.tokens.end());
  // Trees keep operand order even for commutative plans: a user's
  // "commutative" operation may give other bits for b ∘ a.
  const std::pair<uint64_t, uint64_t> key{first.tree, second.tree};
  auto [it, inserted] = trees_.try_emplace(key, nextTree_);
  if (inserted)
    ++nextTree_;
  v.tree = it->second;
  return v;
}

// --- static checks --------------------------------------------------------------------

std::optional<Failure> Interpreter::checkStructure() {
  const ir::Shape &s = shape_;
  auto bad = [](std::string t) { return Failure{RefErrorKind::Invalid, std::move(t)}; };
  if (s.ranks < 1)
    return bad("ranks must be at least 1");
  if (plan_.programs.size() != s.ranks)
    return bad(llvm::formatv("{0} programs for {1} ranks", plan_.programs.size(), s.ranks));
  if (s.chunks < 1)
    return bad("chunks must be at least 1");
  if (hasRootRank(s.collective) && s.root >= s.ranks)
    return bad(llvm::formatv("root {0} out of range", s.root));
  if (inBlocks(s.collective) && s.chunks % s.ranks != 0)
    return bad("chunks must be a multiple of ranks");
  if (opts_.aliasInOut && s.collective == Collective::ReduceScatterBlock)
    return bad("aliasInOut: MPI_IN_PLACE is not modelled for reduce_scatter_block");
  if (opts_.aliasInOut && s.collective == Collective::Scatter)
    return bad("aliasInOut: MPI_IN_PLACE is not modelled for scatter");

  for (uint32_t r = 0; r < s.ranks; ++r) {
    const auto &ops = plan_.programs[r].ops;
    std::optional<uint32_t> lastStep;
    for (uint32_t i = 0; i < ops.size(); ++i) {
      const Op &op = ops[i];
      auto range = [&](Buffer buf, uint32_t chunk, const char *what) -> std::optional<Failure> {
        std::optional<uint32_t> n = slotCount(r, buf);
        if (!n)
          return fail(RefErrorKind::Invalid, r, i,
                      llvm::formatv("the rank has no {0} buffer", ir::name(buf)).str());
        if (uint64_t(chunk) + op.count > *n)
          return fail(RefErrorKind::Invalid, r, i,
                      llvm::formatv("{0} slots [{1}, {2}) outside {3} ({4} slots)", what, chunk,
                                    uint64_t(chunk) + op.count, ir::name(buf), *n)
                          .str());
        return std::nullopt;
      };
      if (op.count == 0)
        return fail(RefErrorKind::Invalid, r, i, "count is 0");
      if (auto f = range(op.buf, op.chunk, "destination"))
        return f;
      if (hasSource(op.kind)) {
        if (auto f = range(op.src, op.srcChunk, "source"))
          return f;
        if (op.src == op.buf && op.srcChunk < op.chunk + op.count &&
            op.chunk < op.srcChunk + op.count)
          return fail(RefErrorKind::Invalid, r, i, "source overlaps destination");
      }
      if (op.hasDst) {
        if (!combines(op.kind))
          return fail(RefErrorKind::Invalid, r, i, "only recv_reduce and reduce take a dst");
        if (auto f = range(op.dst, op.dstChunk, "dst"))
          return f;
        auto overlaps = [&](Buffer b, uint32_t c) {
          return op.dst == b && op.dstChunk < c + op.count && c < op.dstChunk + op.count;
        };
        if (overlaps(op.buf, op.chunk) || (hasSource(op.kind) && overlaps(op.src, op.srcChunk)))
          return fail(RefErrorKind::Invalid, r, i, "dst overlaps an operand");
      }
      if (combines(op.kind) && !combinesValues(s.collective))
        return fail(RefErrorKind::Invalid, r, i,
                    llvm::formatv("{0} does not combine values", ir::name(s.collective)).str());
      switch (op.deps) {
      case ir::DepKind::None:
        break;
      case ir::DepKind::After:
        for (uint32_t j : op.after)
          if (j >= i)
            return fail(RefErrorKind::Invalid, r, i,
                        llvm::formatv("after: op {0} is not earlier", j).str());
        break;
      case ir::DepKind::Step:
        if (lastStep && op.step < *lastStep)
          return fail(RefErrorKind::Invalid, r, i,
                      llvm::formatv("step {0} after step {1}", op.step, *lastStep).str());
        lastStep = op.step;
        break;
      }
    }
  }
  return std::nullopt;
}

std::optional<Failure> Interpreter::checkPeersAndMatching() {
  const uint32_t P = shape_.ranks;
  // channel (from, to) -> the sends at `from` and the receives at `to`, in listing order.
  std::map<std::pair<uint32_t, uint32_t>, std::pair<std::vector<uint32_t>, std::vector<uint32_t>>>
      channels;
  partner_.assign(P, {});
  for (uint32_t r = 0; r < P; ++r) {
    const auto &ops = plan_.programs[r].ops;
    partner_[r].assign(ops.size(), {UINT32_MAX, UINT32_MAX});
    for (uint32_t i = 0; i < ops.size(); ++i) {
      const Op &op = ops[i];
      if (!isMessageOp(op.kind))
        continue;
      if (op.peer >= P)
        return fail(RefErrorKind::Mismatch, r, i,
                    llvm::formatv("peer {0} out of range (ranks = {1})", op.peer, P).str());
      if (op.peer == r)
        return fail(RefErrorKind::Mismatch, r, i, "the rank names itself as its peer");
      if (isSendOp(op.kind))
        channels[{r, op.peer}].first.push_back(i);
      else
        channels[{op.peer, r}].second.push_back(i);
    }
  }
  for (const auto &[chan, ends] : channels) {
    const auto [a, b] = chan;
    const auto &[sends, recvs] = ends;
    const size_t n = std::min(sends.size(), recvs.size());
    for (size_t k = 0; k < n; ++k) {
      const Op &s = plan_.programs[a].ops[sends[k]];
      const Op &rv = plan_.programs[b].ops[recvs[k]];
      if (s.count != rv.count)
        return fail(RefErrorKind::Mismatch, b, recvs[k],
                    llvm::formatv("count mismatch: receives {0} slots, but the matching send "
                                  "(message {1} from {2}), {3}, sends {4}",
                                  rv.count, k, a, where(a, sends[k]), s.count)
                        .str());
      partner_[a][sends[k]] = {b, recvs[k]};
      partner_[b][recvs[k]] = {a, sends[k]};
    }
    if (sends.size() > n)
      return fail(RefErrorKind::Mismatch, a, sends[n],
                  llvm::formatv("unmatched send: message {0} to {1}, but rank {1} receives "
                                "only {2} from {3}",
                                n, b, recvs.size(), a)
                      .str());
    if (recvs.size() > n)
      return fail(RefErrorKind::Mismatch, b, recvs[n],
                  llvm::formatv("unmatched receive: message {0} from {1}, but rank {1} sends "
                                "only {2} to {3}",
                                n, a, sends.size(), b)
                      .str());
  }
  return std::nullopt;
}

std::optional<Failure> Interpreter::checkInputWrites() const {
  for (uint32_t r = 0; r < shape_.ranks; ++r) {
    const auto &ops = plan_.programs[r].ops;
    for (uint32_t i = 0; i < ops.size(); ++i)
      if (writesDest(ops[i].kind) && resultBuf(ops[i]) == Buffer::In)
        return fail(RefErrorKind::InputWrite, r, i, "writes the read-only in buffer");
  }
  return std::nullopt;
}

void Interpreter::computeDeps() {
  const uint32_t P = shape_.ranks;
  preds_.assign(P, {});
  succs_.assign(P, {});
  for (uint32_t r = 0; r < P; ++r) {
    const auto &ops = plan_.programs[r].ops;
    auto &preds = preds_[r];
    preds.assign(ops.size(), {});
    // `group`: the ops of the latest step seen; `lower`: those of the step before it.
    std::optional<uint32_t> groupStep;
    std::vector<uint32_t> group, lower;
    for (uint32_t i = 0; i < ops.size(); ++i) {
      const Op &op = ops[i];
      switch (op.deps) {
      case ir::DepKind::None:
        break;
      case ir::DepKind::After:
        preds[i].assign(op.after.begin(), op.after.end());
        std::sort(preds[i].begin(), preds[i].end());
        preds[i].erase(std::unique(preds[i].begin(), preds[i].end()), preds[i].end());
        break;
      case ir::DepKind::Step:
        if (!groupStep || op.step != *groupStep) {
          lower = groupStep ? std::move(group) : std::vector<uint32_t>{};
          group.clear();
          groupStep = op.step;
        }
        preds[i] = lower;
        group.push_back(i);
        break;
      }
    }
    succs_[r].assign(ops.size(), {});
    for (uint32_t i = 0; i < ops.size(); ++i)
      for (uint32_t j : preds[i])
        succs_[r][j].push_back(i);
  }
}

std::optional<Failure> Interpreter::checkRaces() const {
  for (uint32_t r = 0; r < shape_.ranks; ++r) {
    const auto &ops = plan_.programs[r].ops;
    const size_t n = ops.size(), words = (n + 63) / 64;
    // before[i]: bit j set iff a dependency path leads from op j to op i.
    std::vector<uint64_t> before(n * words, 0);
    for (size_t i = 0; i < n; ++i)
      for (uint32_t j : preds_[r][i]) {
        for (size_t w = 0; w < words; ++w)
          before[i * words + w] |= before[j * words + w];
        before[i * words + j / 64] |= uint64_t(1) << (j % 64);
      }
    std::vector<std::vector<Extent>> reads(n), writes(n);
    for (size_t i = 0; i < n; ++i) {
      const Op &op = ops[i];
      const Extent dest = extent(r, op.buf, op.chunk, op.count);
      if (readsDest(op.kind))
        reads[i].push_back(dest);
      if (writesDest(op.kind))
        writes[i].push_back(extent(r, resultBuf(op), resultChunk(op), op.count));
      if (hasSource(op.kind))
        reads[i].push_back(extent(r, op.src, op.srcChunk, op.count));
    }
    auto conflict = [&](size_t a, size_t b) {
      for (const Extent &w : writes[a]) {
        for (const Extent &x : writes[b])
          if (w.overlaps(x))
            return true;
        for (const Extent &x : reads[b])
          if (w.overlaps(x))
            return true;
      }
      return false;
    };
    for (size_t j = 0; j < n; ++j)
      for (size_t i = 0; i < j; ++i) {
        if (before[j * words + i / 64] >> (i % 64) & 1)
          continue;
        if (conflict(i, j) || conflict(j, i))
          return fail(RefErrorKind::Race, r, static_cast<uint32_t>(j),
                      "touches slots that " + where(r, static_cast<uint32_t>(i)) +
                          " also uses, with no dependency path between them and at least "
                          "one of them writing");
      }
  }
  return std::nullopt;
}

// --- execution ------------------------------------------------------------------------

std::optional<Failure> Interpreter::executeLocal(uint32_t r, uint32_t i) {
  const Op &op = plan_.programs[r].ops[i];
  // Read all sources first: with aliasing a source and destination may share memory.
  std::vector<Value> src(op.count), dst(op.count);
  for (uint32_t k = 0; k < op.count; ++k) {
    const Slot &s = at(r, op.src, op.srcChunk + k);
    if (!s)
      return fail(RefErrorKind::Uninitialized, r, i,
                  "reads " + ir::describe(ir::Slots{op.src, op.srcChunk + k, 1}) +
                      ", which is undefined");
    src[k] = *s;
    if (op.kind == OpKind::Reduce) {
      const Slot &d = at(r, op.buf, op.chunk + k);
      if (!d)
        return fail(RefErrorKind::Uninitialized, r, i,
                    "combines into " + ir::describe(ir::Slots{op.buf, op.chunk + k, 1}) +
                        ", which is undefined");
      dst[k] = *d;
    }
  }
  for (uint32_t k = 0; k < op.count; ++k) {
    Value v = op.kind == OpKind::Copy         ? src[k]
              : op.order == ir::Order::BufFirst ? combine(dst[k], src[k])
                                                : combine(src[k], dst[k]);
    at(r, resultBuf(op), resultChunk(op) + k) = std::move(v);
  }
  return std::nullopt;
}

std::optional<Failure> Interpreter::transfer(uint32_t sr, uint32_t si, uint32_t rr,
                                             uint32_t ri) {
  const Op &s = plan_.programs[sr].ops[si];
  const Op &rv = plan_.programs[rr].ops[ri];
  std::vector<Value> payload(s.count);
  for (uint32_t k = 0; k < s.count; ++k) {
    const Slot &v = at(sr, s.buf, s.chunk + k);
    if (!v)
      return fail(RefErrorKind::Uninitialized, sr, si,
                  "sends " + ir::describe(ir::Slots{s.buf, s.chunk + k, 1}) +
                      ", which is undefined");
    payload[k] = *v;
  }
  for (uint32_t k = 0; k < rv.count; ++k) {
    if (rv.kind == OpKind::Recv) {
      at(rr, rv.buf, rv.chunk + k) = std::move(payload[k]);
      continue;
    }
    const Slot &d = at(rr, rv.buf, rv.chunk + k);
    if (!d)
      return fail(RefErrorKind::Uninitialized, rr, ri,
                  "combines into " + ir::describe(ir::Slots{rv.buf, rv.chunk + k, 1}) +
                      ", which is undefined");
    Value v = rv.order == ir::Order::BufFirst ? combine(*d, payload[k]) : combine(payload[k], *d);
    at(rr, resultBuf(rv), resultChunk(rv) + k) = std::move(v);
  }
  return std::nullopt;
}

std::optional<Failure> Interpreter::execute() {
  const uint32_t P = shape_.ranks;
  const uint32_t C = shape_.chunks;
  mem_.assign(P, {});
  for (uint32_t r = 0; r < P; ++r) {
    for (Buffer b : {Buffer::In, Buffer::Out, Buffer::Tmp})
      mem_[r][static_cast<unsigned>(b)].assign(slotCount(r, b).value_or(0), std::nullopt);
    if (std::optional<uint32_t> n = slotCount(r, Buffer::In))
      for (uint32_t i = 0; i < *n; ++i) // lands in out when aliased
        at(r, Buffer::In, i) = leaf(r, inputChunk(r, i));
    if (shape_.collective == Collective::Bcast && r == shape_.root)
      for (uint32_t c = 0; c < C; ++c)
        at(r, Buffer::Out, c) = leaf(r, c);
  }
  nextTree_ = 1 + uint64_t(P) * C;

  enum class State : uint8_t { Waiting, Posted, Done };
  std::vector<std::vector<State>> state(P);
  std::vector<std::vector<size_t>> remaining(P);
  std::deque<std::pair<uint32_t, uint32_t>> ready;
  size_t total = 0;
  // Whom each op has heard from: only a barrier's result is that order (P
  // bits per op, which other plans at large P need not pay for).
  const bool tracksOrder = shape_.collective == Collective::Barrier;
  heard_.assign(tracksOrder ? P : 0, {});
  for (uint32_t r = 0; r < heard_.size(); ++r)
    heard_[r].assign(plan_.programs[r].ops.size(), std::vector<bool>(P, false));
  auto merge = [&](std::vector<bool> &into, const std::vector<bool> &from) {
    for (uint32_t q = 0; q < P; ++q)
      if (from[q])
        into[q] = true;
  };
  for (uint32_t r = 0; r < P; ++r) {
    const size_t n = plan_.programs[r].ops.size();
    total += n;
    state[r].assign(n, State::Waiting);
    remaining[r].resize(n);
    for (uint32_t i = 0; i < n; ++i) {
      remaining[r][i] = preds_[r][i].size();
      if (remaining[r][i] == 0)
        ready.emplace_back(r, i);
    }
  }
  auto complete = [&](uint32_t r, uint32_t i) {
    state[r][i] = State::Done;
    ++completed_;
    for (uint32_t j : succs_[r][i])
      if (--remaining[r][j] == 0)
        ready.emplace_back(r, j);
  };

  while (!ready.empty()) {
    auto [r, i] = opts_.readyOrder == ReadyOrder::Fifo ? ready.front() : ready.back();
    if (opts_.readyOrder == ReadyOrder::Fifo)
      ready.pop_front();
    else
      ready.pop_back();
    const Op &op = plan_.programs[r].ops[i];
    if (tracksOrder) {
      heard_[r][i][r] = true;
      for (uint32_t d : preds_[r][i])
        merge(heard_[r][i], heard_[r][d]);
    }
    if (!isMessageOp(op.kind)) {
      if (auto f = executeLocal(r, i))
        return f;
      complete(r, i);
      continue;
    }
    state[r][i] = State::Posted;
    auto [pr, pi] = partner_[r][i];
    if (state[pr][pi] != State::Posted)
      continue;
    const bool sending = isSendOp(op.kind);
    if (auto f = sending ? transfer(r, i, pr, pi) : transfer(pr, pi, r, i))
      return f;
    if (tracksOrder && sending)
      merge(heard_[pr][pi], heard_[r][i]);
    else if (tracksOrder)
      merge(heard_[r][i], heard_[pr][pi]);
    complete(r, i);
    complete(pr, pi);
  }
  if (completed_ == total)
    return std::nullopt;

  // Deadlock: describe the posted messages whose other end never got posted.
  std::string text = llvm::formatv("{0} of {1} ops never complete", total - completed_, total);
  unsigned shown = 0;
  for (uint32_t r = 0; r < P && shown < 4; ++r)
    for (uint32_t i = 0; i < state[r].size() && shown < 4; ++i) {
      if (state[r][i] != State::Posted)
        continue;
      auto [pr, pi] = partner_[r][i];
      text += "; " + where(r, i) + " is posted but waits for " + where(pr, pi) +
              ", which waits for its dependencies";
      ++shown;
    }
  if (shown == 0)
    text += "; no op is posted";
  return Failure{RefErrorKind::Deadlock, text};
}

// --- results --------------------------------------------------------------------------

std::optional<Failure> Interpreter::checkOneResult(uint32_t rank, uint32_t slot, uint32_t chunk,
                                                   const std::vector<uint32_t> &ranks) {
  std::vector<Token> expected;
  for (uint32_t q : ranks)
    expected.push_back({q, chunk});
  const std::string place = llvm::formatv("rank {0}, out[{1}]", rank, slot).str();
  auto bad = [&](RefErrorKind k, const std::string &what) {
    return Failure{k, place + ": " + what + ", expected " + format(expected)};
  };
  const Slot &v = mem_[rank][static_cast<unsigned>(Region::Out)][slot];
  if (!v)
    return bad(RefErrorKind::MissingContribution, "is undefined");
  const std::vector<Token> &got = v->tokens;
  std::map<uint32_t, unsigned> seen;
  for (const Token &t : got) {
    const bool belongs = std::find(ranks.begin(), ranks.end(), t.rank) != ranks.end();
    if (t.chunk != chunk || !belongs)
      return bad(RefErrorKind::Misplaced,
                 llvm::formatv("holds {0}, which contains chunk {1} of rank {2}", format(got),
                               t.chunk, t.rank)
                     .str());
    if (++seen[t.rank] > 1)
      return bad(RefErrorKind::DuplicateContribution,
                 llvm::formatv("holds {0}: rank {1} contributes twice", format(got), t.rank)
                     .str());
  }
  for (uint32_t q : ranks)
    if (!seen.count(q))
      return bad(RefErrorKind::MissingContribution,
                 llvm::formatv("holds {0}: rank {1} is missing", format(got), q).str());
  if (!opts_.compareAsMultiset && got != expected)
    return bad(RefErrorKind::Order, "holds " + format(got) + " in the wrong order");
  return std::nullopt;
}

std::optional<Failure> Interpreter::checkResults() {
  const uint32_t P = shape_.ranks, C = shape_.chunks;
  std::vector<uint32_t> everyone(P);
  for (uint32_t q = 0; q < P; ++q)
    everyone[q] = q;
  for (uint32_t r = 0; r < P; ++r) {
    std::optional<uint32_t> n = slotCount(r, Buffer::Out);
    if (!n)
      continue;
    for (uint32_t s = 0; s < *n; ++s) {
      std::optional<Failure> f;
      switch (shape_.collective) {
      case Collective::Allreduce:
        f = checkOneResult(r, s, s, everyone);
        break;
      case Collective::Reduce:
        if (r == shape_.root)
          f = checkOneResult(r, s, s, everyone);
        break;
      case Collective::ReduceScatterBlock:
        f = checkOneResult(r, s, r * (C / P) + s, everyone);
        break;
      case Collective::Scan:
        f = checkOneResult(r, s, s, std::vector<uint32_t>(everyone.begin(),
                                                          everyone.begin() + r + 1));
        break;
      case Collective::Exscan:
        if (r > 0)
          f = checkOneResult(r, s, s,
                             std::vector<uint32_t>(everyone.begin(), everyone.begin() + r));
        break;
      case Collective::Allgather:
        f = checkOneResult(r, s, s, {s / (C / P)});
        break;
      case Collective::Bcast:
        f = checkOneResult(r, s, s, {shape_.root});
        break;
      case Collective::Alltoall: // block s/k holds rank s/k's block for r
        f = checkOneResult(r, s, r * (C / P) + s % (C / P), {s / (C / P)});
        break;
      case Collective::Gather:
        if (r == shape_.root)
          f = checkOneResult(r, s, s, {s / (C / P)});
        break;
      case Collective::Scatter:
        f = checkOneResult(r, s, r * (C / P) + s, {shape_.root});
        break;
      case Collective::Barrier: // no values: the order, below
        break;
      }
      if (f)
        return f;
    }
  }
  if (shape_.collective == Collective::Barrier)
    for (uint32_t r = 0; r < P; ++r) {
      std::vector<bool> all(P, false);
      all[r] = true;
      for (const std::vector<bool> &h : heard_[r])
        for (uint32_t q = 0; q < P; ++q)
          all[q] = all[q] || h[q];
      for (uint32_t q = 0; q < P; ++q)
        if (!all[q])
          return Failure{RefErrorKind::Unsynchronized,
                         llvm::formatv("rank {0} can finish before rank {1} starts", r, q)
                             .str()};
    }
  if (opts_.requireIdenticalTrees && shape_.collective == Collective::Allreduce)
    for (uint32_t c = 0; c < C; ++c)
      for (uint32_t r = 1; r < P; ++r) {
        const Slot &first = mem_[0][static_cast<unsigned>(Region::Out)][c];
        const Slot &mine = mem_[r][static_cast<unsigned>(Region::Out)][c];
        if (first->tree != mine->tree)
          return Failure{RefErrorKind::Nondeterministic,
                         llvm::formatv("rank {0}, out[{1}]: reduction tree differs from rank "
                                       "0's, so floating-point results may differ",
                                       r, c)
                             .str()};
      }
  return std::nullopt;
}

RefOutcome Interpreter::run() {
  std::optional<Failure> f = checkStructure();
  if (!f)
    f = checkPeersAndMatching();
  if (!f)
    f = checkInputWrites();
  if (!f)
    computeDeps();
  if (!f && opts_.checkRaces)
    f = checkRaces();
  if (!f)
    f = execute();
  if (!f)
    f = checkResults();
  RefOutcome out;
  out.opsCompleted = completed_;
  if (f) {
    out.ok = false;
    out.kind = f->kind;
    out.error = std::string(name(f->kind)) + ": " + f->text;
  }
  return out;
}

} // namespace

RefOutcome runReference(const ir::Plan &plan, const RefOptions &opts) {
  return Interpreter(plan, opts).run();
}

} // namespace collc::test
