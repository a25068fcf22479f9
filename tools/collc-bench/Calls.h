// tools/collc-bench/Calls.h: one collective call of any kind — its buffers,
// the native MPI call, the collc call and the sequential model of its result.
//
// Shared by collc-bench and the MPI test suites. A call is made for a
// collective, a workload (Workload.h), the communicator and a vector of n
// elements: n is the whole vector (allreduce, reduce, scan, exscan and bcast:
// the count; reduce-scatters: the input every rank contributes, split into p
// blocks; allgather and gather: the output, p blocks of what each rank
// contributes; alltoall: each rank's input and output, p blocks each;
// scatter: the root's input, p blocks, one to each rank; barrier: none).
// MPI_Reduce_scatter takes explicit recvcounts, or the even split of n.
//
// The model (check): reduce-scatters, block r of the fold x_0 ∘ … ∘ x_{p-1};
// scan, x_0 ∘ … ∘ x_r; exscan, x_0 ∘ … ∘ x_{r-1} and rank 0's buffer as it
// was; allgather, block q is rank q's input; bcast, the root's input;
// alltoall, block q is block r of rank q's input; gather, the root's block q
// is rank q's input; scatter, block r of the root's input.
#ifndef COLLC_TOOLS_COLLC_BENCH_CALLS_H
#define COLLC_TOOLS_COLLC_BENCH_CALLS_H

#include "collc/collc.h"
#include "tools/collc-bench/Workload.h"

#include <mpi.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace collc::bench {

/// The MPI calls a plan can serve.
enum class CallKind {
  Allreduce,
  Reduce,
  ReduceScatterBlock,
  ReduceScatter,
  Scan,
  Exscan,
  Allgather,
  Bcast,
  Alltoall,
  Gather,
  Scatter,
  Allgatherv, ///< on an allgather plan, per-rank recvcounts, blocks one after another
  Gatherv,    ///< on a gather plan: rank q sends counts[q], the root's blocks in a row
  Scatterv,   ///< on a scatter plan: rank q receives counts[q]
  /// on an alltoall plan: rank i sends counts[(i + j) % p] to rank j (a
  /// symmetric pattern, as MPI_IN_PLACE needs)
  Alltoallv,
  Barrier, ///< no data: n is ignored, and the result is an order, not checked here
};
inline constexpr CallKind allCallKinds[] = {
    CallKind::Allreduce, CallKind::Reduce,   CallKind::ReduceScatterBlock, CallKind::ReduceScatter,
    CallKind::Scan,      CallKind::Exscan,   CallKind::Allgather,          CallKind::Bcast,
    CallKind::Alltoall,  CallKind::Gather,   CallKind::Scatter,            CallKind::Allgatherv,
    CallKind::Gatherv,   CallKind::Scatterv, CallKind::Alltoallv,          CallKind::Barrier};

/// "allreduce", ..., "reduce_scatter", as the MPI function is named.
const char *name(CallKind k);
std::optional<CallKind> parseCallKind(const std::string &s);
/// The plan collective (COLLC_ALLREDUCE, ...) that serves `k`.
int planCollective(CallKind k);
/// Whether `k` combines with an operation (not allgather, bcast, alltoall,
/// gather, scatter).
bool combines(CallKind k);

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};
using Bytes = std::unique_ptr<char[], FreeDeleter>;
/// 64-byte aligned, at least one cache line more than asked, zeroed.
Bytes allocateZeroed(size_t bytes);

class Call {
public:
  /// Precondition: recvcounts, if given, has one entry per rank (ReduceScatter,
  /// Allgatherv, Gatherv, Scatterv, Alltoallv: else the even split of n).
  /// Whether `k` has per-rank counts.
  static bool varies(CallKind k);
  Call(CallKind kind, const Workload &w, MPI_Comm comm, uint64_t n, bool inPlace, int root,
       std::vector<MPI_Count> recvcounts = {});

  CallKind kind() const { return kind_; }
  uint64_t elements() const { return total_; }
  /// New inputs for `salt`, the output poisoned (0xa5); in place, the input
  /// where MPI wants it.
  void prepare(uint64_t salt);
  /// "" if this rank's result is the model's for the inputs of `salt`.
  std::string check(uint64_t salt);

  /// The native collective; MPI's return code.
  int native();
  /// The collc call with `plan`: blocking (mode 0), non-blocking (1: sets
  /// *req) or persistent (2: *req made, not started).
  int collc(collc_plan plan, int mode, collc_request *req);

  std::string describe() const;
  /// This rank's output buffer as it is now (every byte, poison included).
  std::string output() const;

private:
  uint64_t r() const { return uint64_t(rank_); }
  const void *sendbuf() const { return inPlace_ ? MPI_IN_PLACE : in_.get(); }

  CallKind kind_;
  const Workload *w_;
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1, root_ = 0;
  bool inPlace_ = false;
  uint64_t total_ = 0, inElems_ = 0, outElems_ = 0, block_ = 0;
  std::vector<MPI_Count> recvcounts_;
  std::vector<int> intCounts_; ///< recvcounts for MPI_Reduce_scatter, MPI_Allgatherv
  std::vector<int> intDispls_; ///< MPI_Allgatherv's displs: the blocks one after another
  std::vector<uint64_t> blockStart_;
  /// Alltoallv: what this rank receives from each rank (blockStart_ is what
  /// it sends), and MPI_Alltoallv's int arrays.
  std::vector<MPI_Count> sendcounts_, recvFrom_;
  std::vector<uint64_t> recvStart_;
  std::vector<int> intSend_, intSdispls_, intRecv_, intRdispls_;
  Bytes in_, out_, want_, scratch_;
};

} // namespace collc::bench

#endif // COLLC_TOOLS_COLLC_BENCH_CALLS_H
