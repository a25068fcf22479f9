// dropin/PersistentEntryPoints.cpp: the persistent collectives libcollc_mpi.so
// exports (exports.map) — Open MPI 4.1's MPIX_Allreduce_init, MPIX_Reduce_init,
// MPIX_Reduce_scatter_block_init, MPIX_Reduce_scatter_init, MPIX_Scan_init,
// MPIX_Exscan_init, MPIX_Allgather_init, MPIX_Bcast_init, MPIX_Alltoall_init,
// MPIX_Gather_init, MPIX_Scatter_init, MPIX_Allgatherv_init, MPIX_Gatherv_init,
// MPIX_Scatterv_init, MPIX_Alltoallv_init and MPIX_Barrier_init (mpi-ext.h), or
// MPI 4's MPI_*_init of the same names when built against an MPI 4 library
// (COLLC_INIT) — and MPI_Start, MPI_Startall and MPI_Request_free, which pass every request
// that is not collc's to MPI (Persistent.h).
#include "dropin/Persistent.h"
#include "dropin/Serve.h"

#include <mpi.h>

#define COLLC_EXPORT extern "C" __attribute__((visibility("default")))

using namespace collc::dropin;

#if COLLC_HAVE_PERSISTENT
namespace {
Args persistent(Kind k, const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
  Args a{k, sendbuf, recvbuf, count, type, op, root, comm, request};
  a.info = info;
  return a;
}
/// Without a request pointer, MPI reports the error.
int init(const Args &a) { return a.request ? serve(a) : nativeInit(a); }
} // namespace

COLLC_EXPORT int COLLC_INIT(Allreduce)(const void *sendbuf, void *recvbuf, int count,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                     MPI_Info info, MPI_Request *request) {
  return init(persistent(Kind::AllreduceInit, sendbuf, recvbuf, count, datatype, op, 0, comm,
                         info, request));
}

COLLC_EXPORT int COLLC_INIT(Reduce)(const void *sendbuf, void *recvbuf, int count,
                                  MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                                  MPI_Info info, MPI_Request *request) {
  return init(persistent(Kind::ReduceInit, sendbuf, recvbuf, count, datatype, op, root, comm,
                         info, request));
}

COLLC_EXPORT int COLLC_INIT(Reduce_scatter_block)(const void *sendbuf, void *recvbuf,
                                                int recvcount, MPI_Datatype datatype,
                                                MPI_Op op, MPI_Comm comm, MPI_Info info,
                                                MPI_Request *request) {
  return init(persistent(Kind::ReduceScatterBlockInit, sendbuf, recvbuf, recvcount, datatype,
                         op, 0, comm, info, request));
}

COLLC_EXPORT int COLLC_INIT(Reduce_scatter)(const void *sendbuf, void *recvbuf,
                                          const int recvcounts[], MPI_Datatype datatype,
                                          MPI_Op op, MPI_Comm comm, MPI_Info info,
                                          MPI_Request *request) {
  Args a = persistent(Kind::ReduceScatterInit, sendbuf, recvbuf, 0, datatype, op, 0, comm, info,
                      request);
  a.recvcounts = recvcounts;
  return init(a);
}

COLLC_EXPORT int COLLC_INIT(Scan)(const void *sendbuf, void *recvbuf, int count,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                MPI_Request *request) {
  return init(persistent(Kind::ScanInit, sendbuf, recvbuf, count, datatype, op, 0, comm, info,
                         request));
}

COLLC_EXPORT int COLLC_INIT(Exscan)(const void *sendbuf, void *recvbuf, int count,
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                  MPI_Info info, MPI_Request *request) {
  return init(persistent(Kind::ExscanInit, sendbuf, recvbuf, count, datatype, op, 0, comm, info,
                         request));
}

COLLC_EXPORT int COLLC_INIT(Allgather)(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                     MPI_Comm comm, MPI_Info info, MPI_Request *request) {
  Args a = persistent(Kind::AllgatherInit, sendbuf, recvbuf, recvcount, recvtype, MPI_OP_NULL,
                      0, comm, info, request);
  a.sendcount = sendcount;
  a.sendtype = sendtype;
  return init(a);
}

COLLC_EXPORT int COLLC_INIT(Barrier)(MPI_Comm comm, MPI_Info info, MPI_Request *request) {
  return init(persistent(Kind::BarrierInit, nullptr, nullptr, 0, MPI_BYTE, MPI_OP_NULL, 0, comm,
                         info, request));
}

COLLC_EXPORT int COLLC_INIT(Bcast)(void *buffer, int count, MPI_Datatype datatype, int root,
                                 MPI_Comm comm, MPI_Info info, MPI_Request *request) {
  return init(persistent(Kind::BcastInit, nullptr, buffer, count, datatype, MPI_OP_NULL, root,
                         comm, info, request));
}

namespace {
Args blockMover(Kind k, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                MPI_Request *request) {
  Args a = persistent(k, sendbuf, recvbuf, recvcount, recvtype, MPI_OP_NULL, root, comm, info,
                      request);
  a.sendcount = sendcount;
  a.sendtype = sendtype;
  return a;
}
} // namespace

COLLC_EXPORT int COLLC_INIT(Allgatherv)(const void *sendbuf, int sendcount,
                                        MPI_Datatype sendtype, void *recvbuf,
                                        const int recvcounts[], const int displs[],
                                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                        MPI_Request *request) {
  Args a = blockMover(Kind::AllgathervInit, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype,
                      0, comm, info, request);
  a.recvcounts = recvcounts;
  a.displs = displs;
  return init(a);
}

COLLC_EXPORT int COLLC_INIT(Alltoall)(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                      void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                      MPI_Comm comm, MPI_Info info, MPI_Request *request) {
  return init(blockMover(Kind::AlltoallInit, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, 0, comm, info, request));
}

COLLC_EXPORT int COLLC_INIT(Gather)(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                    int root, MPI_Comm comm, MPI_Info info,
                                    MPI_Request *request) {
  return init(blockMover(Kind::GatherInit, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, root, comm, info, request));
}

COLLC_EXPORT int COLLC_INIT(Scatter)(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                     int root, MPI_Comm comm, MPI_Info info,
                                     MPI_Request *request) {
  return init(blockMover(Kind::ScatterInit, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, root, comm, info, request));
}

COLLC_EXPORT int COLLC_INIT(Gatherv)(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void *recvbuf, const int recvcounts[], const int displs[],
                                     MPI_Datatype recvtype, int root, MPI_Comm comm,
                                     MPI_Info info, MPI_Request *request) {
  Args a = blockMover(Kind::GathervInit, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype,
                      root, comm, info, request);
  a.recvcounts = recvcounts;
  a.displs = displs;
  return init(a);
}

COLLC_EXPORT int COLLC_INIT(Scatterv)(const void *sendbuf, const int sendcounts[],
                                      const int displs[], MPI_Datatype sendtype, void *recvbuf,
                                      int recvcount, MPI_Datatype recvtype, int root,
                                      MPI_Comm comm, MPI_Info info, MPI_Request *request) {
  Args a = blockMover(Kind::ScattervInit, sendbuf, 0, sendtype, recvbuf, recvcount, recvtype,
                      root, comm, info, request);
  a.sendcounts = sendcounts;
  a.sdispls = displs;
  return init(a);
}

COLLC_EXPORT int COLLC_INIT(Alltoallv)(const void *sendbuf, const int sendcounts[],
                                       const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                       const int recvcounts[], const int rdispls[],
                                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                       MPI_Request *request) {
  Args a = blockMover(Kind::AlltoallvInit, sendbuf, 0, sendtype, recvbuf, 0, recvtype, 0, comm,
                      info, request);
  a.sendcounts = sendcounts;
  a.sdispls = sdispls;
  a.recvcounts = recvcounts;
  a.displs = rdispls;
  return init(a);
}

#endif // COLLC_HAVE_PERSISTENT

COLLC_EXPORT int MPI_Start(MPI_Request *request) {
  if (int rc = 0; !tlInternal && startPersistent(request, rc))
    return rc;
  return PMPI_Start(request);
}

// In array order, so collc's executions start in the same order on every rank.
COLLC_EXPORT int MPI_Startall(int count, MPI_Request requests[]) {
  if (tlInternal || count <= 0 || !requests)
    return PMPI_Startall(count, requests);
  for (int i = 0; i < count; ++i) {
    int rc = 0;
    if (!startPersistent(&requests[i], rc))
      rc = PMPI_Start(&requests[i]);
    if (rc != MPI_SUCCESS)
      return rc;
  }
  return MPI_SUCCESS;
}

COLLC_EXPORT int MPI_Request_free(MPI_Request *request) {
  if (int rc = 0; !tlInternal && freePersistent(request, rc))
    return rc;
  return PMPI_Request_free(request);
}
