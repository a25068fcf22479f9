// runtime/api/Execution.h: how a collective call is served by a plan —
// shared by the C API (Api.cpp, CallAnalysis.cpp, CommState.cpp,
// Execution.cpp) and the interposer.
#ifndef COLLC_RUNTIME_API_EXECUTION_H
#define COLLC_RUNTIME_API_EXECUTION_H

#include "collc/collc.h"
#include "runtime/core/Executor.h"
#include "runtime/kernels/Kernels.h"
#include "runtime/shm/TransportSettings.h"

#include <mpi.h>

#include <string>
#include <vector>

namespace collc::rt {

/// Records `message` as the thread's last error and returns `code`.
int fail(int code, std::string message);
/// The same for a Status (its code picks the C code, `fallback` otherwise).
int failStatus(const Status &s, int fallback);

const LoadedPlan &loadedOf(collc_plan p);
const PreparedRank &preparedOf(collc_plan p, uint32_t rank);
void countRequest(collc_plan p, int delta);
uint64_t planId(collc_plan p);

/// One collective call as MPI passes it. `count` is what the MPI call calls
/// count: the vector's length (allreduce, reduce, scan, exscan, bcast), each
/// rank's block (reduce_scatter_block: recvcount; allgather: the count each
/// rank sends). MPI_Reduce_scatter is collective ReduceScatterBlock with
/// `recvcounts` (p entries; `count` unused). Bcast has its one buffer as
/// `recvbuf`; allgather and bcast take no operation.
struct Call {
  Collective collective = Collective::Allreduce;
  const void *sendbuf = nullptr;
  void *recvbuf = nullptr;
  MPI_Count count = 0;
  const MPI_Count *recvcounts = nullptr;
  /// scatterv's and alltoallv's per-rank send counts.
  const MPI_Count *sendcounts = nullptr;
  /// gatherv, scatterv, alltoallv: per-rank counts, whose arrays only the
  /// ranks MPI reads them on need pass (`count` is the other side's count).
  bool varying = false;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  int root = 0;
  MPI_Comm comm = MPI_COMM_NULL;
};

/// How a plan serves a call (filled by analyzeCall).
struct CallPlan {
  int rank = 0, size = 0;
  bool hasIn = true;      ///< the plan has an in buffer (not bcast)
  bool hasOut = true;     ///< this rank has an out buffer
  bool inPlace = false;   ///< MPI_IN_PLACE given
  bool copyInput = false; ///< in place, but the plan is not: copy the input aside
  /// Exscan's rank 0 without a recvbuf (MPI: not significant there): the
  /// plan's out, which it may use as scratch, is a private buffer.
  bool scratchOut = false;
  KernelFn kernel = nullptr; ///< collc's kernel; null: MPI_Reduce_local
  bool commutativeOp = true;
  size_t extent = 0;
  uint64_t total = 0;   ///< elements of the whole vector (n)
  uint64_t inElems = 0; ///< elements of this rank's input
  uint64_t outElems = 0; ///< elements of this rank's output (0 where it has none)
  /// Where this rank's input is: sendbuf, or in place inside recvbuf
  /// (allgather: at rank·count elements).
  const void *inAt = nullptr;
  /// Per-rank counts (MPI_Reduce_scatter, allgatherv, gatherv, scatterv,
  /// alltoallv): the p + 1 prefix sums of the blocks' element counts; else
  /// empty. A rank that knows only its own block (a gatherv's or scatterv's
  /// non-root) has the others' as empty, and `onlyBlock` says so.
  std::vector<uint64_t> blockStart;
  /// alltoallv: the prefix sums of recvcounts (out's layout; blockStart is
  /// in's, of sendcounts); else empty.
  std::vector<uint64_t> outBlockStart;
  int onlyBlock = -1;
};

/// Checks that a plan of `shape` can serve `call` on this rank. Errors:
/// Argument (bad arguments), Shape (collective, size or root differ),
/// Unsupported (datatype, operation or in-place use it cannot serve — the
/// caller may use native MPI instead), Mpi.
Status analyzeCall(const Shape &shape, bool planInPlace, const Call &call, CallPlan &how);

/// Makes the per-communicator state executions on `comm` use (a private
/// duplicate, by MPI_Comm_dup: collective and blocking over `comm`) unless it
/// exists; otherwise the first execution on `comm` makes it. The interposer
/// calls this where blocking is safe (communicator creation, blocking calls),
/// so that a non-blocking call never blocks on it.
Status prepareComm(MPI_Comm comm);
/// To be called at the start of a blocking collective call on `comm`, which
/// every rank makes: sets up the communicator's shared memory when its first
/// COLLC_SHM_AFTER executions are done (docs/shm-transport.md). The C API's
/// blocking calls do this themselves.
void settleTransport(MPI_Comm comm);

/// The private duplicate prepareComm made of `comm` (executions' messages go
/// there), or MPI_COMM_NULL if there is none. The interposer runs on it the
/// native collectives that must not mingle with the user's own on `comm`.
MPI_Comm privateComm(MPI_Comm comm);

/// The transport settings (runtime/shm/TransportSettings.h) every
/// communicator set up from now on uses, instead of reading them from the
/// environment (which prints each bad value on every process): the drop-in
/// reads and checks them itself and calls this at MPI_Init, before collc's
/// first communicator. False (and nothing changes) when the settings were
/// already in use. collc_set_transport() still overrides the transport.
bool setTransportSettings(const TransportSettings &settings);

/// collc_start for a caller that waits for the execution at once (the
/// interposer's blocking calls): the executor may run it to its end here on
/// the shared-memory direct path (Executor::startBlocking); collc_wait then
/// finds it done. Same errors as collc_start.
int startBlockingRequest(collc_request request);

} // namespace collc::rt

#endif // COLLC_RUNTIME_API_EXECUTION_H
