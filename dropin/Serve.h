// dropin/Serve.h: one intercepted collective from its arguments to a decision
// — what any plan needs of the call, the selection inputs (equal on all
// ranks), and the native fallback with its reason.
#ifndef COLLC_DROPIN_SERVE_H
#define COLLC_DROPIN_SERVE_H

#include "dropin/State.h"
#include "runtime/api/Execution.h"

namespace collc::dropin {

/// The interposed collective: decide, then run a plan or go native.
int serve(const Args &a);

/// The native collective (PMPI_*) for `a`.
int native(const Args &a);

/// Native MPI's non-blocking form of `a` (whatever its form) on `comm`.
int nativeStart(const Args &a, MPI_Comm comm, MPI_Request *r);

/// The runtime's view of `a` on a communicator of `size` ranks; `counts`
/// holds MPI_Reduce_scatter's recvcounts widened (it must outlive the Call).
/// Allgather whose input is staged (stagesInput) runs in place.
rt::Call runtimeCall(const Args &a, int size, std::vector<MPI_Count> &counts);

/// Counts `r` for `a` (once per call: on the communicator's rank 0, or on
/// every rank where the communicator is null), logs it with COLLC_DEBUG, and
/// runs `a` natively.
int fallback(Global &g, const Args &a, CommState *cs, Reason r, const std::string &detail = "");
/// fallback() without running anything: counts and logs.
void noteFallback(Global &g, const Args &a, CommState *cs, Reason r,
                  const std::string &detail = "");

/// After a failure in the middle of an execution, or of this rank alone
/// (nothing can fall back any more): report, and raise the communicator's
/// error handler with `code` as MPI would. MPI_ERR_OTHER: `what` failed
/// with the runtime's last error; MPI_ERR_NO_MEM: no memory for `what`.
int fatal(Global &g, const Args &a, const CommState &cs, const char *what,
          int code = MPI_ERR_OTHER);

/// The runtime refused a request (COLLC_* `code`) for a call on a plan
/// every rank has. A refusal of the call itself (COLLC_ERR_ARG,
/// COLLC_ERR_UNSUPPORTED) is the same on every rank: native MPI serves it,
/// counted. Anything else (no memory, MPI) is this rank's alone: going native
/// would part it from the others, so the error handler is raised (fatal).
int refused(Global &g, const Args &user, CommState &cs, int code);

/// One COLLC_DEBUG line: the call, then `what` was decided.
void logDecision(Global &g, const Args &a, const CommState *cs, const std::string &what);

} // namespace collc::dropin

#endif // COLLC_DROPIN_SERVE_H
