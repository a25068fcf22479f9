// dropin/Serve.cpp: deciding one intercepted call (Serve.h).
#include "dropin/Serve.h"

#include "dropin/ByteView.h"
#include "dropin/PlanAcquisition.h"
#include "dropin/Persistent.h"
#include "dropin/Requests.h"
#include "dropin/Startup.h"
#include "runtime/api/Execution.h"
#include "runtime/kernels/MpiTypes.h"

#include <cinttypes>
#include <cstdio>

namespace collc::dropin {

namespace {

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

} // namespace

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
  case Kind::ReduceScatterBlock:
    return PMPI_Reduce_scatter_block(a.sendbuf, a.recvbuf, a.count, a.type, a.op, a.comm);
  case Kind::ReduceScatter:
    return PMPI_Reduce_scatter(a.sendbuf, a.recvbuf, a.recvcounts, a.type, a.op, a.comm);
  case Kind::Scan:
    return PMPI_Scan(a.sendbuf, a.recvbuf, a.count, a.type, a.op, a.comm);
  case Kind::Exscan:
    return PMPI_Exscan(a.sendbuf, a.recvbuf, a.count, a.type, a.op, a.comm);
  case Kind::Allgather:
    return PMPI_Allgather(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.count, a.type,
                          a.comm);
  case Kind::Bcast:
    return PMPI_Bcast(a.recvbuf, a.count, a.type, a.root, a.comm);
  case Kind::IreduceScatterBlock:
    return PMPI_Ireduce_scatter_block(a.sendbuf, a.recvbuf, a.count, a.type, a.op, a.comm,
                                      a.request);
  case Kind::IreduceScatter:
    return PMPI_Ireduce_scatter(a.sendbuf, a.recvbuf, a.recvcounts, a.type, a.op, a.comm,
                                a.request);
  case Kind::Iscan:
    return PMPI_Iscan(a.sendbuf, a.recvbuf, a.count, a.type, a.op, a.comm, a.request);
  case Kind::Iexscan:
    return PMPI_Iexscan(a.sendbuf, a.recvbuf, a.count, a.type, a.op, a.comm, a.request);
  case Kind::Iallgather:
    return PMPI_Iallgather(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.count, a.type,
                           a.comm, a.request);
  case Kind::Ibcast:
    return PMPI_Ibcast(a.recvbuf, a.count, a.type, a.root, a.comm, a.request);
  case Kind::Alltoall:
    return PMPI_Alltoall(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.count, a.type, a.comm);
  case Kind::Gather:
    return PMPI_Gather(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.count, a.type, a.root,
                       a.comm);
  case Kind::Scatter:
    return PMPI_Scatter(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.count, a.type, a.root,
                        a.comm);
  case Kind::Ialltoall:
  case Kind::Igather:
  case Kind::Iscatter:
  case Kind::Iallgatherv:
    return nativeStart(a, a.comm, a.request);
  case Kind::Allgatherv:
    return PMPI_Allgatherv(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.recvcounts, a.displs,
                           a.type, a.comm);
  case Kind::Gatherv:
    return PMPI_Gatherv(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.recvcounts, a.displs,
                        a.type, a.root, a.comm);
  case Kind::Scatterv:
    return PMPI_Scatterv(a.sendbuf, a.sendcounts, a.sdispls, a.sendtype, a.recvbuf, a.count,
                         a.type, a.root, a.comm);
  case Kind::Alltoallv:
    return PMPI_Alltoallv(a.sendbuf, a.sendcounts, a.sdispls, a.sendtype, a.recvbuf,
                          a.recvcounts, a.displs, a.type, a.comm);
  case Kind::Igatherv:
  case Kind::Iscatterv:
  case Kind::Ialltoallv:
    return nativeStart(a, a.comm, a.request);
  case Kind::Alltoallw:
    return PMPI_Alltoallw(a.sendbuf, a.sendcounts, a.sdispls, a.sendtypes, a.recvbuf,
                          a.recvcounts, a.displs, a.recvtypes, a.comm);
  case Kind::AllreduceInit:
  case Kind::ReduceInit:
  case Kind::ReduceScatterBlockInit:
  case Kind::ReduceScatterInit:
  case Kind::ScanInit:
  case Kind::ExscanInit:
  case Kind::AllgatherInit:
  case Kind::BcastInit:
  case Kind::AlltoallInit:
  case Kind::GatherInit:
  case Kind::ScatterInit:
  case Kind::AllgathervInit:
  case Kind::GathervInit:
  case Kind::ScattervInit:
  case Kind::AlltoallvInit:
  case Kind::BarrierInit:
    return nativeInit(a);
  case Kind::Barrier:
    return PMPI_Barrier(a.comm);
  case Kind::Ibarrier:
    return PMPI_Ibarrier(a.comm, a.request);
  case Kind::Count:
    break;
  }
  return MPI_ERR_INTERN;
}

int nativeStart(const Args &a, MPI_Comm comm, MPI_Request *r) {
  if (isVarying(a.kind))
    switch (collOf(a.kind)) {
    case Coll::Gather:
      return PMPI_Igatherv(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.recvcounts, a.displs,
                           a.type, a.root, comm, r);
    case Coll::Scatter:
      return PMPI_Iscatterv(a.sendbuf, a.sendcounts, a.sdispls, a.sendtype, a.recvbuf, a.count,
                            a.type, a.root, comm, r);
    default:
      return PMPI_Ialltoallv(a.sendbuf, a.sendcounts, a.sdispls, a.sendtype, a.recvbuf,
                             a.recvcounts, a.displs, a.type, comm, r);
    }
  switch (collOf(a.kind)) {
  case Coll::Allreduce:
    return PMPI_Iallreduce(a.sendbuf, a.recvbuf, a.count, a.type, a.op, comm, r);
  case Coll::Reduce:
    return PMPI_Ireduce(a.sendbuf, a.recvbuf, a.count, a.type, a.op, a.root, comm, r);
  case Coll::ReduceScatter:
    if (hasCounts(a.kind))
      return PMPI_Ireduce_scatter(a.sendbuf, a.recvbuf, a.recvcounts, a.type, a.op, comm, r);
    return PMPI_Ireduce_scatter_block(a.sendbuf, a.recvbuf, a.count, a.type, a.op, comm, r);
  case Coll::Scan:
    return PMPI_Iscan(a.sendbuf, a.recvbuf, a.count, a.type, a.op, comm, r);
  case Coll::Exscan:
    return PMPI_Iexscan(a.sendbuf, a.recvbuf, a.count, a.type, a.op, comm, r);
  case Coll::Allgather:
    if (hasCounts(a.kind))
      return PMPI_Iallgatherv(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.recvcounts,
                              a.displs, a.type, comm, r);
    return PMPI_Iallgather(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.count, a.type,
                           comm, r);
  case Coll::Bcast:
    return PMPI_Ibcast(a.recvbuf, a.count, a.type, a.root, comm, r);
  case Coll::Alltoall:
    return PMPI_Ialltoall(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.count, a.type, comm,
                          r);
  case Coll::Gather:
    return PMPI_Igather(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.count, a.type, a.root,
                        comm, r);
  case Coll::Scatter:
    return PMPI_Iscatter(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.count, a.type, a.root,
                         comm, r);
  case Coll::Barrier:
    return PMPI_Ibarrier(comm, r);
  }
  return MPI_ERR_INTERN;
}

rt::Call runtimeCall(const Args &a, int size, std::vector<MPI_Count> &counts) {
  const Coll c = collOf(a.kind);
  rt::Call call;
  call.collective = toRt(c);
  call.sendbuf = c == Coll::Bcast ? nullptr : stagesInput(a) ? MPI_IN_PLACE : a.sendbuf;
  call.recvbuf = a.recvbuf;
  call.count = a.count;
  if (hasCounts(a.kind)) {
    counts.assign(a.recvcounts, a.recvcounts + size);
    call.count = 0;
    call.recvcounts = counts.data();
  }
  if (isVarying(a.kind)) {
    // Each side's counts where the call has them (ByteView: in bytes,
    // the blocks one after another): receive side first, then send side.
    counts.assign(2 * size_t(size), 0);
    if (a.recvcounts)
      std::copy(a.recvcounts, a.recvcounts + size, counts.begin());
    if (a.sendcounts)
      std::copy(a.sendcounts, a.sendcounts + size, counts.begin() + size);
    call.varying = true;
    call.recvcounts = a.recvcounts ? counts.data() : nullptr;
    call.sendcounts = a.sendcounts ? counts.data() + size : nullptr;
    call.count = collOf(a.kind) == Coll::Gather ? a.sendcount : a.count;
  }
  call.type = a.type;
  call.op = reduces(c) ? a.op : MPI_OP_NULL;
  call.root = hasRoot(c) ? a.root : 0;
  call.comm = a.comm;
  return call;
}

namespace {

/// The call's count (MPI_Reduce_scatter: the sum of recvcounts) and
/// whether it is per rank (allgather, reduce_scatter_block and the block
/// movers: p blocks of it).
int64_t callCount(const Args &a, const CommState *cs, bool &blocks) {
  int64_t count = a.count;
  if (hasCounts(a.kind)) {
    count = 0;
    for (int i = 0; a.recvcounts && cs && i < cs->size; ++i)
      count += a.recvcounts[i];
  }
  blocks = (collOf(a.kind) == Coll::Allgather && !hasCounts(a.kind)) ||
           movesBlocks(collOf(a.kind)) || a.kind == Kind::ReduceScatterBlock ||
           a.kind == Kind::IreduceScatterBlock || a.kind == Kind::ReduceScatterBlockInit;
  return count;
}

/// The bytes of the whole vector, as rules and bundle ranges match them;
/// -1 where the arguments do not say (MPI checks them).
int64_t wholeBytes(const Args &a, const CommState *cs) {
  int size = 0;
  bool blocks = false;
  const int64_t count = callCount(a, cs, blocks);
  if (!cs || cs->inter || a.type == MPI_DATATYPE_NULL || count < 0 || (hasCounts(a.kind) && !a.recvcounts) ||
      PMPI_Type_size(a.type, &size) != MPI_SUCCESS)
    return -1;
  return (blocks ? count * cs->size : count) * size;
}

/// The send buffer named again as the receive buffer instead of
/// MPI_IN_PLACE: an erroneous call, which MPI reports (Open MPI:
/// MPI_ERR_BUFFER) or defines its own way, so native MPI gets it. Reduce
/// and gather look at the receive buffer on the root only, scatter at the
/// send buffer on the root only; bcast has one buffer.
bool aliased(const Args &a, int rank) {
  const Coll c = collOf(a.kind);
  if (c == Coll::Bcast || c == Coll::Barrier || a.sendbuf == MPI_IN_PLACE ||
      a.recvbuf == MPI_IN_PLACE ||
      a.sendbuf == MPI_BOTTOM || a.sendbuf != a.recvbuf || (a.sendbuf == nullptr && movesBlocks(c)))
    return false;
  return (c != Coll::Reduce && c != Coll::Gather && c != Coll::Scatter) || rank == a.root;
}

} // namespace

void logDecision(Global &g, const Args &a, const CommState *cs, const std::string &what) {
  std::string s = kindName(a.kind);
  if (cs)
    s += " comm " + std::to_string(cs->id) + " (" + std::to_string(cs->size) + " ranks)";
  if (hasRoot(collOf(a.kind)))
    s += " root " + std::to_string(a.root);
  int size = 0;
  if (a.type != MPI_DATATYPE_NULL)
    PMPI_Type_size(a.type, &size);
  bool blocks = false;
  const int64_t count = callCount(a, cs, blocks);
  const int64_t whole = blocks && cs ? count * cs->size : count;
  const char *per = blocks ? " per rank" : "";
  std::string op;
  if (reduces(collOf(a.kind))) {
    int commutative = 1;
    if (a.op != MPI_OP_NULL)
      PMPI_Op_commutative(a.op, &commutative);
    op = ", " + opName(a.op, commutative);
  }
  s += " " + std::to_string(uint64_t(size) * uint64_t(whole < 0 ? 0 : whole)) + " bytes (" +
       std::to_string(count) + " x " + typeName(a.type) + per + op +
       (a.sendbuf == MPI_IN_PLACE ? ", in place" : "") + "): " + what;
  debugLine(g, s);
}

void noteFallback(Global &g, const Args &a, CommState *cs, Reason r, const std::string &detail) {
  // Once per call: where the state says (CommState::counts); without one,
  // on the communicator's rank 0 (MPI_COMM_NULL: on every rank).
  int rank = 0;
  if (!cs && a.comm != MPI_COMM_NULL)
    PMPI_Comm_rank(a.comm, &rank);
  if (cs ? cs->counts : rank == 0) {
    ++stats(g).fallback[unsigned(a.kind)][unsigned(r)];
    if (cs)
      countServed(*cs, a.kind, std::string("native (") + text(r) + ")",
                  r == Reason::Arguments ? -1 : wholeBytes(a, cs));
  }
  if (g.config.debug)
    logDecision(g, a, cs,
                std::string("native: ") + text(r) + (detail.empty() ? "" : " (" + detail + ")"));
}

int fallback(Global &g, const Args &a, CommState *cs, Reason r, const std::string &detail) {
  noteFallback(g, a, cs, r, detail);
  return native(a);
}

int fatal(Global &g, const Args &a, const CommState &cs, const char *what, int code) {
  char mpiText[MPI_MAX_ERROR_STRING] = "";
  int length = 0;
  if (code != MPI_ERR_OTHER && code != MPI_ERR_NO_MEM)
    PMPI_Error_string(code, mpiText, &length);
  std::fprintf(stderr, "collc: [rank %d] %s on comm %" PRIu64 " failed: %s: %s\n",
               g.worldRank, kindName(a.kind), cs.id, what,
               code == MPI_ERR_OTHER    ? collc_error_message()
               : code == MPI_ERR_NO_MEM ? "out of memory"
                                        : mpiText);
  std::fflush(stderr);
  PMPI_Comm_call_errhandler(a.comm, code);
  return code;
}

int refused(Global &g, const Args &user, CommState &cs, int code) {
  if (code == COLLC_ERR_ARG || code == COLLC_ERR_UNSUPPORTED)
    return fallback(g, user, &cs, Reason::Refused, collc_error_message());
  return fatal(g, user, cs, "making its request",
               code == COLLC_ERR_NOMEM ? MPI_ERR_NO_MEM : MPI_ERR_OTHER);
}

Global *activeGlobal();

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
  // A blocking collective ends the calls in turn (Requests.h).
  if (cs.window && isBlocking(a.kind))
    finishTurns(g, cs);
  const bool asBytes = c == Coll::Bcast || c == Coll::Allgather || movesBlocks(c);
  if (int rc = 0; isBlocking(a.kind) && !asBytes && runCached(g, cs, a, rc))
    return rc;
  if (cs.inter)
    return fallback(g, a, &cs, Reason::InterComm);
  if (cs.foreign)
    return fallback(g, a, &cs, Reason::ForeignWorld);
  if (hasCounts(a.kind) && !a.recvcounts)
    return fallback(g, a, &cs, Reason::Arguments, "recvcounts is null");
  if (hasDispls(a.kind) && !a.displs)
    return fallback(g, a, &cs, Reason::Arguments, "displs is null");
  // (The block movers' counts and datatypes are significant on some ranks
  // only: ByteView checks the ones that are.)
  if (!hasCounts(a.kind) && !movesBlocks(c) && a.count < 0)
    return fallback(g, a, &cs, Reason::Arguments, "negative count");
  if (hasRoot(c) && (a.root < 0 || a.root >= cs.size))
    return fallback(g, a, &cs, Reason::Arguments, "root out of range");
  if ((!movesBlocks(c) && a.type == MPI_DATATYPE_NULL) || (reduces(c) && a.op == MPI_OP_NULL))
    return fallback(g, a, &cs, Reason::Arguments, "null datatype or operation");
  if (aliased(a, cs.rank))
    return fallback(g, a, &cs, Reason::Arguments,
                    "the send buffer is the receive buffer, not MPI_IN_PLACE");
  if (stagesInput(a)) {
    int sendSize = 0, recvSize = 0;
    if (a.sendtype == MPI_DATATYPE_NULL || a.sendcount < 0 ||
        PMPI_Type_size(a.sendtype, &sendSize) != MPI_SUCCESS ||
        PMPI_Type_size(a.type, &recvSize) != MPI_SUCCESS)
      return fallback(g, a, &cs, Reason::Arguments, "the send side's datatype or count");
    // Equal type signatures (MPI's rule) have equal sizes. Another size is
    // an erroneous call that native MPI completes; going native here alone
    // would part this rank from the others, which decide on the receive
    // side and run the plan: this rank runs it too, its block staged from
    // what it sends (cut to the block, or the rest of the block as it was).
    if (int64_t(sendSize) * a.sendcount != int64_t(recvSize) * a.count)
      warn(g,
           "an MPI_Allgather whose send side (" +
               std::to_string(int64_t(sendSize) * a.sendcount) +
               " bytes) is not one block of its receive side (" +
               std::to_string(int64_t(recvSize) * a.count) +
               " bytes) is erroneous; collc sends the block with what fits of the send side",
           false);
  }
  // Bcast, allgather and the block movers as bytes (ByteView.h): from here
  // on `v` is what runs and decides; what falls back hands the user's call
  // `a` to native MPI.
  Args v;
  std::unique_ptr<Staging> staging;
  std::vector<int> byteCounts; // MPI_Allgatherv's recvcounts in bytes (v points here)
  if (int rc = byteView(a, cs.rank, cs.size, v, staging, byteCounts); rc == MPI_ERR_NO_MEM)
    // This rank alone: falling back would part it from the others.
    return fatal(g, a, cs, "the buffer its datatype is packed into", MPI_ERR_NO_MEM);
  else if (rc == MPI_ERR_ARG)
    return fallback(g, a, &cs, Reason::Arguments,
                    "a negative count or displacement, or a null datatype");
  else if (rc != MPI_SUCCESS)
    return fallback(g, a, &cs, Reason::Refused, "its bytes do not fit an int");
  if (staging && staging->resized())
    warn(g,
         std::string("an MPI_") +
             (c == Coll::Alltoall  ? "Alltoall"
              : c == Coll::Gather  ? "Gather"
              : c == Coll::Scatter ? "Scatter"
                                   : "Allgatherv") +
             " whose send and receive sides differ in size is erroneous; collc moves blocks of "
             "the size the other ranks agree on (" + std::to_string(v.count) +
             " bytes): each block this rank sends is cut or filled with zero bytes, each it "
             "receives fills the start of its block",
         false);
  if (int rc = 0; isBlocking(a.kind) && asBytes && !staging && runCached(g, cs, v, rc))
    return rc;

  // What any plan needs of the call: a datatype made of whole contiguous
  // elements and, where the collective combines, an (operation, datatype)
  // pair collc can combine.
  rt::Shape probe;
  probe.collective = toRt(c);
  probe.ranks = uint32_t(cs.size);
  probe.root = hasRoot(c) ? uint32_t(a.root) : 0;
  probe.commutative = false;
  probe.inPlace = true;
  std::vector<MPI_Count> counts;
  rt::Call call = runtimeCall(v, cs.size, counts);
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
  PMPI_Type_size(v.type, &typeSize);
  CallTraits t;
  t.collective = c;
  t.ranks = uint32_t(cs.size);
  t.root = probe.root;
  t.count = how.total; // the whole vector, as MPI's arguments agree on it everywhere
  t.bytes = how.total * uint64_t(typeSize);
  // The v-variants' sizes differ from rank to rank (a gatherv's non-root
  // knows its own block only): their decision sees no size.
  const bool varying = isVarying(a.kind);
  const uint64_t callBytes = t.bytes; // (this rank's, for COLLC_STATS)
  if (varying)
    t.count = t.bytes = 0;
  t.commutative = how.commutativeOp;
  t.predefinedOp = !reduces(c) || rt::reduceOpOf(a.op).has_value();
  Decision &d = decide(g, cs, t);
  Selection vsel; // the v-variants' (below)
  const Selection &sel = varying ? vsel : d.sel;
  if (varying) {
    // Native where the configuration picks native for the collective, else
    // the one library plan that moves only the blocks each rank knows the
    // size of (docs/plan-format.md, "The v-variants of the block movers").
    vsel = d.sel;
    if (!vsel.native) {
      vsel.fileId = -1;
      vsel.algorithm = c == Coll::Alltoall ? "pairwise" : "linear";
      vsel.substitution = Substitution::None;
      vsel.detail = vsel.algorithm + " (the " + kindName(a.kind) +
                    " plan: each rank moves only its own call's blocks)";
    }
  }
  if (sel.native)
    return fallback(g, a, &cs, sel.noPlan ? Reason::NoPlan : Reason::NativeSelected,
                    sel.detail);
  if (!cs.ready) {
    if (isBlocking(a.kind))
      prepare(g, cs, a.comm);
    if (cs.setUpFailed)
      return fallback(g, a, &cs, Reason::SetUpFailed);
    if (!cs.ready)
      return fallback(g, a, &cs, Reason::NotSetUp,
                      "its first collc call must be blocking, or it must come from an "
                      "intercepted constructor");
  }
  PlanSlot *slotp = varying ? &slotFor(g, cs, c, t.root, sel) : d.slot;
  if (!slotp)
    slotp = d.slot = &slotFor(g, cs, c, t.root, sel);
  PlanSlot &slot = *slotp;
  // A non-blocking or persistent call cannot wait for the other ranks to
  // say whether they have the plan: it takes its turn (Requests.h), as do
  // the calls after it until the next blocking collective.
  if (!isBlocking(a.kind) && (cs.window || slot.agreed == Agreement::Pending))
    return inTurn(g, cs, v, a, std::move(staging), slot, callBytes, sel);
  if (slot.agreed == Agreement::NotEverywhere)
    return fallback(g, a, &cs, Reason::NoPlan, slot.error);
  return execute(g, cs, v, a, std::move(staging), slot, callBytes, sel);
}

} // namespace collc::dropin
