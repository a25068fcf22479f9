// dropin/ByteView.cpp: bcast and allgather served as bytes (ByteView.h).
#include "dropin/ByteView.h"

#include <climits>
#include <cstdint>
#include <new>

namespace collc::dropin {

int Staging::pack() const {
  if (!in_.used)
    return MPI_SUCCESS;
  int position = 0;
  return PMPI_Pack(in_.buf, in_.count, in_.type, buf_.get() + in_.at, int(bytes_ - in_.at),
                   &position, MPI_COMM_SELF);
}

int Staging::unpack() const {
  if (!out_.used)
    return MPI_SUCCESS;
  int position = 0;
  return PMPI_Unpack(buf_.get() + out_.at, int(bytes_ - out_.at), &position, out_.buf,
                     out_.count, out_.type, MPI_COMM_SELF);
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

int byteView(const Args &a, int rank, int size, Args &view, std::unique_ptr<Staging> &staging) {
  view = a;
  staging.reset();
  const Coll c = collOf(a.kind);
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
  if (s->in_.used)
    s->inHold_.hold(s->in_.type);
  if (s->out_.used)
    s->outHold_.hold(s->out_.type);
  staging = std::move(s);
  return MPI_SUCCESS;
}

} // namespace collc::dropin
