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

int advanceQueue(Global &g, CommState &cs);

/// While this thread holds a communicator's pendingMu and calls MPI: MPI's
/// progress must not come back into progressPending (which would lock it
/// again).
struct NoProgress {
  bool saved = tlProgressing;
  NoProgress() { tlProgressing = true; }
  ~NoProgress() { tlProgressing = saved; }
  NoProgress(const NoProgress &) = delete;
  NoProgress &operator=(const NoProgress &) = delete;
};

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
    events += advanceQueue(g, *cs);
    for (size_t i = 0; i < cs->pending.size();) {
      Pending *p = cs->pending[i];
      int flag = 0;
      if (p->failed) {
        flag = 1;
      } else if (p->native != MPI_REQUEST_NULL) {
        if (int rc = PMPI_Test(&p->native, &flag, MPI_STATUS_IGNORE); rc != MPI_SUCCESS) {
          p->error = rc;
          flag = 1;
        }
      } else if (collc_test(&p->req, &flag) != COLLC_SUCCESS) {
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
        if (p->req)
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
  if (isVarying(a.kind)) { // counts where the call has them (Serve.cpp: runtimeCall)
    std::vector<MPI_Count> recv, sendv;
    if (a.recvcounts)
      recv.assign(a.recvcounts, a.recvcounts + size);
    if (a.sendcounts)
      sendv.assign(a.sendcounts, a.sendcounts + size);
    const MPI_Count *rc = a.recvcounts ? recv.data() : nullptr;
    const MPI_Count *sc = a.sendcounts ? sendv.data() : nullptr;
    if (collOf(a.kind) == Coll::Gather)
      return collc_gatherv_init(plan, send, a.sendcount, a.recvbuf, rc, a.type, a.root, a.comm,
                                req);
    if (collOf(a.kind) == Coll::Scatter)
      return collc_scatterv_init(plan, send, sc, a.recvbuf, a.count, a.type, a.root, a.comm,
                                 req);
    return collc_alltoallv_init(plan, send, sc, a.recvbuf, rc, a.type, a.comm, req);
  }
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
    if (hasCounts(a.kind)) {
      std::vector<MPI_Count> counts(a.recvcounts, a.recvcounts + size);
      return collc_allgatherv_init(plan, send, a.recvbuf, counts.data(), a.type, a.comm, req);
    }
    return collc_allgather_init(plan, send, a.recvbuf, a.count, a.type, a.comm, req);
  case Coll::Bcast:
    return collc_bcast_init(plan, a.recvbuf, a.count, a.type, a.root, a.comm, req);
  case Coll::Alltoall:
    return collc_alltoall_init(plan, send, a.recvbuf, a.count, a.type, a.comm, req);
  case Coll::Gather:
    return collc_gather_init(plan, send, a.recvbuf, a.count, a.type, a.root, a.comm, req);
  case Coll::Scatter:
    return collc_scatter_init(plan, send, a.recvbuf, a.count, a.type, a.root, a.comm, req);
  case Coll::Barrier:
    return collc_barrier_init(plan, a.comm, req);
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
/// qualifies. Null, with the runtime's code in `rc`, when it refuses the
/// call: nothing has started.
collc_request newRequest(CommState &cs, const Args &a, collc_plan plan, uint64_t bytes,
                         const Selection &sel, bool staged, bool &cached, int &rc) {
  collc_request req = COLLC_REQUEST_NULL;
  cached = false;
  if (rc = initRequest(a, cs.size, plan, &req); rc != COLLC_SUCCESS)
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
    c.sendcount = a.sendcount;
    c.type = a.type;
    c.op = a.op;
    c.root = hasRoot(collOf(a.kind)) ? a.root : 0;
    c.recvcounts.clear();
    c.sendcounts.clear();
    if (hasCounts(a.kind) || (isVarying(a.kind) && a.recvcounts))
      c.recvcounts.assign(a.recvcounts, a.recvcounts + cs.size);
    if (isVarying(a.kind) && a.sendcounts)
      c.sendcounts.assign(a.sendcounts, a.sendcounts + cs.size);
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

/// A plan's first request on this rank, made (`req`) or refused by the
/// runtime (null: its message is the last error), as this rank's part of the
/// ranks' agreement: COLLC_FAULT=tags or =memory makes it fail here. A
/// failure becomes the slot's error, with a warning. Whether this rank has
/// it (the caller frees a `req` it does not).
bool firstRequest(Global &g, PlanSlot &slot, collc_request req) {
  if (!req)
    slot.error = collc_error_message();
  else if (g.config.fails(Fault::Tags, g.worldRank))
    slot.error = "COLLC_FAULT=tags";
  else if (g.config.fails(Fault::Memory, g.worldRank))
    slot.error = "COLLC_FAULT=memory";
  else
    return true;
  warn(g, std::string("cannot make a request on the ") + name(slot.collective) + " plan " +
              slot.algorithm + ": " + slot.error + "; using native MPI",
       false);
  return false;
}

/// Starts and waits for a blocking execution.
int runBlocking(Global &g, CommState &cs, const Args &a, collc_request req, bool cached,
                const Staging *staging = nullptr) {
  // Every rank is in this blocking call: where a communicator moves to shared
  // memory once its first COLLC_SHM_AFTER executions are done.
  {
    InternalScope internal; // the set-up's own MPI calls go to MPI
    rt::settleTransport(a.comm);
  }
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

namespace {
/// A v-variant's counts (on bytes) as the cached call had them: none, or
/// the same p.
bool sameCounts(const std::vector<int> &kept, const int *counts) {
  return counts ? !kept.empty() && std::equal(kept.begin(), kept.end(), counts) : kept.empty();
}
} // namespace

bool CachedRequest::matches(const Args &a) const {
  return req && kind == a.kind && sendbuf == a.sendbuf && recvbuf == a.recvbuf &&
         count == a.count && type == a.type && op == a.op &&
         (!hasRoot(collOf(kind)) || root == a.root) && !stagesInput(a) &&
         (!hasCounts(kind) ||
          (a.recvcounts && std::equal(recvcounts.begin(), recvcounts.end(), a.recvcounts))) &&
         (!isVarying(kind) || (sameCounts(recvcounts, a.recvcounts) &&
                               sameCounts(sendcounts, a.sendcounts) &&
                               sendcount == a.sendcount));
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
            std::unique_ptr<Staging> staging, PlanSlot &slot, uint64_t bytes,
            const Selection &sel) {
  if (modeOf(a.kind) == Mode::Persistent)
    return initPersistent(g, cs, a, user, std::move(staging), slot.plan, bytes, sel);
  if (isBlocking(a.kind)) {
    bool cached = false;
    int rc = COLLC_ERR_ARG;
    collc_request req =
        slot.plan ? newRequest(cs, a, slot.plan, bytes, sel, bool(staging), cached, rc) : nullptr;
    if (slot.agreed == Agreement::Pending) {
      // The plan's first use on this communicator: its first request is
      // part of what the ranks agree on (memory, a channel longer than the
      // tags), so a rank that cannot run it takes the others to native MPI.
      const bool mine = slot.plan && firstRequest(g, slot, req);
      if (!agreeSlot(g, cs, a.comm, slot, mine)) {
        if (req) {
          if (cached)
            dropCached(cs, req);
          (void)collc_request_free(&req);
        }
        return fallback(g, user, &cs, Reason::NoPlan, slot.error);
      }
    }
    if (!req)
      return refused(g, user, cs, rc);
    if (g.config.debug)
      logDecision(g, a, &cs, sel.detail);
    if (int rc2 = runBlocking(g, cs, a, req, cached, staging.get()); rc2 != MPI_SUCCESS)
      return rc2;
  } else {
    collc_request req = COLLC_REQUEST_NULL;
    if (int rc = initRequest(a, cs.size, slot.plan, &req); rc != COLLC_SUCCESS)
      return refused(g, user, cs, rc);
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

int startTurn(Global &g, const CommState &cs, const Args &a, collc_request req,
              Staging *staging) {
  if ((staging && staging->pack() != MPI_SUCCESS) || stageInput(a) != MPI_SUCCESS)
    return MPI_ERR_OTHER;
  const int rc = collc_start(req);
  if (rc == COLLC_ERR_STATE)
    return turnWait;
  if (rc == COLLC_SUCCESS)
    return MPI_SUCCESS;
  std::fprintf(stderr, "collc: [rank %d] %s on comm %" PRIu64 " failed: collc_start: %s\n",
               g.worldRank, kindName(a.kind), cs.id, collc_error_message());
  return MPI_ERR_OTHER;
}

namespace {

/// Runs native MPI's non-blocking collective for `d`'s call on the private
/// duplicate, where only such calls run, each in turn on every rank.
void startNative(Global &g, CommState &cs, Deferred &d, Pending &p, Reason why) {
  if (d.req)
    (void)collc_request_free(&d.req);
  p.staging.reset(); // native MPI works on the user's buffers
  noteFallback(g, d.user, &cs, why, d.slot ? d.slot->error : "");
  if (int rc = nativeStart(d.user, cs.dup, &p.native); rc != MPI_SUCCESS) {
    p.native = MPI_REQUEST_NULL;
    p.error = rc;
    p.failed = true;
  }
}

/// Makes the plan's request for the non-blocking call `d` in turn (if it
/// has none yet) and starts it — natively if the runtime refuses the call.
/// False if it cannot start yet (the tag window is full: try again at the
/// next progress).
bool startOnPlan(Global &g, CommState &cs, Deferred &d) {
  Pending &p = *d.pending;
  if (!d.req)
    if (int rc = initRequest(d.a, cs.size, d.slot->plan, &d.req); rc != COLLC_SUCCESS) {
      d.req = nullptr;
      // The same on every rank (the call's arguments): native MPI serves it.
      if (rc == COLLC_ERR_ARG || rc == COLLC_ERR_UNSUPPORTED) {
        startNative(g, cs, d, p, Reason::Refused);
        return true;
      }
      std::fprintf(stderr, "collc: [rank %d] %s on comm %" PRIu64 " failed: %s\n",
                   g.worldRank, kindName(d.a.kind), cs.id, collc_error_message());
      p.error = rc == COLLC_ERR_NOMEM ? MPI_ERR_NO_MEM : MPI_ERR_OTHER;
      p.failed = true;
      return true;
    }
  if (const int rc = startTurn(g, cs, d.a, d.req, p.staging.get()); rc == turnWait) {
    return false;
  } else if (rc != MPI_SUCCESS) {
    (void)collc_request_free(&d.req);
    p.error = rc;
    p.failed = true;
    return true;
  }
  p.req = d.req;
  d.req = nullptr;
  countHandled(g, cs, d.a.kind, d.sel.substitution, d.sel.fileId, d.sel.algorithm, d.bytes);
  return true;
}


/// The call at the queue's head, whose turn it is: started on its plan or
/// natively, its execution listed in cs.pending. False if it must wait.
bool runTurn(Global &g, CommState &cs, Deferred &d) {
  if (d.call)
    return startPersistentTurn(g, cs, d);
  Pending &p = *d.pending;
  if (d.slot->agreed == Agreement::Everywhere) {
    if (!startOnPlan(g, cs, d))
      return false; // the tag window: later
  } else {
    startNative(g, cs, d, p, Reason::NoPlan);
  }
  cs.pending.push_back(&p);
  return true;
}

/// Starts the calls in turn that can start, oldest first. Under cs.pendingMu.
int advanceQueue(Global &g, CommState &cs) {
  int events = 0;
  while (!cs.queue.empty()) {
    Deferred *d = cs.queue.front();
    if (d->slot && !settleAgreement(g, cs, *d->slot, /*wait=*/false))
      break;
    if (!runTurn(g, cs, *d))
      break;
    cs.queue.pop_front();
    delete d;
    ++events;
  }
  return events;
}

} // namespace

void enqueue(Global &g, CommState &cs, std::unique_ptr<Deferred> d) {
  if (!cs.listed) {
    std::lock_guard<std::mutex> lock(g.activeMu);
    g.active.push_back(&cs);
    cs.listed = true;
  }
  std::lock_guard<std::mutex> lock(cs.pendingMu);
  NoProgress noProgress;
  cs.queue.push_back(d.release());
  cs.pendingCount.fetch_add(1, std::memory_order_acq_rel);
  g.pendingTotal.fetch_add(1, std::memory_order_acq_rel);
  advanceQueue(g, cs);
}

/// The plan's first use on `cs` by a call in turn: makes its request
/// (firstRequest: part of what this rank agrees to) and starts the agreement.
void firstUse(Global &g, CommState &cs, Deferred &d) {
  PlanSlot &slot = *d.slot;
  if (slot.agreed != Agreement::Pending || slot.posted)
    return;
  bool ok = false;
  if (slot.plan) {
    if (initRequest(d.a, cs.size, slot.plan, &d.req) != COLLC_SUCCESS)
      d.req = nullptr;
    ok = firstRequest(g, slot, d.req);
    if (!ok && d.req)
      (void)collc_request_free(&d.req);
  }
  std::lock_guard<std::mutex> lock(cs.pendingMu);
  NoProgress noProgress;
  postAgreement(g, cs, d.user.comm, slot, ok);
}

std::unique_ptr<Deferred> deferred(const Args &a, const Args &user, int size, PlanSlot *slot,
                                   const Selection &sel, uint64_t bytes) {
  auto d = std::make_unique<Deferred>();
  d->a = a;
  d->user = user;
  if (hasCounts(a.kind) && user.recvcounts) {
    d->recvcounts.assign(user.recvcounts, user.recvcounts + size);
    d->a.recvcounts = d->user.recvcounts = d->recvcounts.data();
  }
  if (hasDispls(a.kind) && user.displs) { // the run's counts are in bytes
    d->displs.assign(user.displs, user.displs + size);
    d->user.displs = d->displs.data();
    d->byteCounts.assign(a.recvcounts, a.recvcounts + size);
    d->a.recvcounts = d->byteCounts.data();
  }
  if (isVarying(a.kind)) // (the view's displacements are null: its blocks lie in a row)
    for (const int **array : {&d->user.recvcounts, &d->user.displs, &d->user.sendcounts,
                              &d->user.sdispls, &d->a.recvcounts, &d->a.sendcounts})
      if (*array) {
        *array = d->arrays.emplace_back(*array, *array + size).data();
      }
  d->slot = slot;
  d->sel = sel;
  d->bytes = bytes;
  return d;
}

int inTurn(Global &g, CommState &cs, const Args &a, const Args &user,
           std::unique_ptr<Staging> staging, PlanSlot &slot, uint64_t bytes,
           const Selection &sel) {
  std::unique_ptr<Deferred> d = deferred(a, user, cs.size, &slot, sel, bytes);
  const bool persistent = modeOf(a.kind) == Mode::Persistent;
  firstUse(g, cs, *d);
  cs.window = true;
  if (persistent)
    return initInTurn(g, cs, std::move(d), std::move(staging));
  auto p = std::make_unique<Pending>();
  p->staging = std::move(staging);
  if (int rc = PMPI_Grequest_start(collcQuery, collcFree, collcCancel, p.get(), &p->greq);
      rc != MPI_SUCCESS) {
    // Nothing of this call has started here, but the agreement may have:
    // the others would wait for this rank, so the error is raised.
    if (d->req)
      (void)collc_request_free(&d->req);
    return fatal(g, user, cs, "MPI_Grequest_start", rc);
  }
  if (g.config.debug)
    logDecision(g, a, &cs, "in turn (" + sel.detail + ")");
  *user.request = p->greq;
  d->pending = p.release();
  enqueue(g, cs, std::move(d));
  return MPI_SUCCESS;
}

void finishTurns(Global &g, CommState &cs) {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(cs.pendingMu);
      NoProgress noProgress;
      advanceQueue(g, cs);
      if (cs.queue.empty())
        break;
    }
    if (progressPending(g) == 0)
      sched_yield();
  }
  // Agreements no call waits for (a persistent request not started yet):
  // settled now, so that from here on every rank sees the same.
  {
    std::lock_guard<std::mutex> lock(cs.pendingMu);
    NoProgress noProgress;
    for (PlanSlot &p : cs.plans)
      if (p.posted && p.agreed == Agreement::Pending)
        settleAgreement(g, cs, p, /*wait=*/true);
  }
  cs.window = false;
}

} // namespace collc::dropin
