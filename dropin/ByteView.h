// dropin/ByteView.h: bcast, allgather, alltoall, gather and scatter served as
// bytes.
//
// MPI asks of a bcast, an allgather or a block mover only that the ranks' type signatures
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
//
// Alltoall, gather and scatter have a send side and a receive side, each
// significant on some ranks only (gather's receive side and scatter's send
// side at the root alone; MPI_IN_PLACE makes one side of the root's
// insignificant). What decides is one block's bytes as the significant side
// that every rank has gives them — alltoall's receive side, gather's send
// side (the root's receive side), scatter's receive side (the root's send
// side) — which MPI's matching signatures make equal on every rank. A rank
// whose other side is of another size has made an erroneous call; it still
// runs the plan with the others (going native alone would part it from
// them): each of its blocks is cut to the agreed size or filled with zero
// bytes, and a receive side longer than the block keeps the rest as it was.
#ifndef COLLC_DROPIN_BYTEVIEW_H
#define COLLC_DROPIN_BYTEVIEW_H

#include "dropin/State.h"
#include "runtime/api/Handles.h"

#include <memory>
#include <vector>

namespace collc::dropin {

/// The packed bytes of a call whose datatype is not used in place, and what
/// to pack into them before each run and unpack from them after it. Holds
/// the user's derived datatypes (Handles.h) while it lives: a non-blocking or
/// persistent call unpacks after the user may have freed them.
class Staging {
public:
  /// Packed bytes at `at` that are `count` elements of `type` at `buf` in
  /// the user's buffer.
  struct Piece {
    size_t at;
    void *buf;
    int count;
    MPI_Datatype type;
  };

  Staging() = default;
  Staging(const Staging &) = delete;
  Staging &operator=(const Staging &) = delete;

  char *data() { return buf_.get(); }
  /// Before a run: this rank's input into the buffer (nothing if none).
  int pack() const;
  /// After a run: the buffer into the user's receive buffer (nothing if
  /// this rank receives nothing).
  int unpack() const;
  /// A side of another size than the agreed block (an erroneous call).
  bool resized() const {
    return (in_.used && in_.resized()) || (out_.used && out_.resized());
  }

private:
  friend int byteView(const Args &, int, int, Args &, std::unique_ptr<Staging> &,
                      std::vector<int> &);
  /// `s` holding the datatypes of the sides it uses.
  static std::unique_ptr<Staging> held(std::unique_ptr<Staging> s);
  /// byteView for alltoall, gather and scatter.
  static int blocks(const Args &a, int rank, int size, Args &view,
                    std::unique_ptr<Staging> &staging);
  /// byteView for MPI_Allgatherv.
  static int varying(const Args &a, int rank, int size, Args &view,
                     std::unique_ptr<Staging> &staging, std::vector<int> &byteCounts);
  /// byteView for MPI_Gatherv, MPI_Scatterv and MPI_Alltoallv.
  static int vBlocks(const Args &a, int rank, int size, Args &view,
                     std::unique_ptr<Staging> &staging, std::vector<int> &byteCounts);
  struct Side {
    bool used = false; ///< buf may be MPI_BOTTOM (null) with an absolute datatype
    void *buf = nullptr;
    int count = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    size_t at = 0; ///< offset in the packed bytes
    /// An erroneous block mover's side of another size: `blocks` blocks of
    /// `userBlock` bytes here, of `planBlock` bytes in the packed bytes.
    int blocks = 0;
    size_t userBlock = 0, planBlock = 0;
    bool resized() const { return userBlock != planBlock; }
  };
  /// The packed bytes from `at` on, as MPI_Pack's int size (a piece is at
  /// most an int's worth: its block's bytes fit an int).
  int room(size_t at) const;
  std::unique_ptr<char[]> buf_;
  size_t bytes_ = 0;
  Side in_, out_; ///< in_: packed before; out_: unpacked after (each when used)
  /// MPI_Allgatherv's out: block b of the packed bytes (at `at`) unpacked to
  /// its own place (out_.type, `count` of them at `buf`), instead of out_'s
  /// one run.
  std::vector<Piece> outPieces_;
  /// The v-variants' in: block b packed from its own place (in_.type),
  /// instead of in_'s one run.
  std::vector<Piece> inPieces_;
  rt::TypeHold inHold_, outHold_; ///< their datatypes
};

/// Whether a datatype's elements lie as the bytes of its signature: a
/// predefined type whose extent is its size (no padding, lower bound 0).
bool laidAsBytes(MPI_Datatype type);

/// For a bcast, an allgather or a block mover, the same call on bytes in
/// `view` (MPI_BYTE; counts in bytes, the same on every rank) and, when a
/// datatype cannot be used in place, the Staging its buffers point into.
/// Other collectives: `view` = `a`. MPI_Allgatherv: `byteCounts` gets its
/// recvcounts in bytes, which the view's point to (so it must outlive the
/// view); its blocks run one after another, staged when the call's
/// displacements are not that. MPI_Gatherv, MPI_Scatterv and MPI_Alltoallv
/// likewise, each side on its own: `byteCounts` gets the receive side's
/// counts in bytes, then the send side's (p each, where significant), and
/// the view's recvcounts and sendcounts point there. `rank` and `size` are the communicator's. Returns
/// MPI_SUCCESS; MPI_ERR_NO_MEM when this rank cannot allocate the packed
/// bytes (a failure of this rank alone: the caller must not fall back, or
/// the ranks would part ways); or another MPI error code when the call
/// cannot be put as bytes (its size does not fit an int, or MPI refused a
/// query of an invalid datatype): the caller then hands the original call to
/// native MPI — the same on every rank, as the byte count is. MPI_ERR_ARG: a
/// block mover's significant count is negative or its datatype null (MPI
/// reports it).
int byteView(const Args &a, int rank, int size, Args &view, std::unique_ptr<Staging> &staging,
             std::vector<int> &byteCounts);

} // namespace collc::dropin

#endif // COLLC_DROPIN_BYTEVIEW_H
