// runtime/api/Execution.cpp: checking a call against a plan, the per-
// communicator state, combiners, and the execution entry points of the C API.
#include "runtime/api/Execution.h"

#include "runtime/api/Handles.h"

#include "runtime/kernels/MpiTypes.h"
#include "runtime/mpi/MpiTransport.h"
#include "runtime/shm/ShmNode.h"
#include "runtime/shm/TransportSettings.h"

#include <strings.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>

using namespace collc::rt;

namespace {

Status argError(std::string m) { return Status::error(ErrorCode::Argument, std::move(m)); }
Status shapeError(std::string m) { return Status::error(ErrorCode::Shape, std::move(m)); }
Status unsupported(std::string m) { return Status::error(ErrorCode::Unsupported, std::move(m)); }


// --- per-communicator state ----------------------------------------------------

void deleteRequest(collc_request_s *req);

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
  /// Blocking calls may take the shared-memory transport's direct path
  /// (COLLC_SHM_FAST, read when the communicator is set up).
  bool shmDirect = true;
};

void releaseCommState(CommState *s) {
  if (!s || --s->refs > 0)
    return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (s->dup != MPI_COMM_NULL && !finalized)
    MPI_Comm_free(&s->dup);
  delete s; // unmaps the shared memory (no collective step)
}

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
CommState *lastCommState(MPI_Comm comm) {
  const LastComm &l = lastComm();
  return l.state && l.comm == comm && l.epoch == commStateEpoch.load() ? l.state : nullptr;
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

/// The region's geometry: COLLC_SHM_SEGMENT (bytes per segment) overrides
/// the default. Only the node's first rank's value counts (the others read
/// the region's header).
ShmConfig shmConfig() {
  ShmConfig c;
  c.slotBytes = transportSettings().shmSegmentBytes;
  return c;
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
  if (currentTransport() != COLLC_TRANSPORT_MPI) {
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

namespace collc::rt {

bool setTransportSettings(const TransportSettings &given) { return useSettings(&given); }

Status prepareComm(MPI_Comm comm) {
  CommState *s = nullptr;
  return commState(comm, s);
}

Status analyzeCall(const Shape &shape, bool planInPlace, const Call &call, CallPlan &how) {
  const Collective c = call.collective;
  const bool combining = reduces(c);
  const bool variable = call.recvcounts != nullptr;
  if (variable && c != Collective::ReduceScatterBlock)
    return argError("recvcounts are for reduce_scatter only");
  if (call.comm == MPI_COMM_NULL)
    return argError("the communicator is MPI_COMM_NULL");
  if (!variable && call.count < 0)
    return argError("count " + std::to_string(call.count) + " is negative");
  if (call.type == MPI_DATATYPE_NULL)
    return argError("the datatype is MPI_DATATYPE_NULL");
  if (combining && call.op == MPI_OP_NULL)
    return argError("the operation is MPI_OP_NULL");
  if (shape.collective != c)
    return shapeError(std::string("the plan is for ") + name(shape.collective) + ", not " +
                      name(c));
  int inter = 0;
  if (int rc = MPI_Comm_test_inter(call.comm, &inter); rc != MPI_SUCCESS)
    return mpiError("MPI_Comm_test_inter", rc);
  if (inter)
    return unsupported("inter-communicators are not supported");
  MPI_Comm_size(call.comm, &how.size);
  MPI_Comm_rank(call.comm, &how.rank);
  if (uint32_t(how.size) != shape.ranks)
    return shapeError("the plan is for " + std::to_string(shape.ranks) +
                      " ranks; the communicator has " + std::to_string(how.size));
  if (hasRoot(c) && (call.root < 0 || uint32_t(call.root) != shape.root))
    return shapeError("the plan is for root " + std::to_string(shape.root) + "; the call has root " +
                      std::to_string(call.root));

  // The vector and this rank's part of it.
  const uint64_t p = uint64_t(how.size), r = uint64_t(how.rank);
  how.blockStart.clear();
  if (variable) {
    how.blockStart.assign(p + 1, 0);
    for (uint64_t b = 0; b < p; ++b) {
      if (call.recvcounts[b] < 0)
        return argError("recvcounts[" + std::to_string(b) + "] = " +
                        std::to_string(call.recvcounts[b]) + " is negative");
      how.blockStart[b + 1] = how.blockStart[b] + uint64_t(call.recvcounts[b]);
    }
  }
  const uint64_t count = variable ? 0 : uint64_t(call.count);
  uint64_t outElems = 0;
  switch (c) {
  case Collective::ReduceScatterBlock:
    how.total = variable ? how.blockStart[p] : p * count;
    how.inElems = how.total;
    outElems = variable ? uint64_t(call.recvcounts[r]) : count;
    break;
  case Collective::Allgather:
    how.total = p * count;
    how.inElems = count;
    outElems = how.total;
    break;
  default: // allreduce, reduce, scan, exscan, bcast
    how.total = count;
    how.inElems = count;
    outElems = count;
    break;
  }
  how.hasIn = c != Collective::Bcast;
  how.hasOut = c != Collective::Reduce || how.rank == call.root;
  if (!how.hasIn)
    how.inElems = 0;

  // Buffers, and MPI_IN_PLACE as each collective defines it.
  how.inPlace = how.hasIn && call.sendbuf == MPI_IN_PLACE;
  if (how.hasOut && call.recvbuf == MPI_IN_PLACE) // a reduce's non-root ignores it
    return argError("recvbuf cannot be MPI_IN_PLACE");
  if (how.inPlace && !how.hasOut)
    return argError("MPI_IN_PLACE is only allowed at the root of a reduce");
  // Exscan's rank 0 may pass no recvbuf (MPI: not significant there) unless
  // its input is in it; its plan's out is then scratch. The same path on
  // every rank either way.
  how.scratchOut = c == Collective::Exscan && how.rank == 0 && !how.inPlace && outElems > 0 &&
                   !call.recvbuf;
  if ((how.hasIn && !how.inPlace && how.inElems > 0 && !call.sendbuf) ||
      (how.hasOut && outElems > 0 && !call.recvbuf && !how.scratchOut))
    return argError("a null buffer with " + std::to_string(how.total) + " elements");
  how.inAt = call.sendbuf;
  how.copyInput = false;
  if (how.inPlace) {
    // The input is in recvbuf: where this rank's slot 0 of `in` would be.
    how.inAt = call.recvbuf;
    // reduce_scatter reads the whole vector from recvbuf and writes its block
    // at recvbuf's start, which a plan cannot alias: always copied aside.
    how.copyInput = !planInPlace || c == Collective::ReduceScatterBlock;
  }

  // Datatype: contiguous, so chunks are runs of whole elements. A predefined
  // type is laid out as its C type, padding included: the MAXLOC/MINLOC pairs
  // MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT and MPI_LONG_DOUBLE_INT have
  // size < extent (12 and 16 for MPI_DOUBLE_INT), which the kernels, memcpy
  // of whole elements and MPI messages of the type all handle; only derived
  // types must have no gaps.
  std::optional<ElemType> builtinType = elemTypeOf(call.type);
  int size = 0;
  MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
  MPI_Type_size(call.type, &size);
  MPI_Type_get_extent(call.type, &lb, &extent);
  MPI_Type_get_true_extent(call.type, &tlb, &textent);
  const bool cLayout = builtinType && size_t(extent) == elemSize(*builtinType);
  if (size <= 0 || lb != 0 || tlb != 0 ||
      (!cLayout && (extent != MPI_Aint(size) || textent != extent)))
    return unsupported("the datatype is not contiguous (size " + std::to_string(size) +
                       ", extent " + std::to_string(extent) + ")");

  // Operation: collc's kernel for predefined (op, type) pairs MPI defines,
  // MPI_Reduce_local for user operations (on any contiguous type). MPI
  // defines the predefined operations on predefined datatypes only, and
  // Open MPI's MPI_Reduce_local aborts on a derived one (MPI_ERR_OP under
  // MPI_ERRORS_ARE_FATAL), so that is refused here.
  how.extent = size_t(extent);
  if (how.inPlace && c == Collective::Allgather)
    how.inAt = static_cast<const char *>(call.recvbuf) + r * count * how.extent;
  how.kernel = nullptr;
  how.commutativeOp = true;
  if (!combining)
    return Status::success();

  int commutative = 1;
  MPI_Op_commutative(call.op, &commutative);
  how.commutativeOp = commutative != 0;
  if (shape.commutative && !commutative)
    return unsupported("the plan needs a commutative operation, but the operation is not "
                       "commutative");
  std::optional<ReduceOp> builtinOp = reduceOpOf(call.op);
  if (builtinOp && !builtinType) {
    int ints = 0, addrs = 0, types = 0, combiner = MPI_COMBINER_NAMED;
    MPI_Type_get_envelope(call.type, &ints, &addrs, &types, &combiner);
    return unsupported(combiner == MPI_COMBINER_NAMED
                           ? "collc has no kernel for this predefined datatype"
                           : "MPI defines " + std::string(reduceOpName(*builtinOp)) +
                                 " on predefined datatypes only, not on a derived datatype");
  }
  if (builtinOp && builtinType) {
    how.kernel = findMpiKernel(call.op, call.type);
    if (!how.kernel)
      return unsupported("MPI does not define " + std::string(reduceOpName(*builtinOp)) +
                         " on " + std::string(elemTypeName(*builtinType)));
  }
  return Status::success();
}

} // namespace collc::rt

// --- requests ------------------------------------------------------------------

struct collc_request_s {
  collc_plan plan = nullptr;
  CommState *comm = nullptr;
  CallPlan how;
  CombineCtx ctx;
  std::unique_ptr<MpiTransport> remote; ///< MPI under ShmTransport (peers off the node)
  std::unique_ptr<Transport> transport;
  Executor exec;
  std::unique_ptr<char[]> inCopy;
  std::unique_ptr<char[]> outScratch; ///< CallPlan::scratchOut
  size_t inBytes = 0;
  const void *inSource = nullptr; ///< what inCopy copies at each start
  bool persistent = false;
  bool active = false;
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

namespace {
void deleteRequest(collc_request_s *req) { delete req; }
} // namespace

namespace {

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
  b.out = how.hasOut ? call.recvbuf : nullptr;
  if (how.scratchOut) {
    req->outScratch.reset(new (std::nothrow) char[size_t(how.total) * b.extent + 1]);
    if (!req->outScratch)
      return fail(COLLC_ERR_NOMEM, "out of memory for rank 0's exscan output (no recvbuf)");
    b.out = req->outScratch.get();
  }
  // In place, `in` is `out` itself (the executor aliases the slots as the
  // plan's layout says) unless the input is copied aside.
  b.in = !how.hasIn ? nullptr : how.inPlace ? call.recvbuf : call.sendbuf;
  req->inSource = how.inAt;
  if (how.copyInput) {
    req->inBytes = size_t(how.inElems) * b.extent;
    req->inCopy.reset(new (std::nothrow) char[req->inBytes + 1]);
    if (!req->inCopy)
      return fail(COLLC_ERR_NOMEM, "out of memory for the copy of the in-place input");
    b.in = req->inCopy.get();
  }
  const CommState &cs = *req->comm;
  const bool shmFits = cs.shm && how.extent <= cs.shm->endpoint->config().slotBytes;
  if (cs.shm && !shmFits)
    shmFallback(call.comm, "an element of " + std::to_string(how.extent) +
                               " bytes is larger than a shared-memory segment");
  if (shmFits) {
    if (cs.shm->remotePeers)
      req->remote = std::make_unique<MpiTransport>(cs.dup, call.type, cs.tagUb);
    req->transport = std::make_unique<ShmTransport>(*cs.shm->endpoint, cs.shm->localOf.data(),
                                                    req->remote.get(), how.extent, cs.tagUb,
                                                    cs.shmDirect);
  } else {
    req->transport = std::make_unique<MpiTransport>(cs.dup, call.type, cs.tagUb);
  }
  const PreparedRank &prep = preparedOf(plan, uint32_t(how.rank));
  if (Status s = req->exec.bind(prep, b, combine, *req->transport); !s.ok())
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
  return req->planId == planId(plan) && c.collective == call.collective &&
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
  // Fast path: the same call as last time on this communicator.
  if (CommState *state = lastCommState(call.comm);
      plan && state && state->lastBlocking && sameCall(state->lastBlocking, plan, call))
    return runCached(state->lastBlocking, state);
  // Predefined handles only (they cannot be freed and re-made), and no
  // recvcounts array (its contents, not its address, would have to match).
  const bool cacheable = plan && call.comm != MPI_COMM_NULL && call.count > 0 &&
                         !call.recvcounts && elemTypeOf(call.type) &&
                         (!reduces(call.collective) || reduceOpOf(call.op));
  if (cacheable) {
    CommState *state = nullptr;
    if (Status s = commState(call.comm, state); !s.ok())
      return failStatus(s, COLLC_ERR_MPI);
    collc_request_s *req = state->lastBlocking;
    if (!req || !sameCall(req, plan, call)) {
      deleteRequest(state->lastBlocking);
      state->lastBlocking = nullptr;
      if (int rc = makeRequest(plan, call, /*persistent=*/true, /*hold=*/false, req); rc != COLLC_SUCCESS)
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
#define BCAST_PARAMS                                                                          \
  (collc_plan plan, void *buffer, MPI_Count count, MPI_Datatype datatype, int root,           \
   MPI_Comm comm COLLC_REQ)

#define COLLC_REQ
COLLC_FAMILY(reduce_scatter_block, ReduceScatterBlock, RSB_PARAMS, sendbuf, recvbuf, recvcount,
             nullptr, op, 0)
COLLC_FAMILY(reduce_scatter, ReduceScatterBlock, RS_PARAMS, sendbuf, recvbuf, 0, recvcounts, op, 0)
COLLC_FAMILY(scan, Scan, SCAN_PARAMS, sendbuf, recvbuf, count, nullptr, op, 0)
COLLC_FAMILY(exscan, Exscan, SCAN_PARAMS, sendbuf, recvbuf, count, nullptr, op, 0)
COLLC_FAMILY(allgather, Allgather, AG_PARAMS, sendbuf, recvbuf, count, nullptr, MPI_OP_NULL, 0)
COLLC_FAMILY(bcast, Bcast, BCAST_PARAMS, nullptr, buffer, count, nullptr, MPI_OP_NULL, root)
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
COLLC_BOTH(bcast, Bcast, BCAST_PARAMS, nullptr, buffer, count, nullptr, MPI_OP_NULL, root)
#undef COLLC_REQ
#undef COLLC_BOTH
#undef COLLC_FAMILY
#undef COLLC_FAMILY_NB
#undef RSB_PARAMS
#undef RS_PARAMS
#undef SCAN_PARAMS
#undef AG_PARAMS
#undef BCAST_PARAMS

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
  *peers = s->shm ? int(s->shm->localPeers) : 0;
  return COLLC_SUCCESS;
}

int collc_transport_fallbacks(long long *count) {
  if (!count)
    return fail(COLLC_ERR_ARG, "collc_transport_fallbacks: count is null");
  *count = transportFallbacks.load();
  return COLLC_SUCCESS;
}

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
