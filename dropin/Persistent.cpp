// dropin/Persistent.cpp: persistent collectives on plans (Persistent.h).
#include "dropin/Persistent.h"

#include "dropin/ByteView.h"

#include "dropin/Requests.h"
#include "dropin/Serve.h"
#include "dropin/Startup.h"

#include <cinttypes>
#include <cstdio>
#include <unordered_map>

namespace collc::dropin {

namespace {

/// collc's persistent requests by the user's handle, and the private
/// duplicate of MPI_COMM_SELF their completion messages use.
struct Registry {
  std::mutex mu;
  std::unordered_map<MPI_Request, PersistentCall *> calls;
  std::atomic<size_t> size{0};
  MPI_Comm self = MPI_COMM_NULL;
  int tagUb = 32767;
  int nextTag = 0;
};

Registry &registry() {
  static Registry *r = new Registry; // never freed: requests may outlive MPI_Finalize
  return *r;
}

PersistentCall *find(MPI_Request request) {
  Registry &r = registry();
  if (r.size.load(std::memory_order_acquire) == 0 || request == MPI_REQUEST_NULL)
    return nullptr;
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.calls.find(request);
  return it == r.calls.end() ? nullptr : it->second;
}

/// The self communicator and a tag no live request uses. Under r.mu.
int newTag(Registry &r, int &tag) {
  if (r.self == MPI_COMM_NULL) {
    // MPI_COMM_SELF has this process alone: duplicating it blocks on nothing.
    if (int rc = PMPI_Comm_dup(MPI_COMM_SELF, &r.self); rc != MPI_SUCCESS)
      return rc;
    int *ub = nullptr, found = 0;
    if (PMPI_Comm_get_attr(r.self, MPI_TAG_UB, &ub, &found) == MPI_SUCCESS && found && ub)
      r.tagUb = *ub;
  }
  for (;;) { // fewer live requests than tags: ends
    tag = r.nextTag;
    r.nextTag = r.nextTag == r.tagUb ? 0 : r.nextTag + 1;
    bool used = false;
    for (const auto &[h, p] : r.calls)
      used = used || p->tag == tag;
    if (!used)
      return MPI_SUCCESS;
  }
}

} // namespace

int nativeInit(const Args &a) {
#if COLLC_HAVE_PERSISTENT
  switch (a.kind) {
  case Kind::AllreduceInit:
    return COLLC_PINIT(Allreduce)(a.sendbuf, a.recvbuf, a.count, a.type, a.op, a.comm, a.info,
                                a.request);
  case Kind::ReduceInit:
    return COLLC_PINIT(Reduce)(a.sendbuf, a.recvbuf, a.count, a.type, a.op, a.root, a.comm,
                             a.info, a.request);
  case Kind::ReduceScatterBlockInit:
    return COLLC_PINIT(Reduce_scatter_block)(a.sendbuf, a.recvbuf, a.count, a.type, a.op, a.comm,
                                           a.info, a.request);
  case Kind::ReduceScatterInit:
    return COLLC_PINIT(Reduce_scatter)(a.sendbuf, a.recvbuf, a.recvcounts, a.type, a.op, a.comm,
                                     a.info, a.request);
  case Kind::ScanInit:
    return COLLC_PINIT(Scan)(a.sendbuf, a.recvbuf, a.count, a.type, a.op, a.comm, a.info,
                           a.request);
  case Kind::ExscanInit:
    return COLLC_PINIT(Exscan)(a.sendbuf, a.recvbuf, a.count, a.type, a.op, a.comm, a.info,
                             a.request);
  case Kind::AllgatherInit:
    return COLLC_PINIT(Allgather)(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.count, a.type,
                                a.comm, a.info, a.request);
  case Kind::BcastInit:
    return COLLC_PINIT(Bcast)(a.recvbuf, a.count, a.type, a.root, a.comm, a.info, a.request);
  case Kind::AllgathervInit:
    return COLLC_PINIT(Allgatherv)(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.recvcounts,
                                   a.displs, a.type, a.comm, a.info, a.request);
  case Kind::AlltoallInit:
    return COLLC_PINIT(Alltoall)(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.count, a.type,
                                 a.comm, a.info, a.request);
  case Kind::GatherInit:
    return COLLC_PINIT(Gather)(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.count, a.type,
                               a.root, a.comm, a.info, a.request);
  case Kind::ScatterInit:
    return COLLC_PINIT(Scatter)(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.count, a.type,
                                a.root, a.comm, a.info, a.request);
  case Kind::GathervInit:
    return COLLC_PINIT(Gatherv)(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.recvcounts,
                                a.displs, a.type, a.root, a.comm, a.info, a.request);
  case Kind::ScattervInit:
    return COLLC_PINIT(Scatterv)(a.sendbuf, a.sendcounts, a.sdispls, a.sendtype, a.recvbuf,
                                 a.count, a.type, a.root, a.comm, a.info, a.request);
  case Kind::AlltoallvInit:
    return COLLC_PINIT(Alltoallv)(a.sendbuf, a.sendcounts, a.sdispls, a.sendtype, a.recvbuf,
                                  a.recvcounts, a.displs, a.type, a.comm, a.info, a.request);
  case Kind::BarrierInit:
    return COLLC_PINIT(Barrier)(a.comm, a.info, a.request);
  default:
    return MPI_ERR_INTERN;
  }
#else
  (void)a;
  return MPI_ERR_INTERN; // no persistent collectives to intercept
#endif
}

namespace {

/// Gives `p` its handle (a receive on the self duplicate) and registers it;
/// the user gets the handle in *request.
int registerCall(Global &g, CommState &cs, const Args &a, std::unique_ptr<PersistentCall> p,
                 MPI_Request *request) {
  p->args.request = nullptr;
  if (stagesInput(p->args))
    p->sendtype.hold(p->args.sendtype);
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  int rc = newTag(r, p->tag);
  if (rc == MPI_SUCCESS)
    rc = PMPI_Recv_init(nullptr, 0, MPI_BYTE, 0, p->tag, r.self, &p->handle);
  if (rc != MPI_SUCCESS) {
    // This rank's alone (the other ranks have theirs): never native alone.
    if (p->req)
      (void)collc_request_free(&p->req);
    return fatal(g, a, cs, "MPI_Recv_init for the persistent request", rc);
  }
  r.calls.emplace(p->handle, p.get());
  r.size.fetch_add(1, std::memory_order_release);
  *request = p.release()->handle;
  return MPI_SUCCESS;
}

} // namespace

int initPersistent(Global &g, CommState &cs, const Args &a, const Args &user,
                   std::unique_ptr<Staging> staging, collc_plan plan, uint64_t bytes,
                   const Selection &sel) {
  auto p = std::make_unique<PersistentCall>();
  if (int rc = initRequest(a, cs.size, plan, &p->req); rc != COLLC_SUCCESS)
    return refused(g, user, cs, rc);
  p->staging = std::move(staging);
  p->args = a;
  p->args.recvcounts = p->args.sendcounts = nullptr; // bound already
  p->args.displs = p->args.sdispls = nullptr;
  if (int rc = registerCall(g, cs, a, std::move(p), a.request); rc != MPI_SUCCESS)
    return rc;
  if (g.config.debug)
    logDecision(g, a, &cs, sel.detail);
  countHandled(g, cs, a.kind, sel.substitution, sel.fileId, sel.algorithm, bytes);
  return MPI_SUCCESS;
}

int initInTurn(Global &g, CommState &cs, std::unique_ptr<Deferred> d,
               std::unique_ptr<Staging> staging) {
  auto p = std::make_unique<PersistentCall>();
  p->staging = std::move(staging);
  p->args = d->a; // its recvcounts point into d, which p keeps
  const Args user = d->user;
  if (g.config.debug)
    logDecision(g, d->a, &cs, "bound at its first run, in turn (" + d->sel.detail + ")");
  p->lazy = std::move(d);
  return registerCall(g, cs, user, std::move(p), user.request);
}

bool startPersistentTurn(Global &g, CommState &cs, Deferred &d) {
  PersistentCall &c = *d.call;
  auto run = std::make_unique<Pending>();
  run->owner = &c;
  // A run that fails here still completes through progress (counted in
  // cs.pendingCount since it was queued), with its error.
  auto failed = [&](int error) {
    run->failed = true;
    run->error = error;
    cs.pending.push_back(run.release());
    return true;
  };
  if (c.lazy && !c.req && !c.native) {
    Deferred &t = *c.lazy;
    if (t.slot->agreed == Agreement::Everywhere && t.req) { // made at the _init
      c.req = t.req;
      t.req = nullptr;
      countHandled(g, cs, c.args.kind, t.sel.substitution, t.sel.fileId, t.sel.algorithm,
                   t.bytes);
    } else if (t.slot->agreed == Agreement::Everywhere) {
      if (int rc = initRequest(c.args, cs.size, t.slot->plan, &c.req); rc != COLLC_SUCCESS) {
        if (rc != COLLC_ERR_ARG && rc != COLLC_ERR_UNSUPPORTED) {
          std::fprintf(stderr, "collc: [rank %d] %s on comm %" PRIu64 " failed: %s\n",
                       g.worldRank, kindName(c.args.kind), cs.id, collc_error_message());
          return failed(rc == COLLC_ERR_NOMEM ? MPI_ERR_NO_MEM : MPI_ERR_OTHER);
        }
        c.native = true;
        noteFallback(g, t.user, &cs, Reason::Refused, collc_error_message());
      } else {
        countHandled(g, cs, c.args.kind, t.sel.substitution, t.sel.fileId, t.sel.algorithm,
                     t.bytes);
      }
    } else {
      if (t.req)
        (void)collc_request_free(&t.req);
      c.native = true;
      noteFallback(g, t.user, &cs, Reason::NoPlan, t.slot->error);
    }
  }
  if (c.req) {
    if (const int rc = startTurn(g, cs, c.args, c.req, c.staging.get()); rc == turnWait)
      return false;
    else if (rc != MPI_SUCCESS)
      return failed(rc);
    run->req = c.req;
    run->staging = c.staging;
  } else if (int rc = nativeStart(c.lazy->user, cs.dup, &run->native); rc != MPI_SUCCESS) {
    run->native = MPI_REQUEST_NULL;
    return failed(rc);
  }
  cs.pending.push_back(run.release());
  return true;
}

bool startPersistent(MPI_Request *request, int &rc) {
  if (!request)
    return false;
  PersistentCall *p = find(*request);
  if (!p)
    return false;
  Global *gp = activeGlobal();
  CommState *cs = gp ? findState(*gp, p->args.comm) : nullptr;
  if (!cs) { // MPI_Finalize has run, or the communicator is gone
    rc = MPI_ERR_REQUEST;
    return true;
  }
  Global &g = *gp;
  InternalScope internal;
  if (p->active) {
    rc = MPI_ERR_REQUEST; // MPI: starting an active request is erroneous
    return true;
  }
  if (cs->window || p->lazy) { // in turn (Requests.h)
    p->active = true;
    p->error = MPI_SUCCESS;
    if (rc = PMPI_Start(&p->handle); rc != MPI_SUCCESS)
      return true;
    auto d = std::make_unique<Deferred>();
    d->call = p;
    d->slot = p->lazy ? p->lazy->slot : nullptr;
    enqueue(g, *cs, std::move(d));
    rc = MPI_SUCCESS;
    return true;
  }
  if ((p->staging && p->staging->pack() != MPI_SUCCESS) || stageInput(p->args) != MPI_SUCCESS ||
      start(g, *cs, p->req) != COLLC_SUCCESS) {
    rc = fatal(g, p->args, *cs, "collc_start");
    return true;
  }
  p->active = true;
  p->error = MPI_SUCCESS;
  if (rc = PMPI_Start(&p->handle); rc != MPI_SUCCESS)
    return true;
  auto pending = std::make_unique<Pending>();
  pending->req = p->req;
  pending->owner = p;
  pending->staging = p->staging;
  addPending(g, *cs, pending.release());
  rc = MPI_SUCCESS;
  return true;
}

void signalDone(PersistentCall &p, int error) {
  p.error = error;
  p.active = false;
  Registry &r = registry();
  MPI_Request send = MPI_REQUEST_NULL;
  // The receive is posted (MPI_Start did it first): the message completes it.
  if (PMPI_Isend(nullptr, 0, MPI_BYTE, 0, p.tag, r.self, &send) == MPI_SUCCESS)
    PMPI_Request_free(&send);
}

bool freePersistent(MPI_Request *request, int &rc) {
  if (!request)
    return false;
  PersistentCall *p = find(*request);
  if (!p)
    return false;
  Global *gp = activeGlobal();
  InternalScope internal;
  if (p->active && gp)
    if (CommState *cs = findState(*gp, p->args.comm))
      drain(*gp, *cs);
  if (!p->active)
    (void)collc_request_free(&p->req);
  if (p->lazy && p->lazy->req) // made at the _init, never started
    (void)collc_request_free(&p->lazy->req);
  {
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.calls.erase(p->handle);
    r.size.fetch_sub(1, std::memory_order_release);
  }
  // An active receive completes once its message comes (it has, after the
  // drain); MPI frees it then.
  rc = PMPI_Request_free(&p->handle);
  *request = MPI_REQUEST_NULL;
  if (!p->req)
    delete p;
  return true;
}

} // namespace collc::dropin
