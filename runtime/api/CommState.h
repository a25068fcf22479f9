// runtime/api/CommState.h: the per-communicator state executions run on —
// made by CommState.cpp, used by the requests of Execution.cpp.
#ifndef COLLC_RUNTIME_API_COMMSTATE_H
#define COLLC_RUNTIME_API_COMMSTATE_H

#include "collc/collc.h"
#include "runtime/Status.h"
#include "runtime/shm/ShmNode.h"

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

namespace collc::rt::detail {

struct CommState {
  MPI_Comm dup = MPI_COMM_NULL; ///< private: only collc's messages
  /// The last blocking call with a predefined datatype and operation, kept
  /// bound: repeating it (same plan, buffers, count, type, op, root) skips
  /// checking and binding, so a loop of small blocking calls costs what a
  /// persistent request does. Predefined handles cannot be freed and
  /// re-created, so equal handles mean equal types and operations.
  collc_request_s *lastBlocking = nullptr;
  int tagUb = 32767;
  /// Per channel (peer << 1 | 1 for this rank's sends to it, | 0 for its
  /// receives from it): where the next execution's tag range on it starts
  /// (runtime/core/Prepared.h, "Tags are per channel"). Every rank starts the
  /// same plans in the same order, and both ends of a channel know its
  /// length from their own programs, so both assign it the same ranges; they
  /// follow each other, so executions in flight never share a tag on a
  /// channel, except across a wrap at MPI_TAG_UB, which is only taken when
  /// none is in flight. Entries never move (requests keep pointers to them).
  /// `live` is atomic: a request may complete on another thread than the one
  /// starting the next (the interposer progresses requests from Open MPI's
  /// progress engine).
  std::unordered_map<uint64_t, uint64_t> nextTag;
  std::atomic<uint32_t> live{0};
  /// Owners: the communicator's attribute, and every request made on it, so
  /// that requests outlive an MPI_Comm_free of their communicator, as MPI
  /// allows (the private duplicate is freed with the last owner).
  std::atomic<int> refs{1};
  /// The shared-memory channels of this rank's node, or null (MPI only).
  std::unique_ptr<ShmNode> shm;
  /// Blocking calls may take the shared-memory direct path
  /// (COLLC_SHM_FAST, read when the communicator is set up).
  bool shmDirect = true;
  /// Shared memory is still to be set up (COLLC_SHM_AFTER): 1 + the starts
  /// of executions left until it may be, counted down once per start on
  /// every rank alike (every rank starts the same executions in the same
  /// order) and stopping at 1; at 1 the next blocking call on the
  /// communicator sets it up (a blocking call is the one place where every
  /// rank may wait for the others: a non-blocking start must return before
  /// its peers arrive). 0: nothing pending.
  uint32_t shmStartsLeft = 0;
  /// Bumped when shared memory is set up; a request bound to an earlier
  /// generation binds again at its next start (Execution.cpp).
  uint32_t shmGeneration = 0;
};

/// Drops a reference to `s`; the last one frees the private duplicate.
void releaseCommState(CommState *s);
/// The state of `comm`, made on first use (MPI_Comm_dup: collective).
Status commState(MPI_Comm comm, CommState *&out);
/// The state of `comm` if this thread used it last, else null.
CommState *lastCommState(MPI_Comm comm);
/// Counts a start of an execution on `s` toward setting up its shared
/// memory (COLLC_SHM_AFTER).
void countStart(CommState &s);
/// At a blocking collective call on `s`'s communicator (every rank makes
/// it): sets up its shared memory when that is due, or `now` while pending.
void settleShm(CommState &s, bool now = false);
/// Counts and explains a fallback from shared memory to MPI on `comm`.
void shmFallback(MPI_Comm comm, const std::string &why);

/// Deletes a request (Execution.cpp): CommState::lastBlocking keeps one.
void deleteRequest(collc_request_s *req);

} // namespace collc::rt::detail

#endif // COLLC_RUNTIME_API_COMMSTATE_H
