// dropin/Calls.cpp: the collectives and events of Calls.h — each collective's
// arguments as an Args for serve(), and what collc does around barriers,
// communicator constructors and destructors, MPI_Init and MPI_Finalize.
#include "dropin/Calls.h"

#include "dropin/Requests.h"
#include "dropin/Serve.h"
#include "dropin/Startup.h"

#define COLLC_C extern "C" __attribute__((visibility("hidden")))

using namespace collc::dropin;

namespace {

Args reducing(Kind k, const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
              int root, MPI_Comm comm, MPI_Request *request) {
  return Args{k, sendbuf, recvbuf, count, type, op, root, comm, request};
}

/// Allgather and the block movers: both sides as MPI gives them (ByteView.h).
Args blockMover(Kind k, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request *request) {
  Args a{k, sendbuf, recvbuf, recvcount, recvtype, MPI_OP_NULL, root, comm, request};
  a.sendcount = sendcount;
  a.sendtype = sendtype;
  return a;
}

Args allgather(Kind k, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
  return blockMover(k, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0, comm,
                    request);
}

/// MPI_Allgatherv's forms: per-rank counts and displacements.
Args allgatherv(Kind k, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                MPI_Comm comm, MPI_Request *request) {
  Args a = allgather(k, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype, comm, request);
  a.recvcounts = recvcounts;
  a.displs = displs;
  return a;
}

Args bcast(Kind k, void *buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
           MPI_Request *request) {
  return Args{k, nullptr, buffer, count, type, MPI_OP_NULL, root, comm, request};
}

Args reduceScatter(Kind k, const void *sendbuf, void *recvbuf, const int recvcounts[],
                   MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request *request) {
  Args a{k, sendbuf, recvbuf, 0, type, op, 0, comm, request};
  a.recvcounts = recvcounts;
  return a;
}

/// No buffers: zero bytes, as the runtime runs a barrier plan.
Args barrier(Kind k, MPI_Comm comm, MPI_Request *request) {
  return Args{k, nullptr, nullptr, 0, MPI_BYTE, MPI_OP_NULL, 0, comm, request};
}

/// A non-blocking call without a request handle is MPI's to report.
int nonBlocking(const Args &a) { return a.request ? serve(a) : native(a); }

} // namespace

COLLC_C int collc_dropin_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                                   MPI_Op op, MPI_Comm comm) {
  return serve(reducing(Kind::Allreduce, sendbuf, recvbuf, count, type, op, 0, comm, nullptr));
}
COLLC_C int collc_dropin_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                                MPI_Op op, int root, MPI_Comm comm) {
  return serve(reducing(Kind::Reduce, sendbuf, recvbuf, count, type, op, root, comm, nullptr));
}
COLLC_C int collc_dropin_reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                              MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return serve(
      reducing(Kind::ReduceScatterBlock, sendbuf, recvbuf, recvcount, type, op, 0, comm, nullptr));
}
COLLC_C int collc_dropin_reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                        MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return serve(
      reduceScatter(Kind::ReduceScatter, sendbuf, recvbuf, recvcounts, type, op, comm, nullptr));
}
COLLC_C int collc_dropin_scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm) {
  return serve(reducing(Kind::Scan, sendbuf, recvbuf, count, type, op, 0, comm, nullptr));
}
COLLC_C int collc_dropin_exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                                MPI_Op op, MPI_Comm comm) {
  return serve(reducing(Kind::Exscan, sendbuf, recvbuf, count, type, op, 0, comm, nullptr));
}
COLLC_C int collc_dropin_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm) {
  return serve(allgather(Kind::Allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, comm, nullptr));
}
COLLC_C int collc_dropin_bcast(void *buffer, int count, MPI_Datatype type, int root,
                               MPI_Comm comm) {
  return serve(bcast(Kind::Bcast, buffer, count, type, root, comm, nullptr));
}

COLLC_C int collc_dropin_iallreduce(const void *sendbuf, void *recvbuf, int count,
                                    MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                    MPI_Request *request) {
  return nonBlocking(
      reducing(Kind::Iallreduce, sendbuf, recvbuf, count, type, op, 0, comm, request));
}
COLLC_C int collc_dropin_ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                                 MPI_Op op, int root, MPI_Comm comm, MPI_Request *request) {
  return nonBlocking(
      reducing(Kind::Ireduce, sendbuf, recvbuf, count, type, op, root, comm, request));
}
COLLC_C int collc_dropin_ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                               MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                               MPI_Request *request) {
  return nonBlocking(
      reducing(Kind::IreduceScatterBlock, sendbuf, recvbuf, recvcount, type, op, 0, comm, request));
}
COLLC_C int collc_dropin_ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                         MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                         MPI_Request *request) {
  return nonBlocking(
      reduceScatter(Kind::IreduceScatter, sendbuf, recvbuf, recvcounts, type, op, comm, request));
}
COLLC_C int collc_dropin_iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                               MPI_Op op, MPI_Comm comm, MPI_Request *request) {
  return nonBlocking(reducing(Kind::Iscan, sendbuf, recvbuf, count, type, op, 0, comm, request));
}
COLLC_C int collc_dropin_iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                                 MPI_Op op, MPI_Comm comm, MPI_Request *request) {
  return nonBlocking(reducing(Kind::Iexscan, sendbuf, recvbuf, count, type, op, 0, comm, request));
}
COLLC_C int collc_dropin_iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                    MPI_Comm comm, MPI_Request *request) {
  return nonBlocking(allgather(Kind::Iallgather, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                               recvtype, comm, request));
}
COLLC_C int collc_dropin_ibcast(void *buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
                                MPI_Request *request) {
  return nonBlocking(bcast(Kind::Ibcast, buffer, count, type, root, comm, request));
}

COLLC_C int collc_dropin_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, const int recvcounts[], const int displs[],
                                    MPI_Datatype recvtype, MPI_Comm comm) {
  return serve(allgatherv(Kind::Allgatherv, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                          displs, recvtype, comm, nullptr));
}
// The v-variants: each side's counts and displacements as MPI gives them.
namespace {

Args gatherv(Kind k, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
             MPI_Comm comm, MPI_Request *request) {
  Args a = blockMover(k, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype, root, comm, request);
  a.recvcounts = recvcounts;
  a.displs = displs;
  return a;
}

Args scatterv(Kind k, const void *sendbuf, const int sendcounts[], const int displs[],
              MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
              int root, MPI_Comm comm, MPI_Request *request) {
  Args a =
      blockMover(k, sendbuf, 0, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  a.sendcounts = sendcounts;
  a.sdispls = displs;
  return a;
}

Args alltoallv(Kind k, const void *sendbuf, const int sendcounts[], const int sdispls[],
               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
               MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
  Args a = blockMover(k, sendbuf, 0, sendtype, recvbuf, 0, recvtype, 0, comm, request);
  a.sendcounts = sendcounts;
  a.sdispls = sdispls;
  a.recvcounts = recvcounts;
  a.displs = rdispls;
  return a;
}

} // namespace

COLLC_C int collc_dropin_gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, const int recvcounts[], const int displs[],
                                 MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return serve(gatherv(Kind::Gatherv, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                       recvtype, root, comm, nullptr));
}
COLLC_C int collc_dropin_scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                                  MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                  MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return serve(scatterv(Kind::Scatterv, sendbuf, sendcounts, displs, sendtype, recvbuf,
                        recvcount, recvtype, root, comm, nullptr));
}
COLLC_C int collc_dropin_alltoallv(const void *sendbuf, const int sendcounts[],
                                   const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                   const int recvcounts[], const int rdispls[],
                                   MPI_Datatype recvtype, MPI_Comm comm) {
  return serve(alltoallv(Kind::Alltoallv, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                         recvcounts, rdispls, recvtype, comm, nullptr));
}
COLLC_C int collc_dropin_alltoallw(const void *sendbuf, const int sendcounts[],
                                   const int sdispls[], const MPI_Datatype sendtypes[],
                                   void *recvbuf, const int recvcounts[], const int rdispls[],
                                   const MPI_Datatype recvtypes[], MPI_Comm comm) {
  Args a = alltoallv(Kind::Alltoallw, sendbuf, sendcounts, sdispls, MPI_DATATYPE_NULL, recvbuf,
                     recvcounts, rdispls, MPI_DATATYPE_NULL, comm, nullptr);
  a.sendtypes = sendtypes;
  a.recvtypes = recvtypes;
  return serve(a);
}
COLLC_C int collc_dropin_igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, const int recvcounts[], const int displs[],
                                  MPI_Datatype recvtype, int root, MPI_Comm comm,
                                  MPI_Request *request) {
  return nonBlocking(gatherv(Kind::Igatherv, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                             displs, recvtype, root, comm, request));
}
COLLC_C int collc_dropin_iscatterv(const void *sendbuf, const int sendcounts[],
                                   const int displs[], MPI_Datatype sendtype, void *recvbuf,
                                   int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                                   MPI_Request *request) {
  return nonBlocking(scatterv(Kind::Iscatterv, sendbuf, sendcounts, displs, sendtype, recvbuf,
                              recvcount, recvtype, root, comm, request));
}
COLLC_C int collc_dropin_ialltoallv(const void *sendbuf, const int sendcounts[],
                                    const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                    const int recvcounts[], const int rdispls[],
                                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
  return nonBlocking(alltoallv(Kind::Ialltoallv, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                               recvcounts, rdispls, recvtype, comm, request));
}
COLLC_C int collc_dropin_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm) {
  return serve(blockMover(Kind::Alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                          recvtype, 0, comm, nullptr));
}
COLLC_C int collc_dropin_gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                MPI_Comm comm) {
  return serve(blockMover(Kind::Gather, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                          recvtype, root, comm, nullptr));
}
COLLC_C int collc_dropin_scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                 MPI_Comm comm) {
  return serve(blockMover(Kind::Scatter, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                          recvtype, root, comm, nullptr));
}
COLLC_C int collc_dropin_iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void *recvbuf, const int recvcounts[], const int displs[],
                                     MPI_Datatype recvtype, MPI_Comm comm,
                                     MPI_Request *request) {
  return nonBlocking(allgatherv(Kind::Iallgatherv, sendbuf, sendcount, sendtype, recvbuf,
                                recvcounts, displs, recvtype, comm, request));
}
COLLC_C int collc_dropin_ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm, MPI_Request *request) {
  return nonBlocking(blockMover(Kind::Ialltoall, sendbuf, sendcount, sendtype, recvbuf,
                                recvcount, recvtype, 0, comm, request));
}
COLLC_C int collc_dropin_igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                 MPI_Comm comm, MPI_Request *request) {
  return nonBlocking(blockMover(Kind::Igather, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                recvtype, root, comm, request));
}
COLLC_C int collc_dropin_iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                  MPI_Comm comm, MPI_Request *request) {
  return nonBlocking(blockMover(Kind::Iscatter, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                recvtype, root, comm, request));
}

// A barrier is a blocking collective like the ones collc serves: it ends the
// calls in turn (Requests.h) as they do, so that after it non-blocking calls
// start at once again.
COLLC_C int collc_dropin_barrier(MPI_Comm comm) {
  return serve(barrier(Kind::Barrier, comm, nullptr));
}
COLLC_C int collc_dropin_ibarrier(MPI_Comm comm, MPI_Request *request) {
  return nonBlocking(barrier(Kind::Ibarrier, comm, request));
}

// Freeing a communicator runs the attribute delete callbacks at once (the
// runtime's private duplicate and collc's plans go with them), while MPI lets
// pending operations on it complete afterwards: finish collc's first.
COLLC_C void collc_dropin_before_comm_free(MPI_Comm comm) {
  if (!tlInternal && comm != MPI_COMM_NULL)
    if (Global *g = activeGlobal()) {
      InternalScope internal;
      if (CommState *cs = findState(*g, comm)) {
        finishTurns(*g, *cs);
        drain(*g, *cs);
      }
    }
}

// Communicator constructors: every member of the new communicator is in the
// same blocking call, so its private duplicate is made here, and non-blocking
// collectives on it can use collc from the first call.
COLLC_C void collc_dropin_after_comm_create(MPI_Comm comm) {
  if (!tlInternal && activeGlobal())
    created(comm);
}

COLLC_C void collc_dropin_after_init(void) { startAtInit(); }

COLLC_C void collc_dropin_at_finalize(void) {
  if (!tlInternal)
    if (Global *g = activeGlobal()) {
      InternalScope internal;
      finish(*g);
    }
}

COLLC_C void collc_dropin_component_mode(void) { setComponentMode(); }
