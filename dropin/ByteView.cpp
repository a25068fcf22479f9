// dropin/ByteView.cpp: bcast, allgather and the block movers served as bytes
// (ByteView.h).
#include "dropin/ByteView.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

namespace collc::dropin {

int Staging::room(size_t at) const {
  return int(std::min<size_t>(bytes_ - at, size_t(INT_MAX)));
}

int Staging::pack() const {
  if (!in_.used)
    return MPI_SUCCESS;
  int position = 0;
  for (const Piece &piece : inPieces_) {
    position = 0;
    if (int rc = PMPI_Pack(piece.buf, piece.count, piece.type, buf_.get() + piece.at,
                           room(piece.at), &position, MPI_COMM_SELF);
        rc != MPI_SUCCESS)
      return rc;
  }
  if (!inPieces_.empty())
    return MPI_SUCCESS;
  char *to = buf_.get() + in_.at;
  if (!in_.resized())
    return PMPI_Pack(in_.buf, in_.count, in_.type, to, int(bytes_ - in_.at), &position,
                     MPI_COMM_SELF);
  // Each of the user's blocks cut to the plan's, or filled with zeros.
  std::vector<char> user(in_.blocks * in_.userBlock + 1);
  if (int rc = PMPI_Pack(in_.buf, in_.count, in_.type, user.data(), int(user.size()), &position,
                         MPI_COMM_SELF);
      rc != MPI_SUCCESS)
    return rc;
  const size_t n = std::min(in_.userBlock, in_.planBlock);
  for (size_t b = 0; b < size_t(in_.blocks); ++b) {
    std::memcpy(to + b * in_.planBlock, user.data() + b * in_.userBlock, n);
    std::memset(to + b * in_.planBlock + n, 0, in_.planBlock - n);
  }
  return MPI_SUCCESS;
}

int Staging::unpack() const {
  if (!out_.used)
    return MPI_SUCCESS;
  int position = 0;
  for (const Piece &piece : outPieces_) {
    position = 0;
    if (int rc = PMPI_Unpack(buf_.get() + piece.at, room(piece.at), &position, piece.buf,
                             piece.count, piece.type, MPI_COMM_SELF);
        rc != MPI_SUCCESS)
      return rc;
  }
  if (!outPieces_.empty())
    return MPI_SUCCESS;
  const char *from = buf_.get() + out_.at;
  if (!out_.resized())
    return PMPI_Unpack(from, int(bytes_ - out_.at), &position, out_.buf, out_.count,
                       out_.type, MPI_COMM_SELF);
  // Each plan block into the first bytes of the user's; a longer user block
  // keeps the rest as it was.
  std::vector<char> user(out_.blocks * out_.userBlock + 1);
  if (out_.userBlock > out_.planBlock)
    if (int rc = PMPI_Pack(out_.buf, out_.count, out_.type, user.data(), int(user.size()),
                           &position, MPI_COMM_SELF);
        rc != MPI_SUCCESS)
      return rc;
  const size_t n = std::min(out_.userBlock, out_.planBlock);
  for (size_t b = 0; b < size_t(out_.blocks); ++b)
    std::memcpy(user.data() + b * out_.userBlock, from + b * out_.planBlock, n);
  position = 0;
  return PMPI_Unpack(user.data(), int(user.size()), &position, out_.buf, out_.count, out_.type,
                     MPI_COMM_SELF);
}

bool laidAsBytes(MPI_Datatype type) {
  int ints = 0, addrs = 0, types = 0, combiner = 0, size = 0;
  MPI_Aint lb = 0, extent = 0;
  return PMPI_Type_get_envelope(type, &ints, &addrs, &types, &combiner) == MPI_SUCCESS &&
         combiner == MPI_COMBINER_NAMED && PMPI_Type_size(type, &size) == MPI_SUCCESS &&
         PMPI_Type_get_extent(type, &lb, &extent) == MPI_SUCCESS && lb == 0 &&
         extent == MPI_Aint(size);
}

namespace {

/// count x type's size in bytes, if it fits an int.
int bytesOf(int count, MPI_Datatype type, int &bytes) {
  int size = 0;
  if (int rc = PMPI_Type_size(type, &size); rc != MPI_SUCCESS)
    return rc;
  if (size < 0) // MPI_UNDEFINED: a size beyond an int
    return MPI_ERR_TYPE;
  const int64_t b = int64_t(count) * size;
  if (count < 0 || b > INT_MAX)
    return MPI_ERR_COUNT;
  bytes = int(b);
  return MPI_SUCCESS;
}

/// recvbuf + offset bytes, computed as an address (recvbuf may be MPI_BOTTOM,
/// a null pointer, with an absolute datatype).
void *blockOf(void *recvbuf, MPI_Aint offset) {
  return reinterpret_cast<void *>(reinterpret_cast<uintptr_t>(recvbuf) + uintptr_t(offset));
}

} // namespace

std::unique_ptr<Staging> Staging::held(std::unique_ptr<Staging> s) {
  if (s->in_.used)
    s->inHold_.hold(s->in_.type);
  if (s->out_.used)
    s->outHold_.hold(s->out_.type);
  return s;
}

int Staging::blocks(const Args &a, int rank, int size, Args &view,
                    std::unique_ptr<Staging> &staging) {
  const Coll c = collOf(a.kind);
  const bool root = rank == a.root; // (alltoall has none)
  // The significant sides, and the one that decides (ByteView.h).
  const bool sendSide = c == Coll::Alltoall ? a.sendbuf != MPI_IN_PLACE
                        : c == Coll::Gather ? !(root && a.sendbuf == MPI_IN_PLACE)
                                            : root;
  const bool recvSide = c == Coll::Alltoall ? true
                        : c == Coll::Gather ? root
                                            : !(root && a.recvbuf == MPI_IN_PLACE);
  const bool bySend = (c == Coll::Gather && !root) || (c == Coll::Scatter && root);
  const int sendBlocks = c == Coll::Gather ? 1 : size;
  const int recvBlocks = c == Coll::Scatter ? 1 : size;
  int sendBytes = 0, recvBytes = 0;
  if ((sendSide && (a.sendcount < 0 || a.sendtype == MPI_DATATYPE_NULL)) ||
      (recvSide && (a.count < 0 || a.type == MPI_DATATYPE_NULL)))
    return MPI_ERR_ARG;
  if (sendSide)
    if (int rc = bytesOf(a.sendcount, a.sendtype, sendBytes); rc != MPI_SUCCESS)
      return rc;
  if (recvSide)
    if (int rc = bytesOf(a.count, a.type, recvBytes); rc != MPI_SUCCESS)
      return rc;
  const int block = bySend ? sendBytes : recvBytes;
  // (Only the sides MPI reads: an ignored count may be anything, and a rank
  // that went native over it would part from the others.)
  if (int64_t(block) * size > INT_MAX || int64_t(sendBytes) * sendBlocks > INT_MAX ||
      int64_t(recvBytes) * recvBlocks > INT_MAX ||
      (recvSide && int64_t(a.count) * recvBlocks > INT_MAX) ||
      (sendSide && int64_t(a.sendcount) * sendBlocks > INT_MAX))
    return MPI_ERR_COUNT;
  view.type = MPI_BYTE;
  view.count = block;
  view.sendtype = MPI_BYTE;
  view.sendcount = block;
  if (block == 0)
    return MPI_SUCCESS; // nothing moves, on every rank alike
  const bool stageIn = sendSide && !(sendBytes == block && laidAsBytes(a.sendtype));
  const bool stageOut = recvSide && !(recvBytes == block && laidAsBytes(a.type));
  if (!stageIn && !stageOut)
    return MPI_SUCCESS;
  // The packed bytes: the send side's blocks, then the receive side's.
  const size_t inBytes = stageIn ? size_t(sendBlocks) * size_t(block) : 0;
  const size_t outBytes = stageOut ? size_t(recvBlocks) * size_t(block) : 0;
  auto s = std::make_unique<Staging>();
  s->bytes_ = inBytes + outBytes;
  s->buf_.reset(new (std::nothrow) char[s->bytes_]);
  if (!s->buf_)
    return MPI_ERR_NO_MEM;
  if (stageIn) {
    s->in_ = {true,      const_cast<void *>(a.sendbuf), a.sendcount * sendBlocks, a.sendtype, 0,
              sendBlocks, size_t(sendBytes),             size_t(block)};
    view.sendbuf = s->buf_.get();
  }
  if (stageOut) {
    s->out_ = {true,       a.recvbuf,         a.count * recvBlocks, a.type, inBytes,
               recvBlocks, size_t(recvBytes), size_t(block)};
    view.recvbuf = s->buf_.get() + inBytes;
    // In place, the input is in recvbuf: alltoall's p blocks, the gather
    // root's own block.
    if (a.sendbuf == MPI_IN_PLACE && c == Coll::Alltoall) {
      s->in_ = s->out_;
    } else if (a.sendbuf == MPI_IN_PLACE && c == Coll::Gather && root) {
      MPI_Aint lb = 0, extent = 0;
      if (int rc = PMPI_Type_get_extent(a.type, &lb, &extent); rc != MPI_SUCCESS)
        return rc;
      s->in_ = {true, blockOf(a.recvbuf, MPI_Aint(rank) * a.count * extent),
                a.count, a.type, inBytes + size_t(rank) * size_t(block), 1, size_t(block),
                size_t(block)};
    }
  }
  staging = Staging::held(std::move(s));
  return MPI_SUCCESS;
}

int Staging::varying(const Args &a, int rank, int size, Args &view,
                     std::unique_ptr<Staging> &staging, std::vector<int> &byteCounts) {
  const bool inPlace = a.sendbuf == MPI_IN_PLACE;
  if ((!inPlace && (a.sendcount < 0 || a.sendtype == MPI_DATATYPE_NULL)) ||
      a.type == MPI_DATATYPE_NULL)
    return MPI_ERR_ARG;
  int sendBytes = 0;
  if (!inPlace)
    if (int rc = bytesOf(a.sendcount, a.sendtype, sendBytes); rc != MPI_SUCCESS)
      return rc;
  MPI_Aint lb = 0, extent = 0;
  if (int rc = PMPI_Type_get_extent(a.type, &lb, &extent); rc != MPI_SUCCESS)
    return rc;
  // The blocks in bytes (equal on every rank: MPI's matching signatures),
  // and whether the call's displacements put them one after another.
  byteCounts.assign(size_t(size), 0);
  std::vector<size_t> at(size_t(size) + 1, 0);
  int64_t elems = 0; // where block b lies when the blocks are consecutive
  bool consecutive = true;
  for (int b = 0; b < size; ++b) {
    if (a.recvcounts[b] < 0)
      return MPI_ERR_ARG;
    if (int rc = bytesOf(a.recvcounts[b], a.type, byteCounts[size_t(b)]); rc != MPI_SUCCESS)
      return rc;
    consecutive = consecutive && (a.recvcounts[b] == 0 || a.displs[b] == elems);
    elems += a.recvcounts[b];
    at[size_t(b) + 1] = at[size_t(b)] + size_t(byteCounts[size_t(b)]);
  }
  if (at[size_t(size)] > size_t(INT_MAX))
    return MPI_ERR_COUNT;
  view.type = view.sendtype = MPI_BYTE;
  view.count = 0;
  view.recvcounts = byteCounts.data();
  view.displs = nullptr; // the view's blocks lie one after another
  view.sendcount = byteCounts[size_t(rank)];
  if (at[size_t(size)] == 0)
    return MPI_SUCCESS; // nothing moves, on every rank alike
  const bool sendAsIs =
      inPlace || (sendBytes == byteCounts[size_t(rank)] && laidAsBytes(a.sendtype));
  if (sendAsIs && consecutive && laidAsBytes(a.type))
    return MPI_SUCCESS;
  // Staged: the input packed into its block of the packed bytes, the plan run
  // in place there, every block unpacked to its place.
  auto s = std::make_unique<Staging>();
  s->bytes_ = at[size_t(size)];
  s->buf_.reset(new (std::nothrow) char[s->bytes_]);
  if (!s->buf_)
    return MPI_ERR_NO_MEM;
  const size_t own = at[size_t(rank)];
  if (inPlace)
    s->in_ = {true, blockOf(a.recvbuf, MPI_Aint(a.displs[rank]) * extent), a.recvcounts[rank],
              a.type, own};
  else
    s->in_ = {true, const_cast<void *>(a.sendbuf), a.sendcount, a.sendtype, own, 1,
              size_t(sendBytes), size_t(byteCounts[size_t(rank)])};
  s->out_ = {true, a.recvbuf, 0, a.type, 0};
  for (int b = 0; b < size; ++b)
    if (a.recvcounts[b] > 0)
      s->outPieces_.push_back(
          {at[size_t(b)], blockOf(a.recvbuf, MPI_Aint(a.displs[b]) * extent), a.recvcounts[b],
           a.type});
  view.sendbuf = MPI_IN_PLACE;
  view.recvbuf = s->buf_.get();
  staging = Staging::held(std::move(s));
  return MPI_SUCCESS;
}

namespace {

/// One side of a v-variant: `blocks` blocks, block b `counts[b]` elements of
/// `type` at `displs[b]` extents from `buf` (a one-block side: its count,
/// at 0).
struct VSide {
  bool used = false;
  void *buf = nullptr;
  const int *counts = nullptr, *displs = nullptr;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  /// MPI_Alltoallw: block b of `types[b]`, `displs` in bytes (`type` unused).
  const MPI_Datatype *types = nullptr;
  int blocks = 1;
  // Filled by measure():
  std::vector<MPI_Aint> where; ///< each block's address offset from buf, in bytes
  std::vector<size_t> at;      ///< blocks + 1 prefix sums of the blocks' bytes
  bool asIs = false;           ///< bytes, one block after another: used in place

  MPI_Datatype typeOf(int b) const { return types ? types[b] : type; }
  /// The side's bytes into `bytes` (one int per block). MPI_ERR_ARG: a null
  /// array or datatype, a negative count; MPI_ERR_COUNT: beyond an int.
  int measure(int *bytes) {
    if (!counts || !displs || (!types && type == MPI_DATATYPE_NULL))
      return MPI_ERR_ARG;
    at.assign(size_t(blocks) + 1, 0);
    where.assign(size_t(blocks), 0);
    asIs = true;
    for (int b = 0; b < blocks; ++b) {
      const MPI_Datatype t = typeOf(b);
      MPI_Aint lb = 0, extent = 0;
      if (counts[b] < 0 || t == MPI_DATATYPE_NULL)
        return MPI_ERR_ARG;
      if (int rc = PMPI_Type_get_extent(t, &lb, &extent); rc != MPI_SUCCESS)
        return rc;
      if (int rc = bytesOf(counts[b], t, bytes[b]); rc != MPI_SUCCESS)
        return rc;
      where[size_t(b)] = types ? MPI_Aint(displs[b]) : MPI_Aint(displs[b]) * extent;
      asIs = asIs && (counts[b] == 0 || (laidAsBytes(t) && where[size_t(b)] == MPI_Aint(at[size_t(b)])));
      at[size_t(b) + 1] = at[size_t(b)] + size_t(bytes[b]);
    }
    // (A side's whole may pass an int — a gatherv root's 64 blocks of
    // 64 MiB — its blocks may not: every rank must decide alike, and a
    // gatherv's non-root sees its own block only.)
    return MPI_SUCCESS;
  }
  /// Its blocks as pieces of packed bytes from `from`.
  void pieces(size_t from, std::vector<Staging::Piece> &out) const {
    for (int b = 0; b < blocks; ++b)
      if (counts[b] > 0)
        out.push_back({from + at[size_t(b)], blockOf(buf, where[size_t(b)]), counts[b],
                       typeOf(b)});
  }
};

} // namespace

int Staging::vBlocks(const Args &a, int rank, int size, Args &view,
                     std::unique_ptr<Staging> &staging, std::vector<int> &byteCounts) {
  static const int zero = 0;
  const bool root = rank == a.root;
  VSide send, recv;
  send.buf = const_cast<void *>(a.sendbuf);
  send.type = a.sendtype;
  recv.buf = a.recvbuf;
  recv.type = a.type;
  switch (collOf(a.kind)) {
  case Coll::Gather:
    send.used = !(root && a.sendbuf == MPI_IN_PLACE);
    send.counts = &a.sendcount;
    send.displs = &zero;
    recv.used = root;
    recv.counts = a.recvcounts;
    recv.displs = a.displs;
    recv.blocks = size;
    break;
  case Coll::Scatter:
    send.used = root;
    send.counts = a.sendcounts;
    send.displs = a.sdispls;
    send.blocks = size;
    recv.used = !(root && a.recvbuf == MPI_IN_PLACE);
    recv.counts = &a.count;
    recv.displs = &zero;
    break;
  default: // alltoallv, alltoallw
    send.used = a.sendbuf != MPI_IN_PLACE;
    send.counts = a.sendcounts;
    send.displs = a.sdispls;
    send.blocks = size;
    recv.used = true;
    recv.counts = a.recvcounts;
    recv.displs = a.displs;
    recv.blocks = size;
    if (a.kind == Kind::Alltoallw) { // a datatype per block, displacements in bytes
      send.types = a.sendtypes;
      recv.types = a.recvtypes;
      if ((send.used && !a.sendtypes) || !a.recvtypes)
        return MPI_ERR_ARG;
      send.type = recv.type = MPI_BYTE; // (the pieces have theirs)
    }
    break;
  }
  // Bytes: the receive side's at 0, the send side's at size (Serve.cpp:
  // runtimeCall reads them there).
  byteCounts.assign(2 * size_t(size), 0);
  int *recvBytes = byteCounts.data(), *sendBytes = byteCounts.data() + size;
  if (send.used)
    if (int rc = send.measure(sendBytes); rc != MPI_SUCCESS)
      return rc;
  if (recv.used)
    if (int rc = recv.measure(recvBytes); rc != MPI_SUCCESS)
      return rc;
  view.type = view.sendtype = MPI_BYTE;
  view.displs = view.sdispls = nullptr; // the view's blocks lie one after another
  view.recvcounts = recv.used && recv.blocks == size ? recvBytes : nullptr;
  view.sendcounts = send.used && send.blocks == size ? sendBytes : nullptr;
  view.sendcount = send.used && send.blocks == 1 ? sendBytes[0] : 0;
  view.count = recv.used && recv.blocks == 1 ? recvBytes[0] : 0;
  const bool stageIn = send.used && !send.asIs;
  const bool stageOut = recv.used && !recv.asIs;
  if (!stageIn && !stageOut)
    return MPI_SUCCESS;
  const size_t inBytes = stageIn ? send.at.back() : 0;
  auto s = std::make_unique<Staging>();
  s->bytes_ = inBytes + (stageOut ? recv.at.back() : 0);
  s->buf_.reset(new (std::nothrow) char[s->bytes_ + 1]);
  if (!s->buf_)
    return MPI_ERR_NO_MEM;
  if (stageIn) {
    s->in_ = {true, send.buf, 0, send.type, 0};
    send.pieces(0, s->inPieces_);
    view.sendbuf = s->buf_.get();
  }
  if (stageOut) {
    s->out_ = {true, recv.buf, 0, recv.type, inBytes};
    recv.pieces(inBytes, s->outPieces_);
    view.recvbuf = s->buf_.get() + inBytes;
    // In place, the input is in recvbuf: the gatherv root's own block, or
    // every block of an alltoallv; packed into its place before the run.
    if (!send.used && collOf(a.kind) == Coll::Alltoall) {
      s->in_ = {true, recv.buf, 0, recv.type, inBytes};
      s->inPieces_ = s->outPieces_;
    } else if (!send.used && collOf(a.kind) == Coll::Gather && a.recvcounts[rank] > 0) {
      s->in_ = {true, recv.buf, 0, recv.type, inBytes};
      s->inPieces_.push_back({inBytes + recv.at[size_t(rank)],
                              blockOf(recv.buf, recv.where[size_t(rank)]), a.recvcounts[rank],
                              recv.type});
    }
  }
  staging = Staging::held(std::move(s));
  return MPI_SUCCESS;
}

int byteView(const Args &a, int rank, int size, Args &view, std::unique_ptr<Staging> &staging,
             std::vector<int> &byteCounts) {
  view = a;
  staging.reset();
  const Coll c = collOf(a.kind);
  if (isVarying(a.kind))
    return Staging::vBlocks(a, rank, size, view, staging, byteCounts);
  if (movesBlocks(c))
    return Staging::blocks(a, rank, size, view, staging);
  if (hasDispls(a.kind))
    return Staging::varying(a, rank, size, view, staging, byteCounts);
  if (c != Coll::Bcast && c != Coll::Allgather)
    return MPI_SUCCESS;
  int block = 0; // bcast: the message; allgather: one rank's block
  if (int rc = bytesOf(a.count, a.type, block); rc != MPI_SUCCESS)
    return rc;
  const int64_t total = c == Coll::Allgather ? int64_t(block) * size : block;
  if (total > INT_MAX)
    return MPI_ERR_COUNT;
  view.type = MPI_BYTE;
  view.count = block;
  const bool inPlace = c == Coll::Allgather && a.sendbuf == MPI_IN_PLACE;
  if (block == 0) {
    // Nothing moves (a zero count, or a datatype of no bytes, on every
    // rank alike): no staging, whatever the datatypes and buffers.
    if (c == Coll::Allgather && !inPlace) {
      view.sendtype = MPI_BYTE;
      view.sendcount = 0;
    }
    return MPI_SUCCESS;
  }
  if (c == Coll::Allgather && !inPlace) {
    // The send side as bytes where it can be used in place; else the
    // receive side's staging (stageInput, or Staging::pack below) packs it.
    if (laidAsBytes(a.sendtype)) {
      if (int rc = bytesOf(a.sendcount, a.sendtype, view.sendcount); rc != MPI_SUCCESS)
        return rc;
      view.sendtype = MPI_BYTE;
    }
  }
  if (laidAsBytes(a.type))
    return MPI_SUCCESS;

  // The receive side's datatype is not bytes: the run uses a buffer of the
  // signature's bytes. MPI_Pack on MPI_COMM_SELF writes a homogeneous
  // signature as its bytes (`size` of them per element, as Open MPI and
  // MPICH do), so packed and unpacked ranks exchange the same bytes.
  auto s = std::make_unique<Staging>();
  s->bytes_ = size_t(total);
  s->buf_.reset(new (std::nothrow) char[s->bytes_ ? s->bytes_ : 1]);
  if (!s->buf_)
    return MPI_ERR_NO_MEM;
  view.recvbuf = s->buf_.get();
  if (c == Coll::Bcast) {
    Staging::Side &side = rank == a.root ? s->in_ : s->out_;
    side = {true, a.recvbuf, a.count, a.type, 0};
  } else {
    MPI_Aint lb = 0, extent = 0;
    if (int rc = PMPI_Type_get_extent(a.type, &lb, &extent); rc != MPI_SUCCESS)
      return rc;
    const size_t own = size_t(block) * size_t(rank);
    if (inPlace) // this rank's input is its block of the user's recvbuf
      s->in_ = {true, blockOf(a.recvbuf, MPI_Aint(rank) * a.count * extent), a.count, a.type,
                own};
    else if (view.sendtype != MPI_BYTE) // packed straight into its block
      s->in_ = {true, const_cast<void *>(a.sendbuf), a.sendcount, a.sendtype, own};
    if (inPlace || view.sendtype != MPI_BYTE) {
      view.sendbuf = MPI_IN_PLACE;
      view.sendtype = MPI_BYTE;
      view.sendcount = block;
    }
    if (int64_t(a.count) * size > INT_MAX)
      return MPI_ERR_COUNT;
    s->out_ = {true, a.recvbuf, a.count * size, a.type, 0};
  }
  staging = Staging::held(std::move(s));
  return MPI_SUCCESS;
}

} // namespace collc::dropin
