// dropin/Requests.h: running a call on a plan — blocking calls (with a small
// cache of persistent requests for calls that repeat), non-blocking calls
// behind MPI generalized requests, and their progress from Open MPI's
// progress engine (State.h explains why).
#ifndef COLLC_DROPIN_REQUESTS_H
#define COLLC_DROPIN_REQUESTS_H

#include "dropin/State.h"

#include <memory>

namespace collc::dropin {

class Staging;

/// Runs the call `a` on the plan of `slot` (blocking: to completion;
/// non-blocking: started, its request in *a.request). A blocking call on a
/// plan the ranks have not agreed on yet agrees first (agreeSlots) and falls
/// back, counted, with the user's call `user` where some rank cannot run
/// it; other calls come only with a plan every rank has. A refusal by the
/// runtime after that goes as refused() says. `a` is `user` as bytes for a bcast or an
/// allgather, on `staging`'s buffer if it has one (ByteView.h). `bytes` is
/// the call's size, `sel` the decision (counters, COLLC_DEBUG).
int execute(Global &g, CommState &cs, const Args &a, const Args &user,
            std::unique_ptr<Staging> staging, PlanSlot &slot, uint64_t bytes,
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

// --- Calls in turn ------------------------------------------------------------------
// A rank loads a plan on its own, so it may fail to where the others do not;
// the ranks agree before any of them runs it. A blocking call agrees at once
// (agreeSlot). A non-blocking call or a persistent _init cannot wait for the
// others: it starts the agreement (an MPI_Iallreduce on the communicator,
// in the call's place in the communicator's collective order), returns, and
// its execution waits its turn in a queue (Deferred) until the agreement
// has finished. Then it runs on the plan where every rank has it, or as
// native MPI's non-blocking collective on the runtime's private duplicate.
// Until the next blocking collective on the communicator (the window,
// CommState::window), every non-blocking call served by a plan and every
// start of a persistent request takes its turn too, whatever its plan: so
// on every rank plans start in the same order (their tags follow that
// order) and the native collectives on the duplicate are started in the
// same order, whenever each rank's agreements happen to finish.

/// Queues the non-blocking call `a` (the user's `user`), or makes the
/// persistent request of an _init, on `slot`'s plan, which is not agreed on
/// yet or in a window; starts the agreement if it is the plan's first use.
int inTurn(Global &g, CommState &cs, const Args &a, const Args &user,
           std::unique_ptr<Staging> staging, PlanSlot &slot, uint64_t bytes,
           const Selection &sel);

/// A call in turn for `a`/`user` on `slot` (null for a persistent start
/// whose plan is bound), its recvcounts copied.
std::unique_ptr<Deferred> deferred(const Args &a, const Args &user, int size, PlanSlot *slot,
                                   const Selection &sel, uint64_t bytes);

/// What startTurn returns when the tag window is full: try again later.
constexpr int turnWait = -1;
/// Packs and stages the input of a call in turn (`a`, on `staging` if it has
/// one) and starts `req`: MPI_SUCCESS, turnWait, or an MPI error code
/// (reported on stderr).
int startTurn(Global &g, const CommState &cs, const Args &a, collc_request req,
              Staging *staging);

/// Queues `d` and starts what can start.
void enqueue(Global &g, CommState &cs, std::unique_ptr<Deferred> d);

/// At a blocking collective on `cs` (every rank is there): starts every call
/// in turn, waiting for the agreements, and closes the window.
void finishTurns(Global &g, CommState &cs);

/// The opal_progress callback: progresses every pending execution once.
extern "C" int collcProgress();

} // namespace collc::dropin

#endif // COLLC_DROPIN_REQUESTS_H
