/* dropin/Calls.h: the collectives collc serves, and the events it watches, as
 * one C-callable surface shared by the two ways into an unmodified program
 * (docs/dropin.md):
 *  - the PMPI library libcollc_mpi.so, whose exported MPI_* functions
 *    (EntryPoints.cpp, FamilyEntryPoints.cpp) call these;
 *  - the Open MPI component coll/collc (component/coll_collc.c), whose module
 *    functions call these.
 * Each collective builds the call's Args and runs serve() (Serve.h): one
 * decision path. The native calls serve() makes go to PMPI_*, which under the
 * component come back to it and are passed to the next module by priority.
 * C linkage so that the component's C glue (built against Open MPI's
 * internal headers, which are C) can call them; hidden in both libraries. */
#ifndef COLLC_DROPIN_CALLS_H
#define COLLC_DROPIN_CALLS_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

int collc_dropin_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                           MPI_Op op, MPI_Comm comm);
int collc_dropin_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                        int root, MPI_Comm comm);
int collc_dropin_reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                      MPI_Datatype type, MPI_Op op, MPI_Comm comm);
int collc_dropin_reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                MPI_Datatype type, MPI_Op op, MPI_Comm comm);
int collc_dropin_scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                      MPI_Comm comm);
int collc_dropin_exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                        MPI_Comm comm);
int collc_dropin_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int collc_dropin_bcast(void *buffer, int count, MPI_Datatype type, int root, MPI_Comm comm);
int collc_dropin_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm);
int collc_dropin_gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         int root, MPI_Comm comm);
int collc_dropin_scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                          MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, int root, MPI_Comm comm);
int collc_dropin_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int collc_dropin_alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                           const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm);
int collc_dropin_igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                          int root, MPI_Comm comm, MPI_Request *request);
int collc_dropin_iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                           MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request);
int collc_dropin_ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request);
int collc_dropin_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int collc_dropin_gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int collc_dropin_scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);

int collc_dropin_iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                            MPI_Op op, MPI_Comm comm, MPI_Request *request);
int collc_dropin_ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                         MPI_Op op, int root, MPI_Comm comm, MPI_Request *request);
int collc_dropin_ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                       MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                       MPI_Request *request);
int collc_dropin_ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                 MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request *request);
int collc_dropin_iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm, MPI_Request *request);
int collc_dropin_iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                         MPI_Op op, MPI_Comm comm, MPI_Request *request);
int collc_dropin_iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request);
int collc_dropin_ibcast(void *buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
                        MPI_Request *request);
int collc_dropin_iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int collc_dropin_ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request *request);
int collc_dropin_igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                         MPI_Request *request);
int collc_dropin_iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                          MPI_Request *request);

/* The barrier, served by a barrier plan (it ends the calls in turn,
 * Requests.h, as every blocking collective collc serves does). */
int collc_dropin_barrier(MPI_Comm comm);
int collc_dropin_ibarrier(MPI_Comm comm, MPI_Request *request);
/* `comm` is about to be freed: collc's work on it is finished first. */
void collc_dropin_before_comm_free(MPI_Comm comm);
/* `comm` was just made by a blocking constructor every member is in. */
void collc_dropin_after_comm_create(MPI_Comm comm);
/* MPI_Init succeeded (settings are compared across the ranks). */
void collc_dropin_after_init(void);
/* This process is served through Open MPI's coll/collc component. */
void collc_dropin_component_mode(void);
/* MPI_Finalize is starting (MPI still works): collc's work ends, and with
 * COLLC_STATS its report is printed. */
void collc_dropin_at_finalize(void);

#ifdef __cplusplus
}
#endif

#endif /* COLLC_DROPIN_CALLS_H */
