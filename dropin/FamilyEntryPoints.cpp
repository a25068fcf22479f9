// dropin/FamilyEntryPoints.cpp: the rest of the reduction family and its
// building blocks as libcollc_mpi.so exports them (exports.map) —
// MPI_Reduce_scatter_block, MPI_Reduce_scatter, MPI_Scan, MPI_Exscan,
// MPI_Allgather, MPI_Bcast and their MPI_I* forms. Each becomes an Args for
// serve(), as MPI_Allreduce does (EntryPoints.cpp); MPI_IN_PLACE keeps the
// meaning each MPI function gives it (the runtime follows the man pages).
#include "dropin/Serve.h"

#include <mpi.h>

#define COLLC_EXPORT extern "C" __attribute__((visibility("default")))

using namespace collc::dropin;

namespace {

Args reducing(Kind k, const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
              MPI_Op op, MPI_Comm comm, MPI_Request *request) {
  return Args{k, sendbuf, recvbuf, count, type, op, 0, comm, request};
}

Args allgather(Kind k, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
  Args a{k, sendbuf, recvbuf, recvcount, recvtype, MPI_OP_NULL, 0, comm, request};
  a.sendcount = sendcount;
  a.sendtype = sendtype;
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

/// A non-blocking call without a request pointer is MPI's to report.
int nonBlocking(const Args &a) { return a.request ? serve(a) : native(a); }

} // namespace

COLLC_EXPORT int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return serve(reducing(Kind::ReduceScatterBlock, sendbuf, recvbuf, recvcount, datatype, op,
                        comm, nullptr));
}

COLLC_EXPORT int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return serve(reduceScatter(Kind::ReduceScatter, sendbuf, recvbuf, recvcounts, datatype, op,
                             comm, nullptr));
}

COLLC_EXPORT int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm) {
  return serve(reducing(Kind::Scan, sendbuf, recvbuf, count, datatype, op, comm, nullptr));
}

COLLC_EXPORT int MPI_Exscan(const void *sendbuf, void *recvbuf, int count,
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return serve(reducing(Kind::Exscan, sendbuf, recvbuf, count, datatype, op, comm, nullptr));
}

COLLC_EXPORT int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype,
                               MPI_Comm comm) {
  return serve(allgather(Kind::Allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, comm, nullptr));
}

COLLC_EXPORT int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root,
                           MPI_Comm comm) {
  return serve(bcast(Kind::Bcast, buffer, count, datatype, root, comm, nullptr));
}

COLLC_EXPORT int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                           MPI_Request *request) {
  return nonBlocking(reducing(Kind::IreduceScatterBlock, sendbuf, recvbuf, recvcount, datatype,
                              op, comm, request));
}

COLLC_EXPORT int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                     MPI_Request *request) {
  return nonBlocking(reduceScatter(Kind::IreduceScatter, sendbuf, recvbuf, recvcounts, datatype,
                                   op, comm, request));
}

COLLC_EXPORT int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm, MPI_Request *request) {
  return nonBlocking(
      reducing(Kind::Iscan, sendbuf, recvbuf, count, datatype, op, comm, request));
}

COLLC_EXPORT int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                             MPI_Request *request) {
  return nonBlocking(
      reducing(Kind::Iexscan, sendbuf, recvbuf, count, datatype, op, comm, request));
}

COLLC_EXPORT int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                MPI_Comm comm, MPI_Request *request) {
  return nonBlocking(allgather(Kind::Iallgather, sendbuf, sendcount, sendtype, recvbuf,
                               recvcount, recvtype, comm, request));
}

COLLC_EXPORT int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root,
                            MPI_Comm comm, MPI_Request *request) {
  return nonBlocking(bcast(Kind::Ibcast, buffer, count, datatype, root, comm, request));
}
