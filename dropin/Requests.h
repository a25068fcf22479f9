// dropin/Requests.h: running a call on a plan — blocking calls (with a small
// cache of persistent requests for calls that repeat), non-blocking calls
// behind MPI generalized requests, and their progress from Open MPI's
// progress engine (State.h explains why).
#ifndef COLLC_DROPIN_REQUESTS_H
#define COLLC_DROPIN_REQUESTS_H

#include "dropin/State.h"

namespace collc::dropin {

/// Runs the call `a` on `plan` (blocking: to completion; non-blocking: started,
/// its request in *a.request); falls back (counted) if the runtime refuses it.
/// `bytes` is the call's size, `sel` the decision (counters, COLLC_DEBUG).
int execute(Global &g, CommState &cs, const Args &a, collc_plan plan, uint64_t bytes,
            const Selection &sel);

/// The fast path: if the blocking call `a` repeats a cached one, runs it and
/// returns true with its MPI return code in `rc`.
bool runCached(Global &g, CommState &cs, const Args &a, int &rc);

/// Progresses until `cs` has no pending non-blocking execution.
void drain(Global &g, CommState &cs);

/// The opal_progress callback: progresses every pending execution once.
extern "C" int collcProgress();

} // namespace collc::dropin

#endif // COLLC_DROPIN_REQUESTS_H
