// dropin/Persistent.h: persistent collectives on plans — MPIX_*_init (Open
// MPI 4.1's persistent-collectives extension, mpi-ext.h) or MPI_*_init (an
// MPI 4 library), and MPI_Start, MPI_Startall and MPI_Request_free for the
// requests they return.
//
// The handle the user gets is a real MPI persistent request: a zero-byte
// receive (MPI_Recv_init) from this process on a private duplicate of
// MPI_COMM_SELF, with a tag of its own. MPI_Start starts the plan's
// execution and that receive; when the execution finishes — progressed from
// Open MPI's progress engine like the non-blocking calls (State.h) — collc
// sends the zero-byte message that completes the receive. MPI_Wait, MPI_Test
// and their all/any/some forms therefore complete it and leave it inactive,
// ready for the next MPI_Start, with nothing else intercepted. The decision
// (plan or native) is made once, at the _init call, on the same inputs as
// the blocking call's (Selection.h), so all ranks agree.
#ifndef COLLC_DROPIN_PERSISTENT_H
#define COLLC_DROPIN_PERSISTENT_H

#include "dropin/State.h"
#include "runtime/api/Handles.h"

// COLLC_INIT, COLLC_PINIT and COLLC_HAVE_PERSISTENT: the persistent
// collectives' names in this MPI (runtime/mpi/Flavour.h).
#include "runtime/mpi/Flavour.h"

namespace collc::dropin {

/// One persistent request on a plan.
struct PersistentCall {
  Args args;                          ///< the _init call (recvcounts dropped: bound already)
  collc_request req = nullptr;        ///< the runtime's persistent request
  MPI_Request handle = MPI_REQUEST_NULL; ///< what the user holds
  int tag = 0;
  bool active = false;
  int error = MPI_SUCCESS; ///< of the last run
  /// A bcast or allgather on packed bytes: packed at each start, unpacked
  /// as each run finishes (ByteView.h).
  std::shared_ptr<Staging> staging;
  /// An allgather whose send datatype is packed into recvbuf at each start
  /// (stagesInput): that datatype, which the user may free after the _init.
  rt::TypeHold sendtype;
  /// Made in turn (Requests.h): the call as it came, with its plan's slot;
  /// bound at its first run to the plan, or to native MPI's non-blocking
  /// collective on the private duplicate at every run (`native`).
  std::unique_ptr<Deferred> lazy;
  bool native = false;
};

/// The native persistent collective (PMPIX_*_init, or PMPI_*_init) for `a`.
int nativeInit(const Args &a);

/// Binds `a` to `plan` and returns the user's handle in *a.request; counts
/// the call handled (falls back, counted, if the runtime refuses it).
int initPersistent(Global &g, CommState &cs, const Args &a, const Args &user,
                   std::unique_ptr<Staging> staging, collc_plan plan, uint64_t bytes,
                   const Selection &sel);

/// The _init of `d` in turn: a persistent request bound at its first run.
int initInTurn(Global &g, CommState &cs, std::unique_ptr<Deferred> d,
               std::unique_ptr<Staging> staging);

/// The turn of a start of `d.call`: binds it if it is made in turn, starts
/// its run and lists it in cs.pending. False if it must wait (the tag window).
/// Under cs.pendingMu.
bool startPersistentTurn(Global &g, CommState &cs, Deferred &d);

/// MPI_Start for a request: true with MPI's return code in `rc` if it is one
/// of collc's, else false (the caller passes it to PMPI_Start).
bool startPersistent(MPI_Request *request, int &rc);

/// MPI_Request_free for a request: true with `rc` if it is one of collc's
/// (an active one is first waited for), else false.
bool freePersistent(MPI_Request *request, int &rc);

/// Progress found the run of `p` finished (with `error`): completes the
/// user's request. Called with the communicator's pending list locked.
void signalDone(PersistentCall &p, int error);

} // namespace collc::dropin

#endif // COLLC_DROPIN_PERSISTENT_H
