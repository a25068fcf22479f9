// dropin/Interpose.cpp: libcollc_mpi.so, the PMPI interposer that
// runs unmodified MPI programs' MPI_Allreduce / MPI_Reduce / MPI_Iallreduce /
// MPI_Ireduce on collc plans (docs/dropin.md).
//
// What it guarantees:
//  - Never wrong: a call a plan cannot serve goes to the native collective
//    (PMPI_*), and the reason is counted (COLLC_STATS) and logged
//    (COLLC_DEBUG). A plan that needs a commutative operation never runs one
//    that is not (Selection.h).
//  - Never divergent: every input of a decision agrees across the ranks of the
//    communicator (see Selection.h); the configuration is compared across
//    MPI_COMM_WORLD at MPI_Init and collc disables itself if it differs.
//  - Never blocking where MPI does not block: a non-blocking call only posts
//    messages. The runtime's private duplicate of a communicator (a blocking,
//    collective MPI_Comm_dup) is made at points that block anyway: MPI_Init
//    for MPI_COMM_WORLD and MPI_COMM_SELF, the intercepted communicator
//    constructors for new communicators, or else the first blocking
//    MPI_Allreduce / MPI_Reduce. Until then non-blocking calls go native.
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
#include "collc/collc.h"
#include "runtime/api/Execution.h"
#include "dropin/Config.h"
#include "dropin/PlanLibrary.h"
#include "dropin/Selection.h"
#include "runtime/kernels/MpiTypes.h"

#include <mpi.h>

#include <dlfcn.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#define COLLC_EXPORT extern "C" __attribute__((visibility("default")))

namespace collc::dropin {
namespace {

// --- calls, fallback reasons, counters ---------------------------------------------

enum class Kind : uint8_t { Allreduce, Reduce, Iallreduce, Ireduce };
constexpr unsigned numKinds = 4;
const char *kindName(Kind k) {
  static const char *const names[] = {"allreduce", "reduce", "iallreduce", "ireduce"};
  return names[unsigned(k)];
}
Coll collOf(Kind k) {
  return k == Kind::Allreduce || k == Kind::Iallreduce ? Coll::Allreduce : Coll::Reduce;
}
bool isBlocking(Kind k) { return k == Kind::Allreduce || k == Kind::Reduce; }

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
  X(Refused, "refused by the runtime")
enum class Reason : uint8_t {
#define COLLC_X(E, T) E,
  COLLC_REASONS(COLLC_X)
#undef COLLC_X
      Count
};
constexpr unsigned numReasons = unsigned(Reason::Count);
const char *text(Reason r) {
  static const char *const texts[] = {
#define COLLC_X(E, T) T,
      COLLC_REASONS(COLLC_X)
#undef COLLC_X
  };
  return texts[unsigned(r)];
}

constexpr unsigned numSubstitutions = 3; // Substitution, without None
const char *text(Substitution s) {
  switch (s) {
  case Substitution::NeedsCommutative:
    return "order-preserving plan for a non-commutative operation";
  case Substitution::NoSuchPlan:
    return "default plan: the named algorithm has no plan here";
  case Substitution::Unverified:
    return "default plan: the chosen plan did not verify";
  case Substitution::None:
    break;
  }
  return "";
}

/// One thread's counters; summed over threads and ranks at MPI_Finalize.
struct Stats {
  uint64_t handled[numKinds] = {};
  uint64_t fallback[numKinds][numReasons] = {};
  uint64_t substituted[numKinds][numSubstitutions] = {};
  std::vector<uint64_t> fileUses; ///< per PlanLibrary file
};

// --- state -------------------------------------------------------------------------

struct CommState;

/// A plan loaded for one communicator.
struct PlanSlot {
  Coll collective;
  uint32_t root;
  int fileId;
  std::string algorithm;
  collc_plan plan;
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
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  int root = 0;
  collc_request req = nullptr;
  uint64_t used = 0;
  // The decision it stands for (counters and COLLC_DEBUG).
  Substitution substitution = Substitution::None;
  int fileId = -1;
  std::string detail;

  bool matches(const struct Args &a) const;
};
constexpr unsigned requestCacheSize = 4;
/// Larger vectors are not cached: each cached request keeps scratch of about
/// the vector's size (but the allocation it saves matters most for them).
constexpr uint64_t requestCacheMaxBytes = 4 << 20;

/// A non-blocking execution behind a generalized request.
struct Pending {
  collc_request req = nullptr;
  MPI_Request greq = MPI_REQUEST_NULL;
  int error = MPI_SUCCESS;
};

/// A decision for one set of selection inputs (they determine it: the
/// configuration and the communicator are fixed), so repeated calls skip
/// select() and the plan lookup.
struct Decision {
  bool valid = false;
  CallTraits key;
  Selection sel;
  collc_plan plan = nullptr; ///< loaded on first use; null while not yet, or for native
  uint64_t used = 0;
};
constexpr unsigned decisionCacheSize = 8;

struct CommState {
  uint64_t id = 0;
  int size = 1, rank = 0;
  bool inter = false;
  bool foreign = false; ///< has processes of another MPI_COMM_WORLD
  bool ready = false;   ///< the runtime's private duplicate exists
  std::vector<FileCandidate> files[numColls];
  std::vector<PlanSlot> plans;
  CachedRequest cache[requestCacheSize];
  Decision decisions[decisionCacheSize];
  uint64_t clock = 0;
  // Non-blocking executions, progressed by any thread.
  std::mutex pendingMu;
  std::vector<Pending *> pending;
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
  std::vector<std::unique_ptr<Stats>> stats;
  std::mutex logMu;
  std::set<std::string> warned;
};

std::atomic<Global *> gGlobal{nullptr};
std::once_flag gOnce;

/// Set while collc itself calls MPI (the runtime's MPI_Comm_dup / MPI_Comm_free,
/// user operations run by MPI_Reduce_local): the wrappers then pass straight to PMPI.
thread_local bool tlInternal = false;
/// Set inside progressPending(): a nested opal_progress must not re-enter it.
thread_local bool tlProgressing = false;
thread_local Stats *tlStats = nullptr;
struct TlComm {
  MPI_Comm comm = MPI_COMM_NULL;
  CommState *state = nullptr;
};
constexpr unsigned tlCommSlots = 8;
thread_local TlComm tlComms[tlCommSlots];
thread_local unsigned tlCommNext = 0;
thread_local uint64_t tlEpoch = 0;

struct InternalScope {
  bool saved = tlInternal;
  InternalScope() { tlInternal = true; }
  ~InternalScope() { tlInternal = saved; }
  InternalScope(const InternalScope &) = delete;
  InternalScope &operator=(const InternalScope &) = delete;
};

Stats &stats(Global &g) {
  if (!tlStats) {
    auto s = std::make_unique<Stats>();
    s->fileUses.assign(g.library.files().size(), 0);
    tlStats = s.get();
    std::lock_guard<std::mutex> lock(g.statsMu);
    g.stats.push_back(std::move(s));
  }
  return *tlStats;
}

// --- messages ----------------------------------------------------------------------

/// Prints "collc: warning: <text>" once per process; with `rank0`, only on
/// rank 0 of MPI_COMM_WORLD (the environment is the same everywhere).
void warn(Global &g, const std::string &t, bool rank0 = true) {
  if (rank0 && g.worldRank != 0)
    return;
  std::lock_guard<std::mutex> lock(g.logMu);
  if (!g.warned.insert(t).second)
    return;
  std::fprintf(stderr, "collc: warning: %s\n", t.c_str());
  std::fflush(stderr);
}

void debugLine(Global &g, const std::string &t) {
  std::fprintf(stderr, "collc: [rank %d] %s\n", g.worldRank, t.c_str());
}

std::string typeName(MPI_Datatype t) {
  for (const rt::MpiTypeInfo &i : rt::predefinedMpiTypes())
    if (i.handle == t)
      return std::string(i.mpiName);
  return "derived datatype";
}

std::string opName(MPI_Op op, bool commutative) {
  for (const rt::MpiOpInfo &i : rt::predefinedMpiOps())
    if (i.handle == op)
      return std::string(i.mpiName);
  return commutative ? "user op" : "user op (non-commutative)";
}

// --- the call ----------------------------------------------------------------------

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
};

bool CachedRequest::matches(const Args &a) const {
  return req && kind == a.kind && sendbuf == a.sendbuf && recvbuf == a.recvbuf &&
         count == a.count && type == a.type && op == a.op &&
         (root == a.root || collOf(kind) == Coll::Allreduce);
}

int native(const Args &a) {
  switch (a.kind) {
  case Kind::Allreduce:
    return PMPI_Allreduce(a.sendbuf, a.recvbuf, a.count, a.type, a.op, a.comm);
  case Kind::Reduce:
    return PMPI_Reduce(a.sendbuf, a.recvbuf, a.count, a.type, a.op, a.root, a.comm);
  case Kind::Iallreduce:
    return PMPI_Iallreduce(a.sendbuf, a.recvbuf, a.count, a.type, a.op, a.comm, a.request);
  case Kind::Ireduce:
    return PMPI_Ireduce(a.sendbuf, a.recvbuf, a.count, a.type, a.op, a.root, a.comm,
                        a.request);
  }
  return MPI_ERR_INTERN;
}

void logDecision(Global &g, const Args &a, const CommState *cs, const std::string &what) {
  std::string s = kindName(a.kind);
  if (cs)
    s += " comm " + std::to_string(cs->id) + " (" + std::to_string(cs->size) + " ranks)";
  if (collOf(a.kind) == Coll::Reduce)
    s += " root " + std::to_string(a.root);
  int size = 0;
  if (a.type != MPI_DATATYPE_NULL && a.count >= 0)
    PMPI_Type_size(a.type, &size);
  int commutative = 1;
  if (a.op != MPI_OP_NULL)
    PMPI_Op_commutative(a.op, &commutative);
  s += " " + std::to_string(uint64_t(size) * uint64_t(a.count < 0 ? 0 : a.count)) +
       " bytes (" + std::to_string(a.count) + " x " + typeName(a.type) + ", " +
       opName(a.op, commutative) + (a.sendbuf == MPI_IN_PLACE ? ", in place" : "") +
       "): " + what;
  debugLine(g, s);
}

int fallback(Global &g, const Args &a, const CommState *cs, Reason r,
             const std::string &detail = "") {
  ++stats(g).fallback[unsigned(a.kind)][unsigned(r)];
  if (g.config.debug)
    logDecision(g, a, cs,
                std::string("native: ") + text(r) + (detail.empty() ? "" : " (" + detail + ")"));
  return native(a);
}

/// After a failure in the middle of an execution (nothing can fall back any
/// more): report, and raise the communicator's error handler as MPI would.
int fatal(Global &g, const Args &a, const CommState &cs, const char *what) {
  std::fprintf(stderr, "collc: [rank %d] %s on comm %" PRIu64 " failed: %s: %s\n",
               g.worldRank, kindName(a.kind), cs.id, what, collc_error_message());
  std::fflush(stderr);
  PMPI_Comm_call_errhandler(a.comm, MPI_ERR_OTHER);
  return MPI_ERR_OTHER;
}

// --- communicator state ----------------------------------------------------------------

void destroyState(Global &g, CommState *cs) {
  if (cs->listed) {
    std::lock_guard<std::mutex> lock(g.activeMu);
    g.active.erase(std::remove(g.active.begin(), g.active.end(), cs), g.active.end());
  }
  for (CachedRequest &c : cs->cache)
    if (c.req)
      (void)collc_request_free(&c.req);
  for (PlanSlot &p : cs->plans)
    (void)collc_plan_free(&p.plan);
  g.epoch.fetch_add(1, std::memory_order_acq_rel);
  delete cs;
}

extern "C" int collcDeleteState(MPI_Comm, int, void *attr, void *) {
  if (Global *g = gGlobal.load(std::memory_order_acquire)) {
    InternalScope internal;
    destroyState(*g, static_cast<CommState *>(attr));
  }
  return MPI_SUCCESS;
}

void remember(MPI_Comm comm, CommState *cs) {
  tlComms[tlCommNext] = {comm, cs};
  tlCommNext = (tlCommNext + 1) % tlCommSlots;
}

CommState *findState(Global &g, MPI_Comm comm) {
  const uint64_t e = g.epoch.load(std::memory_order_acquire);
  if (tlEpoch != e) {
    for (TlComm &t : tlComms)
      t = {};
    tlEpoch = e;
  }
  for (const TlComm &t : tlComms)
    if (t.comm == comm && t.state)
      return t.state;
  void *attr = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, g.keyval, &attr, &found) != MPI_SUCCESS || !found)
    return nullptr;
  remember(comm, static_cast<CommState *>(attr));
  return static_cast<CommState *>(attr);
}

/// Attaches collc's state to `comm` (no communication).
CommState *createState(Global &g, MPI_Comm comm) {
  auto cs = std::make_unique<CommState>();
  cs->id = g.nextCommId.fetch_add(1);
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  cs->inter = inter != 0;
  PMPI_Comm_size(comm, &cs->size);
  PMPI_Comm_rank(comm, &cs->rank);
  if (!cs->inter) {
    MPI_Group group;
    if (PMPI_Comm_group(comm, &group) == MPI_SUCCESS) {
      std::vector<int> ranks(size_t(cs->size)), world(size_t(cs->size));
      std::iota(ranks.begin(), ranks.end(), 0);
      if (PMPI_Group_translate_ranks(group, cs->size, ranks.data(), g.worldGroup,
                                     world.data()) != MPI_SUCCESS ||
          std::find(world.begin(), world.end(), MPI_UNDEFINED) != world.end())
        cs->foreign = true;
      PMPI_Group_free(&group);
    }
    for (Coll c : {Coll::Allreduce, Coll::Reduce})
      cs->files[unsigned(c)] = g.library.candidates(c, uint32_t(cs->size));
  }
  if (PMPI_Comm_set_attr(comm, g.keyval, cs.get()) != MPI_SUCCESS)
    return nullptr;
  if (g.config.debug) {
    size_t files = cs->files[0].size() + cs->files[1].size();
    debugLine(g, "comm " + std::to_string(cs->id) + ": " + std::to_string(cs->size) + " ranks" +
                     (cs->inter ? ", inter-communicator" : "") +
                     (cs->foreign ? ", spans another MPI_COMM_WORLD" : "") + ", " +
                     std::to_string(files) + " plan files fit");
  }
  remember(comm, cs.get());
  return cs.release();
}

/// Makes the runtime's private duplicate: collective and blocking over `comm`,
/// so only called where every rank of `comm` is in a blocking call together.
void prepare(Global &g, CommState &cs, MPI_Comm comm) {
  if (cs.ready || cs.inter || cs.foreign || g.disabled)
    return;
  InternalScope internal;
  rt::Status s = rt::prepareComm(comm);
  cs.ready = s.ok();
  if (!s.ok())
    warn(g, "cannot set up a communicator for collc (" + s.message() + "); it uses native MPI",
         false);
}

CommState *stateFor(Global &g, MPI_Comm comm) {
  CommState *cs = findState(g, comm);
  return cs ? cs : createState(g, comm);
}

/// A communicator constructor returned `comm` on every member: set it up now.
void created(MPI_Comm comm);

// --- plans -----------------------------------------------------------------------------

collc_plan planFor(Global &g, CommState &cs, Coll c, uint32_t root, const Selection &sel,
                   std::string &error) {
  for (const PlanSlot &p : cs.plans)
    if (p.collective == c && p.root == root && p.fileId == sel.fileId &&
        p.algorithm == sel.algorithm)
      return p.plan;
  std::shared_ptr<const std::vector<uint8_t>> keep;
  const std::vector<uint8_t> *bytes = nullptr;
  std::string origin;
  if (sel.fileId >= 0) {
    bytes = &g.library.files()[size_t(sel.fileId)].bytes;
    origin = g.library.files()[size_t(sel.fileId)].origin;
  } else {
    keep = g.library.generated(c, sel.algorithm, uint32_t(cs.size), root, error);
    if (!keep)
      return nullptr;
    bytes = keep.get();
    origin = "generated";
  }
  collc_plan plan = COLLC_PLAN_NULL;
  if (collc_plan_load_memory(bytes->data(), bytes->size(), &plan) != COLLC_SUCCESS) {
    error = collc_error_message();
    return nullptr;
  }
  if (g.config.debug)
    debugLine(g, "comm " + std::to_string(cs.id) + ": loaded " + name(c) + " plan " +
                     sel.algorithm + " for " + std::to_string(cs.size) + " ranks" +
                     (c == Coll::Reduce ? ", root " + std::to_string(root) : "") + " (" +
                     origin + ", " + std::to_string(bytes->size()) + " bytes)");
  cs.plans.push_back({c, root, sel.fileId, sel.algorithm, plan});
  return plan;
}

PlanQuery queryFor(Global &g, const CommState &cs) {
  PlanQuery q;
  q.generator = [](Coll c, std::string_view n, bool &needsCommutative) {
    return PlanLibrary::generatorInfo(c, n, needsCommutative);
  };
  if (g.config.verify) {
    q.fileVerifies = [&g](int id) {
      std::string error;
      if (g.library.verifyFile(id, error))
        return true;
      warn(g, "COLLC_VERIFY: plan '" + g.library.files()[size_t(id)].origin +
                  "' does not verify (" + error + "); it is not used");
      return false;
    };
    const uint32_t ranks = uint32_t(cs.size);
    q.generatedVerifies = [&g, ranks](Coll c, std::string_view n, uint32_t root) {
      std::string error;
      if (g.library.generated(c, n, ranks, root, error))
        return true;
      warn(g, "COLLC_VERIFY: the generated " + std::string(name(c)) + " plan '" +
                  std::string(n) + "' for " + std::to_string(ranks) +
                  " ranks does not verify (" + error + ")");
      return false;
    };
  }
  return q;
}

bool sameInputs(const CallTraits &a, const CallTraits &b) {
  return a.collective == b.collective && a.root == b.root && a.bytes == b.bytes &&
         a.count == b.count && a.commutative == b.commutative &&
         a.predefinedOp == b.predefinedOp;
}

/// The cached decision for `t`, or a new one from select().
Decision &decide(Global &g, CommState &cs, const CallTraits &t) {
  for (Decision &d : cs.decisions)
    if (d.valid && sameInputs(d.key, t)) {
      d.used = ++cs.clock;
      return d;
    }
  Decision *victim = &cs.decisions[0];
  for (Decision &d : cs.decisions)
    if (!d.valid || d.used < victim->used)
      victim = &d;
  victim->valid = true;
  victim->key = t;
  victim->sel = select(g.config, t, cs.files[unsigned(t.collective)], queryFor(g, cs));
  victim->plan = nullptr;
  victim->used = ++cs.clock;
  return *victim;
}

// --- non-blocking progress -------------------------------------------------------------

/// Progresses every pending non-blocking execution once; completes the
/// generalized requests of those that finished. Returns how many did.
int progressPending(Global &g) {
  if (tlProgressing)
    return 0;
  std::unique_lock<std::mutex> lock(g.activeMu, std::try_to_lock);
  if (!lock.owns_lock())
    return 0;
  tlProgressing = true;
  InternalScope internal;
  int events = 0;
  for (CommState *cs : g.active) {
    if (cs->pendingCount.load(std::memory_order_acquire) == 0)
      continue;
    std::unique_lock<std::mutex> l2(cs->pendingMu, std::try_to_lock);
    if (!l2.owns_lock())
      continue;
    for (size_t i = 0; i < cs->pending.size();) {
      Pending *p = cs->pending[i];
      int flag = 0;
      if (collc_test(&p->req, &flag) != COLLC_SUCCESS) {
        std::fprintf(stderr, "collc: [rank %d] non-blocking collective on comm %" PRIu64
                             " failed: %s\n",
                     g.worldRank, cs->id, collc_error_message());
        p->error = MPI_ERR_OTHER;
        flag = 1;
      }
      if (!flag) {
        ++i;
        continue;
      }
      (void)collc_request_free(&p->req);
      cs->pending.erase(cs->pending.begin() + std::ptrdiff_t(i));
      cs->pendingCount.fetch_sub(1, std::memory_order_acq_rel);
      g.pendingTotal.fetch_sub(1, std::memory_order_acq_rel);
      // May free `p` (when the user has freed the request already).
      PMPI_Grequest_complete(p->greq);
      ++events;
    }
  }
  tlProgressing = false;
  return events;
}

/// The opal_progress callback.
extern "C" int collcProgress() {
  Global *g = gGlobal.load(std::memory_order_acquire);
  if (!g || g->pendingTotal.load(std::memory_order_relaxed) == 0 || tlProgressing)
    return 0;
  return progressPending(*g);
}

/// Progresses until `cs` has no pending non-blocking execution.
void drain(Global &g, CommState &cs) {
  while (cs.pendingCount.load(std::memory_order_acquire) > 0)
    if (progressPending(g) == 0)
      sched_yield();
}

extern "C" int collcQuery(void *extra, MPI_Status *status) {
  const Pending *p = static_cast<const Pending *>(extra);
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = p->error;
  return p->error;
}

extern "C" int collcFree(void *extra) {
  delete static_cast<Pending *>(extra);
  return MPI_SUCCESS;
}

/// A collective cannot be cancelled (MPI: erroneous); it runs to completion.
extern "C" int collcCancel(void *, int) { return MPI_SUCCESS; }

// --- execution -------------------------------------------------------------------------

int initRequest(const Args &a, collc_plan plan, collc_request *req) {
  if (collOf(a.kind) == Coll::Allreduce)
    return collc_allreduce_init(plan, a.sendbuf, a.recvbuf, a.count, a.type, a.op, a.comm,
                                req);
  return collc_reduce_init(plan, a.sendbuf, a.recvbuf, a.count, a.type, a.op, a.root, a.comm,
                           req);
}

/// collc_start, waiting for earlier non-blocking executions while the tag
/// window is full (the only local condition start can fail on).
int start(Global &g, CommState &cs, collc_request req) {
  int rc = collc_start(req);
  while (rc == COLLC_ERR_STATE && cs.pendingCount.load() > 0) {
    if (progressPending(g) == 0)
      sched_yield();
    rc = collc_start(req);
  }
  return rc;
}

/// A new persistent request for `a`, kept in the cache when the call
/// qualifies. Null when the runtime refuses the call: nothing has started.
collc_request newRequest(CommState &cs, const Args &a, collc_plan plan, uint64_t bytes,
                         const Selection &sel, bool &cached) {
  collc_request req = COLLC_REQUEST_NULL;
  if (initRequest(a, plan, &req) != COLLC_SUCCESS)
    return nullptr;
  cached = bytes <= requestCacheMaxBytes && rt::elemTypeOf(a.type) && rt::reduceOpOf(a.op);
  if (cached) {
    CachedRequest *victim = &cs.cache[0];
    for (CachedRequest &c : cs.cache)
      if (!c.req || c.used < victim->used)
        victim = &c;
    if (victim->req)
      (void)collc_request_free(&victim->req);
    CachedRequest &c = *victim;
    c.kind = a.kind;
    c.sendbuf = a.sendbuf;
    c.recvbuf = a.recvbuf;
    c.count = a.count;
    c.type = a.type;
    c.op = a.op;
    c.root = collOf(a.kind) == Coll::Reduce ? a.root : 0;
    c.req = req;
    c.used = ++cs.clock;
    c.substitution = sel.substitution;
    c.fileId = sel.fileId;
    c.detail = sel.detail;
  }
  return req;
}

void dropCached(CommState &cs, collc_request req) {
  for (CachedRequest &c : cs.cache)
    if (c.req == req)
      c = CachedRequest();
}

void countHandled(Global &g, Kind k, Substitution sub, int fileId) {
  Stats &st = stats(g);
  ++st.handled[unsigned(k)];
  if (sub != Substitution::None)
    ++st.substituted[unsigned(k)][unsigned(sub) - 1];
  if (fileId >= 0)
    ++st.fileUses[size_t(fileId)];
}

/// Starts and waits for a blocking execution.
int runBlocking(Global &g, CommState &cs, const Args &a, collc_request req, bool cached) {
  if (start(g, cs, req) != COLLC_SUCCESS) {
    if (cached)
      dropCached(cs, req);
    (void)collc_request_free(&req);
    return fatal(g, a, cs, "collc_start");
  }
  if (collc_wait(&req) != COLLC_SUCCESS) {
    if (cached)
      dropCached(cs, req);
    (void)collc_request_free(&req);
    return fatal(g, a, cs, "collc_wait");
  }
  if (!cached)
    (void)collc_request_free(&req);
  return MPI_SUCCESS;
}

/// The fast path: a blocking call that repeats a cached one.
bool runCached(Global &g, CommState &cs, const Args &a, int &rc) {
  for (CachedRequest &c : cs.cache)
    if (c.matches(a)) {
      c.used = ++cs.clock;
      if (g.config.debug)
        logDecision(g, a, &cs, c.detail);
      const Substitution sub = c.substitution;
      const int fileId = c.fileId;
      rc = runBlocking(g, cs, a, c.req, true);
      if (rc == MPI_SUCCESS)
        countHandled(g, a.kind, sub, fileId);
      return true;
    }
  return false;
}

/// Runs the call on `plan`; falls back (counted) if the runtime refuses it.
int execute(Global &g, CommState &cs, const Args &a, collc_plan plan, uint64_t bytes,
            const Selection &sel) {
  if (isBlocking(a.kind)) {
    bool cached = false;
    collc_request req = newRequest(cs, a, plan, bytes, sel, cached);
    if (!req)
      return fallback(g, a, &cs, Reason::Refused, collc_error_message());
    if (g.config.debug)
      logDecision(g, a, &cs, sel.detail);
    if (int rc = runBlocking(g, cs, a, req, cached); rc != MPI_SUCCESS)
      return rc;
  } else {
    collc_request req = COLLC_REQUEST_NULL;
    if (initRequest(a, plan, &req) != COLLC_SUCCESS)
      return fallback(g, a, &cs, Reason::Refused, collc_error_message());
    if (g.config.debug)
      logDecision(g, a, &cs, sel.detail);
    if (start(g, cs, req) != COLLC_SUCCESS) {
      (void)collc_request_free(&req);
      return fatal(g, a, cs, "collc_start");
    }
    auto p = std::make_unique<Pending>();
    p->req = req;
    if (PMPI_Grequest_start(collcQuery, collcFree, collcCancel, p.get(), &p->greq) !=
        MPI_SUCCESS) {
      (void)collc_wait(&p->req);
      (void)collc_request_free(&p->req);
      return fatal(g, a, cs, "MPI_Grequest_start");
    }
    *a.request = p->greq;
    {
      std::lock_guard<std::mutex> lock(cs.pendingMu);
      cs.pending.push_back(p.release());
      cs.pendingCount.fetch_add(1, std::memory_order_acq_rel);
    }
    g.pendingTotal.fetch_add(1, std::memory_order_acq_rel);
    if (!cs.listed) {
      std::lock_guard<std::mutex> lock(g.activeMu);
      g.active.push_back(&cs);
      cs.listed = true;
    }
  }
  countHandled(g, a.kind, sel.substitution, sel.fileId);
  return MPI_SUCCESS;
}

Global *activeGlobal();

/// The interposed collective: decide, then run a plan or go native.
int serve(const Args &a) {
  if (tlInternal)
    return native(a);
  Global *gp = activeGlobal();
  if (!gp)
    return native(a);
  Global &g = *gp;
  InternalScope internal;
  const Coll c = collOf(a.kind);
  if (g.disabled)
    return fallback(g, a, nullptr, Reason::Disabled);
  if (a.comm == MPI_COMM_NULL)
    return fallback(g, a, nullptr, Reason::Arguments, "MPI_COMM_NULL");
  CommState *csp = stateFor(g, a.comm);
  if (!csp)
    return fallback(g, a, nullptr, Reason::Refused, "cannot attach state to the communicator");
  CommState &cs = *csp;
  if (int rc = 0; isBlocking(a.kind) && runCached(g, cs, a, rc))
    return rc;
  if (cs.inter)
    return fallback(g, a, &cs, Reason::InterComm);
  if (cs.foreign)
    return fallback(g, a, &cs, Reason::ForeignWorld);
  if (a.count < 0)
    return fallback(g, a, &cs, Reason::Arguments, "negative count");
  if (c == Coll::Reduce && (a.root < 0 || a.root >= cs.size))
    return fallback(g, a, &cs, Reason::Arguments, "root out of range");
  if (a.type == MPI_DATATYPE_NULL || a.op == MPI_OP_NULL)
    return fallback(g, a, &cs, Reason::Arguments, "null datatype or operation");

  // What any plan needs of the call: a datatype made of whole contiguous
  // elements and an (operation, datatype) pair collc can combine.
  rt::Shape probe;
  probe.collective = toRt(c);
  probe.ranks = uint32_t(cs.size);
  probe.root = c == Coll::Reduce ? uint32_t(a.root) : 0;
  probe.commutative = false;
  probe.inPlace = true;
  rt::Call call;
  call.collective = probe.collective;
  call.sendbuf = a.sendbuf;
  call.recvbuf = a.recvbuf;
  call.count = a.count;
  call.type = a.type;
  call.op = a.op;
  call.root = a.root;
  call.comm = a.comm;
  rt::CallPlan how;
  if (rt::Status s = rt::analyzeCall(probe, true, call, how); !s.ok()) {
    Reason r = Reason::Refused;
    if (s.code() == rt::ErrorCode::Argument)
      r = Reason::Arguments;
    else if (s.code() == rt::ErrorCode::Unsupported)
      r = s.message().find("not contiguous") != std::string::npos ? Reason::NonContiguous
          : rt::elemTypeOf(a.type) && rt::reduceOpOf(a.op)        ? Reason::OpDatatype
                                                                  : Reason::Refused;
    return fallback(g, a, &cs, r, s.message());
  }
  if (!isBlocking(a.kind) && !g.hook)
    return fallback(g, a, &cs, Reason::NoProgress);

  int typeSize = 0;
  PMPI_Type_size(a.type, &typeSize);
  CallTraits t;
  t.collective = c;
  t.ranks = uint32_t(cs.size);
  t.root = probe.root;
  t.count = uint64_t(a.count);
  t.bytes = uint64_t(a.count) * uint64_t(typeSize);
  t.commutative = how.commutativeOp;
  t.predefinedOp = rt::reduceOpOf(a.op).has_value();
  Decision &d = decide(g, cs, t);
  const Selection &sel = d.sel;
  if (sel.native)
    return fallback(g, a, &cs, sel.noPlan ? Reason::NoPlan : Reason::NativeSelected,
                    sel.detail);
  if (!cs.ready) {
    if (isBlocking(a.kind))
      prepare(g, cs, a.comm);
    if (!cs.ready)
      return fallback(g, a, &cs, Reason::NotSetUp,
                      "its first collc call must be blocking, or it must come from an "
                      "intercepted constructor");
  }
  if (!d.plan) {
    std::string error;
    d.plan = planFor(g, cs, c, t.root, sel, error);
    if (!d.plan) {
      warn(g, std::string("no ") + name(c) + " plan " + sel.algorithm + " for " +
                  std::to_string(cs.size) + " ranks: " + error + "; using native MPI",
           false);
      return fallback(g, a, &cs, Reason::NoPlan, error);
    }
  }
  return execute(g, cs, a, d.plan, t.bytes, sel);
}

// --- initialization and finalization -----------------------------------------------

uint64_t fnv(uint64_t h, const void *data, size_t n) {
  const auto *p = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < n; ++i)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}
uint64_t fnv(uint64_t h, const std::string &s) { return fnv(fnv(h, s.data(), s.size()), "", 1); }
template <class T> uint64_t fnvValue(uint64_t h, T v) { return fnv(h, &v, sizeof v); }

/// Everything that can change a decision, hashed (not paths: the same files
/// may be mounted elsewhere on another node).
uint64_t fingerprint(const Global &g) {
  uint64_t h = fnv(0xcbf29ce484222325ull, std::string("collc-dropin/1"));
  h = fnvValue(h, g.config.verify);
  h = fnvValue(h, g.config.acceptUnproven);
  for (const std::string &f : g.config.forced)
    h = fnv(h, f);
  for (const Rule &r : g.config.rules) {
    h = fnvValue(h, unsigned(r.collective));
    h = fnvValue(h, r.minRanks);
    h = fnvValue(h, r.maxRanks);
    h = fnvValue(h, r.minBytes);
    h = fnvValue(h, r.maxBytes);
    h = fnv(h, r.algorithm);
  }
  for (const PlanFile &f : g.library.files()) {
    h = fnvValue(h, unsigned(f.collective));
    h = fnvValue(h, f.ranks);
    h = fnvValue(h, f.root);
    h = fnvValue(h, f.minBytes);
    h = fnvValue(h, f.maxBytes);
    h = fnvValue(h, f.crc);
  }
  return h;
}

void initialize(bool atInit) {
  auto gp = std::make_unique<Global>();
  Global &g = *gp;
  InternalScope internal;
  PMPI_Comm_rank(MPI_COMM_WORLD, &g.worldRank);
  PMPI_Comm_size(MPI_COMM_WORLD, &g.worldSize);
  PMPI_Query_thread(&g.threadLevel);

  parseBasics([](const char *v) -> const char * { return std::getenv(v); }, g.config);
  g.library.scan(g.config.planPath, g.config, g.config.warnings);
  const KnownAlgorithms known = g.library.knownAlgorithms();
  parseAlgorithm(std::getenv("COLLC_ALGORITHM"), known, g.config);
  loadRules(std::getenv("COLLC_RULES"), known, g.config);
  for (const std::string &w : g.config.warnings)
    warn(g, w);

  if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, collcDeleteState, &g.keyval, nullptr) !=
      MPI_SUCCESS) {
    warn(g, "cannot create an attribute key; collc is disabled");
    g.disabled = true;
  }
  PMPI_Comm_group(MPI_COMM_WORLD, &g.worldGroup);

  using Register = int (*)(int (*)());
  auto reg = reinterpret_cast<Register>(dlsym(RTLD_DEFAULT, "opal_progress_register"));
  auto unreg = reinterpret_cast<Register>(dlsym(RTLD_DEFAULT, "opal_progress_unregister"));
  if (reg && unreg && reg(collcProgress) == 0) {
    g.hook = true;
    g.progressUnregister = unreg;
  }

  // Every rank must decide every call alike, so their settings must agree.
  if (atInit && g.worldSize > 1 && !g.disabled) {
    const uint64_t h = fingerprint(g);
    uint64_t v[2] = {h, ~h};
    PMPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    g.compared = true;
    if (v[0] != h || v[1] != ~h) {
      g.disabled = true;
      warn(g, "the ranks' collc settings differ (COLLC_ALGORITHM, COLLC_RULES, COLLC_VERIFY "
              "or the plans in COLLC_PLAN_PATH); collc is disabled and every collective "
              "uses native MPI");
    }
  }
  if (g.config.debug && g.worldRank == 0) {
    std::string s = "collc " + std::string(g.hook ? "with" : "without") +
                    " a progress hook; thread level " + std::to_string(g.threadLevel) + "; " +
                    std::to_string(g.library.files().size()) + " plan files; " +
                    std::to_string(g.config.rules.size()) + " rules";
    for (unsigned c = 0; c < numColls; ++c)
      if (!g.config.forced[c].empty())
        s += "; " + std::string(name(Coll(c))) + " forced to " + g.config.forced[c];
    if (!g.compared)
      s += "; settings not compared across ranks (MPI_Init was not intercepted)";
    debugLine(g, s);
  }
  gGlobal.store(gp.release(), std::memory_order_release);
  if (atInit) {
    created(MPI_COMM_WORLD);
    created(MPI_COMM_SELF);
  }
}

Global *activeGlobal() {
  Global *g = gGlobal.load(std::memory_order_acquire);
  if (!g) {
    int init = 0, fin = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    if (!init || fin)
      return nullptr;
    std::call_once(gOnce, [] { initialize(false); });
    g = gGlobal.load(std::memory_order_acquire);
  }
  if (!g || g->finalized.load(std::memory_order_relaxed))
    return nullptr;
  return g;
}

void created(MPI_Comm comm) {
  if (tlInternal && comm != MPI_COMM_WORLD && comm != MPI_COMM_SELF)
    return;
  if (comm == MPI_COMM_NULL)
    return;
  Global *g = gGlobal.load(std::memory_order_acquire);
  if (!g || g->disabled || g->finalized)
    return;
  InternalScope internal;
  if (CommState *cs = stateFor(*g, comm))
    prepare(*g, *cs, comm);
}

/// Sums the counters over threads and ranks (collective over MPI_COMM_WORLD)
/// and prints them on rank 0 with COLLC_STATS.
void reportStats(Global &g) {
  const size_t nfiles = g.library.files().size();
  std::vector<uint64_t> v(numKinds * (1 + numReasons + numSubstitutions), 0);
  std::vector<uint64_t> uses(nfiles, 0);
  {
    std::lock_guard<std::mutex> lock(g.statsMu);
    for (const auto &s : g.stats) {
      size_t i = 0;
      for (unsigned k = 0; k < numKinds; ++k) {
        v[i++] += s->handled[k];
        for (unsigned r = 0; r < numReasons; ++r)
          v[i++] += s->fallback[k][r];
        for (unsigned u = 0; u < numSubstitutions; ++u)
          v[i++] += s->substituted[k][u];
      }
      for (size_t f = 0; f < nfiles && f < s->fileUses.size(); ++f)
        uses[f] += s->fileUses[f];
    }
  }
  const bool root = g.worldRank == 0;
  PMPI_Reduce(root ? MPI_IN_PLACE : v.data(), v.data(), int(v.size()), MPI_UINT64_T, MPI_SUM,
              0, MPI_COMM_WORLD);
  int n[2] = {int(nfiles), -int(nfiles)};
  PMPI_Allreduce(MPI_IN_PLACE, n, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  const bool sameFiles = n[0] == -n[1];
  if (sameFiles && nfiles)
    PMPI_Reduce(root ? MPI_IN_PLACE : uses.data(), uses.data(), int(nfiles), MPI_UINT64_T,
                MPI_SUM, 0, MPI_COMM_WORLD);
  if (!root || !g.config.stats)
    return;
  size_t i = 0;
  for (unsigned k = 0; k < numKinds; ++k) {
    const uint64_t handled = v[i++];
    const uint64_t *fb = &v[i];
    i += numReasons;
    const uint64_t *sub = &v[i];
    i += numSubstitutions;
    uint64_t total = 0;
    for (unsigned r = 0; r < numReasons; ++r)
      total += fb[r];
    std::fprintf(stderr, "collc: %s handled=%" PRIu64 " fallback=%" PRIu64 "\n",
                 kindName(Kind(k)), handled, total);
    for (unsigned r = 0; r < numReasons; ++r)
      if (fb[r])
        std::fprintf(stderr, "collc:   fallback %s: %" PRIu64 "\n", text(Reason(r)), fb[r]);
    for (unsigned u = 0; u < numSubstitutions; ++u)
      if (sub[u])
        std::fprintf(stderr, "collc:   substituted %s: %" PRIu64 "\n",
                     text(Substitution(u + 1)), sub[u]);
  }
  if (sameFiles)
    for (size_t f = 0; f < nfiles; ++f) {
      const PlanFile &pf = g.library.files()[f];
      std::fprintf(stderr, "collc: plan %s (%s %s, %u ranks) used=%" PRIu64 "\n",
                   pf.origin.c_str(), rt::name(pf.collective), pf.algorithm.c_str(),
                   pf.ranks, uses[f]);
    }
  std::fflush(stderr);
}

} // namespace
} // namespace collc::dropin

using namespace collc::dropin;

// --- the intercepted MPI functions ---------------------------------------------------------

COLLC_EXPORT int MPI_Init(int *argc, char ***argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS)
    std::call_once(gOnce, [] { initialize(true); });
  return rc;
}

COLLC_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS)
    std::call_once(gOnce, [] { initialize(true); });
  return rc;
}

COLLC_EXPORT int MPI_Finalize(void) {
  if (!tlInternal)
    if (Global *g = activeGlobal()) {
      InternalScope internal;
      reportStats(*g);
      PMPI_Comm_delete_attr(MPI_COMM_SELF, g->keyval);
      PMPI_Comm_delete_attr(MPI_COMM_WORLD, g->keyval);
      if (g->hook)
        g->progressUnregister(collcProgress);
      if (g->worldGroup != MPI_GROUP_NULL)
        PMPI_Group_free(&g->worldGroup);
      g->finalized = true;
    }
  return PMPI_Finalize();
}

COLLC_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return serve({Kind::Allreduce, sendbuf, recvbuf, count, datatype, op, 0, comm, nullptr});
}

COLLC_EXPORT int MPI_Reduce(const void *sendbuf, void *recvbuf, int count,
                            MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm) {
  return serve({Kind::Reduce, sendbuf, recvbuf, count, datatype, op, root, comm, nullptr});
}

COLLC_EXPORT int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                MPI_Request *request) {
  if (!request)
    return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
  return serve({Kind::Iallreduce, sendbuf, recvbuf, count, datatype, op, 0, comm, request});
}

COLLC_EXPORT int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count,
                             MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                             MPI_Request *request) {
  if (!request)
    return PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request);
  return serve({Kind::Ireduce, sendbuf, recvbuf, count, datatype, op, root, comm, request});
}

// Freeing a communicator runs the attribute delete callbacks at once (the
// runtime's private duplicate and collc's plans go with them), while MPI lets
// pending operations on it complete afterwards: finish collc's first.
namespace {
int freeComm(int (*pmpi)(MPI_Comm *), MPI_Comm *comm) {
  if (!tlInternal && comm && *comm != MPI_COMM_NULL)
    if (Global *g = activeGlobal()) {
      InternalScope internal;
      if (CommState *cs = findState(*g, *comm))
        drain(*g, *cs);
      return pmpi(comm);
    }
  return pmpi(comm);
}
} // namespace

COLLC_EXPORT int MPI_Comm_free(MPI_Comm *comm) { return freeComm(PMPI_Comm_free, comm); }
COLLC_EXPORT int MPI_Comm_disconnect(MPI_Comm *comm) {
  return freeComm(PMPI_Comm_disconnect, comm);
}

// Communicator constructors: every member of the new communicator is in the
// same blocking call, so its private duplicate is made here, and non-blocking
// collectives on it can use collc from the first call.
#define COLLC_AFTER(call, newcomm)                                                         \
  do {                                                                                     \
    const int rc_ = (call);                                                                \
    if (rc_ == MPI_SUCCESS && !tlInternal && activeGlobal())                               \
      created(newcomm);                                                                    \
    return rc_;                                                                            \
  } while (0)

COLLC_EXPORT int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Comm_dup(comm, newcomm), *newcomm);
}
COLLC_EXPORT int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Comm_dup_with_info(comm, info, newcomm), *newcomm);
}
COLLC_EXPORT int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Comm_split(comm, color, key, newcomm), *newcomm);
}
COLLC_EXPORT int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info,
                                     MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Comm_split_type(comm, type, key, info, newcomm), *newcomm);
}
COLLC_EXPORT int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Comm_create(comm, group, newcomm), *newcomm);
}
COLLC_EXPORT int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                                       MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Comm_create_group(comm, group, tag, newcomm), *newcomm);
}
COLLC_EXPORT int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Intercomm_merge(intercomm, high, newcomm), *newcomm);
}
COLLC_EXPORT int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                                 int reorder, MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm), *newcomm);
}
COLLC_EXPORT int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Cart_sub(comm, remain_dims, newcomm), *newcomm);
}
COLLC_EXPORT int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[],
                                  const int edges[], int reorder, MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm), *newcomm);
}
COLLC_EXPORT int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[],
                                       const int degrees[], const int destinations[],
                                       const int weights[], MPI_Info info, int reorder,
                                       MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Dist_graph_create(comm, n, sources, degrees, destinations, weights, info,
                                     reorder, newcomm),
              *newcomm);
}
COLLC_EXPORT int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                                const int sourceweights[], int outdegree,
                                                const int destinations[],
                                                const int destweights[], MPI_Info info,
                                                int reorder, MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights,
                                              outdegree, destinations, destweights, info,
                                              reorder, newcomm),
              *newcomm);
}
#undef COLLC_AFTER
