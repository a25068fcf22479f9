// dropin/ByteView.h: bcast and allgather served as bytes.
//
// MPI asks of a bcast or an allgather only that the ranks' type signatures
// agree: one rank may pass 4 of a derived type of two ints where another
// passes 8 MPI_INT, or lay the same ints out in another order, with gaps or
// with padding. Every rank must still take the same decision (a plan, which
// one, or native MPI), or the job hangs; so what decides is what the ranks
// agree on — the bytes of the signature, the root, the communicator — never
// a rank's own datatype or count. The drop-in therefore serves these calls
// as bytes: a datatype whose elements lie as their bytes do in the
// signature (a predefined type without padding) is used in place as
// MPI_BYTE; any other is packed into a buffer of the signature's bytes
// before the run (MPI_Pack: the data this rank sends) and unpacked from it
// after (MPI_Unpack: what it received). The reductions need none of this:
// MPI requires the same datatype on every rank of those.
#ifndef COLLC_DROPIN_BYTEVIEW_H
#define COLLC_DROPIN_BYTEVIEW_H

#include "dropin/State.h"
#include "runtime/api/Handles.h"

#include <memory>

namespace collc::dropin {

/// The packed bytes of a call whose datatype is not used in place, and what
/// to pack into them before each run and unpack from them after it. Holds
/// the user's derived datatypes (Handles.h) while it lives: a non-blocking or
/// persistent call unpacks after the user may have freed them.
class Staging {
public:
  Staging() = default;
  Staging(const Staging &) = delete;
  Staging &operator=(const Staging &) = delete;

  char *data() { return buf_.get(); }
  /// Before a run: this rank's input into the buffer (nothing if none).
  int pack() const;
  /// After a run: the buffer into the user's receive buffer (nothing if
  /// this rank receives nothing).
  int unpack() const;

private:
  friend int byteView(const Args &, int, int, Args &, std::unique_ptr<Staging> &);
  struct Side {
    bool used = false; ///< buf may be MPI_BOTTOM (null) with an absolute datatype
    void *buf = nullptr;
    int count = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    size_t at = 0; ///< offset in the packed bytes
  };
  std::unique_ptr<char[]> buf_;
  size_t bytes_ = 0;
  Side in_, out_; ///< in_: packed before; out_: unpacked after (each when used)
  rt::TypeHold inHold_, outHold_; ///< their datatypes
};

/// Whether a datatype's elements lie as the bytes of its signature: a
/// predefined type whose extent is its size (no padding, lower bound 0).
bool laidAsBytes(MPI_Datatype type);

/// For a bcast or an allgather, the same call on bytes in `view` (MPI_BYTE;
/// counts in bytes, the same on every rank) and, when a datatype cannot be
/// used in place, the Staging its buffers point into. Other collectives:
/// `view` = `a`. `rank` and `size` are the communicator's. Returns
/// MPI_SUCCESS; MPI_ERR_NO_MEM when this rank cannot allocate the packed
/// bytes (a failure of this rank alone: the caller must not fall back, or
/// the ranks would part ways); or another MPI error code when the call
/// cannot be put as bytes (its size does not fit an int, or MPI refused a
/// query of an invalid datatype): the caller then hands the original call to
/// native MPI — the same on every rank, as the byte count is.
int byteView(const Args &a, int rank, int size, Args &view, std::unique_ptr<Staging> &staging);

} // namespace collc::dropin

#endif // COLLC_DROPIN_BYTEVIEW_H
