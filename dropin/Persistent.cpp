// dropin/Persistent.cpp: persistent collectives on plans (Persistent.h).
#include "dropin/Persistent.h"

#include "dropin/ByteView.h"

#include "dropin/Requests.h"
#include "dropin/Serve.h"
#include "dropin/Startup.h"

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
  default:
    return MPI_ERR_INTERN;
  }
#else
  (void)a;
  return MPI_ERR_INTERN; // no persistent collectives to intercept
#endif
}

int initPersistent(Global &g, CommState &cs, const Args &a, const Args &user,
                   std::unique_ptr<Staging> staging, collc_plan plan, uint64_t bytes,
                   const Selection &sel) {
  auto p = std::make_unique<PersistentCall>();
  if (initRequest(a, cs.size, plan, &p->req) != COLLC_SUCCESS)
    return fallback(g, user, &cs, Reason::Refused, collc_error_message());
  p->staging = std::move(staging);
  p->args = a;
  p->args.recvcounts = nullptr;
  p->args.request = nullptr;
  if (stagesInput(p->args))
    p->sendtype.hold(p->args.sendtype);
  Registry &r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mu);
    int rc = newTag(r, p->tag);
    if (rc == MPI_SUCCESS)
      rc = PMPI_Recv_init(nullptr, 0, MPI_BYTE, 0, p->tag, r.self, &p->handle);
    if (rc != MPI_SUCCESS) {
      (void)collc_request_free(&p->req);
      return fallback(g, user, &cs, Reason::Refused, "cannot make the persistent request");
    }
    r.calls.emplace(p->handle, p.get());
    r.size.fetch_add(1, std::memory_order_release);
  }
  if (g.config.debug)
    logDecision(g, a, &cs, sel.detail);
  *a.request = p.release()->handle;
  countHandled(g, cs, a.kind, sel.substitution, sel.fileId, sel.algorithm, bytes);
  return MPI_SUCCESS;
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
