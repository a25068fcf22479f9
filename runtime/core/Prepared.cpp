// runtime/core/Prepared.cpp: dependency lists, channel sequence numbers and
// the chunk identity of tmp slots for one rank of a loaded plan.
//
// Chunk identity: every rank's program is replayed as a dataflow with one
// number per tmp slot (the chunk it holds); a `recv` into tmp takes the
// chunks its matching send carries and waits (only that op) until the send
// has been replayed. For a verified (race-free, deadlock-free) plan this
// finds what every execution holds. For a plan that was not verified a slot
// may stay unknown; the executor then refuses to bind the plan.
//
// Partial plans: value classes instead (see Prepared.h). Every tmp value is
// a node; a copy, a combine (its operands and result) and a message (each
// slot of a send with the slot of its receive) put nodes in one class, and an
// in or out slot binds its class to the slot's chunk. Listing order is a
// valid order of each program, and in a race-free plan every read sees the
// same write in every valid order, so the classes hold what every execution
// holds.
#include "runtime/core/Prepared.h"

#include <algorithm>
#include <cassert>
#include <deque>
#include <unordered_map>

namespace collc::rt {

uint64_t ChunkLayout::maxChunk() const {
  if (!blockStart_)
    return (n_ + chunks_ - 1) / chunks_;
  uint64_t most = 0;
  for (uint32_t b = 0; b * perBlock_ < chunks_; ++b) {
    const uint64_t nb = blockStart_[b + 1] - blockStart_[b];
    most = std::max<uint64_t>(most, (nb + perBlock_ - 1) / perBlock_);
  }
  return most;
}

uint32_t inChunkOf(const Shape &s, uint32_t rank, uint32_t slot) {
  if (s.collective == Collective::Allgather || s.collective == Collective::Gather)
    return rank * (s.chunks / s.ranks) + slot;
  return slot;
}

uint32_t outChunkOf(const Shape &s, uint32_t rank, uint32_t slot) {
  const uint32_t k = s.chunks / s.ranks;
  switch (s.collective) {
  case Collective::ReduceScatterBlock:
  case Collective::Scatter:
    return rank * k + slot;
  case Collective::Alltoall: // block j of out: chunk rank·k + i of rank j's in
    return rank * k + slot % k;
  default:
    return slot;
  }
}

uint32_t outPlaceOf(const Shape &s, uint32_t rank, uint32_t slot) {
  return s.collective == Collective::Alltoall ? slot : outChunkOf(s, rank, slot);
}

namespace {

struct ChannelKey {
  uint32_t from, to, seq;
  bool operator==(const ChannelKey &o) const {
    return from == o.from && to == o.to && seq == o.seq;
  }
};
struct ChannelKeyHash {
  size_t operator()(const ChannelKey &k) const {
    uint64_t h = (uint64_t(k.from) * 0x9e3779b97f4a7c15ull) ^ (uint64_t(k.to) << 21) ^
                 (uint64_t(k.seq) * 0xc2b2ae3d27d4eb4full);
    return size_t(h ^ (h >> 29));
  }
};

/// Channel sequence numbers of every op of every program, and the longest channel.
struct Sequences {
  std::vector<std::vector<uint32_t>> seq; ///< program -> op -> seq (messages only)
  uint32_t longest = 0;
};

Sequences numberMessages(const LoadedPlan &plan) {
  const uint32_t p = static_cast<uint32_t>(plan.programs.size());
  Sequences out;
  out.seq.resize(p);
  std::unordered_map<uint64_t, uint32_t> counters;
  for (uint32_t r = 0; r < p; ++r) {
    const auto &ops = plan.programs[r].ops;
    out.seq[r].assign(ops.size(), 0);
    counters.clear();
    for (uint32_t i = 0; i < ops.size(); ++i) {
      const Op &op = ops[i];
      if (!isMessage(op.kind))
        continue;
      // Separate counters for sends to and receives from each peer.
      uint64_t key = (uint64_t(op.peer) << 1) | (op.kind == OpKind::Send ? 1 : 0);
      uint32_t k = counters[key]++;
      out.seq[r][i] = k;
      out.longest = std::max(out.longest, k + 1);
    }
  }
  return out;
}

/// Dependencies of one program (docs/plan-format.md): a step op waits for every op of
/// the nearest lower step; an `after` op for the ops listed. Compressed rows.
struct Deps {
  std::vector<uint32_t> predCount, succBegin, succ;
};

Deps dependencies(const Program &prog) {
  const uint32_t n = static_cast<uint32_t>(prog.ops.size());
  std::vector<std::vector<uint32_t>> preds(n);
  std::vector<uint32_t> prevStep, curStep;
  bool haveStep = false;
  uint32_t curValue = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const Op &op = prog.ops[i];
    if (op.deps == DepKind::After) {
      auto a = prog.afterOf(op);
      preds[i].assign(a.begin(), a.end());
    } else if (op.deps == DepKind::Step) {
      if (!haveStep || op.step != curValue) {
        prevStep = haveStep ? curStep : std::vector<uint32_t>{};
        curStep.clear();
        haveStep = true;
        curValue = op.step;
      }
      preds[i] = prevStep;
      curStep.push_back(i);
    }
  }
  Deps d;
  d.predCount.resize(n);
  std::vector<uint32_t> count(n + 1, 0);
  for (uint32_t i = 0; i < n; ++i) {
    d.predCount[i] = static_cast<uint32_t>(preds[i].size());
    for (uint32_t x : preds[i])
      ++count[x];
  }
  d.succBegin.assign(n + 1, 0);
  for (uint32_t i = 0; i < n; ++i)
    d.succBegin[i + 1] = d.succBegin[i] + count[i];
  d.succ.resize(d.succBegin[n]);
  std::vector<uint32_t> fill(d.succBegin.begin(), d.succBegin.end() - 1);
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t x : preds[i])
      d.succ[fill[x]++] = i;
  return d;
}

/// Replays all ranks as a dataflow (an op runs once its dependencies have; a
/// receive into tmp once its matching send has) to find the chunk each tmp
/// slot holds at every op of `target`; appends to `prep.tmpChunks` and sets
/// the ops' id indices. For a race-free plan every such order gives the same
/// answer: whatever writes a slot an op reads is one of its dependencies.
void traceTmpChunks(const LoadedPlan &plan, const Sequences &seqs, PreparedRank &prep) {
  const Shape &shape = plan.shape;
  const uint32_t p = shape.ranks, target = prep.rank;
  // The receives into tmp, keyed by channel position, and what their sends carry.
  std::unordered_map<ChannelKey, std::vector<uint32_t>, ChannelKeyHash> carried;
  std::unordered_map<ChannelKey, uint32_t, ChannelKeyHash> parked; // key -> op of `to`
  for (uint32_t r = 0; r < p; ++r) {
    const auto &ops = plan.programs[r].ops;
    for (uint32_t i = 0; i < ops.size(); ++i)
      if (ops[i].kind == OpKind::Recv && ops[i].buf == Buffer::Tmp)
        carried.emplace(ChannelKey{ops[i].peer, r, seqs.seq[r][i]}, std::vector<uint32_t>{});
  }
  std::vector<std::vector<uint32_t>> tmp(p, std::vector<uint32_t>(shape.scratch, unknownChunk));
  std::vector<Deps> deps;
  deps.reserve(p);
  std::deque<std::pair<uint32_t, uint32_t>> ready; // (rank, op)
  for (uint32_t r = 0; r < p; ++r) {
    deps.push_back(dependencies(plan.programs[r]));
    for (uint32_t i = 0; i < deps[r].predCount.size(); ++i)
      if (deps[r].predCount[i] == 0)
        ready.emplace_back(r, i);
  }
  std::vector<uint8_t> traced(prep.ops.size(), 0);

  auto idsOf = [&](uint32_t r, Buffer b, uint32_t chunk, uint32_t count,
                   std::vector<uint32_t> &ids) {
    ids.clear();
    for (uint32_t j = 0; j < count; ++j)
      ids.push_back(b == Buffer::In    ? inChunkOf(shape, r, chunk + j)
                    : b == Buffer::Out ? outChunkOf(shape, r, chunk + j)
                                       : tmp[r][chunk + j]);
  };
  auto record = [&](uint32_t &index, Buffer b, uint32_t r, uint32_t chunk, uint32_t count) {
    if (b != Buffer::Tmp)
      return;
    index = static_cast<uint32_t>(prep.tmpChunks.size());
    for (uint32_t j = 0; j < count; ++j)
      prep.tmpChunks.push_back(tmp[r][chunk + j]);
  };

  std::vector<uint32_t> ids;
  while (!ready.empty()) {
    auto [r, i] = ready.front();
    ready.pop_front();
    const Op &op = plan.programs[r].ops[i];
    if (op.kind == OpKind::Recv && op.buf == Buffer::Tmp) {
      auto it = carried.find(ChannelKey{op.peer, r, seqs.seq[r][i]});
      assert(it != carried.end());
      if (it->second.empty()) { // the send has not been replayed yet
        parked[it->first] = i;
        continue;
      }
      for (uint32_t j = 0; j < op.count && j < it->second.size(); ++j)
        tmp[r][op.chunk + j] = it->second[j];
    }
    PreparedOp *po = r == target ? &prep.ops[i] : nullptr;
    if (po) {
      record(po->bufIds, op.buf, r, op.chunk, op.count);
      if (hasSrc(op.kind))
        record(po->srcIds, op.src, r, op.srcChunk, op.count);
    }
    switch (op.kind) {
    case OpKind::Send: {
      auto it = carried.find(ChannelKey{r, op.peer, seqs.seq[r][i]});
      if (it != carried.end()) {
        idsOf(r, op.buf, op.chunk, op.count, it->second);
        if (it->second.empty())
          it->second.push_back(unknownChunk); // count >= 1: never empty
        auto w = parked.find(it->first);
        if (w != parked.end()) {
          ready.emplace_back(op.peer, w->second);
          parked.erase(w);
        }
      }
      break;
    }
    case OpKind::Copy:
      if (op.buf == Buffer::Tmp) {
        idsOf(r, op.src, op.srcChunk, op.count, ids);
        std::copy(ids.begin(), ids.end(), tmp[r].begin() + op.chunk);
      }
      break;
    case OpKind::Reduce:
    case OpKind::RecvReduce:
      // The result is of the local operand's chunks.
      if (op.hasDst && op.dst == Buffer::Tmp) {
        idsOf(r, op.buf, op.chunk, op.count, ids);
        std::copy(ids.begin(), ids.end(), tmp[r].begin() + op.dstChunk);
      }
      break;
    case OpKind::Recv:
      break;
    }
    if (po) {
      record(po->dstIds, po->dst, r, po->dstChunk, op.count);
      traced[i] = 1;
    }
    const Deps &d = deps[r];
    for (uint32_t k = d.succBegin[i]; k < d.succBegin[i + 1]; ++k)
      if (--deps[r].predCount[d.succ[k]] == 0)
        ready.emplace_back(r, d.succ[k]);
  }
  // Ops of the target never replayed (a plan that cannot complete) keep
  // unknown chunks; binding refuses them.
  for (uint32_t i = 0; i < prep.ops.size(); ++i) {
    if (traced[i])
      continue;
    PreparedOp &po = prep.ops[i];
    auto unknown = [&](uint32_t &index, Buffer b) {
      if (b != Buffer::Tmp)
        return;
      index = static_cast<uint32_t>(prep.tmpChunks.size());
      prep.tmpChunks.insert(prep.tmpChunks.end(), po.count, unknownChunk);
    };
    unknown(po.bufIds, po.buf);
    if (hasSrc(po.kind))
      unknown(po.srcIds, po.src);
    unknown(po.dstIds, po.dst);
  }
}


/// The program index of `rank`'s program.
uint32_t indexOf(const LoadedPlan &plan, uint32_t rank) {
  return static_cast<uint32_t>(plan.programOf(rank) - plan.programs.data());
}

/// The channels of one program and each message op's channel.
void numberChannels(const Program &prog, PreparedRank &prep) {
  for (const Op &op : prog.ops)
    if (isMessage(op.kind))
      prep.channels.push_back({op.peer, op.kind == OpKind::Send, 0});
  std::sort(prep.channels.begin(), prep.channels.end(), [](const Channel &a, const Channel &b) {
    return a.peer != b.peer ? a.peer < b.peer : a.send < b.send;
  });
  prep.channels.erase(std::unique(prep.channels.begin(), prep.channels.end()),
                      prep.channels.end());
  for (uint32_t i = 0; i < prog.ops.size(); ++i) {
    const Op &op = prog.ops[i];
    if (!isMessage(op.kind))
      continue;
    const Channel key{op.peer, op.kind == OpKind::Send, 0};
    auto it = std::lower_bound(prep.channels.begin(), prep.channels.end(), key,
                               [](const Channel &a, const Channel &b) {
                                 return a.peer != b.peer ? a.peer < b.peer : a.send < b.send;
                               });
    prep.ops[i].chan = static_cast<uint32_t>(it - prep.channels.begin());
    prep.longestChannel = std::max(prep.longestChannel, ++it->messages);
  }
}

// --- value classes (partial plans) ----------------------------------------------

/// Union-find over tmp values, each class bound to a chunk or not (yet).
class ValueClasses {
public:
  static constexpr uint32_t conflict = unknownChunk - 1;

  uint32_t fresh(uint32_t chunk = unknownChunk) {
    parent_.push_back(static_cast<uint32_t>(parent_.size()));
    chunk_.push_back(chunk);
    return parent_.back();
  }
  uint32_t find(uint32_t x) {
    while (parent_[x] != x)
      x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void unite(uint32_t a, uint32_t b) {
    a = find(a), b = find(b);
    if (a == b)
      return;
    if (a > b)
      std::swap(a, b);
    parent_[b] = a;
    const uint32_t ca = chunk_[a], cb = chunk_[b];
    // Two chunks in one class: the plan does not verify; nothing is known.
    chunk_[a] = ca == unknownChunk ? cb : cb == unknownChunk || cb == ca ? ca : conflict;
  }
  /// The class's chunk, or unknownChunk.
  uint32_t chunkOf(uint32_t x) {
    const uint32_t c = chunk_[find(x)];
    return c == conflict ? unknownChunk : c;
  }

private:
  std::vector<uint32_t> parent_, chunk_;
};

/// The value classes of every program of a partial plan: for the own rank's
/// ops, the nodes of the operands the executor binds (tmpChunks order), and
/// for each message end whose partner has no section, the nodes it carries.
struct ClassTrace {
  ValueClasses classes;
  std::vector<uint32_t> ownNodes; ///< parallel to PreparedRank::tmpChunks
  std::vector<std::pair<uint32_t, uint32_t>> borders; ///< (node, rank without a section)
};

/// `ownOps`: the own rank's prepared ops, whose bufIds/srcIds/dstIds are set
/// (indices into ownNodes); null when only the classes are wanted.
ClassTrace traceClasses(const LoadedPlan &plan, const Sequences &seqs,
                        std::vector<PreparedOp> *ownOps) {
  const Shape &shape = plan.shape;
  ClassTrace t;
  ValueClasses &vc = t.classes;
  const uint32_t own = indexOf(plan, plan.own);
  std::vector<PreparedOp> scratchOps;
  if (!ownOps) {
    scratchOps.resize(plan.programs[own].ops.size());
    ownOps = &scratchOps;
  }
  // Message ends by (from, to, seq): the offset of their nodes in `carried`.
  std::unordered_map<ChannelKey, std::pair<uint32_t, uint32_t>, ChannelKeyHash> sendAt, recvAt;
  std::vector<uint32_t> carried;
  std::vector<uint32_t> cur(shape.scratch);
  std::vector<uint32_t> nodes;
  for (uint32_t x = 0; x < plan.programs.size(); ++x) {
    const uint32_t r = plan.rankOf(x);
    const auto &ops = plan.programs[x].ops;
    std::fill(cur.begin(), cur.end(), UINT32_MAX);
    auto term = [&](Buffer b, uint32_t slot) {
      if (b == Buffer::In)
        return vc.fresh(inChunkOf(shape, r, slot));
      if (b == Buffer::Out)
        return vc.fresh(outChunkOf(shape, r, slot));
      if (cur[slot] == UINT32_MAX)
        cur[slot] = vc.fresh(); // read before written: a plan that does not verify
      return cur[slot];
    };
    auto terms = [&](Buffer b, uint32_t chunk, uint32_t count) {
      nodes.clear();
      for (uint32_t j = 0; j < count; ++j)
        nodes.push_back(term(b, chunk + j));
      return nodes;
    };
    // `value` (one node per slot) is written to b[chunk ..).
    auto write = [&](Buffer b, uint32_t chunk, const std::vector<uint32_t> &value) {
      for (uint32_t j = 0; j < value.size(); ++j) {
        if (b == Buffer::Tmp)
          cur[chunk + j] = value[j];
        else
          vc.unite(value[j], term(b, chunk + j));
      }
    };
    auto record = [&](uint32_t &index, Buffer b, uint32_t chunk, uint32_t count) {
      if (x != own || b != Buffer::Tmp)
        return;
      index = static_cast<uint32_t>(t.ownNodes.size());
      for (uint32_t j = 0; j < count; ++j)
        t.ownNodes.push_back(term(b, chunk + j));
    };
    auto message = [&](const Op &op, uint32_t i, const std::vector<uint32_t> &value) {
      const bool send = op.kind == OpKind::Send;
      if (!plan.programOf(op.peer)) {
        for (uint32_t n : value)
          t.borders.emplace_back(n, op.peer);
        return;
      }
      const ChannelKey key = send ? ChannelKey{r, op.peer, seqs.seq[x][i]}
                                  : ChannelKey{op.peer, r, seqs.seq[x][i]};
      (send ? sendAt : recvAt)[key] = {static_cast<uint32_t>(carried.size()),
                                       static_cast<uint32_t>(value.size())};
      carried.insert(carried.end(), value.begin(), value.end());
    };
    for (uint32_t i = 0; i < ops.size(); ++i) {
      const Op &op = ops[i];
      PreparedOp dummy;
      PreparedOp &po = x == own ? (*ownOps)[i] : dummy;
      const Buffer dst = op.hasDst ? op.dst : op.buf;
      const uint32_t dstChunk = op.hasDst ? op.dstChunk : op.chunk;
      record(po.bufIds, op.buf, op.chunk, op.count);
      if (hasSrc(op.kind))
        record(po.srcIds, op.src, op.srcChunk, op.count);
      std::vector<uint32_t> value;
      switch (op.kind) {
      case OpKind::Send:
        value = terms(op.buf, op.chunk, op.count);
        message(op, i, value);
        break;
      case OpKind::Recv:
        for (uint32_t j = 0; j < op.count; ++j)
          value.push_back(vc.fresh());
        message(op, i, value);
        write(op.buf, op.chunk, value);
        break;
      case OpKind::RecvReduce:
        // The message, the local operand and the result: one chunk.
        value = terms(op.buf, op.chunk, op.count);
        message(op, i, value);
        write(dst, dstChunk, value);
        break;
      case OpKind::Reduce: {
        value = terms(op.buf, op.chunk, op.count);
        const std::vector<uint32_t> other = terms(op.src, op.srcChunk, op.count);
        for (uint32_t j = 0; j < op.count; ++j)
          vc.unite(value[j], other[j]);
        write(dst, dstChunk, value);
        break;
      }
      case OpKind::Copy:
        value = terms(op.src, op.srcChunk, op.count);
        write(op.buf, op.chunk, value);
        break;
      }
      record(po.dstIds, dst, dstChunk, op.count);
    }
  }
  // Each slot of a message is one value at both ends.
  for (const auto &[key, s] : sendAt) {
    auto it = recvAt.find(key);
    if (it == recvAt.end())
      continue; // unpaired: the loader refuses that between sections
    const auto [sAt, sCount] = s;
    const auto [rAt, rCount] = it->second;
    for (uint32_t j = 0; j < std::min(sCount, rCount); ++j)
      vc.unite(carried[sAt + j], carried[rAt + j]);
  }
  return t;
}

/// Calls fn(i) for every index i into prep.tmpChunks that the executor binds
/// (Executor::bind: a send's slots, what a receive writes, a combine's
/// operands and result, a copy's source and destination).
template <typename Fn> void forEachBoundTmp(const PreparedRank &prep, Fn fn) {
  for (const PreparedOp &op : prep.ops) {
    auto each = [&](Buffer b, uint32_t ids) {
      if (b == Buffer::Tmp)
        for (uint32_t j = 0; j < op.count; ++j)
          fn(ids + j);
    };
    switch (op.kind) {
    case OpKind::Send:
      each(op.buf, op.bufIds);
      break;
    case OpKind::Recv:
      each(op.dst, op.dstIds);
      break;
    case OpKind::RecvReduce:
      each(op.buf, op.bufIds);
      each(op.dst, op.dstIds);
      break;
    case OpKind::Reduce:
      each(op.buf, op.bufIds);
      each(op.src, op.srcIds);
      each(op.dst, op.dstIds);
      break;
    case OpKind::Copy:
      each(op.src, op.srcIds);
      each(op.dst, op.dstIds);
      break;
    }
  }
}

PreparedRank prepare(const LoadedPlan &plan, uint32_t rank, ClassTrace *trace) {
  assert(plan.runsOn(rank));
  PreparedRank prep;
  prep.shape = plan.shape;
  prep.rank = rank;
  const uint32_t index = indexOf(plan, rank);
  const Program &prog = plan.programs[index];
  const uint32_t n = static_cast<uint32_t>(prog.ops.size());
  Sequences seqs = numberMessages(plan);
  prep.tagStride = std::max<uint32_t>(1, seqs.longest);

  prep.ops.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    const Op &op = prog.ops[i];
    PreparedOp &po = prep.ops[i];
    po.kind = op.kind;
    po.order = op.order;
    po.buf = op.buf;
    po.src = op.src;
    po.chunk = op.chunk;
    po.srcChunk = op.srcChunk;
    po.count = op.count;
    po.peer = op.peer;
    po.seq = seqs.seq[index][i];
    po.dst = op.hasDst ? op.dst : op.buf;
    po.dstChunk = op.hasDst ? op.dstChunk : op.chunk;
    if (isMessage(op.kind))
      ++prep.messageOps;
  }

  Deps d = dependencies(prog);
  prep.predCount = std::move(d.predCount);
  prep.succBegin = std::move(d.succBegin);
  prep.succ = std::move(d.succ);

  numberChannels(prog, prep);

  if (plan.shape.scratch > 0 && !plan.partial) {
    traceTmpChunks(plan, seqs, prep);
  } else if (plan.shape.scratch > 0) {
    ClassTrace t = traceClasses(plan, seqs, &prep.ops);
    prep.tmpChunks.resize(t.ownNodes.size());
    for (size_t i = 0; i < t.ownNodes.size(); ++i)
      prep.tmpChunks[i] = t.classes.chunkOf(t.ownNodes[i]);
    if (trace)
      *trace = std::move(t);
  }
  forEachBoundTmp(prep, [&](uint32_t i) {
    prep.unknownTmp = prep.unknownTmp || prep.tmpChunks[i] == unknownChunk;
  });
  return prep;
}

} // namespace

PreparedRank prepareRank(const LoadedPlan &plan, uint32_t rank) {
  return prepare(plan, rank, nullptr);
}

std::vector<uint32_t> missingSections(const LoadedPlan &plan) {
  if (!plan.partial)
    return {};
  ClassTrace t;
  const PreparedRank prep = prepare(plan, plan.own, &t);
  if (!prep.unknownTmp)
    return {};
  std::vector<uint32_t> needed; // classes of bound tmp values with no chunk
  forEachBoundTmp(prep, [&](uint32_t i) {
    if (prep.tmpChunks[i] == unknownChunk)
      needed.push_back(t.classes.find(t.ownNodes[i]));
  });
  std::sort(needed.begin(), needed.end());
  std::vector<uint32_t> out;
  for (const auto &[node, rank] : t.borders)
    if (std::binary_search(needed.begin(), needed.end(), t.classes.find(node)))
      out.push_back(rank);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

} // namespace collc::rt
