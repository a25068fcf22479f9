// runtime/api/CallAnalysis.cpp: checking a call against a plan — arguments,
// shape, buffers, MPI_IN_PLACE, datatype and operation (analyzeCall).
#include "runtime/api/Execution.h"

#include "runtime/kernels/MpiTypes.h"
#include "runtime/mpi/MpiTransport.h"

#include <optional>
#include <string>

using namespace collc::rt;

namespace {

Status argError(std::string m) { return Status::error(ErrorCode::Argument, std::move(m)); }
Status shapeError(std::string m) { return Status::error(ErrorCode::Shape, std::move(m)); }
Status unsupported(std::string m) { return Status::error(ErrorCode::Unsupported, std::move(m)); }

/// The p + 1 prefix sums of `counts`, none negative.
Status prefixSums(const char *what, const MPI_Count *counts, uint64_t p,
                  std::vector<uint64_t> &sums) {
  if (!counts)
    return argError(std::string(what) + " is null");
  sums.assign(p + 1, 0);
  for (uint64_t b = 0; b < p; ++b) {
    if (counts[b] < 0)
      return argError(std::string(what) + "[" + std::to_string(b) + "] = " +
                      std::to_string(counts[b]) + " is negative");
    sums[b + 1] = sums[b] + uint64_t(counts[b]);
  }
  return Status::success();
}

/// gatherv's, scatterv's and alltoallv's layouts. The root of a gatherv or
/// scatterv knows every block; any other rank only its own (`count`), and
/// the others are empty in its layout (onlyBlock: Executor::bind refuses a
/// plan that would move them there).
Status varyingLayout(Collective c, const Call &call, CallPlan &how, bool root) {
  const uint64_t p = uint64_t(how.size), r = uint64_t(how.rank);
  if (c == Collective::Alltoall) {
    if (Status s = prefixSums("recvcounts", call.recvcounts, p, how.outBlockStart); !s.ok())
      return s;
    if (call.sendbuf == MPI_IN_PLACE) { // sendcounts are not significant
      how.blockStart = how.outBlockStart;
      return Status::success();
    }
    return prefixSums("sendcounts", call.sendcounts, p, how.blockStart);
  }
  const char *what = c == Collective::Gather ? "recvcounts" : "sendcounts";
  if (root) {
    const MPI_Count *counts = c == Collective::Gather ? call.recvcounts : call.sendcounts;
    if (Status s = prefixSums(what, counts, p, how.blockStart); !s.ok())
      return s;
    // The root's own block: its count must match (MPI's signatures), unless
    // its side of it is MPI_IN_PLACE.
    const bool inPlace = c == Collective::Gather ? call.sendbuf == MPI_IN_PLACE
                                                 : call.recvbuf == MPI_IN_PLACE;
    if (!inPlace && counts[r] != call.count)
      return argError(std::string(what) + "[" + std::to_string(r) + "] = " +
                      std::to_string(counts[r]) + " but the root's own count is " +
                      std::to_string(call.count));
    return Status::success();
  }
  how.blockStart.assign(p + 1, 0);
  for (uint64_t b = r + 1; b <= p; ++b)
    how.blockStart[b] = uint64_t(call.count);
  how.onlyBlock = how.rank;
  return Status::success();
}

} // namespace

namespace collc::rt {

Status analyzeCall(const Shape &shape, bool planInPlace, const Call &call, CallPlan &how) {
  const Collective c = call.collective;
  const bool combining = reduces(c);
  // Per-rank counts: reduce_scatter and allgatherv (recvcounts, on every
  // rank); gatherv, scatterv and alltoallv (`varying`: significant on some
  // ranks only, read below).
  const bool variable = call.recvcounts != nullptr || call.varying;
  if (call.varying ? c != Collective::Gather && c != Collective::Scatter &&
                         c != Collective::Alltoall
                   : call.recvcounts && c != Collective::ReduceScatterBlock &&
                         c != Collective::Allgather)
    return argError("per-rank counts are for reduce_scatter, allgatherv, gatherv, scatterv and "
                    "alltoallv only");
  if (call.comm == MPI_COMM_NULL)
    return argError("the communicator is MPI_COMM_NULL");
  const bool countUsed = !variable || (call.varying && c != Collective::Alltoall);
  if (countUsed && call.count < 0)
    return argError("count " + std::to_string(call.count) + " is negative");
  if (call.type == MPI_DATATYPE_NULL)
    return argError("the datatype is MPI_DATATYPE_NULL");
  if (combining && call.op == MPI_OP_NULL)
    return argError("the operation is MPI_OP_NULL");
  if (shape.collective != c)
    return shapeError(std::string("the plan is for ") + name(shape.collective) + ", not " +
                      name(c));
  int inter = 0;
  if (int rc = MPI_Comm_test_inter(call.comm, &inter); rc != MPI_SUCCESS)
    return mpiError("MPI_Comm_test_inter", rc);
  if (inter)
    return unsupported("inter-communicators are not supported");
  MPI_Comm_size(call.comm, &how.size);
  MPI_Comm_rank(call.comm, &how.rank);
  if (uint32_t(how.size) != shape.ranks)
    return shapeError("the plan is for " + std::to_string(shape.ranks) +
                      " ranks; the communicator has " + std::to_string(how.size));
  if (hasRoot(c) && (call.root < 0 || uint32_t(call.root) != shape.root))
    return shapeError("the plan is for root " + std::to_string(shape.root) + "; the call has root " +
                      std::to_string(call.root));

  // The vector and this rank's part of it.
  const uint64_t p = uint64_t(how.size), r = uint64_t(how.rank);
  const bool root = how.rank == call.root;
  how.blockStart.clear();
  how.outBlockStart.clear();
  how.onlyBlock = -1;
  if (call.varying) {
    if (Status s = varyingLayout(c, call, how, root); !s.ok())
      return s;
  } else if (variable) {
    if (Status s = prefixSums("recvcounts", call.recvcounts, p, how.blockStart); !s.ok())
      return s;
  }
  const uint64_t count = variable ? 0 : uint64_t(call.count);
  uint64_t &outElems = how.outElems;
  if (call.varying) {
    // gatherv: count at every rank, the blocks at the root; scatterv the
    // other way; alltoallv: sendcounts' sum in, recvcounts' out.
    const uint64_t own = how.blockStart[r + 1] - how.blockStart[r];
    const uint64_t sum = how.blockStart[p];
    how.total = c == Collective::Alltoall ? sum : root ? sum : own;
    how.inElems = c == Collective::Scatter ? sum : c == Collective::Gather ? own : sum;
    outElems = c == Collective::Gather        ? sum
               : c == Collective::Scatter     ? own
                                              : how.outBlockStart[p];
  } else switch (c) {
  case Collective::ReduceScatterBlock:
    how.total = variable ? how.blockStart[p] : p * count;
    how.inElems = how.total;
    outElems = variable ? uint64_t(call.recvcounts[r]) : count;
    break;
  case Collective::Allgather: // (allgatherv: recvcounts[r] of its own, all of them in out)
    how.total = variable ? how.blockStart[p] : p * count;
    how.inElems = variable ? uint64_t(call.recvcounts[r]) : count;
    outElems = how.total;
    break;
  case Collective::Gather: // count per rank, p blocks at the root
    how.total = p * count;
    how.inElems = count;
    outElems = how.total;
    break;
  case Collective::Alltoall: // count per block, p blocks each way
    how.total = p * count;
    how.inElems = how.total;
    outElems = how.total;
    break;
  case Collective::Scatter: // p blocks at the root, count per rank
    how.total = p * count;
    how.inElems = how.total;
    outElems = count;
    break;
  default: // allreduce, reduce, scan, exscan, bcast
    how.total = count;
    how.inElems = count;
    outElems = count;
    break;
  }
  how.hasIn = c != Collective::Bcast && (c != Collective::Scatter || root);
  how.hasOut = (c != Collective::Reduce && c != Collective::Gather) || root;
  if (!how.hasIn)
    how.inElems = 0;
  if (!how.hasOut)
    outElems = 0;

  // Buffers, and MPI_IN_PLACE as each collective defines it.
  how.inPlace = how.hasIn && call.sendbuf == MPI_IN_PLACE;
  // Scatter's root passes MPI_IN_PLACE as recvbuf: its block stays in
  // sendbuf, and the plan's out is a private buffer.
  const bool scatterInPlace = c == Collective::Scatter && root && call.recvbuf == MPI_IN_PLACE;
  if (how.hasOut && call.recvbuf == MPI_IN_PLACE && !scatterInPlace)
    return argError(c == Collective::Scatter
                        ? "recvbuf can be MPI_IN_PLACE only at the root of a scatter"
                        : "recvbuf cannot be MPI_IN_PLACE");
  if (how.inPlace && c == Collective::Scatter)
    return argError("a scatter's MPI_IN_PLACE is the root's recvbuf, not its sendbuf");
  if (how.inPlace && !how.hasOut)
    return argError("MPI_IN_PLACE is only allowed at the root of a " +
                    std::string(name(c)));
  // Exscan's rank 0 may pass no recvbuf (MPI: not significant there) unless
  // its input is in it; its plan's out is then scratch. The same path on
  // every rank either way.
  how.scratchOut = (c == Collective::Exscan && how.rank == 0 && !how.inPlace && outElems > 0 &&
                    !call.recvbuf) ||
                   scatterInPlace; // even for count 0: out is never MPI_IN_PLACE itself
  if ((how.hasIn && !how.inPlace && how.inElems > 0 && !call.sendbuf) ||
      (how.hasOut && outElems > 0 && !call.recvbuf && !how.scratchOut))
    return argError("a null buffer with " + std::to_string(how.total) + " elements");
  how.inAt = call.sendbuf;
  how.copyInput = false;
  if (how.inPlace) {
    // The input is in recvbuf: where this rank's slot 0 of `in` would be.
    how.inAt = call.recvbuf;
    // reduce_scatter reads the whole vector from recvbuf and writes its block
    // at recvbuf's start, which a plan cannot alias: always copied aside.
    how.copyInput = !planInPlace || c == Collective::ReduceScatterBlock;
  }

  // Datatype: contiguous, so chunks are runs of whole elements. A predefined
  // type is laid out as its C type, padding included: the MAXLOC/MINLOC pairs
  // MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT and MPI_LONG_DOUBLE_INT have
  // size < extent (12 and 16 for MPI_DOUBLE_INT), which the kernels, memcpy
  // of whole elements and MPI messages of the type all handle; only derived
  // types must have no gaps.
  std::optional<ElemType> builtinType = elemTypeOf(call.type);
  int size = 0;
  MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
  MPI_Type_size(call.type, &size);
  MPI_Type_get_extent(call.type, &lb, &extent);
  MPI_Type_get_true_extent(call.type, &tlb, &textent);
  const bool cLayout = builtinType && size_t(extent) == elemSize(*builtinType);
  if (size <= 0 || lb != 0 || tlb != 0 ||
      (!cLayout && (extent != MPI_Aint(size) || textent != extent)))
    return unsupported("the datatype is not contiguous (size " + std::to_string(size) +
                       ", extent " + std::to_string(extent) + ")");

  // Operation: collc's kernel for predefined (op, type) pairs MPI defines,
  // MPI_Reduce_local for user operations (on any contiguous type). MPI
  // defines the predefined operations on predefined datatypes only, and
  // Open MPI's MPI_Reduce_local aborts on a derived one (MPI_ERR_OP under
  // MPI_ERRORS_ARE_FATAL), so that is refused here.
  how.extent = size_t(extent);
  if (how.inPlace && (c == Collective::Allgather || c == Collective::Gather))
    how.inAt = static_cast<const char *>(call.recvbuf) +
               (variable ? how.blockStart[r] : r * count) * how.extent;
  how.kernel = nullptr;
  how.commutativeOp = true;
  if (!combining)
    return Status::success();

  int commutative = 1;
  MPI_Op_commutative(call.op, &commutative);
  how.commutativeOp = commutative != 0;
  if (shape.commutative && !commutative)
    return unsupported("the plan needs a commutative operation, but the operation is not "
                       "commutative");
  std::optional<ReduceOp> builtinOp = reduceOpOf(call.op);
  if (builtinOp && !builtinType) {
    int ints = 0, addrs = 0, types = 0, combiner = MPI_COMBINER_NAMED;
    MPI_Type_get_envelope(call.type, &ints, &addrs, &types, &combiner);
    return unsupported(combiner == MPI_COMBINER_NAMED
                           ? "collc has no kernel for this predefined datatype"
                           : "MPI defines " + std::string(reduceOpName(*builtinOp)) +
                                 " on predefined datatypes only, not on a derived datatype");
  }
  if (builtinOp && builtinType) {
    how.kernel = findMpiKernel(call.op, call.type);
    if (!how.kernel)
      return unsupported("MPI does not define " + std::string(reduceOpName(*builtinOp)) +
                         " on " + std::string(elemTypeName(*builtinType)));
  }
  return Status::success();
}

} // namespace collc::rt
