// runtime/api/Execution.cpp: executing plans — combiners, requests (binding a
// call to a plan, tags, starting and progressing) and the execution entry
// points of the C API.
#include "runtime/api/Execution.h"

#include "runtime/api/CommState.h"
#include "runtime/api/Handles.h"

#include "runtime/kernels/MpiTypes.h"
#include "runtime/mpi/MpiTransport.h"
#include "runtime/shm/ShmNode.h"

#include <climits>
#include <cstring>
#include <new>

using namespace collc::rt;
using namespace collc::rt::detail;

namespace {

// --- combiners -----------------------------------------------------------------

struct CombineCtx {
  KernelFn kernel = nullptr;
  MPI_Op op = MPI_OP_NULL;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  size_t extent = 0;
};

void kernelCombine(const void *ctx, const void *a, const void *b, void *dst, size_t n, void *) {
  static_cast<const CombineCtx *>(ctx)->kernel(a, b, dst, n);
}

/// MPI_Reduce_local(in, inout) computes inout = in ∘ inout.
void reduceLocal(const CombineCtx &c, const void *in, void *inout, size_t n) {
  const char *x = static_cast<const char *>(in);
  char *y = static_cast<char *>(inout);
  while (n) {
    int k = n > size_t(INT_MAX) ? INT_MAX : int(n);
    MPI_Reduce_local(x, y, k, c.type, c.op);
    x += size_t(k) * c.extent;
    y += size_t(k) * c.extent;
    n -= size_t(k);
  }
}

// dst = a ∘ b through MPI_Reduce_local, keeping the operand order — also for
// a commutative operation: a user's "commutative" function may still give
// other bits for b ∘ a (floating point, compensated sums), and ranks that
// computed the same plan must hold the same bits (docs/plan-format.md,
// "Identical results").
void userCombine(const void *ctx, const void *a, const void *b, void *dst, size_t n,
                 void *scratch) {
  const CombineCtx &c = *static_cast<const CombineCtx *>(ctx);
  const size_t bytes = n * c.extent;
  if (dst == b) {
    reduceLocal(c, a, dst, n);
  } else if (dst == a) {
    std::memcpy(scratch, b, bytes);
    reduceLocal(c, a, scratch, n);
    std::memcpy(dst, scratch, bytes);
  } else {
    std::memcpy(dst, b, bytes);
    reduceLocal(c, a, dst, n);
  }
}

} // namespace

// --- requests ------------------------------------------------------------------

struct collc_request_s {
  collc_plan plan = nullptr;
  CommState *comm = nullptr;
  CallPlan how;
  CombineCtx ctx;
  std::unique_ptr<MpiTransport> remote; ///< MPI under ShmTransport (peers off the node)
  std::unique_ptr<Transport> transport;
  Executor exec;
  ScratchPtr inCopy;
  ScratchPtr outScratch; ///< CallPlan::scratchOut
  size_t inBytes = 0;
  const void *inSource = nullptr; ///< what inCopy copies at each start
  bool persistent = false;
  bool active = false;
  /// What the executor is bound to, kept to bind it again to another
  /// transport (CommState::shmGeneration): the rank's program, the buffers,
  /// the combiner, and the generation it was bound at.
  const PreparedRank *prep = nullptr;
  Buffers bufs;
  Combiner combine;
  uint32_t shmGeneration = 0;
  /// This start has been counted toward setting up shared memory (a start
  /// refused for a tag wrap is tried again, and counted once).
  bool startCounted = false;
  /// Kept by CommState::lastBlocking: not counted as a request of the plan
  /// (which may be freed; `call` and `planId` then no longer match).
  bool cached = false;
  Call call;
  uint64_t planId = 0;
  /// Per channel of the prepared rank: its CommState::nextTag entry, and the
  /// bases of the current execution.
  std::vector<uint64_t *> nextTag;
  std::vector<uint32_t> tagLength;
  std::vector<int> tagBase;
  /// The call's user operation and derived datatype, held while the request
  /// exists (Handles.h), or null handles.
  MPI_Op heldOp = MPI_OP_NULL;
  MPI_Datatype heldType = MPI_DATATYPE_NULL;

  ~collc_request_s() {
    if (plan && !cached)
      countRequest(plan, -1);
    transport.reset(); // before the communicator it sends on may go
    remote.reset();
    releaseCommState(comm);
    if (heldOp != MPI_OP_NULL)
      releaseOp(heldOp);
    if (heldType != MPI_DATATYPE_NULL)
      releaseType(heldType);
  }
};

namespace collc::rt::detail {
void deleteRequest(collc_request_s *req) { delete req; }
} // namespace collc::rt::detail

namespace {

/// Binds `req`'s executor to a transport on its communicator: shared memory
/// where it is set up and an element fits a segment, else MPI. Not while the
/// request is active.
Status bindTransport(collc_request_s *req) {
  const CommState &cs = *req->comm;
  const Call &call = req->call;
  const size_t extent = req->how.extent;
  const bool shmFits = cs.shm && extent <= cs.shm->endpoint->config().slotBytes;
  if (cs.shm && !shmFits)
    shmFallback(call.comm, "an element of " + std::to_string(extent) +
                               " bytes is larger than a shared-memory segment");
  std::unique_ptr<MpiTransport> remote;
  std::unique_ptr<Transport> transport;
  if (shmFits) {
    if (cs.shm->remotePeers)
      remote = std::make_unique<MpiTransport>(cs.dup, call.type, cs.tagUb);
    transport = std::make_unique<ShmTransport>(*cs.shm->endpoint, cs.shm->localOf.data(),
                                               remote.get(), extent, cs.tagUb, cs.shmDirect);
  } else {
    transport = std::make_unique<MpiTransport>(cs.dup, call.type, cs.tagUb);
  }
  if (Status s = req->exec.bind(*req->prep, req->bufs, req->combine, *transport); !s.ok()) {
    if (req->transport) // bound before: stay on that transport, as the peers may not move
      (void)req->exec.bind(*req->prep, req->bufs, req->combine, *req->transport);
    return s;
  }
  req->transport = std::move(transport); // after the executor let go of the old one
  req->remote = std::move(remote);
  req->shmGeneration = cs.shmGeneration;
  return Status::success();
}

/// Whether a run of `call` with count 0 is skipped (Buffers::skipEmpty):
/// not where a rank knows only its own blocks (the v-variants), nor for a
/// barrier, whose zero-byte messages are the point.
bool skipsEmpty(const Call &call) {
  return !call.varying && call.collective != Collective::Barrier;
}

/// A request for `call`. `hold`: the request outlives the call that made it
/// (non-blocking or persistent), so it holds the call's user operation and
/// derived datatype until it is freed.
int makeRequest(collc_plan plan, const Call &call, bool persistent, bool hold,
                collc_request_s *&out) {
  out = nullptr;
  if (!plan)
    return fail(COLLC_ERR_ARG, "the plan is COLLC_PLAN_NULL");
  const LoadedPlan &lp = loadedOf(plan);
  auto req = std::unique_ptr<collc_request_s>(new (std::nothrow) collc_request_s);
  if (!req)
    return fail(COLLC_ERR_NOMEM, "out of memory");
  if (Status s = analyzeCall(lp.shape, lp.shape.inPlace, call, req->how); !s.ok())
    return failStatus(s, s.code() == ErrorCode::Unsupported ? COLLC_ERR_UNSUPPORTED
                                                            : COLLC_ERR_ARG);
  if (!lp.runsOn(uint32_t(req->how.rank)))
    return fail(COLLC_ERR_ARG, "the plan is a partial plan of rank " + std::to_string(lp.own) +
                                   "'s program; this is rank " +
                                   std::to_string(req->how.rank) + " of the communicator");
  req->plan = plan;
  req->call = call;
  req->planId = planId(plan);
  countRequest(plan, +1);
  if (Status s = commState(call.comm, req->comm); !s.ok())
    return failStatus(s, COLLC_ERR_MPI);
  ++req->comm->refs;
  const CallPlan &how = req->how;
  if (hold) {
    if (holdOp(call.op))
      req->heldOp = call.op;
    if (holdType(call.type))
      req->heldType = call.type;
  }
  req->ctx = CombineCtx{how.kernel, call.op, call.type, how.extent};
  Combiner combine{how.kernel ? kernelCombine : userCombine, &req->ctx};

  Buffers b;
  b.count = size_t(how.total);
  b.extent = how.extent;
  b.blockStart = how.blockStart.empty() ? nullptr : how.blockStart.data();
  b.outBlockStart = how.outBlockStart.empty() ? nullptr : how.outBlockStart.data();
  b.onlyBlock = how.onlyBlock;
  b.skipEmpty = skipsEmpty(call);
  b.out = how.hasOut ? call.recvbuf : nullptr;
  if (how.scratchOut) {
    req->outScratch = takeScratch(size_t(how.outElems) * b.extent + 1);
    if (!req->outScratch)
      return fail(COLLC_ERR_NOMEM, "out of memory for the plan's private out (exscan's rank 0 without a recvbuf, scatter's root in place)");
    b.out = req->outScratch.get();
  }
  // In place, `in` is `out` itself (the executor aliases the slots as the
  // plan's layout says) unless the input is copied aside.
  b.in = !how.hasIn ? nullptr : how.inPlace ? call.recvbuf : call.sendbuf;
  req->inSource = how.inAt;
  if (how.copyInput) {
    req->inBytes = size_t(how.inElems) * b.extent;
    req->inCopy = takeScratch(req->inBytes + 1);
    if (!req->inCopy)
      return fail(COLLC_ERR_NOMEM, "out of memory for the copy of the in-place input");
    b.in = req->inCopy.get();
  }
  const PreparedRank &prep = preparedOf(plan, uint32_t(how.rank));
  req->prep = &prep;
  req->bufs = b;
  req->combine = combine;
  if (Status s = bindTransport(req.get()); !s.ok())
    return failStatus(s, COLLC_ERR_UNSUPPORTED);
  for (const Channel &ch : prep.channels) {
    req->nextTag.push_back(&req->comm->nextTag[uint64_t(ch.peer) << 1 | (ch.send ? 1 : 0)]);
    req->tagLength.push_back(ch.messages);
  }
  req->tagBase.assign(prep.channels.size(), 0);
  req->persistent = persistent;
  out = req.release();
  return COLLC_SUCCESS;
}

void finished(collc_request_s *req) {
  req->active = false;
  --req->comm->live;
}

/// Starts `req`; `blocking`: the caller waits for it at once (the executor
/// may then run it to its end here: Executor::startBlocking).
int startRequest(collc_request_s *req, bool blocking = false) {
  if (req->active)
    return fail(COLLC_ERR_STATE, "collc_start: the request is still active");
  CommState &c = *req->comm;
  if (!req->startCounted) {
    req->startCounted = true;
    countStart(c);
  }
  if (req->shmGeneration != c.shmGeneration)
    if (Status s = bindTransport(req); !s.ok())
      return failStatus(s, s.code() == ErrorCode::Unsupported ? COLLC_ERR_UNSUPPORTED
                                                              : COLLC_ERR_NOMEM);
  const uint64_t tags = uint64_t(c.tagUb) + 1;
  for (size_t i = 0; i < req->nextTag.size(); ++i)
    if (*req->nextTag[i] + req->tagLength[i] > tags && c.live.load() != 0)
      return fail(COLLC_ERR_STATE,
                  "the communicator's tags (MPI_TAG_UB = " + std::to_string(c.tagUb) +
                      ") wrap around while " + std::to_string(c.live.load()) +
                      " executions are still in flight; wait for them first");
  for (size_t i = 0; i < req->nextTag.size(); ++i) {
    uint64_t &next = *req->nextTag[i];
    const uint32_t len = req->tagLength[i];
    if (next + len > tags)
      next = 0;
    req->tagBase[i] = static_cast<int>(next);
    next += len;
  }
  req->startCounted = false;
  ++c.live;
  if (req->inCopy)
    std::memcpy(req->inCopy.get(), req->inSource, req->inBytes);
  req->active = true;
  if (Status s = blocking ? req->exec.startBlocking(req->tagBase)
                          : req->exec.startAt(req->tagBase);
      !s.ok()) {
    finished(req);
    req->transport->abandon();
    return failStatus(s, COLLC_ERR_MPI);
  }
  return COLLC_SUCCESS;
}

int progress(collc_request *request, int *flag, bool block) {
  if (!request || !*request)
    return fail(COLLC_ERR_ARG, "the request is COLLC_REQUEST_NULL");
  collc_request_s *req = *request;
  if (!req->active) {
    if (flag)
      *flag = 1;
    return req->persistent ? COLLC_SUCCESS
                           : fail(COLLC_ERR_STATE, "the request is not active");
  }
  bool done = false;
  Status s = block ? req->exec.wait() : req->exec.test(done);
  done = done || block;
  if (!s.ok()) {
    req->transport->abandon();
    finished(req);
    if (!req->persistent) {
      delete req;
      *request = COLLC_REQUEST_NULL;
    }
    return failStatus(s, COLLC_ERR_MPI);
  }
  if (flag)
    *flag = done;
  if (done) {
    finished(req);
    if (!req->persistent) {
      delete req;
      *request = COLLC_REQUEST_NULL;
    }
  }
  return COLLC_SUCCESS;
}

Call makeCall(Collective c, const void *sendbuf, void *recvbuf, MPI_Count count,
              MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  Call call;
  call.collective = c;
  call.sendbuf = sendbuf;
  call.recvbuf = recvbuf;
  call.count = count;
  call.type = type;
  call.op = op;
  call.root = root;
  call.comm = comm;
  return call;
}

/// Whether `req` was bound for exactly this call.
bool sameCall(const collc_request_s *req, collc_plan plan, const Call &call) {
  const Call &c = req->call;
  return !call.varying && !call.recvcounts && req->planId == planId(plan) &&
         c.collective == call.collective &&
         c.sendbuf == call.sendbuf && c.recvbuf == call.recvbuf && c.count == call.count &&
         c.type == call.type && c.op == call.op && c.root == call.root;
}

int runCached(collc_request_s *req, CommState *state) {
  if (int rc = startRequest(req, /*blocking=*/true); rc != COLLC_SUCCESS) { // do not reuse it either
    deleteRequest(state->lastBlocking);
    state->lastBlocking = nullptr;
    return rc;
  }
  collc_request handle = req;
  int rc = progress(&handle, nullptr, true);
  if (rc != COLLC_SUCCESS) { // do not reuse a request whose run failed
    deleteRequest(state->lastBlocking);
    state->lastBlocking = nullptr;
  }
  return rc;
}

int blocking(collc_plan plan, const Call &call) {
  CommState *last = lastCommState(call.comm);
  if (!last && plan && call.comm != MPI_COMM_NULL && !commState(call.comm, last).ok())
    last = nullptr;
  if (last && last->shmStartsLeft == 1)
    settleShm(*last); // every rank is in this call: shared memory is due
  // Fast path: the same call as last time on this communicator.
  if (CommState *state = last;
      plan && state && state->lastBlocking && sameCall(state->lastBlocking, plan, call))
    return runCached(state->lastBlocking, state);
  // Handles that cannot be freed and made again under the same value while
  // the request is cached: predefined ones, a user operation (the request
  // keeps only its handle, and calls whatever operation has that value — the
  // plan, chosen for the operation by the caller, is compared too), or a
  // derived datatype the request holds where holds defer frees
  // (handleFreesReachUs); and no recvcounts array (its contents, not its
  // address, would have to match).
  const bool predefinedType = elemTypeOf(call.type).has_value();
  const bool cacheable = plan && call.comm != MPI_COMM_NULL &&
                         (call.count > 0 || !skipsEmpty(call)) &&
                         !call.recvcounts && !call.varying && (predefinedType || handleFreesReachUs());
  if (cacheable) {
    CommState *state = nullptr;
    if (Status s = commState(call.comm, state); !s.ok())
      return failStatus(s, COLLC_ERR_MPI);
    collc_request_s *req = state->lastBlocking;
    if (!req || !sameCall(req, plan, call)) {
      deleteRequest(state->lastBlocking);
      state->lastBlocking = nullptr;
      if (int rc = makeRequest(plan, call, /*persistent=*/true, /*hold=*/!predefinedType, req);
          rc != COLLC_SUCCESS)
        return rc;
      req->cached = true;
      countRequest(plan, -1);
      state->lastBlocking = req;
    }
    return runCached(req, state);
  }
  collc_request_s *req = nullptr;
  if (int rc = makeRequest(plan, call, false, /*hold=*/false, req); rc != COLLC_SUCCESS)
    return rc;
  collc_request handle = req;
  if (int rc = startRequest(req, /*blocking=*/true); rc != COLLC_SUCCESS) {
    delete req;
    return rc;
  }
  return progress(&handle, nullptr, true);
}

int nonblocking(collc_plan plan, const Call &call, bool persistent, collc_request *request) {
  if (!request)
    return fail(COLLC_ERR_ARG, "the request pointer is null");
  *request = COLLC_REQUEST_NULL;
  collc_request_s *req = nullptr;
  if (int rc = makeRequest(plan, call, persistent, /*hold=*/true, req); rc != COLLC_SUCCESS)
    return rc;
  if (!persistent)
    if (int rc = startRequest(req); rc != COLLC_SUCCESS) {
      delete req;
      return rc;
    }
  *request = req;
  return COLLC_SUCCESS;
}

} // namespace

namespace collc::rt {
int startBlockingRequest(collc_request request) {
  if (!request)
    return fail(COLLC_ERR_ARG, "the request is COLLC_REQUEST_NULL");
  if (!request->persistent)
    return fail(COLLC_ERR_STATE, "collc_start needs a persistent request (collc_*_init)");
  return startRequest(request, /*blocking=*/true);
}
} // namespace collc::rt

extern "C" {

int collc_allreduce(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return blocking(plan, makeCall(Collective::Allreduce, sendbuf, recvbuf, count, datatype, op,
                                 0, comm));
}

int collc_reduce(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                 MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm) {
  return blocking(plan, makeCall(Collective::Reduce, sendbuf, recvbuf, count, datatype, op,
                                 root, comm));
}

int collc_iallreduce(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, collc_request *request) {
  return nonblocking(plan,
                     makeCall(Collective::Allreduce, sendbuf, recvbuf, count, datatype, op, 0,
                              comm),
                     false, request);
}

int collc_ireduce(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                  MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                  collc_request *request) {
  return nonblocking(plan,
                     makeCall(Collective::Reduce, sendbuf, recvbuf, count, datatype, op, root,
                              comm),
                     false, request);
}

int collc_allreduce_init(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                         collc_request *request) {
  return nonblocking(plan,
                     makeCall(Collective::Allreduce, sendbuf, recvbuf, count, datatype, op, 0,
                              comm),
                     true, request);
}

int collc_reduce_init(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                      MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                      collc_request *request) {
  return nonblocking(plan,
                     makeCall(Collective::Reduce, sendbuf, recvbuf, count, datatype, op, root,
                              comm),
                     true, request);
}

// The rest of the family: one blocking, one non-blocking, one persistent entry
// point each, all through makeCall.
#define COLLC_FAMILY(Name, Coll, Params, SendBuf, RecvBuf, Count, Counts, Op, Root)          \
  int collc_##Name Params {                                                                   \
    Call call = makeCall(Collective::Coll, SendBuf, RecvBuf, Count, datatype, Op, Root, comm); \
    call.recvcounts = Counts;                                                                 \
    return blocking(plan, call);                                                              \
  }
#define COLLC_FAMILY_NB(Name, Coll, Params, SendBuf, RecvBuf, Count, Counts, Op, Root,          \
                        Persistent)                                                           \
  int collc_##Name Params {                                                                   \
    Call call = makeCall(Collective::Coll, SendBuf, RecvBuf, Count, datatype, Op, Root, comm); \
    call.recvcounts = Counts;                                                                 \
    return nonblocking(plan, call, Persistent, request);                                      \
  }

#define RSB_PARAMS                                                                            \
  (collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count recvcount,                  \
   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm COLLC_REQ)
#define RS_PARAMS                                                                             \
  (collc_plan plan, const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],         \
   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm COLLC_REQ)
#define SCAN_PARAMS                                                                           \
  (collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,                      \
   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm COLLC_REQ)
#define AG_PARAMS                                                                             \
  (collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,                      \
   MPI_Datatype datatype, MPI_Comm comm COLLC_REQ)
#define AGV_PARAMS                                                                            \
  (collc_plan plan, const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],         \
   MPI_Datatype datatype, MPI_Comm comm COLLC_REQ)
#define BCAST_PARAMS                                                                          \
  (collc_plan plan, void *buffer, MPI_Count count, MPI_Datatype datatype, int root,           \
   MPI_Comm comm COLLC_REQ)
#define ROOTED_PARAMS                                                                         \
  (collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,                      \
   MPI_Datatype datatype, int root, MPI_Comm comm COLLC_REQ)

#define COLLC_REQ
COLLC_FAMILY(reduce_scatter_block, ReduceScatterBlock, RSB_PARAMS, sendbuf, recvbuf, recvcount,
             nullptr, op, 0)
COLLC_FAMILY(reduce_scatter, ReduceScatterBlock, RS_PARAMS, sendbuf, recvbuf, 0, recvcounts, op, 0)
COLLC_FAMILY(scan, Scan, SCAN_PARAMS, sendbuf, recvbuf, count, nullptr, op, 0)
COLLC_FAMILY(exscan, Exscan, SCAN_PARAMS, sendbuf, recvbuf, count, nullptr, op, 0)
COLLC_FAMILY(allgather, Allgather, AG_PARAMS, sendbuf, recvbuf, count, nullptr, MPI_OP_NULL, 0)
COLLC_FAMILY(allgatherv, Allgather, AGV_PARAMS, sendbuf, recvbuf, 0, recvcounts, MPI_OP_NULL, 0)
COLLC_FAMILY(bcast, Bcast, BCAST_PARAMS, nullptr, buffer, count, nullptr, MPI_OP_NULL, root)
COLLC_FAMILY(alltoall, Alltoall, AG_PARAMS, sendbuf, recvbuf, count, nullptr, MPI_OP_NULL, 0)
COLLC_FAMILY(gather, Gather, ROOTED_PARAMS, sendbuf, recvbuf, count, nullptr, MPI_OP_NULL, root)
COLLC_FAMILY(scatter, Scatter, ROOTED_PARAMS, sendbuf, recvbuf, count, nullptr, MPI_OP_NULL, root)
#undef COLLC_REQ
#define COLLC_REQ , collc_request *request
#define COLLC_BOTH(Name, Coll, Params, SendBuf, RecvBuf, Count, Counts, Op, Root)             \
  COLLC_FAMILY_NB(i##Name, Coll, Params, SendBuf, RecvBuf, Count, Counts, Op, Root, false)     \
  COLLC_FAMILY_NB(Name##_init, Coll, Params, SendBuf, RecvBuf, Count, Counts, Op, Root, true)
COLLC_BOTH(reduce_scatter_block, ReduceScatterBlock, RSB_PARAMS, sendbuf, recvbuf, recvcount,
           nullptr, op, 0)
COLLC_BOTH(reduce_scatter, ReduceScatterBlock, RS_PARAMS, sendbuf, recvbuf, 0, recvcounts, op, 0)
COLLC_BOTH(scan, Scan, SCAN_PARAMS, sendbuf, recvbuf, count, nullptr, op, 0)
COLLC_BOTH(exscan, Exscan, SCAN_PARAMS, sendbuf, recvbuf, count, nullptr, op, 0)
COLLC_BOTH(allgather, Allgather, AG_PARAMS, sendbuf, recvbuf, count, nullptr, MPI_OP_NULL, 0)
COLLC_BOTH(allgatherv, Allgather, AGV_PARAMS, sendbuf, recvbuf, 0, recvcounts, MPI_OP_NULL, 0)
COLLC_BOTH(bcast, Bcast, BCAST_PARAMS, nullptr, buffer, count, nullptr, MPI_OP_NULL, root)
COLLC_BOTH(alltoall, Alltoall, AG_PARAMS, sendbuf, recvbuf, count, nullptr, MPI_OP_NULL, 0)
COLLC_BOTH(gather, Gather, ROOTED_PARAMS, sendbuf, recvbuf, count, nullptr, MPI_OP_NULL, root)
COLLC_BOTH(scatter, Scatter, ROOTED_PARAMS, sendbuf, recvbuf, count, nullptr, MPI_OP_NULL, root)
#undef COLLC_REQ
#undef COLLC_BOTH
#undef COLLC_FAMILY
#undef COLLC_FAMILY_NB
#undef RSB_PARAMS
#undef RS_PARAMS
#undef SCAN_PARAMS
#undef AG_PARAMS
#undef AGV_PARAMS
#undef BCAST_PARAMS
#undef ROOTED_PARAMS

// The v-variants of the block movers: per-rank counts on one side or both.
namespace {

Call gathervCall(const void *sendbuf, MPI_Count sendcount, void *recvbuf,
                 const MPI_Count *recvcounts, MPI_Datatype datatype, int root, MPI_Comm comm) {
  Call call =
      makeCall(Collective::Gather, sendbuf, recvbuf, sendcount, datatype, MPI_OP_NULL, root, comm);
  call.recvcounts = recvcounts;
  call.varying = true;
  return call;
}

Call scattervCall(const void *sendbuf, const MPI_Count *sendcounts, void *recvbuf,
                  MPI_Count recvcount, MPI_Datatype datatype, int root, MPI_Comm comm) {
  Call call = makeCall(Collective::Scatter, sendbuf, recvbuf, recvcount, datatype, MPI_OP_NULL,
                       root, comm);
  call.sendcounts = sendcounts;
  call.varying = true;
  return call;
}

Call alltoallvCall(const void *sendbuf, const MPI_Count *sendcounts, void *recvbuf,
                   const MPI_Count *recvcounts, MPI_Datatype datatype, MPI_Comm comm) {
  Call call =
      makeCall(Collective::Alltoall, sendbuf, recvbuf, 0, datatype, MPI_OP_NULL, 0, comm);
  call.sendcounts = sendcounts;
  call.recvcounts = recvcounts;
  call.varying = true;
  return call;
}

/// A barrier's tokens: zero elements of bytes, so every slot is empty and
/// every message carries nothing; the run is never skipped (Buffers::skipEmpty).
Call barrierCall(MPI_Comm comm) {
  return makeCall(Collective::Barrier, nullptr, nullptr, 0, MPI_BYTE, MPI_OP_NULL, 0, comm);
}

} // namespace

// Blocking, non-blocking and persistent forms: `Params(Tail)` is the
// parameter list, with `Tail` the request parameter or nothing.
#define COLLC_REQUEST_PARAM , collc_request *request
#define COLLC_FORMS(Name, Params, Make)                                                     \
  int collc_##Name Params() { return blocking(plan, Make); }                                  \
  int collc_i##Name Params(COLLC_REQUEST_PARAM) { return nonblocking(plan, Make, false, request); } \
  int collc_##Name##_init Params(COLLC_REQUEST_PARAM) {                                      \
    return nonblocking(plan, Make, true, request);                                            \
  }
#define GATHERV_PARAMS(Tail)                                                                  \
  (collc_plan plan, const void *sendbuf, MPI_Count sendcount, void *recvbuf,                  \
   const MPI_Count recvcounts[], MPI_Datatype datatype, int root, MPI_Comm comm Tail)
#define SCATTERV_PARAMS(Tail)                                                                 \
  (collc_plan plan, const void *sendbuf, const MPI_Count sendcounts[], void *recvbuf,         \
   MPI_Count recvcount, MPI_Datatype datatype, int root, MPI_Comm comm Tail)
#define ALLTOALLV_PARAMS(Tail)                                                                \
  (collc_plan plan, const void *sendbuf, const MPI_Count sendcounts[], void *recvbuf,         \
   const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Comm comm Tail)
COLLC_FORMS(gatherv, GATHERV_PARAMS,
              gathervCall(sendbuf, sendcount, recvbuf, recvcounts, datatype, root, comm))
COLLC_FORMS(scatterv, SCATTERV_PARAMS,
              scattervCall(sendbuf, sendcounts, recvbuf, recvcount, datatype, root, comm))
COLLC_FORMS(alltoallv, ALLTOALLV_PARAMS,
              alltoallvCall(sendbuf, sendcounts, recvbuf, recvcounts, datatype, comm))
#define BARRIER_PARAMS(Tail) (collc_plan plan, MPI_Comm comm Tail)
COLLC_FORMS(barrier, BARRIER_PARAMS, barrierCall(comm))
#undef BARRIER_PARAMS
#undef COLLC_REQUEST_PARAM
#undef COLLC_FORMS
#undef GATHERV_PARAMS
#undef SCATTERV_PARAMS
#undef ALLTOALLV_PARAMS

int collc_start(collc_request request) {
  if (!request)
    return fail(COLLC_ERR_ARG, "the request is COLLC_REQUEST_NULL");
  if (!request->persistent)
    return fail(COLLC_ERR_STATE, "collc_start needs a persistent request (collc_*_init)");
  return startRequest(request);
}

int collc_test(collc_request *request, int *flag) {
  if (!flag)
    return fail(COLLC_ERR_ARG, "collc_test: flag is null");
  return progress(request, flag, false);
}

int collc_wait(collc_request *request) { return progress(request, nullptr, true); }

int collc_request_free(collc_request *request) {
  if (!request || !*request)
    return fail(COLLC_ERR_ARG, "the request is COLLC_REQUEST_NULL");
  if ((*request)->active)
    return fail(COLLC_ERR_STATE, "collc_request_free: the request is still active");
  delete *request;
  *request = COLLC_REQUEST_NULL;
  return COLLC_SUCCESS;
}

} // extern "C"
