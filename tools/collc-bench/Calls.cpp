// tools/collc-bench/Calls.cpp: the calls of Calls.h.
#include "tools/collc-bench/Calls.h"

#include <algorithm>
#include <climits>
#include <cstring>

namespace collc::bench {

const char *name(CallKind k) {
  switch (k) {
  case CallKind::Allreduce:
    return "allreduce";
  case CallKind::Reduce:
    return "reduce";
  case CallKind::ReduceScatterBlock:
    return "reduce_scatter_block";
  case CallKind::ReduceScatter:
    return "reduce_scatter";
  case CallKind::Scan:
    return "scan";
  case CallKind::Exscan:
    return "exscan";
  case CallKind::Allgather:
    return "allgather";
  case CallKind::Bcast:
    return "bcast";
  case CallKind::Alltoall:
    return "alltoall";
  case CallKind::Gather:
    return "gather";
  case CallKind::Scatter:
    return "scatter";
  case CallKind::Allgatherv:
    return "allgatherv";
  case CallKind::Gatherv:
    return "gatherv";
  case CallKind::Scatterv:
    return "scatterv";
  case CallKind::Alltoallv:
    return "alltoallv";
  case CallKind::Barrier:
    return "barrier";
  }
  return "?";
}

std::optional<CallKind> parseCallKind(const std::string &s) {
  for (CallKind k : allCallKinds)
    if (s == name(k))
      return k;
  return std::nullopt;
}

int planCollective(CallKind k) {
  switch (k) {
  case CallKind::Allreduce:
    return COLLC_ALLREDUCE;
  case CallKind::Reduce:
    return COLLC_REDUCE;
  case CallKind::ReduceScatterBlock:
  case CallKind::ReduceScatter:
    return COLLC_REDUCE_SCATTER_BLOCK;
  case CallKind::Scan:
    return COLLC_SCAN;
  case CallKind::Exscan:
    return COLLC_EXSCAN;
  case CallKind::Allgather:
  case CallKind::Allgatherv:
    return COLLC_ALLGATHER;
  case CallKind::Bcast:
    return COLLC_BCAST;
  case CallKind::Alltoall:
  case CallKind::Alltoallv:
    return COLLC_ALLTOALL;
  case CallKind::Gather:
  case CallKind::Gatherv:
    return COLLC_GATHER;
  case CallKind::Scatter:
  case CallKind::Scatterv:
    return COLLC_SCATTER;
  case CallKind::Barrier:
    return COLLC_BARRIER;
  }
  return -1;
}

bool combines(CallKind k) {
  switch (k) {
  case CallKind::Allgather:
  case CallKind::Allgatherv:
  case CallKind::Bcast:
  case CallKind::Alltoall:
  case CallKind::Gather:
  case CallKind::Scatter:
  case CallKind::Gatherv:
  case CallKind::Scatterv:
  case CallKind::Alltoallv:
  case CallKind::Barrier:
    return false;
  default:
    return true;
  }
}

bool Call::varies(CallKind k) {
  return k == CallKind::ReduceScatter || k == CallKind::Allgatherv || k == CallKind::Gatherv ||
         k == CallKind::Scatterv || k == CallKind::Alltoallv;
}

namespace {

std::vector<uint64_t> prefixSums(const std::vector<MPI_Count> &counts) {
  std::vector<uint64_t> sums(counts.size() + 1, 0);
  for (size_t b = 0; b < counts.size(); ++b)
    sums[b + 1] = sums[b] + uint64_t(counts[b]);
  return sums;
}

std::vector<int> toInts(const std::vector<MPI_Count> &counts) {
  std::vector<int> out;
  for (MPI_Count c : counts)
    out.push_back(int(std::min<MPI_Count>(c, INT_MAX)));
  return out;
}

std::vector<int> toInts(const std::vector<uint64_t> &starts) {
  std::vector<int> out;
  for (size_t b = 0; b + 1 < starts.size(); ++b)
    out.push_back(int(std::min<uint64_t>(starts[b], INT_MAX)));
  return out;
}

} // namespace

Bytes allocateZeroed(size_t bytes) {
  const size_t rounded = (bytes + 63) / 64 * 64 + 64;
  auto *p = static_cast<char *>(std::aligned_alloc(64, rounded));
  if (p)
    std::memset(p, 0, rounded);
  return Bytes(p);
}

Call::Call(CallKind kind, const Workload &w, MPI_Comm comm, uint64_t n, bool inPlace, int root,
           std::vector<MPI_Count> recvcounts)
    : kind_(kind), w_(&w), comm_(comm), root_(root), inPlace_(inPlace),
      recvcounts_(std::move(recvcounts)) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  const uint64_t p = uint64_t(size_);
  block_ = n / p;
  const bool variable = varies(kind);
  if (variable && recvcounts_.empty())
    recvcounts_.assign(p, MPI_Count(block_));
  if (kind == CallKind::Alltoallv) {
    // Rank i sends counts[(i + j) % p] to j: symmetric, and every rank's
    // input has the same length (the counts' sum).
    const std::vector<MPI_Count> counts = recvcounts_;
    for (uint64_t j = 0; j < p; ++j) {
      sendcounts_.push_back(counts[(r() + j) % p]);
      recvFrom_.push_back(counts[(j + r()) % p]);
    }
    recvcounts_ = sendcounts_; // blockStart_ below: what this rank sends
    recvStart_ = prefixSums(recvFrom_);
    intSend_ = toInts(sendcounts_);
    intRecv_ = toInts(recvFrom_);
    intSdispls_ = toInts(prefixSums(sendcounts_));
    intRdispls_ = toInts(recvStart_);
  }
  blockStart_.assign(p + 1, 0);
  for (uint64_t b = 0; b < p; ++b)
    blockStart_[b + 1] = blockStart_[b] + (variable ? uint64_t(recvcounts_[b]) : block_);
  for (MPI_Count c : recvcounts_)
    intCounts_.push_back(int(std::min<MPI_Count>(c, INT_MAX)));
  for (uint64_t b = 0; b < p; ++b)
    intDispls_.push_back(int(std::min<uint64_t>(blockStart_[b], INT_MAX)));
  switch (kind) {
  case CallKind::ReduceScatterBlock:
  case CallKind::ReduceScatter:
    total_ = inElems_ = blockStart_[p];
    outElems_ = blockStart_[r() + 1] - blockStart_[r()];
    break;
  case CallKind::Allgather:
  case CallKind::Gather:
    total_ = outElems_ = p * block_;
    inElems_ = block_;
    break;
  case CallKind::Alltoall:
    total_ = inElems_ = outElems_ = p * block_;
    break;
  case CallKind::Allgatherv:
  case CallKind::Gatherv:
    total_ = outElems_ = blockStart_[p];
    inElems_ = blockStart_[r() + 1] - blockStart_[r()];
    break;
  case CallKind::Scatterv:
    total_ = inElems_ = blockStart_[p];
    outElems_ = blockStart_[r() + 1] - blockStart_[r()];
    break;
  case CallKind::Alltoallv:
    total_ = inElems_ = blockStart_[p];
    outElems_ = recvStart_[p];
    break;
  case CallKind::Scatter:
    total_ = inElems_ = p * block_;
    outElems_ = block_;
    break;
  case CallKind::Bcast:
    total_ = outElems_ = n;
    inElems_ = 0;
    break;
  case CallKind::Barrier:
    total_ = inElems_ = outElems_ = 0;
    break;
  default:
    total_ = inElems_ = outElems_ = n;
    break;
  }
  const size_t bytes = std::max<uint64_t>(total_, 1) * w.extent;
  in_ = allocateZeroed(bytes);
  out_ = allocateZeroed(bytes);
  want_ = allocateZeroed(bytes);
  scratch_ = allocateZeroed(bytes);
}

std::string Call::output() const {
  return std::string(out_.get(), std::max<uint64_t>(total_, 1) * w_->extent);
}

void Call::prepare(uint64_t salt) {
  const size_t ext = w_->extent;
  std::memset(out_.get(), 0xa5, std::max<uint64_t>(total_, 1) * ext);
  if (kind_ == CallKind::Barrier)
    return;
  if (kind_ == CallKind::Bcast) {
    if (rank_ == root_)
      fillInput(*w_, root_, salt, out_.get(), total_);
    return;
  }
  fillInput(*w_, rank_, salt, in_.get(), inElems_);
  const bool rooted =
      kind_ == CallKind::Reduce || kind_ == CallKind::Gather || kind_ == CallKind::Gatherv;
  const bool hasOut = !rooted || rank_ == root_;
  if (kind_ == CallKind::Scatter || kind_ == CallKind::Scatterv) {
    // In place (the root's recvbuf): the root's block stays in sendbuf.
    if (inPlace_ && rank_ == root_)
      std::memcpy(out_.get(), in_.get() + blockStart_[r()] * ext, outElems_ * ext);
    return;
  }
  const bool blockIn = kind_ == CallKind::Allgather || kind_ == CallKind::Gather ||
                       kind_ == CallKind::Allgatherv || kind_ == CallKind::Gatherv;
  if (inPlace_ && hasOut)
    std::memcpy(out_.get() + (blockIn ? blockStart_[r()] * ext : 0), in_.get(), inElems_ * ext);
}

std::string Call::check(uint64_t salt) {
  const size_t ext = w_->extent;
  uint64_t at = 0, n = outElems_;
  switch (kind_) {
  case CallKind::Barrier: // its order is checked where ranks can observe it
    return "";
  case CallKind::Allreduce:
  case CallKind::Reduce:
    if (kind_ == CallKind::Reduce && rank_ != root_)
      return "";
    referenceFold(*w_, size_, salt, want_.get(), scratch_.get(), n);
    break;
  case CallKind::ReduceScatterBlock:
  case CallKind::ReduceScatter:
    referenceFold(*w_, size_, salt, want_.get(), scratch_.get(), total_);
    at = blockStart_[r()];
    break;
  case CallKind::Scan:
    referenceFold(*w_, rank_ + 1, salt, want_.get(), scratch_.get(), n);
    break;
  case CallKind::Exscan:
    if (rank_ == 0) { // MPI: undefined; collc leaves the buffer as it was
      if (inPlace_)
        return std::memcmp(out_.get(), in_.get(), n * ext) ? "rank 0's buffer changed" : "";
      for (size_t i = 0; i < n * ext; ++i)
        if (uint8_t(out_.get()[i]) != 0xa5)
          return "rank 0's buffer was written";
      return "";
    }
    referenceFold(*w_, rank_, salt, want_.get(), scratch_.get(), n);
    break;
  case CallKind::Allgather:
  case CallKind::Allgatherv:
    for (uint64_t q = 0; q < uint64_t(size_); ++q)
      fillInput(*w_, int(q), salt, want_.get() + blockStart_[q] * ext,
                blockStart_[q + 1] - blockStart_[q]);
    break;
  case CallKind::Bcast:
    fillInput(*w_, root_, salt, want_.get(), n);
    break;
  case CallKind::Gather:
  case CallKind::Gatherv:
    if (rank_ != root_)
      return "";
    for (uint64_t q = 0; q < uint64_t(size_); ++q)
      fillInput(*w_, int(q), salt, want_.get() + blockStart_[q] * ext,
                blockStart_[q + 1] - blockStart_[q]);
    break;
  case CallKind::Scatterv: // block r of the root's input
    fillInput(*w_, root_, salt, scratch_.get(), total_);
    std::memcpy(want_.get(), scratch_.get() + blockStart_[r()] * ext, n * ext);
    break;
  case CallKind::Alltoallv: // rank q's block for r, as block q
    for (uint64_t q = 0; q < uint64_t(size_); ++q) {
      const uint64_t p = uint64_t(size_);
      uint64_t from = 0; // where rank q's block r starts in q's input
      for (uint64_t j = 0; j < r(); ++j)
        from += uint64_t(recvcounts_[(q + j + p - r()) % p]);
      fillInput(*w_, int(q), salt, scratch_.get(), total_);
      std::memcpy(want_.get() + recvStart_[q] * ext, scratch_.get() + from * ext,
                  uint64_t(recvFrom_[q]) * ext);
    }
    break;
  case CallKind::Alltoall: // rank q's input, block r, as block q
    for (uint64_t q = 0; q < uint64_t(size_); ++q) {
      fillInput(*w_, int(q), salt, scratch_.get(), total_);
      std::memcpy(want_.get() + q * block_ * ext, scratch_.get() + r() * block_ * ext,
                  block_ * ext);
    }
    break;
  case CallKind::Scatter: // block r of the root's input
    fillInput(*w_, root_, salt, scratch_.get(), total_);
    std::memcpy(want_.get(), scratch_.get() + r() * block_ * ext, block_ * ext);
    break;
  }
  const char *want = want_.get() + at * ext;
  const size_t bad = firstMismatch(*w_, out_.get(), want, n);
  if (bad == n)
    return "";
  return "rank " + std::to_string(rank_) + " element " + std::to_string(bad) + " is " +
         formatElement(*w_, out_.get(), bad) + ", expected " + formatElement(*w_, want, bad);
}

int Call::native() {
  void *o = out_.get();
  const void *s = sendbuf();
  const int n = int(total_), b = int(block_);
  const MPI_Datatype t = w_->type;
  const MPI_Op op = w_->op;
  switch (kind_) {
  case CallKind::Allreduce:
    return MPI_Allreduce(s, o, n, t, op, comm_);
  case CallKind::Reduce:
    return MPI_Reduce(inPlace_ && rank_ != root_ ? in_.get() : s, o, n, t, op, root_, comm_);
  case CallKind::ReduceScatterBlock:
    return MPI_Reduce_scatter_block(s, o, b, t, op, comm_);
  case CallKind::ReduceScatter:
    return MPI_Reduce_scatter(s, o, intCounts_.data(), t, op, comm_);
  case CallKind::Scan:
    return MPI_Scan(s, o, n, t, op, comm_);
  case CallKind::Exscan:
    return MPI_Exscan(s, o, n, t, op, comm_);
  case CallKind::Allgather:
    return MPI_Allgather(inPlace_ ? MPI_IN_PLACE : in_.get(), b, t, o, b, t, comm_);
  case CallKind::Bcast:
    return MPI_Bcast(o, n, t, root_, comm_);
  case CallKind::Alltoall:
    return MPI_Alltoall(s, b, t, o, b, t, comm_);
  case CallKind::Gather:
    return MPI_Gather(inPlace_ && rank_ != root_ ? in_.get() : s, b, t, o, b, t, root_, comm_);
  case CallKind::Scatter:
    return MPI_Scatter(in_.get(), b, t, inPlace_ && rank_ == root_ ? MPI_IN_PLACE : o, b, t,
                       root_, comm_);
  case CallKind::Allgatherv:
    return MPI_Allgatherv(inPlace_ ? MPI_IN_PLACE : in_.get(), intCounts_[r()], t, o,
                          intCounts_.data(), intDispls_.data(), t, comm_);
  case CallKind::Gatherv:
    return MPI_Gatherv(inPlace_ && rank_ != root_ ? in_.get() : s, intCounts_[r()], t, o,
                       intCounts_.data(), intDispls_.data(), t, root_, comm_);
  case CallKind::Scatterv:
    return MPI_Scatterv(in_.get(), intCounts_.data(), intDispls_.data(), t,
                        inPlace_ && rank_ == root_ ? MPI_IN_PLACE : o, intCounts_[r()], t,
                        root_, comm_);
  case CallKind::Alltoallv:
    return MPI_Alltoallv(s, intSend_.data(), intSdispls_.data(), t, o, intRecv_.data(),
                         intRdispls_.data(), t, comm_);
  case CallKind::Barrier:
    return MPI_Barrier(comm_);
  }
  return MPI_ERR_OTHER;
}

int Call::collc(collc_plan plan, int mode, collc_request *req) {
  void *o = out_.get();
  const bool reduceNonRoot = (kind_ == CallKind::Reduce || kind_ == CallKind::Gather ||
                              kind_ == CallKind::Gatherv) &&
                             rank_ != root_;
  const bool root = rank_ == root_;
  const void *s = reduceNonRoot ? in_.get() : sendbuf();
  void *ro = reduceNonRoot ? nullptr : o;
  const MPI_Count n = MPI_Count(total_), b = MPI_Count(block_);
  const MPI_Datatype t = w_->type;
  const MPI_Op op = w_->op;
  const MPI_Comm c = comm_;
  const MPI_Count *rc = recvcounts_.data();
#define COLLC_MODES(Name, ...)                                                                 \
  return mode == 0   ? collc_##Name(plan, __VA_ARGS__)                                        \
         : mode == 1 ? collc_i##Name(plan, __VA_ARGS__, req)                                  \
                     : collc_##Name##_init(plan, __VA_ARGS__, req)
  switch (kind_) {
  case CallKind::Allreduce:
    COLLC_MODES(allreduce, s, o, n, t, op, c);
  case CallKind::Reduce:
    COLLC_MODES(reduce, s, ro, n, t, op, root_, c);
  case CallKind::ReduceScatterBlock:
    COLLC_MODES(reduce_scatter_block, s, o, b, t, op, c);
  case CallKind::ReduceScatter:
    COLLC_MODES(reduce_scatter, s, o, rc, t, op, c);
  case CallKind::Scan:
    COLLC_MODES(scan, s, o, n, t, op, c);
  case CallKind::Exscan:
    COLLC_MODES(exscan, s, o, n, t, op, c);
  case CallKind::Allgather:
    COLLC_MODES(allgather, s, o, b, t, c);
  case CallKind::Bcast:
    COLLC_MODES(bcast, o, n, t, root_, c);
  case CallKind::Alltoall:
    COLLC_MODES(alltoall, s, o, b, t, c);
  case CallKind::Gather:
    COLLC_MODES(gather, s, ro, b, t, root_, c);
  case CallKind::Scatter:
    COLLC_MODES(scatter, rank_ == root_ ? in_.get() : nullptr,
                inPlace_ && rank_ == root_ ? MPI_IN_PLACE : o, b, t, root_, c);
  case CallKind::Allgatherv:
    COLLC_MODES(allgatherv, s, o, rc, t, c);
  // (the counts only where MPI reads them)
  case CallKind::Gatherv:
    COLLC_MODES(gatherv, s, recvcounts_[r()], ro, root ? rc : nullptr, t, root_, c);
  case CallKind::Scatterv:
    COLLC_MODES(scatterv, root ? in_.get() : nullptr, root ? rc : nullptr,
                inPlace_ && root ? MPI_IN_PLACE : o, recvcounts_[r()], t, root_, c);
  case CallKind::Alltoallv:
    COLLC_MODES(alltoallv, s, inPlace_ ? nullptr : sendcounts_.data(), o, recvFrom_.data(), t,
                c);
  case CallKind::Barrier:
    COLLC_MODES(barrier, c);
  }
#undef COLLC_MODES
  return COLLC_ERR_ARG;
}

std::string Call::describe() const {
  std::string s = std::string(name(kind_)) + " p=" + std::to_string(size_) + " " + w_->opName +
                  "/" + w_->typeName;
  if (varies(kind_)) {
    s += kind_ == CallKind::Alltoallv ? " sendcounts" : " counts";
    for (MPI_Count c : recvcounts_)
      s += " " + std::to_string(c);
  } else {
    s += " n=" + std::to_string(total_);
  }
  if (kind_ == CallKind::Reduce || kind_ == CallKind::Bcast || kind_ == CallKind::Gather ||
      kind_ == CallKind::Scatter || kind_ == CallKind::Gatherv || kind_ == CallKind::Scatterv)
    s += " root " + std::to_string(root_);
  return s + (inPlace_ ? " in-place" : "");
}

} // namespace collc::bench
