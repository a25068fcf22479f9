// runtime/api/CommState.cpp: the per-communicator state of executions (a
// private duplicate, its tags and shared-memory channels, kept on the user's
// communicator) and the choice of transport, with their C API entry points.
#include "runtime/api/CommState.h"

#include "runtime/api/Execution.h"
#include "runtime/mpi/MpiTransport.h"
#include "runtime/shm/TransportSettings.h"

#include <strings.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

using namespace collc::rt;
using namespace collc::rt::detail;

namespace {

// --- per-communicator state ----------------------------------------------------

/// Bumped whenever a communicator's state is freed, so a thread's cached
/// (communicator, state) pair is known stale when a handle gets reused.
std::atomic<uint64_t> commStateEpoch{0};

int deleteCommState(MPI_Comm, int, void *attr, void *) {
  ++commStateEpoch;
  auto *s = static_cast<CommState *>(attr);
  deleteRequest(s->lastBlocking);
  s->lastBlocking = nullptr;
  releaseCommState(s); // the attribute's reference; requests may hold more
  return MPI_SUCCESS;
}

/// The communicator this thread used last, and its state, so that repeated
/// calls need no attribute lookup (a lock in Open MPI).
struct LastComm {
  MPI_Comm comm = MPI_COMM_NULL;
  CommState *state = nullptr;
  uint64_t epoch = 0;
};
LastComm &lastComm() {
  thread_local LastComm last;
  return last;
}
void rememberCommState(MPI_Comm comm, CommState *state) {
  lastComm() = LastComm{comm, state, commStateEpoch.load()};
}

// --- transport selection --------------------------------------------------------

/// COLLC_TRANSPORT, COLLC_SHM_SEGMENT, COLLC_SHM_FAST and COLLC_NODE_MAP:
/// given by the drop-in at MPI_Init (setTransportSettings: it has checked
/// them, warned on rank 0 and compared them across the ranks), or else read
/// from the environment at first use, each bad value one warning on stderr.
std::once_flag settingsOnce;
TransportSettings settings;

bool useSettings(const TransportSettings *given) {
  bool taken = false;
  std::call_once(settingsOnce, [given, &taken] {
    if (given) {
      settings = *given;
      taken = true;
      return;
    }
    std::vector<std::string> warnings;
    settings = readTransportSettings([](const char *v) { return std::getenv(v); }, warnings);
    for (const std::string &w : warnings)
      std::fprintf(stderr, "collc: warning: %s\n", w.c_str());
  });
  return taken;
}

const TransportSettings &transportSettings() {
  useSettings(nullptr);
  return settings;
}

/// What collc_set_transport() chose (-1: nothing; the settings decide).
std::atomic<int> transportChoice{-1};
std::atomic<long long> transportFallbacks{0};

bool envFlag(const char *name) {
  const char *v = std::getenv(name);
  return v && (!std::strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") ||
               !strcasecmp(v, "on"));
}

collc_transport currentTransport() {
  if (int t = transportChoice.load(); t >= 0)
    return collc_transport(t);
  switch (transportSettings().transport) {
  case TransportKind::Shm:
    return COLLC_TRANSPORT_SHM;
  case TransportKind::Mpi:
    return COLLC_TRANSPORT_MPI;
  case TransportKind::Auto:
    break;
  }
  return COLLC_TRANSPORT_AUTO;
}

/// The region's geometry: COLLC_SHM_SEGMENT (bytes per segment) overrides
/// the default. Only the node's first rank's value counts (the others read
/// the region's header).
ShmConfig shmConfig() {
  ShmConfig c;
  c.slotBytes = transportSettings().shmSegmentBytes;
  return c;
}

} // namespace

namespace collc::rt::detail {

void releaseCommState(CommState *s) {
  if (!s || --s->refs > 0)
    return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (s->dup != MPI_COMM_NULL && !finalized)
    MPI_Comm_free(&s->dup);
  delete s; // unmaps the shared memory (no collective step)
}

CommState *lastCommState(MPI_Comm comm) {
  const LastComm &l = lastComm();
  return l.state && l.comm == comm && l.epoch == commStateEpoch.load() ? l.state : nullptr;
}

/// Counts a fallback from shared memory to MPI and explains it: always with
/// COLLC_DEBUG=1, as a warning when shared memory was asked for explicitly.
void shmFallback(MPI_Comm comm, const std::string &why) {
  ++transportFallbacks;
  const bool warn = currentTransport() == COLLC_TRANSPORT_SHM;
  if (!warn && !envFlag("COLLC_DEBUG"))
    return;
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::fprintf(stderr, "collc: %s[rank %d] communicator of %d ranks: %s; using MPI point-to-point\n",
               warn ? "warning: " : "", rank, size, why.c_str());
}

void countStart(CommState &s) {
  if (s.shmStartsLeft > 1)
    --s.shmStartsLeft;
}

void settleShm(CommState &s, bool now) {
  if (s.shmStartsLeft == 0 || (s.shmStartsLeft > 1 && !now))
    return;
  s.shmStartsLeft = 0;
  // Every rank of the communicator is in this blocking call, after the same
  // starts. Executions started before go on over MPI (progressed while this
  // waits, as in any blocking call); the private duplicate's collectives do
  // not match their messages.
  ShmSetup setup;
  const Status st = setupShmNode(s.dup, shmConfig(), transportSettings().nodeMap, setup);
  // An MPI error on one rank alone must not leave its peers on shared memory.
  int mine = st.ok() ? 1 : 0, all = 0;
  if (MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, s.dup) != MPI_SUCCESS)
    all = 0;
  if (!all) {
    shmFallback(s.dup, st.ok() ? std::string("another rank could not set up shared memory")
                               : st.message());
    return;
  }
  if (setup.failed)
    shmFallback(s.dup, setup.why);
  if (!setup.node)
    return;
  s.shm = std::move(setup.node);
  s.shmDirect = transportSettings().shmFast;
  ++s.shmGeneration;
}

Status commState(MPI_Comm comm, CommState *&out) {
  if (CommState *last = lastCommState(comm)) {
    out = last;
    return Status::success();
  }
  static std::once_flag once;
  static int keyval = MPI_KEYVAL_INVALID;
  static int keyvalError = MPI_SUCCESS;
  std::call_once(once, [] {
    keyvalError = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, deleteCommState, &keyval,
                                         nullptr);
  });
  if (keyvalError != MPI_SUCCESS)
    return mpiError("MPI_Comm_create_keyval", keyvalError);
  void *attr = nullptr;
  int found = 0;
  if (int rc = MPI_Comm_get_attr(comm, keyval, &attr, &found); rc != MPI_SUCCESS)
    return mpiError("MPI_Comm_get_attr", rc);
  if (found) {
    out = static_cast<CommState *>(attr);
    rememberCommState(comm, out);
    return Status::success();
  }
  auto s = std::make_unique<CommState>();
  if (int rc = MPI_Comm_dup(comm, &s->dup); rc != MPI_SUCCESS)
    return mpiError("MPI_Comm_dup", rc);
  MPI_Comm_set_errhandler(s->dup, MPI_ERRORS_RETURN);
  int *ub = nullptr;
  if (MPI_Comm_get_attr(s->dup, MPI_TAG_UB, &ub, &found) == MPI_SUCCESS && found && ub)
    s->tagUb = *ub;
  if (currentTransport() != COLLC_TRANSPORT_MPI && transportSettings().shmAfter > 0) {
    s->shmStartsLeft = transportSettings().shmAfter + 1; // counted down to 1 by the starts
  } else if (currentTransport() != COLLC_TRANSPORT_MPI) {
    ShmSetup setup;
    if (Status st = setupShmNode(s->dup, shmConfig(), transportSettings().nodeMap, setup);
        !st.ok()) {
      MPI_Comm_free(&s->dup);
      return st;
    }
    if (setup.failed)
      shmFallback(comm, setup.why);
    s->shm = std::move(setup.node);
    s->shmDirect = transportSettings().shmFast;
  }
  if (int rc = MPI_Comm_set_attr(comm, keyval, s.get()); rc != MPI_SUCCESS) {
    MPI_Comm_free(&s->dup);
    return mpiError("MPI_Comm_set_attr", rc);
  }
  out = s.release();
  rememberCommState(comm, out);
  return Status::success();
}

} // namespace collc::rt::detail

namespace collc::rt {

bool setTransportSettings(const TransportSettings &given) { return useSettings(&given); }

Status prepareComm(MPI_Comm comm) {
  CommState *s = nullptr;
  return commState(comm, s);
}

void settleTransport(MPI_Comm comm) {
  CommState *s = lastCommState(comm);
  if (!s && !commState(comm, s).ok())
    return;
  settleShm(*s);
}

MPI_Comm privateComm(MPI_Comm comm) {
  CommState *s = nullptr;
  return commState(comm, s).ok() ? s->dup : MPI_COMM_NULL;
}

} // namespace collc::rt

extern "C" {

int collc_set_transport(collc_transport transport) {
  if (transport != COLLC_TRANSPORT_AUTO && transport != COLLC_TRANSPORT_SHM &&
      transport != COLLC_TRANSPORT_MPI)
    return fail(COLLC_ERR_ARG, "collc_set_transport: " + std::to_string(int(transport)) +
                                   " is not a collc_transport");
  transportChoice.store(int(transport));
  return COLLC_SUCCESS;
}

int collc_get_transport(collc_transport *transport) {
  if (!transport)
    return fail(COLLC_ERR_ARG, "collc_get_transport: transport is null");
  *transport = currentTransport();
  return COLLC_SUCCESS;
}

int collc_comm_shm_peers(MPI_Comm comm, int *peers) {
  if (!peers)
    return fail(COLLC_ERR_ARG, "collc_comm_shm_peers: peers is null");
  if (comm == MPI_COMM_NULL)
    return fail(COLLC_ERR_ARG, "the communicator is MPI_COMM_NULL");
  CommState *s = nullptr;
  if (Status st = commState(comm, s); !st.ok())
    return failStatus(st, COLLC_ERR_MPI);
  settleShm(*s, /*now=*/true); // a communicator still on MPI moves to shared memory now
  *peers = s->shm ? int(s->shm->localPeers) : 0;
  return COLLC_SUCCESS;
}

int collc_transport_fallbacks(long long *count) {
  if (!count)
    return fail(COLLC_ERR_ARG, "collc_transport_fallbacks: count is null");
  *count = transportFallbacks.load();
  return COLLC_SUCCESS;
}

} // extern "C"
