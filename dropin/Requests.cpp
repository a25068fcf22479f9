// dropin/Requests.cpp: executing calls on plans and progressing the
// non-blocking ones (Requests.h).
#include "dropin/Requests.h"

#include "dropin/ByteView.h"

#include "dropin/Persistent.h"
#include "dropin/Serve.h"
#include "runtime/api/Execution.h"
#include "runtime/kernels/MpiTypes.h"

#include <sched.h>

#include <algorithm>

#include <cinttypes>
#include <cstdio>

namespace collc::dropin {

namespace {

/// Set inside progressPending(): a nested opal_progress must not re-enter it.
thread_local bool tlProgressing = false;

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
      cs->pending.erase(cs->pending.begin() + std::ptrdiff_t(i));
      cs->pendingCount.fetch_sub(1, std::memory_order_acq_rel);
      g.pendingTotal.fetch_sub(1, std::memory_order_acq_rel);
      if (p->staging && p->error == MPI_SUCCESS && p->staging->unpack() != MPI_SUCCESS)
        p->error = MPI_ERR_OTHER;
      p->staging.reset();
      if (p->owner) {
        // A persistent request: it stays bound; its MPI request completes.
        signalDone(*p->owner, p->error);
        delete p;
      } else {
        (void)collc_request_free(&p->req);
        // May free `p` (when the user has freed the request already).
        PMPI_Grequest_complete(p->greq);
      }
      ++events;
    }
  }
  tlProgressing = false;
  return events;
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

} // namespace

int initRequest(const Args &a, int size, collc_plan plan, collc_request *req) {
  const void *send = stagesInput(a) ? MPI_IN_PLACE : a.sendbuf;
  switch (collOf(a.kind)) {
  case Coll::Allreduce:
    return collc_allreduce_init(plan, send, a.recvbuf, a.count, a.type, a.op, a.comm, req);
  case Coll::Reduce:
    return collc_reduce_init(plan, send, a.recvbuf, a.count, a.type, a.op, a.root, a.comm,
                             req);
  case Coll::ReduceScatter:
    if (hasCounts(a.kind)) {
      std::vector<MPI_Count> counts(a.recvcounts, a.recvcounts + size);
      return collc_reduce_scatter_init(plan, send, a.recvbuf, counts.data(), a.type, a.op,
                                       a.comm, req);
    }
    return collc_reduce_scatter_block_init(plan, send, a.recvbuf, a.count, a.type, a.op,
                                           a.comm, req);
  case Coll::Scan:
    return collc_scan_init(plan, send, a.recvbuf, a.count, a.type, a.op, a.comm, req);
  case Coll::Exscan:
    return collc_exscan_init(plan, send, a.recvbuf, a.count, a.type, a.op, a.comm, req);
  case Coll::Allgather:
    return collc_allgather_init(plan, send, a.recvbuf, a.count, a.type, a.comm, req);
  case Coll::Bcast:
    return collc_bcast_init(plan, a.recvbuf, a.count, a.type, a.root, a.comm, req);
  }
  return COLLC_ERR_ARG;
}

int stageInput(const Args &a) {
  if (!stagesInput(a))
    return MPI_SUCCESS;
  int packed = 0, rank = 0, position = 0;
  MPI_Aint lb = 0, extent = 0;
  PMPI_Comm_rank(a.comm, &rank);
  PMPI_Type_get_extent(a.type, &lb, &extent);
  if (int rc = PMPI_Pack_size(a.sendcount, a.sendtype, MPI_COMM_SELF, &packed);
      rc != MPI_SUCCESS)
    return rc;
  char *block = static_cast<char *>(a.recvbuf) + MPI_Aint(rank) * a.count * extent;
  // The block packed first, then overwritten by what is sent: an erroneous
  // send side of another size (Serve.cpp) is cut to the block, or leaves
  // the rest of the block as it was.
  int blockPacked = 0;
  if (int rc = PMPI_Pack_size(a.count, a.type, MPI_COMM_SELF, &blockPacked); rc != MPI_SUCCESS)
    return rc;
  std::vector<char> buf(size_t(std::max(packed, blockPacked)) + 1);
  if (packed < blockPacked)
    if (int rc = PMPI_Pack(block, a.count, a.type, buf.data(), blockPacked, &position,
                           MPI_COMM_SELF);
        rc != MPI_SUCCESS)
      return rc;
  position = 0;
  if (int rc = PMPI_Pack(a.sendbuf, a.sendcount, a.sendtype, buf.data(), int(buf.size()),
                         &position, MPI_COMM_SELF);
      rc != MPI_SUCCESS)
    return rc;
  position = 0;
  return PMPI_Unpack(buf.data(), std::max(packed, blockPacked), &position, block, a.count,
                     a.type, MPI_COMM_SELF);
}

void addPending(Global &g, CommState &cs, Pending *p) {
  {
    std::lock_guard<std::mutex> lock(cs.pendingMu);
    cs.pending.push_back(p);
    cs.pendingCount.fetch_add(1, std::memory_order_acq_rel);
  }
  g.pendingTotal.fetch_add(1, std::memory_order_acq_rel);
  if (!cs.listed) {
    std::lock_guard<std::mutex> lock(g.activeMu);
    g.active.push_back(&cs);
    cs.listed = true;
  }
}

void countHandled(Global &g, CommState &cs, Kind k, Substitution sub, int fileId,
                  std::string_view algorithm, uint64_t bytes) {
  // Once per call (CommState::counts).
  if (!cs.counts)
    return;
  countServed(cs, k, algorithm, int64_t(bytes));
  Stats &st = stats(g);
  ++st.handled[unsigned(k)];
  if (sub != Substitution::None)
    ++st.substituted[unsigned(k)][unsigned(sub) - 1];
  if (fileId >= 0)
    ++st.fileUses[size_t(fileId)];
}

int start(Global &g, CommState &cs, collc_request req, bool blocking) {
  // Blocking: waited for at once, so it may run to its end on the
  // shared-memory direct path (docs/shm-transport.md).
  auto once = [&] { return blocking ? rt::startBlockingRequest(req) : collc_start(req); };
  int rc = once();
  while (rc == COLLC_ERR_STATE && cs.pendingCount.load() > 0) {
    if (progressPending(g) == 0)
      sched_yield();
    rc = once();
  }
  return rc;
}

namespace {

/// A new persistent request for `a`, kept in the cache when the call
/// qualifies. Null when the runtime refuses the call: nothing has started.
collc_request newRequest(CommState &cs, const Args &a, collc_plan plan, uint64_t bytes,
                         const Selection &sel, bool staged, bool &cached) {
  collc_request req = COLLC_REQUEST_NULL;
  if (initRequest(a, cs.size, plan, &req) != COLLC_SUCCESS)
    return nullptr;
  // Not a staged allgather (the copy runs at each start, outside the request),
  // nor a call on packed bytes (its buffer is the call's own).
  cached = bytes <= requestCacheMaxBytes && !stagesInput(a) && !staged &&
           rt::elemTypeOf(a.type) && (!reduces(collOf(a.kind)) || rt::reduceOpOf(a.op));
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
    c.root = hasRoot(collOf(a.kind)) ? a.root : 0;
    c.recvcounts.clear();
    if (hasCounts(a.kind))
      c.recvcounts.assign(a.recvcounts, a.recvcounts + cs.size);
    c.req = req;
    c.used = ++cs.clock;
    c.substitution = sel.substitution;
    c.fileId = sel.fileId;
    c.detail = sel.detail;
    c.algorithm = sel.algorithm;
    c.bytes = bytes;
  }
  return req;
}

void dropCached(CommState &cs, collc_request req) {
  for (CachedRequest &c : cs.cache)
    if (c.req == req)
      c = CachedRequest();
}

/// Starts and waits for a blocking execution.
int runBlocking(Global &g, CommState &cs, const Args &a, collc_request req, bool cached,
                const Staging *staging = nullptr) {
  if ((staging && staging->pack() != MPI_SUCCESS) || stageInput(a) != MPI_SUCCESS ||
      start(g, cs, req, /*blocking=*/false) != COLLC_SUCCESS) {
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
  if (staging && staging->unpack() != MPI_SUCCESS)
    return fatal(g, a, cs, "MPI_Unpack");
  return MPI_SUCCESS;
}

} // namespace

bool CachedRequest::matches(const Args &a) const {
  return req && kind == a.kind && sendbuf == a.sendbuf && recvbuf == a.recvbuf &&
         count == a.count && type == a.type && op == a.op &&
         (!hasRoot(collOf(kind)) || root == a.root) && !stagesInput(a) &&
         (!hasCounts(kind) ||
          (a.recvcounts && std::equal(recvcounts.begin(), recvcounts.end(), a.recvcounts)));
}

extern "C" int collcProgress() {
  Global *g = gGlobal.load(std::memory_order_acquire);
  if (!g || g->pendingTotal.load(std::memory_order_relaxed) == 0 || tlProgressing)
    return 0;
  return progressPending(*g);
}

void drain(Global &g, CommState &cs) {
  while (cs.pendingCount.load(std::memory_order_acquire) > 0)
    if (progressPending(g) == 0)
      sched_yield();
}

bool runCached(Global &g, CommState &cs, const Args &a, int &rc) {
  for (CachedRequest &c : cs.cache)
    if (c.matches(a)) {
      c.used = ++cs.clock;
      if (g.config.debug)
        logDecision(g, a, &cs, c.detail);
      rc = runBlocking(g, cs, a, c.req, true);
      if (rc == MPI_SUCCESS)
        countHandled(g, cs, a.kind, c.substitution, c.fileId, c.algorithm, c.bytes);
      return true;
    }
  return false;
}

int execute(Global &g, CommState &cs, const Args &a, const Args &user,
            std::unique_ptr<Staging> staging, collc_plan plan, uint64_t bytes,
            const Selection &sel) {
  if (modeOf(a.kind) == Mode::Persistent)
    return initPersistent(g, cs, a, user, std::move(staging), plan, bytes, sel);
  if (isBlocking(a.kind)) {
    bool cached = false;
    collc_request req = newRequest(cs, a, plan, bytes, sel, bool(staging), cached);
    if (!req)
      return fallback(g, user, &cs, Reason::Refused, collc_error_message());
    if (g.config.debug)
      logDecision(g, a, &cs, sel.detail);
    if (int rc = runBlocking(g, cs, a, req, cached, staging.get()); rc != MPI_SUCCESS)
      return rc;
  } else {
    collc_request req = COLLC_REQUEST_NULL;
    if (initRequest(a, cs.size, plan, &req) != COLLC_SUCCESS)
      return fallback(g, user, &cs, Reason::Refused, collc_error_message());
    if (g.config.debug)
      logDecision(g, a, &cs, sel.detail);
    // Never the blocking start: a non-blocking call returns at once, whether
    // or not its peers have arrived.
    if ((staging && staging->pack() != MPI_SUCCESS) || stageInput(a) != MPI_SUCCESS ||
        start(g, cs, req, /*blocking=*/false) != COLLC_SUCCESS) {
      (void)collc_request_free(&req);
      return fatal(g, a, cs, "collc_start");
    }
    auto p = std::make_unique<Pending>();
    p->req = req;
    p->staging = std::move(staging);
    if (PMPI_Grequest_start(collcQuery, collcFree, collcCancel, p.get(), &p->greq) !=
        MPI_SUCCESS) {
      (void)collc_wait(&p->req);
      (void)collc_request_free(&p->req);
      return fatal(g, a, cs, "MPI_Grequest_start");
    }
    *a.request = p->greq;
    addPending(g, cs, p.release());
  }
  countHandled(g, cs, a.kind, sel.substitution, sel.fileId, sel.algorithm, bytes);
  return MPI_SUCCESS;
}

} // namespace collc::dropin
