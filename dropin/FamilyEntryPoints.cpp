// dropin/FamilyEntryPoints.cpp: the rest of the reduction family and its
// building blocks as libcollc_mpi.so exports them (exports.map) —
// MPI_Reduce_scatter_block, MPI_Reduce_scatter, MPI_Scan, MPI_Exscan,
// MPI_Allgather, MPI_Bcast, and the block movers MPI_Alltoall, MPI_Gather
// and MPI_Scatter, and their MPI_I* forms; MPI_Allgatherv and
// MPI_Iallgatherv; MPI_Gatherv, MPI_Scatterv and MPI_Alltoallv and their
// MPI_I* forms. Each calls its collc_dropin_*
// function (Calls.h), as MPI_Allreduce does (EntryPoints.cpp); MPI_IN_PLACE
// keeps the meaning each MPI function gives it (the runtime follows the man
// pages).
#include "dropin/Calls.h"

#include <mpi.h>

#define COLLC_EXPORT extern "C" __attribute__((visibility("default")))

COLLC_EXPORT int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return collc_dropin_reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
}

COLLC_EXPORT int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return collc_dropin_reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
}

COLLC_EXPORT int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm) {
  return collc_dropin_scan(sendbuf, recvbuf, count, datatype, op, comm);
}

COLLC_EXPORT int MPI_Exscan(const void *sendbuf, void *recvbuf, int count,
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return collc_dropin_exscan(sendbuf, recvbuf, count, datatype, op, comm);
}

COLLC_EXPORT int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype,
                               MPI_Comm comm) {
  return collc_dropin_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

COLLC_EXPORT int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root,
                           MPI_Comm comm) {
  return collc_dropin_bcast(buffer, count, datatype, root, comm);
}

COLLC_EXPORT int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                           MPI_Request *request) {
  return collc_dropin_ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request);
}

COLLC_EXPORT int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                     MPI_Request *request) {
  return collc_dropin_ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
}

COLLC_EXPORT int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm, MPI_Request *request) {
  return collc_dropin_iscan(sendbuf, recvbuf, count, datatype, op, comm, request);
}

COLLC_EXPORT int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                             MPI_Request *request) {
  return collc_dropin_iexscan(sendbuf, recvbuf, count, datatype, op, comm, request);
}

COLLC_EXPORT int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                MPI_Comm comm, MPI_Request *request) {
  return collc_dropin_iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                          request);
}

COLLC_EXPORT int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root,
                            MPI_Comm comm, MPI_Request *request) {
  return collc_dropin_ibcast(buffer, count, datatype, root, comm, request);
}

COLLC_EXPORT int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, const int recvcounts[], const int displs[],
                                MPI_Datatype recvtype, MPI_Comm comm) {
  return collc_dropin_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                 recvtype, comm);
}

COLLC_EXPORT int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return collc_dropin_gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                              recvtype, root, comm);
}

COLLC_EXPORT int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                              MPI_Datatype sendtype, void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return collc_dropin_scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                               recvtype, root, comm);
}

COLLC_EXPORT int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return collc_dropin_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                rdispls, recvtype, comm);
}

COLLC_EXPORT int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               const MPI_Datatype sendtypes[], void *recvbuf,
                               const int recvcounts[], const int rdispls[],
                               const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return collc_dropin_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                rdispls, recvtypes, comm);
}

COLLC_EXPORT int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, int root, MPI_Comm comm,
                              MPI_Request *request) {
  return collc_dropin_igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                               recvtype, root, comm, request);
}

COLLC_EXPORT int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                               MPI_Datatype sendtype, void *recvbuf, int recvcount,
                               MPI_Datatype recvtype, int root, MPI_Comm comm,
                               MPI_Request *request) {
  return collc_dropin_iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                recvtype, root, comm, request);
}

COLLC_EXPORT int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Request *request) {
  return collc_dropin_ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                 rdispls, recvtype, comm, request);
}

COLLC_EXPORT int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return collc_dropin_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

COLLC_EXPORT int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm) {
  return collc_dropin_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                             comm);
}

COLLC_EXPORT int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                             MPI_Comm comm) {
  return collc_dropin_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                              comm);
}

COLLC_EXPORT int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, const int recvcounts[], const int displs[],
                                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
  return collc_dropin_iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                  recvtype, comm, request);
}

COLLC_EXPORT int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request *request) {
  return collc_dropin_ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                request);
}

COLLC_EXPORT int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                             MPI_Comm comm, MPI_Request *request) {
  return collc_dropin_igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                              comm, request);
}

COLLC_EXPORT int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                              MPI_Comm comm, MPI_Request *request) {
  return collc_dropin_iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                               comm, request);
}
