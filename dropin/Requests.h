// dropin/Requests.h: running a call on a plan — blocking calls (with a small
// cache of persistent requests for calls that repeat), non-blocking calls
// behind MPI generalized requests, and their progress from Open MPI's
// progress engine (State.h explains why).
#ifndef COLLC_DROPIN_REQUESTS_H
#define COLLC_DROPIN_REQUESTS_H

#include "dropin/State.h"

namespace collc::dropin {

/// Runs the call `a` on `plan` (blocking: to completion; non-blocking: started,
/// its request in *a.request); falls back (counted) with the user's call
/// `user` if the runtime refuses it. `a` is `user` as bytes for a bcast or an
/// allgather, on `staging`'s buffer if it has one (ByteView.h). `bytes` is
/// the call's size, `sel` the decision (counters, COLLC_DEBUG).
int execute(Global &g, CommState &cs, const Args &a, const Args &user,
            std::unique_ptr<Staging> staging, collc_plan plan, uint64_t bytes,
            const Selection &sel);

/// A persistent collc request for `a` on `plan` (collc_*_init), on a
/// communicator of `size` ranks; a COLLC_* code.
int initRequest(const Args &a, int size, collc_plan plan, collc_request *req);

/// Copies a staged allgather's input into its block of recvbuf (stagesInput);
/// nothing for other calls. Before every start.
int stageInput(const Args &a);

/// collc_start, waiting for earlier non-blocking executions while the tag
/// window is full (the only local condition start can fail on). `blocking`:
/// the caller waits for it at once (rt::startBlockingRequest).
int start(Global &g, CommState &cs, collc_request req, bool blocking = false);

/// Lists a started execution for progress (collcProgress).
void addPending(Global &g, CommState &cs, Pending *p);

/// Counts a call served by a plan of `algorithm` on a vector of `bytes`
/// (COLLC_STATS; once per call, by the communicator's rank 0).
void countHandled(Global &g, CommState &cs, Kind k, Substitution sub, int fileId,
                  std::string_view algorithm, uint64_t bytes);

/// The fast path: if the blocking call `a` repeats a cached one, runs it and
/// returns true with its MPI return code in `rc`.
bool runCached(Global &g, CommState &cs, const Args &a, int &rc);

/// Progresses until `cs` has no pending non-blocking execution.
void drain(Global &g, CommState &cs);

/// The opal_progress callback: progresses every pending execution once.
extern "C" int collcProgress();

} // namespace collc::dropin

#endif // COLLC_DROPIN_REQUESTS_H
