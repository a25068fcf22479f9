// runtime/core/Executor.cpp: binding and the dataflow loop.
#include "runtime/core/Executor.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <string>

namespace collc::rt {

namespace {

/// A buffer that cannot be had: the call goes to native MPI.
Status outOfMemory(const char *what, size_t bytes) {
  return Status::error(ErrorCode::Unsupported,
                       "no memory for the " + std::string(what) + " (" + std::to_string(bytes) +
                           " bytes)");
}

/// Calls f(a, b, c, n) over the common runs of up to three piece lists of the
/// same total length (pass an empty list for unused operands).
template <class P, class F>
void zip(const P *a, uint32_t na, const P *b, uint32_t nb, const P *c, uint32_t nc,
         size_t extent, F &&f) {
  uint32_t ia = 0, ib = 0, ic = 0;
  size_t oa = 0, ob = 0, oc = 0; // elements consumed in the current piece
  // (bind() refuses ranges of different totals; stopping at the shortest
  // list keeps even a broken plan inside its buffers.)
  while (ia < na && (nb == 0 || ib < nb) && (nc == 0 || ic < nc)) {
    size_t len = a[ia].elems - oa;
    if (nb)
      len = std::min(len, b[ib].elems - ob);
    if (nc)
      len = std::min(len, c[ic].elems - oc);
    if (len)
      f(a[ia].ptr + oa * extent, nb ? b[ib].ptr + ob * extent : nullptr,
        nc ? c[ic].ptr + oc * extent : nullptr, len);
    auto step = [len](uint32_t &i, size_t &o, const P *ps, uint32_t n) {
      if (!n)
        return;
      o += len;
      if (o == ps[i].elems) {
        ++i;
        o = 0;
      }
    };
    step(ia, oa, a, na);
    step(ib, ob, b, nb);
    step(ic, oc, c, nc);
  }
}

/// Ops a program may have for the direct path (Executor::startBlocking).
constexpr size_t kDirectOps = 64;
constexpr uint32_t kNoOp = ~0u;

} // namespace

char *Executor::slotBase(Buffer b) {
  switch (b) {
  case Buffer::In:
    return const_cast<char *>(static_cast<const char *>(bufs_.in));
  case Buffer::Out:
    return static_cast<char *>(bufs_.out);
  case Buffer::Tmp:
    return tmp_.get();
  }
  return nullptr;
}

Executor::Range Executor::bindRange(Buffer b, uint32_t chunk, uint32_t count, uint32_t ids) {
  const Shape &s = prep_->shape;
  const uint32_t r = prep_->rank;
  const uint64_t ext = bufs_.extent;
  Range range;
  range.begin = static_cast<uint32_t>(pieces_.size());
  auto add = [&](char *p, size_t elems) {
    if (range.size && pieces_.back().ptr + pieces_.back().elems * ext == p) {
      pieces_.back().elems += elems;
    } else {
      pieces_.push_back({p, elems});
      ++range.size;
    }
    range.elems += elems;
  };
  // A block of this rank's own call: of known size (Buffers::onlyBlock).
  const uint32_t perBlock = s.chunks / s.ranks;
  auto known = [&](uint32_t c) {
    return bufs_.onlyBlock < 0 || c / perBlock == uint32_t(bufs_.onlyBlock);
  };
  if (b == Buffer::Tmp) {
    if (bufs_.outBlockStart)
      unknownSize_ = true; // alltoallv: which rank's block a tmp slot holds is not known here
    for (uint32_t j = 0; j < count; ++j) {
      uint32_t c = prep_->tmpChunks[ids + j];
      if (c == unknownChunk)
        unknownTmp_ = true;
      else if (!known(c))
        unknownSize_ = true;
      size_t elems = c == unknownChunk ? cap_ : layout_.size(c);
      add(tmp_.get() + (uint64_t(chunk) + j) * cap_ * ext, elems);
    }
  } else {
    // in and out hold chunks in vector order from their first slot's chunk.
    bool aliased = b == Buffer::In && bufs_.out && bufs_.in == bufs_.out;
    uint32_t first = b == Buffer::In ? inChunkOf(s, r, chunk) : outPlaceOf(s, r, chunk);
    uint32_t base = (b == Buffer::Out || aliased) ? outPlaceOf(s, r, 0) : inChunkOf(s, r, 0);
    const ChunkLayout &layout = (b == Buffer::Out || aliased) ? outLayout_ : layout_;
    if (count && (!known(first) || !known(first + count - 1)))
      unknownSize_ = true;
    uint64_t from = layout.begin(first), to = layout.begin(first + count);
    char *p = static_cast<char *>(aliased ? bufs_.out : slotBase(b));
    add(p + (from - layout.begin(base)) * ext, to - from);
  }
  return range;
}

Status Executor::bind(const PreparedRank &prep, const Buffers &buffers, Combiner combine,
                      Transport &transport) {
  assert(!running_ && "bind during an execution");
  prep_ = &prep;
  transport_ = &transport;
  combine_ = combine;
  bufs_ = buffers;
  const Shape &s = prep.shape;
  const size_t ext = buffers.extent;
  layout_ = buffers.blockStart ? ChunkLayout(buffers.blockStart, s.ranks, s.chunks)
                               : ChunkLayout(buffers.count, s.chunks);
  outLayout_ = buffers.outBlockStart ? ChunkLayout(buffers.outBlockStart, s.ranks, s.chunks)
                                     : layout_;
  cap_ = layout_.maxChunk();

  const uint64_t longest = prep.longestChannel;
  const uint64_t tags = uint64_t(transport.maxTag()) + 1;
  if (longest > tags)
    return Status::error(ErrorCode::Unsupported,
                         "the plan sends " + std::to_string(longest) +
                             " messages on one channel, more than the transport's " +
                             std::to_string(tags) + " tags");
  chanBase_.assign(prep.channels.size(), 0);

  tmp_.reset();
  if (s.scratch && !(tmp_ = takeScratch(size_t(s.scratch) * cap_ * ext + 1)))
    return outOfMemory("tmp slots", size_t(s.scratch) * cap_ * ext);
  pieces_.clear();
  unknownTmp_ = false;
  unknownSize_ = false;
  bound_.assign(prep.ops.size(), BoundOp{});
  size_t stageElems = 0, scratchElems = 0, recvScratchElems = 0;
  std::vector<size_t> stageAt(prep.ops.size(), SIZE_MAX);
  for (uint32_t i = 0; i < prep.ops.size(); ++i) {
    const PreparedOp &op = prep.ops[i];
    BoundOp &b = bound_[i];
    switch (op.kind) {
    case OpKind::Send:
      b.buf = bindRange(op.buf, op.chunk, op.count, op.bufIds);
      break;
    case OpKind::Recv:
      b.dst = bindRange(op.dst, op.dstChunk, op.count, op.dstIds);
      break;
    case OpKind::RecvReduce:
      b.buf = bindRange(op.buf, op.chunk, op.count, op.bufIds);
      b.dst = bindRange(op.dst, op.dstChunk, op.count, op.dstIds);
      break;
    case OpKind::Reduce:
      b.buf = bindRange(op.buf, op.chunk, op.count, op.bufIds);
      b.src = bindRange(op.src, op.srcChunk, op.count, op.srcIds);
      b.dst = bindRange(op.dst, op.dstChunk, op.count, op.dstIds);
      break;
    case OpKind::Copy:
      b.src = bindRange(op.src, op.srcChunk, op.count, op.srcIds);
      b.dst = bindRange(op.dst, op.dstChunk, op.count, op.dstIds);
      break;
    }
    if (unknownTmp_)
      return Status::error(ErrorCode::Invalid,
                           "op " + std::to_string(i) + " uses tmp slots whose chunks cannot be "
                           "determined: the plan does not verify (collc verify)");
    if (unknownSize_)
      return Status::error(
          ErrorCode::Unsupported,
          "op " + std::to_string(i) + " of rank " + std::to_string(prep.rank) + " moves " +
              (buffers.outBlockStart ? "a block through a tmp slot"
                                     : "another rank's block, whose size it does not know") +
              ": gatherv, scatterv and alltoallv need a plan in which every rank moves only "
              "the blocks of its own call, from in to out (the library's linear and pairwise)");
    // Local operands must match element for element (a verified plan's do).
    const size_t want = op.kind == OpKind::Copy ? b.src.elems : b.buf.elems;
    if ((op.kind == OpKind::Copy || op.kind == OpKind::Reduce || op.kind == OpKind::RecvReduce) &&
        (b.dst.elems != want || (op.kind == OpKind::Reduce && b.src.elems != want)))
      return Status::error(ErrorCode::Invalid,
                           "op " + std::to_string(i) + " combines ranges of different sizes (" +
                               std::to_string(want) + " and " + std::to_string(b.dst.elems) +
                               " elements): the plan does not verify (collc verify)");
    b.streamed = (op.kind == OpKind::Recv || op.kind == OpKind::RecvReduce) &&
                 transport.streams(op.peer);
    bool staged = !b.streamed && (op.kind == OpKind::RecvReduce ||
                                  (op.kind == OpKind::Send && b.buf.size > 1) ||
                                  (op.kind == OpKind::Recv && b.dst.size > 1));
    size_t elems = std::max({b.buf.elems, b.src.elems, b.dst.elems});
    if (b.streamed && op.kind == OpKind::RecvReduce)
      recvScratchElems = std::max(recvScratchElems, elems);
    if (staged) {
      stageAt[i] = stageElems;
      stageElems += elems;
    }
    if (op.kind == OpKind::RecvReduce || op.kind == OpKind::Reduce)
      scratchElems = std::max(scratchElems, elems);
  }
  stage_.reset();
  scratch_.reset();
  recvScratch_.reset();
  if (stageElems && !(stage_ = takeScratch(stageElems * ext)))
    return outOfMemory("receive staging", stageElems * ext);
  if (scratchElems && !(scratch_ = takeScratch(scratchElems * ext)))
    return outOfMemory("combiner scratch", scratchElems * ext);
  if (recvScratchElems && !(recvScratch_ = takeScratch(recvScratchElems * ext)))
    return outOfMemory("combiner scratch", recvScratchElems * ext);
  transport.setSink(StreamSink{&Executor::sinkThunk, this});
  for (uint32_t i = 0; i < prep.ops.size(); ++i)
    if (stageAt[i] != SIZE_MAX)
      bound_[i].stage = stage_.get() + stageAt[i] * ext;

  // The direct path: a small program whose messages are all short, single
  // pieces (no packing), received streamed, to peers the path reaches. Each
  // op's predecessors as a bit mask, and what its message needs.
  direct_ = nullptr;
  directOps_.clear();
  if (DirectPath *d = transport.direct(); d && prep.ops.size() <= kDirectOps) {
    bool all = true;
    directOps_.resize(prep.ops.size());
    for (uint32_t i = 0; i < prep.ops.size() && all; ++i) {
      const PreparedOp &op = prep.ops[i];
      const BoundOp &b = bound_[i];
      DirectOp &x = directOps_[i];
      x.kind = op.kind;
      x.peer = op.peer;
      x.chan = op.chan;
      x.seq = op.seq;
      if (op.kind == OpKind::Send) {
        x.data = pieces_[b.buf.begin].ptr;
        x.elems = b.buf.elems;
        all = !b.stage && d->reaches(op.peer, x.elems * ext);
      } else if (op.kind == OpKind::Recv || op.kind == OpKind::RecvReduce) {
        x.elems = op.kind == OpKind::Recv ? b.dst.elems : b.buf.elems;
        all = b.streamed && d->reaches(op.peer, x.elems * ext);
      }
      for (uint32_t k = prep.succBegin[i]; k < prep.succBegin[i + 1]; ++k)
        directOps_[prep.succ[k]].preds |= uint64_t(1) << i;
    }
    if (all)
      direct_ = d;
    else
      directOps_.clear();
  }

  roots_.clear();
  for (uint32_t i = 0; i < prep.ops.size(); ++i)
    if (prep.predCount[i] == 0)
      roots_.push_back(i);
  pending_.resize(prep.ops.size());
  ready_.reserve(prep.ops.size());
  completed_.reserve(prep.messageOps);
  transport.reserve(static_cast<uint32_t>(prep.ops.size()));
  return Status::success();
}

Status Executor::startAt(std::span<const int> channelBase) {
  assert(prep_ && !running_ && "start without bind, or while running");
  assert(channelBase.size() == chanBase_.size() && "one base per channel");
  for (size_t c = 0; c < chanBase_.size(); ++c) {
    assert(channelBase[c] >= 0 && uint64_t(channelBase[c]) + prep_->channels[c].messages <=
                                      uint64_t(transport_->maxTag()) + 1 &&
           "tags out of range");
    chanBase_[c] = channelBase[c];
  }
  return run();
}

Status Executor::startAt(int tagBase) {
  assert(prep_ && !running_ && "start without bind, or while running");
  assert(tagBase >= 0 && uint64_t(tagBase) + prep_->tagStride <=
                             uint64_t(transport_->maxTag()) + 1 && "tags out of range");
  std::fill(chanBase_.begin(), chanBase_.end(), tagBase);
  return run();
}

Status Executor::startBlocking(std::span<const int> channelBase) {
  assert(prep_ && !running_ && "start without bind, or while running");
  assert(channelBase.size() == chanBase_.size() && "one base per channel");
  std::copy(channelBase.begin(), channelBase.end(), chanBase_.begin());
  if (!direct_ || (bufs_.count == 0 && bufs_.skipEmpty) || !direct_->enter())
    return run();
  return runDirect();
}

Status Executor::runDirect() {
  DirectPath &d = *direct_;
  running_ = true;
  const size_t ext = bufs_.extent;
  const size_t n = directOps_.size();
  const uint64_t all = n == 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1;
  uint64_t done = 0, started = 0, waiting = 0;
  auto tagOf = [&](const DirectOp &x) { return chanBase_[x.chan] + static_cast<int>(x.seq); };
  auto fail = [&](Status &&s) {
    d.leave();
    return failed(std::move(s));
  };
  for (int idle = 0;;) {
    // Every op whose predecessors are done, in listing order, until none is
    // left to start.
    for (bool ran = true; ran;) {
      ran = false;
      for (uint64_t m = all & ~started; m; m &= m - 1) {
        const uint32_t i = uint32_t(__builtin_ctzll(m));
        const DirectOp &x = directOps_[i];
        if (x.preds & ~done)
          continue;
        const uint64_t bit = uint64_t(1) << i;
        started |= bit;
        ran = true;
        bool arrived = true;
        switch (x.kind) {
        case OpKind::Send:
          if (!d.trySend(x.data, x.elems * ext, x.peer, tagOf(x)))
            return handOver(i, done, started, waiting);
          break;
        case OpKind::Recv:
        case OpKind::RecvReduce:
          if (Status s = d.tryRecv(x.elems * ext, x.peer, tagOf(x), i, arrived); !s.ok())
              [[unlikely]]
            return fail(std::move(s));
          if (!arrived)
            waiting |= bit;
          break;
        case OpKind::Reduce:
        case OpKind::Copy:
          runLocal(i);
          break;
        }
        if (arrived)
          done |= bit;
      }
    }
    if (done == all) {
      d.leave();
      running_ = false;
      ++directRuns_;
      return Status::success();
    }
    // Only receives are left to wait for: poll them.
    const uint64_t before = waiting;
    for (uint64_t m = waiting; m; m &= m - 1) {
      const uint32_t i = uint32_t(__builtin_ctzll(m));
      const DirectOp &x = directOps_[i];
      bool arrived = false;
      if (Status s = d.tryRecv(x.elems * ext, x.peer, tagOf(x), i, arrived); !s.ok())
          [[unlikely]]
        return fail(std::move(s));
      if (arrived) {
        waiting &= ~(uint64_t(1) << i);
        done |= uint64_t(1) << i;
      }
    }
    if (waiting != before) {
      idle = 0;
      continue;
    }
    // A peer whose short sends wait for announcements: the receives must be
    // posted (announced), or it would wait for ever.
    for (uint64_t m = waiting; m; m &= m - 1)
      if (d.peerWaits(directOps_[uint32_t(__builtin_ctzll(m))].peer))
        return handOver(kNoOp, done, started, waiting);
    d.pause(++idle);
  }
}

Status Executor::handOver(uint32_t send, uint64_t done, uint64_t started, uint64_t waiting) {
  DirectPath &d = *direct_;
  ++handOvers_;
  // The dataflow executor's state for what is done: ops not started wait
  // for their predecessors not done yet; those with none are ready.
  const size_t n = directOps_.size();
  doneOps_ = size_t(__builtin_popcountll(done));
  ready_.clear();
  for (uint32_t i = 0; i < n; ++i) {
    if (started & (uint64_t(1) << i))
      continue;
    pending_[i] = uint32_t(__builtin_popcountll(directOps_[i].preds & ~done));
    if (!pending_[i])
      ready_.push_back(i);
  }
  Status s = Status::success();
  if (send != kNoOp) {
    const DirectOp &x = directOps_[send];
    s = d.postSend(x.data, x.elems, x.peer, chanBase_[x.chan] + static_cast<int>(x.seq), send);
  }
  for (uint64_t m = waiting; m && s.ok(); m &= m - 1) {
    const uint32_t i = uint32_t(__builtin_ctzll(m));
    const DirectOp &x = directOps_[i];
    s = d.postRecv(x.elems, x.peer, chanBase_[x.chan] + static_cast<int>(x.seq), i);
  }
  d.leave();
  if (!s.ok())
    return failed(std::move(s));
  return failed(drainReady());
}

Status Executor::start(uint64_t execution) {
  assert(prep_ && !running_ && "start without bind, or while running");
  const uint64_t tags = uint64_t(transport_->maxTag()) + 1;
  for (size_t c = 0; c < chanBase_.size(); ++c) {
    const uint64_t len = prep_->channels[c].messages;
    chanBase_[c] = static_cast<int>((execution % (tags / len)) * len);
  }
  return run();
}

Status Executor::run() {
  running_ = true;
  doneOps_ = 0;
  std::copy(prep_->predCount.begin(), prep_->predCount.end(), pending_.begin());
  ready_.assign(roots_.begin(), roots_.end());
  if ((bufs_.count == 0 && bufs_.skipEmpty) || prep_->ops.empty()) { // every rank skips
    running_ = false;
    return Status::success();
  }
  return failed(drainReady());
}

Status Executor::failed(Status &&s) {
  if (!s.ok()) [[unlikely]]
    running_ = false; // the caller abandons the transport's requests
  return std::move(s);
}

void Executor::complete(uint32_t op) {
  ++doneOps_;
  for (uint32_t k = prep_->succBegin[op]; k < prep_->succBegin[op + 1]; ++k)
    if (--pending_[prep_->succ[k]] == 0)
      ready_.push_back(prep_->succ[k]);
}

void Executor::combineInOrder(const char *own, const char *other, char *dst, size_t n,
                              bool otherFirst, char *scratch) {
  if (otherFirst)
    combine_(other, own, dst, n, scratch);
  else
    combine_(own, other, dst, n, scratch);
}

void Executor::takeSegment(uint32_t i, const char *data, size_t offset, size_t elems) {
  const PreparedOp &op = prep_->ops[i];
  const BoundOp &b = bound_[i];
  const size_t ext = bufs_.extent;
  const bool reduce = op.kind == OpKind::RecvReduce;
  const bool otherFirst = op.order == Order::OtherFirst;
  if (b.dst.size == 1 && (!reduce || b.buf.size == 1)) [[likely]] {
    char *d = pieces_[b.dst.begin].ptr + offset * ext;
    if (!reduce)
      std::memcpy(d, data, elems * ext);
    else
      combineInOrder(pieces_[b.buf.begin].ptr + offset * ext, data, d, elems, otherFirst,
                     recvScratch_.get());
    return;
  }
  // Several pieces: walk both ranges from element `offset` of the message.
  auto locate = [&](const Range &r, size_t pos, size_t &avail) {
    const Piece *ps = pieces_.data() + r.begin;
    for (uint32_t k = 0; k < r.size; ++k) {
      if (pos < ps[k].elems) {
        avail = ps[k].elems - pos;
        return ps[k].ptr + pos * ext;
      }
      pos -= ps[k].elems;
    }
    avail = 0;
    return static_cast<char *>(nullptr);
  };
  size_t pos = offset, left = elems;
  while (left) {
    size_t availDst = 0, availBuf = SIZE_MAX;
    char *d = locate(b.dst, pos, availDst);
    const char *own = reduce ? locate(b.buf, pos, availBuf) : nullptr;
    const size_t len = std::min({left, availDst, availBuf});
    if (!len) // beyond the ranges (bind() keeps a verified plan's sizes equal)
      return;
    if (!reduce)
      std::memcpy(d, data, len * ext);
    else
      combineInOrder(own, data, d, len, otherFirst, recvScratch_.get());
    data += len * ext;
    pos += len;
    left -= len;
  }
}

void Executor::runLocal(uint32_t i) {
  const PreparedOp &op = prep_->ops[i];
  const BoundOp &b = bound_[i];
  const size_t ext = bufs_.extent;
  const Piece *src = pieces_.data() + b.src.begin, *dst = pieces_.data() + b.dst.begin;
  // Contiguous operands (the common case): no piece walk.
  const bool contiguous =
      b.src.size == 1 && b.dst.size == 1 && (op.kind == OpKind::Copy || b.buf.size == 1);
  if (contiguous) [[likely]] {
    char *s = src->ptr, *d = dst->ptr;
    const size_t n = b.src.elems;
    if (op.kind == OpKind::Copy && s != d && n)
      std::memmove(d, s, n * ext);
    else if (op.kind != OpKind::Copy && n)
      combineInOrder(pieces_[b.buf.begin].ptr, s, d, n, op.order == Order::OtherFirst);
    return;
  }
  if (op.kind == OpKind::Copy) {
    zip(src, b.src.size, dst, b.dst.size, static_cast<const Piece *>(nullptr), 0, ext,
        [&](char *s, char *d, char *, size_t n) {
          if (s != d)
            std::memmove(d, s, n * ext);
        });
    return;
  }
  const Piece *opnd = pieces_.data() + b.buf.begin;
  const bool srcFirst = op.order == Order::OtherFirst;
  zip(opnd, b.buf.size, src, b.src.size, dst, b.dst.size, ext,
      [&](char *x, char *s, char *d, size_t n) { combineInOrder(x, s, d, n, srcFirst); });
}

void Executor::finishMessage(uint32_t i) {
  const PreparedOp &op = prep_->ops[i];
  const BoundOp &b = bound_[i];
  const size_t ext = bufs_.extent;
  if (b.streamed) { // its segments were taken as they arrived
    complete(i);
    return;
  }
  if (op.kind == OpKind::Recv && b.stage) { // unpack pieces
    const Piece *dst = pieces_.data() + b.dst.begin;
    size_t at = 0;
    for (uint32_t k = 0; k < b.dst.size; ++k) {
      std::memcpy(dst[k].ptr, b.stage + at * ext, dst[k].elems * ext);
      at += dst[k].elems;
    }
  } else if (op.kind == OpKind::RecvReduce && b.buf.size == 1 && b.dst.size == 1) [[likely]] {
    if (b.buf.elems)
      combineInOrder(pieces_[b.buf.begin].ptr, b.stage, pieces_[b.dst.begin].ptr, b.buf.elems,
                     op.order == Order::OtherFirst);
  } else if (op.kind == OpKind::RecvReduce) {
    Piece staged{b.stage, b.buf.elems};
    const Piece *opnd = pieces_.data() + b.buf.begin, *dst = pieces_.data() + b.dst.begin;
    const bool recvFirst = op.order == Order::OtherFirst;
    zip(opnd, b.buf.size, &staged, 1, dst, b.dst.size, ext,
        [&](char *x, char *m, char *d, size_t n) { combineInOrder(x, m, d, n, recvFirst); });
  }
  complete(i);
}

Status Executor::post(uint32_t i) {
  const PreparedOp &op = prep_->ops[i];
  BoundOp &b = bound_[i];
  const int tag = isMessage(op.kind) ? chanBase_[op.chan] + static_cast<int>(op.seq) : 0;
  switch (op.kind) {
  case OpKind::Send: {
    const Piece *ps = pieces_.data() + b.buf.begin;
    const char *data = ps[0].ptr;
    if (b.stage) { // pack
      size_t at = 0;
      for (uint32_t k = 0; k < b.buf.size; ++k) {
        std::memcpy(b.stage + at * bufs_.extent, ps[k].ptr, ps[k].elems * bufs_.extent);
        at += ps[k].elems;
      }
      data = b.stage;
    }
    return transport_->send(data, b.buf.elems, op.peer, tag, i);
  }
  case OpKind::Recv:
    if (b.streamed)
      return transport_->recvStream(b.dst.elems, op.peer, tag, i);
    return transport_->recv(b.stage ? b.stage : pieces_[b.dst.begin].ptr, b.dst.elems, op.peer,
                            tag, i);
  case OpKind::RecvReduce:
    if (b.streamed)
      return transport_->recvStream(b.buf.elems, op.peer, tag, i);
    return transport_->recv(b.stage, b.buf.elems, op.peer, tag, i);
  case OpKind::Reduce:
  case OpKind::Copy:
    runLocal(i);
    complete(i);
    return Status::success();
  }
  return Status::success();
}

Status Executor::drainReady() {
  while (!ready_.empty()) {
    uint32_t i = ready_.back();
    ready_.pop_back();
    COLLC_RT_TRY(post(i));
  }
  if (doneOps_ == prep_->ops.size())
    running_ = false;
  return Status::success();
}

Status Executor::progressOnce(bool block) {
  completed_.clear();
  COLLC_RT_TRY(failed(transport_->poll(block, completed_)));
  for (uint32_t i : completed_)
    finishMessage(i);
  return failed(drainReady());
}

Status Executor::test(bool &done) {
  if (running_)
    COLLC_RT_TRY(progressOnce(false));
  done = !running_;
  return Status::success();
}

Status Executor::wait() {
  while (running_)
    COLLC_RT_TRY(progressOnce(true));
  return Status::success();
}

} // namespace collc::rt
