// dropin/State.h: what the sources of libcollc_mpi.so share — the calls it
// intercepts, why a call goes native, the counters, the per-communicator and
// the process-wide state (docs/dropin.md).
//
// The library, file by file:
//  - EntryPoints.cpp, FamilyEntryPoints.cpp, PersistentEntryPoints.cpp: the
//    exported MPI functions; each builds an Args and calls serve(), or
//    watches communicators come and go, or starts and frees requests;
//  - Serve.cpp: one call from arguments to decision — what any plan needs of
//    the call, the selection inputs, native fallbacks with their reasons;
//  - PlanAcquisition.cpp: the decision cache and the plan it names — a file
//    from COLLC_PLAN_PATH or a generated plan, loaded once per communicator;
//  - Requests.cpp: executing a plan — the cache of persistent requests for
//    repeated blocking calls, non-blocking executions behind generalized
//    requests, progress from Open MPI's progress engine;
//  - Persistent.cpp: persistent requests on plans (MPIX_*_init, MPI_Start);
//  - CommState.cpp: per-communicator state and the runtime's private duplicate;
//  - Startup.cpp: reading the settings at MPI_Init, comparing them across
//    ranks, the COLLC_STATS report at MPI_Finalize;
//  - State.cpp: counters and messages.
//
// What it guarantees:
//  - Never wrong: a call a plan cannot serve goes to the native collective
//    (PMPI_*), and the reason is counted (COLLC_STATS) and logged
//    (COLLC_DEBUG). A plan that needs a commutative operation never runs one
//    that is not (Selection.h).
//  - Never divergent: every input of a decision agrees across the ranks of the
//    communicator (see Selection.h); the configuration is compared across
//    MPI_COMM_WORLD at MPI_Init and collc disables itself if it differs.
//  - Never one rank alone: what each rank does on its own (setting up a
//    communicator, loading a plan, its first request) is agreed across the
//    communicator before any rank relies on it; a failure anywhere sends
//    every rank native (Requests.h, "Calls in turn"; docs/dropin.md,
//    "Agreed failures").
//  - Never blocking where MPI does not block: a non-blocking call only posts
//    messages. The runtime's private duplicate of a communicator (a blocking,
//    collective MPI_Comm_dup) is made at points that block anyway: MPI_Init
//    for MPI_COMM_WORLD and MPI_COMM_SELF, the intercepted communicator
//    constructors for new communicators, or else the first blocking
//    collective collc intercepts. Until then non-blocking and persistent
//    calls go native.
//
// Non-blocking requests: the user gets an MPI generalized request
// (MPI_Grequest_start), so MPI_Wait/Test/Waitall/... and MPI_Request_free work
// unchanged. Open MPI 4.1 has no generalized requests with a poll function
// (ompi_grequestx_start arrived in 5.0), so collc progresses its executions
// from a callback in Open MPI's progress engine (opal_progress_register, the
// mechanism its own non-blocking collectives in coll/libnbc use), which every
// MPI_Wait/MPI_Test — and every other blocking MPI call — runs; the callback
// calls MPI_Grequest_complete when an execution finishes. It is re-entrancy
// guarded, skips (try_lock) work another thread is doing, and costs one atomic
// load when nothing is pending. Without that hook (not Open MPI) non-blocking
// calls go native.
//
// Threads: per-communicator state (plans, a small cache of persistent
// requests, pending non-blocking executions) is reached through a thread-local
// cache, not MPI_Comm_get_attr (which takes Open MPI's global attribute lock
// under MPI_THREAD_MULTIPLE), and counters are per thread; the only global
// locks are on first uses (plan generation, state creation) and around the
// list of communicators with non-blocking work.
#ifndef COLLC_DROPIN_STATE_H
#define COLLC_DROPIN_STATE_H

#include "collc/collc.h"
#include "dropin/Config.h"
#include "dropin/PlanLibrary.h"
#include "dropin/Selection.h"

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>
#include <string>
#include <vector>

namespace collc::dropin {

// --- calls, fallback reasons, counters ---------------------------------------------

/// How a call runs: to completion, started behind a request, or bound once and
/// started many times (MPIX_*_init, then MPI_Start).
enum class Mode : uint8_t { Blocking, NonBlocking, Persistent };

// The intercepted calls (one table: enum, name, collective, mode). The first
// four keep their values: COLLC_STATS has always listed them in this order.
#define COLLC_KINDS(X)                                                                     \
  X(Allreduce, "allreduce", Allreduce, Blocking)                                           \
  X(Reduce, "reduce", Reduce, Blocking)                                                    \
  X(Iallreduce, "iallreduce", Allreduce, NonBlocking)                                      \
  X(Ireduce, "ireduce", Reduce, NonBlocking)                                               \
  X(ReduceScatterBlock, "reduce_scatter_block", ReduceScatter, Blocking)                   \
  X(ReduceScatter, "reduce_scatter", ReduceScatter, Blocking)                              \
  X(Scan, "scan", Scan, Blocking)                                                          \
  X(Exscan, "exscan", Exscan, Blocking)                                                    \
  X(Allgather, "allgather", Allgather, Blocking)                                           \
  X(Bcast, "bcast", Bcast, Blocking)                                                       \
  X(IreduceScatterBlock, "ireduce_scatter_block", ReduceScatter, NonBlocking)              \
  X(IreduceScatter, "ireduce_scatter", ReduceScatter, NonBlocking)                         \
  X(Iscan, "iscan", Scan, NonBlocking)                                                     \
  X(Iexscan, "iexscan", Exscan, NonBlocking)                                               \
  X(Iallgather, "iallgather", Allgather, NonBlocking)                                      \
  X(Ibcast, "ibcast", Bcast, NonBlocking)                                                  \
  X(AllreduceInit, "allreduce_init", Allreduce, Persistent)                                \
  X(ReduceInit, "reduce_init", Reduce, Persistent)                                         \
  X(ReduceScatterBlockInit, "reduce_scatter_block_init", ReduceScatter, Persistent)        \
  X(ReduceScatterInit, "reduce_scatter_init", ReduceScatter, Persistent)                   \
  X(ScanInit, "scan_init", Scan, Persistent)                                               \
  X(ExscanInit, "exscan_init", Exscan, Persistent)                                         \
  X(AllgatherInit, "allgather_init", Allgather, Persistent)                                \
  X(BcastInit, "bcast_init", Bcast, Persistent)                                            \
  X(Alltoall, "alltoall", Alltoall, Blocking)                                              \
  X(Gather, "gather", Gather, Blocking)                                                    \
  X(Scatter, "scatter", Scatter, Blocking)                                                 \
  X(Ialltoall, "ialltoall", Alltoall, NonBlocking)                                         \
  X(Igather, "igather", Gather, NonBlocking)                                               \
  X(Iscatter, "iscatter", Scatter, NonBlocking)                                            \
  X(AlltoallInit, "alltoall_init", Alltoall, Persistent)                                   \
  X(GatherInit, "gather_init", Gather, Persistent)                                         \
  X(ScatterInit, "scatter_init", Scatter, Persistent)                                      \
  X(Allgatherv, "allgatherv", Allgather, Blocking)                                         \
  X(Iallgatherv, "iallgatherv", Allgather, NonBlocking)                                    \
  X(AllgathervInit, "allgatherv_init", Allgather, Persistent)                              \
  X(Gatherv, "gatherv", Gather, Blocking)                                                  \
  X(Scatterv, "scatterv", Scatter, Blocking)                                               \
  X(Alltoallv, "alltoallv", Alltoall, Blocking)                                            \
  X(Igatherv, "igatherv", Gather, NonBlocking)                                             \
  X(Iscatterv, "iscatterv", Scatter, NonBlocking)                                          \
  X(Ialltoallv, "ialltoallv", Alltoall, NonBlocking)                                      \
  X(GathervInit, "gatherv_init", Gather, Persistent)                                       \
  X(ScattervInit, "scatterv_init", Scatter, Persistent)                                    \
  X(AlltoallvInit, "alltoallv_init", Alltoall, Persistent)                                \
  X(Alltoallw, "alltoallw", Alltoall, Blocking)                                            \
  X(Barrier, "barrier", Barrier, Blocking)                                                 \
  X(Ibarrier, "ibarrier", Barrier, NonBlocking)                                            \
  X(BarrierInit, "barrier_init", Barrier, Persistent)
enum class Kind : uint8_t {
#define COLLC_X(E, N, C, M) E,
  COLLC_KINDS(COLLC_X)
#undef COLLC_X
      Count
};
constexpr unsigned numKinds = unsigned(Kind::Count);
/// "allreduce", "iallreduce", "scan_init", ... (COLLC_STATS, COLLC_DEBUG).
const char *kindName(Kind k);
/// The collective selection sees (inline: on every call's path).
inline Coll collOf(Kind k) {
  static constexpr Coll colls[] = {
#define COLLC_X(E, N, C, M) Coll::C,
      COLLC_KINDS(COLLC_X)
#undef COLLC_X
  };
  return colls[unsigned(k)];
}
inline Mode modeOf(Kind k) {
  static constexpr Mode modes[] = {
#define COLLC_X(E, N, C, M) Mode::M,
      COLLC_KINDS(COLLC_X)
#undef COLLC_X
  };
  return modes[unsigned(k)];
}
inline bool isBlocking(Kind k) { return modeOf(k) == Mode::Blocking; }
/// MPI_Allgatherv and its forms: recvcounts and displs.
inline bool hasDispls(Kind k) {
  return k == Kind::Allgatherv || k == Kind::Iallgatherv || k == Kind::AllgathervInit;
}
/// MPI_Gatherv, MPI_Scatterv and MPI_Alltoallv: per-rank counts and
/// displacements on one side or both, each significant where MPI reads it
/// (ByteView.h); not hasCounts, whose recvcounts every rank passes.
inline bool isVarying(Kind k) {
  return k == Kind::Gatherv || k == Kind::Scatterv || k == Kind::Alltoallv ||
         k == Kind::Igatherv || k == Kind::Iscatterv || k == Kind::Ialltoallv ||
         k == Kind::GathervInit || k == Kind::ScattervInit || k == Kind::AlltoallvInit ||
         k == Kind::Alltoallw;
}
/// MPI_Reduce_scatter and its forms, and MPI_Allgatherv's: per-rank
/// recvcounts instead of a count.
inline bool hasCounts(Kind k) {
  return k == Kind::ReduceScatter || k == Kind::IreduceScatter || k == Kind::ReduceScatterInit ||
         hasDispls(k);
}
/// The collective combines with an operation (not allgather, bcast, the
/// block movers and barrier).
inline bool reduces(Coll c) {
  return c != Coll::Allgather && c != Coll::Bcast && c != Coll::Barrier && !movesBlocks(c);
}

// Why a call went to native MPI (one table: enum, stats line, debug log).
#define COLLC_REASONS(X)                                                                   \
  X(Disabled, "collc disabled: the ranks' configurations differ")                          \
  X(InterComm, "inter-communicator")                                                       \
  X(ForeignWorld, "communicator spans another MPI_COMM_WORLD")                             \
  X(Arguments, "arguments for MPI to check")                                               \
  X(NonContiguous, "non-contiguous datatype")                                              \
  X(OpDatatype, "operation and datatype collc's kernels do not define")                    \
  X(NotSetUp, "non-blocking on a communicator not set up yet")                             \
  X(NoProgress, "non-blocking without a progress hook")                                    \
  X(NativeSelected, "native selected")                                                     \
  X(NoPlan, "no plan (generation or verification failed)")                                 \
  X(Refused, "refused by the runtime")                                                     \
  X(SetUpFailed, "the communicator could not be set up on every rank")
enum class Reason : uint8_t {
#define COLLC_X(E, T) E,
  COLLC_REASONS(COLLC_X)
#undef COLLC_X
      Count
};
constexpr unsigned numReasons = unsigned(Reason::Count);
const char *text(Reason r);

constexpr unsigned numSubstitutions = 4; // Substitution, without None
const char *text(Substitution s);

/// One intercepted call, with MPI's arguments. `count` and `type` are the
/// call's count and datatype — the receive side where MPI has two (the block
/// of MPI_Reduce_scatter_block, MPI_Allgather, MPI_Alltoall, MPI_Gather and
/// MPI_Scatter, whose send side is `sendcount` and `sendtype`); bcast's one
/// buffer is `recvbuf`; allgather, bcast and the block movers have no `op`.
struct Args {
  Kind kind;
  const void *sendbuf;
  void *recvbuf;
  int count;
  MPI_Datatype type;
  MPI_Op op;
  int root;
  MPI_Comm comm;
  MPI_Request *request;
  const int *recvcounts = nullptr; ///< MPI_Reduce_scatter, MPI_Allgatherv, the v-variants
  const int *displs = nullptr;     ///< MPI_Allgatherv, MPI_Gatherv, MPI_Alltoallv's rdispls
  const int *sendcounts = nullptr; ///< MPI_Scatterv, MPI_Alltoallv
  const int *sdispls = nullptr;    ///< MPI_Scatterv's displs, MPI_Alltoallv's sdispls
  const MPI_Datatype *sendtypes = nullptr, *recvtypes = nullptr; ///< MPI_Alltoallw
  int sendcount = 0;                         ///< allgather and the block movers
  MPI_Datatype sendtype = MPI_DATATYPE_NULL; ///< allgather and the block movers
  MPI_Info info = MPI_INFO_NULL;             ///< the persistent forms
};

/// MPI_Allgather whose send side is not one block of the receive side's
/// datatype (other datatype or count): its input is copied into its block of
/// recvbuf first (MPI_Pack/MPI_Unpack) and the plan runs in place, so that
/// what decides is the receive side, which agrees across ranks.
inline bool stagesInput(const Args &a) {
  return !hasDispls(a.kind) && collOf(a.kind) == Coll::Allgather &&
         a.sendbuf != MPI_IN_PLACE &&
         (a.sendtype != a.type || a.sendcount != a.count);
}

/// One thread's counters; summed over threads and ranks at MPI_Finalize.
struct Stats {
  uint64_t handled[numKinds] = {};
  uint64_t fallback[numKinds][numReasons] = {};
  uint64_t substituted[numKinds][numSubstitutions] = {};
  std::vector<uint64_t> fileUses; ///< per PlanLibrary file
  // Library plans built (PlanLibrary::build), per communicator that loaded one.
  uint64_t rankPlans = 0, wholePlans = 0;
  uint64_t built[numGuarantees] = {};    ///< per guarantee
  uint64_t ownOps = 0, contextOps = 0;   ///< of the rank plans built
  double buildSeconds = 0;               ///< CPU time building them
};

/// One line of a communicator's COLLC_STATS section: its calls of one kind
/// served one way — by an algorithm, or by native MPI and why — counted once
/// per call, by the communicator's rank 0.
struct Served {
  Kind kind = Kind::Allreduce;
  std::string by; ///< the algorithm, or "native (<reason>)"
  uint64_t calls = 0;
  uint64_t minBytes = UINT64_MAX, maxBytes = 0; ///< whole vectors, of the calls of known size
};

// --- state -------------------------------------------------------------------------

struct CommState;

/// Whether every rank of a communicator has a plan: each rank loads it on its
/// own, so a failure may be one rank's alone; the ranks agree before any of
/// them runs it (agreeSlots).
enum class Agreement : uint8_t { Pending, Everywhere, NotEverywhere };

/// A plan loaded for one communicator (or that failed to load here: `plan`
/// null, `error` says why).
struct PlanSlot {
  Coll collective;
  uint32_t root;
  int fileId;
  std::string algorithm;
  collc_plan plan = nullptr;
  std::string error;
  Agreement agreed = Agreement::Pending;
  /// A non-blocking or persistent call found it first: the agreement is an
  /// MPI_Iallreduce (MPI_MIN of `mine`) on the communicator, started by that
  /// call and finished in turn (Deferred). Under CommState::pendingMu.
  bool posted = false;
  int mine = 0, all = 0;
  MPI_Request agreement = MPI_REQUEST_NULL;
};

/// A persistent request kept for blocking calls that repeat with the same
/// arguments. Only for a predefined datatype and operation: their handles
/// never change meaning, so an equal key is an equal call — with the same
/// decision, since every input of the decision derives from the key — and a
/// repeated call skips analysis and selection altogether.
struct CachedRequest {
  Kind kind = Kind::Allreduce;
  const void *sendbuf = nullptr;
  void *recvbuf = nullptr;
  int count = 0;
  int sendcount = 0; ///< a gatherv's (its own block's bytes)
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  int root = 0;
  /// MPI_Reduce_scatter's, and a v-variant's on bytes (empty where the call
  /// has none): compared by contents.
  std::vector<int> recvcounts, sendcounts;
  collc_request req = nullptr;
  uint64_t used = 0;
  // The decision it stands for (counters and COLLC_DEBUG).
  Substitution substitution = Substitution::None;
  int fileId = -1;
  std::string detail;
  std::string algorithm; ///< COLLC_STATS
  uint64_t bytes = 0;    ///< the whole vector (COLLC_STATS)

  bool matches(const Args &a) const;
};
constexpr unsigned requestCacheSize = 4;
/// Larger vectors are not cached: each cached request keeps scratch of about
/// the vector's size (but the allocation it saves matters most for them).
constexpr uint64_t requestCacheMaxBytes = 4 << 20;

struct PersistentCall;
class Staging; // ByteView.h

/// A non-blocking execution behind a generalized request, or one run of a
/// persistent request (`owner`; Persistent.h).
struct Pending {
  collc_request req = nullptr;
  MPI_Request greq = MPI_REQUEST_NULL;
  int error = MPI_SUCCESS;
  PersistentCall *owner = nullptr;
  /// A non-blocking bcast or allgather run on packed bytes: unpacked when
  /// it finishes, before its request completes.
  std::shared_ptr<Staging> staging;
  /// Instead of `req`: native MPI's non-blocking collective on the runtime's
  /// private duplicate (a Deferred call some rank had no plan for).
  MPI_Request native = MPI_REQUEST_NULL;
  bool failed = false; ///< started nothing: completes with `error`
};

/// A non-blocking call, or a persistent request's start, that waits its turn
/// on its communicator (Requests.h, "Calls in turn"): once its plan's
/// agreement is known and every earlier one has started, it starts on the
/// plan — or, where some rank has no plan, as native MPI's non-blocking
/// collective on the runtime's private duplicate.
struct Deferred {
  Args a;    ///< as it runs on a plan (bytes, for bcast and allgather)
  Args user; ///< as the user called it (what native MPI gets)
  std::vector<int> recvcounts; ///< MPI_Reduce_scatter's, owned (a and user point here)
  /// MPI_Iallgatherv: the user's displs, and the run's recvcounts in bytes
  /// (a points there, user at recvcounts).
  std::vector<int> displs, byteCounts;
  /// The v-variants: every count and displacement array of `a` and `user`
  /// (a deque: the pointers into it stay).
  std::deque<std::vector<int>> arrays;
  PlanSlot *slot = nullptr;
  Selection sel;
  uint64_t bytes = 0;
  /// Its request made at the call (the plan's first use: part of what
  /// this rank agrees to); null until made.
  collc_request req = nullptr;
  /// A non-blocking call: its execution, whose generalized request the user
  /// holds. A persistent start: null (Pending made in turn, owner `call`).
  Pending *pending = nullptr;
  PersistentCall *call = nullptr;
};

/// A decision for one set of selection inputs (they determine it: the
/// configuration and the communicator are fixed), so repeated calls skip
/// select() and the plan lookup.
struct Decision {
  bool valid = false;
  CallTraits key;
  Selection sel;
  PlanSlot *slot = nullptr; ///< found on first use; null while not yet, or for native
  uint64_t used = 0;
};
constexpr unsigned decisionCacheSize = 8;

struct CommState {
  uint64_t id = 0;
  int size = 1, rank = 0;
  /// This process counts the calls on it (COLLC_STATS): its rank 0; of an
  /// inter-communicator, the rank 0 of the group with the lower world rank.
  bool counts = false;
  MPI_Comm comm = MPI_COMM_NULL; ///< where `counts` only (COLLC_STATS)
  std::string members;           ///< rank 0 only: commMembers (COLLC_STATS)
  std::vector<Served> served; ///< where `counts` only (COLLC_STATS)
  bool inter = false;
  bool foreign = false; ///< has processes of another MPI_COMM_WORLD
  bool ready = false;   ///< the runtime's private duplicate exists (on every rank)
  bool setUpFailed = false; ///< some rank could not set it up: never tried again
  MPI_Comm dup = MPI_COMM_NULL; ///< the runtime's private duplicate (rt::privateComm)
  std::vector<FileCandidate> files[numColls];
  std::deque<PlanSlot> plans; ///< (a deque: Decision::slot points into it)
  CachedRequest cache[requestCacheSize];
  Decision decisions[decisionCacheSize];
  uint64_t clock = 0;
  // Non-blocking executions, progressed by any thread.
  std::mutex pendingMu;
  std::vector<Pending *> pending;
  /// Calls in turn (Deferred), oldest first: under pendingMu.
  std::deque<Deferred *> queue;
  /// Calls in turn since the last blocking collective: set by a non-blocking
  /// or persistent call that found a plan not yet agreed on; until the next
  /// blocking collective on the communicator (which finishes the queue),
  /// every non-blocking call served by a plan and every start of collc's
  /// persistent requests take their turn. Set and cleared at calls in the
  /// communicator's collective order, so it is the same on every rank.
  bool window = false;
  /// Executions in `pending` and calls in `queue`.
  std::atomic<int> pendingCount{0};
  bool listed = false; ///< in Global::active
};

struct Global {
  Config config;
  PlanLibrary library;
  bool disabled = false;
  bool compared = false; ///< configurations compared at MPI_Init
  int worldRank = 0, worldSize = 1, threadLevel = MPI_THREAD_SINGLE;
  int keyval = MPI_KEYVAL_INVALID;
  MPI_Group worldGroup = MPI_GROUP_NULL;
  bool hook = false;
  int (*progressUnregister)(int (*)()) = nullptr;
  std::atomic<bool> finalized{false};
  std::atomic<uint64_t> epoch{1}; ///< bumped whenever a CommState is destroyed
  std::atomic<uint64_t> nextCommId{0};
  std::atomic<int> pendingTotal{0};
  std::mutex activeMu;
  std::vector<CommState *> active; ///< communicators that have had non-blocking work
  std::mutex statsMu;
  std::vector<std::unique_ptr<Stats>> stats; ///< the live threads' counters
  Stats exited;                              ///< of the threads that have ended
  std::vector<CommState *> comms; ///< every live state (statsMu)
  std::string retired;           ///< COLLC_STATS lines of freed communicators (statsMu)
  std::mutex logMu;
  std::set<std::string> warned;
};

/// The process's state: null until the first MPI_Init (or first intercepted
/// call after an MPI_Init collc did not see); never freed.
extern std::atomic<Global *> gGlobal;

/// Set while collc itself calls MPI (the runtime's MPI_Comm_dup / MPI_Comm_free,
/// user operations run by MPI_Reduce_local): the wrappers then pass straight to PMPI.
extern thread_local constinit bool tlInternal;

struct InternalScope {
  bool saved = tlInternal;
  InternalScope() { tlInternal = true; }
  ~InternalScope() { tlInternal = saved; }
  InternalScope(const InternalScope &) = delete;
  InternalScope &operator=(const InternalScope &) = delete;
};

/// This thread's counters (created on first use).
Stats &stats(Global &g);

/// Prints "collc: warning: <text>" once per process; with `rank0`, only on
/// rank 0 of MPI_COMM_WORLD (the environment is the same everywhere).
void warn(Global &g, const std::string &t, bool rank0 = true);
/// "collc: [rank r] <text>" on stderr (COLLC_DEBUG).
void debugLine(Global &g, const std::string &t);

// CommState.cpp
/// The state attached to `comm`, or null.
CommState *findState(Global &g, MPI_Comm comm);
/// The state attached to `comm`, attached now if there is none (no
/// communication); null if MPI refuses the attribute.
CommState *stateFor(Global &g, MPI_Comm comm);
/// Makes the runtime's private duplicate: collective and blocking over `comm`,
/// so only called where every rank of `comm` is in a blocking call together.
void prepare(Global &g, CommState &cs, MPI_Comm comm);
/// Agrees, over `comm` (blocking and collective: only where every rank of it
/// is in the same blocking collective), whether every rank has `slot`'s
/// plan, ready here if it is loaded and `ok`. Returns whether it is usable
/// everywhere.
bool agreeSlot(Global &g, CommState &cs, MPI_Comm comm, PlanSlot &slot, bool ok);
/// Starts the agreement on `slot` without waiting (PlanSlot::posted);
/// under cs.pendingMu.
void postAgreement(Global &g, CommState &cs, MPI_Comm comm, PlanSlot &slot, bool ok);
/// Whether the posted agreement on `slot` has finished (then it is
/// Everywhere or NotEverywhere); `wait`: waits for it. Under cs.pendingMu.
bool settleAgreement(Global &g, CommState &cs, PlanSlot &slot, bool wait);
/// A communicator constructor returned `comm` on every member: set it up now.
void created(MPI_Comm comm);
/// The attribute delete callback: frees collc's state of a communicator.
extern "C" int collcDeleteState(MPI_Comm, int, void *attr, void *);

// CallStats.cpp
/// How COLLC_STATS describes a communicator's members: "world ranks 0-3,8"
/// (`worldRanks`; empty: an inter-communicator, or one spanning another
/// MPI_COMM_WORLD); its name is added when it is reported.
std::string commMembers(const std::vector<int> &worldRanks, bool inter);
/// Counts one call of `k` on `cs` served by `by` (an algorithm, or
/// "native (reason)") of `bytes` (< 0: unknown); only where `cs.counts`, so
/// that each call counts once.
void countServed(CommState &cs, Kind k, std::string_view by, int64_t bytes);
/// Lists a new state for the report; retireState keeps its lines when it is freed.
void listState(Global &g, CommState &cs);
void retireState(Global &g, CommState &cs);
/// Gathers every rank's lines to rank 0 of MPI_COMM_WORLD, which prints them
/// with COLLC_STATS. Collective over MPI_COMM_WORLD.
void reportServed(Global &g);

} // namespace collc::dropin

#endif // COLLC_DROPIN_STATE_H
