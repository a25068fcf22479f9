/* collc/collc.h: the C API of the collc runtime.
 *
 * Load a compiled plan (.cplan, from `collc compile`) and execute it as an
 * MPI collective: blocking, non-blocking (start, then test/wait, which
 * progress it) or persistent (bind buffers once, start many times, like
 * MPI_Allreduce_init). Every function returns COLLC_SUCCESS or an error code;
 * collc_strerror() names a code and collc_error_message() says, for the last
 * failure on the calling thread, exactly what was wrong.
 *
 * Plans are checked against each call: the collective, the communicator's
 * size and the root must match the plan's shape. A plan that needs a
 * commutative operation is refused for a non-commutative one
 * (COLLC_ERR_UNSUPPORTED) — never a wrong answer. Datatypes: the predefined
 * ones with the predefined operations the MPI standard defines for them run
 * collc's own kernels; user-defined operations (MPI_Op_create), on predefined
 * or contiguous derived datatypes, go through MPI_Reduce_local with the
 * operands in the order the plan names; anything else (non-contiguous types,
 * predefined operations on derived types, pairs MPI does not define) is
 * refused. MPI_IN_PLACE is accepted
 * where MPI allows it (allreduce: every rank; reduce: the root; see below for
 * the others); if the plan
 * is not proven for in-place use, the input is first copied aside.
 *
 * Thread safety: calls on different communicators may run concurrently
 * (MPI_THREAD_MULTIPLE); a request is used by one thread at a time.
 */
#ifndef COLLC_COLLC_H
#define COLLC_COLLC_H

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  COLLC_SUCCESS = 0,
  COLLC_ERR_ARG = 1,         /* null pointer, negative count, bad handle */
  COLLC_ERR_IO = 2,          /* a plan file cannot be read */
  COLLC_ERR_PLAN = 3,        /* the bytes are not a valid compiled plan */
  COLLC_ERR_SHAPE = 4,       /* plan and call disagree: collective, ranks, root */
  COLLC_ERR_UNSUPPORTED = 5, /* datatype, operation or in-place use the plan cannot serve */
  COLLC_ERR_MPI = 6,         /* an MPI call failed */
  COLLC_ERR_STATE = 7,       /* a request used in the wrong state */
  COLLC_ERR_NOMEM = 8        /* out of memory */
};

typedef struct collc_plan_s *collc_plan;       /* a loaded plan */
typedef struct collc_request_s *collc_request; /* a non-blocking or persistent execution */

#define COLLC_PLAN_NULL ((collc_plan)0)
#define COLLC_REQUEST_NULL ((collc_request)0)

/* The collectives a plan can implement (values as in the bytecode). */
enum {
  COLLC_ALLREDUCE = 0,
  COLLC_REDUCE = 1,
  COLLC_REDUCE_SCATTER_BLOCK = 2,
  COLLC_ALLGATHER = 3,
  COLLC_BCAST = 4,
  COLLC_SCAN = 5,
  COLLC_EXSCAN = 6,
  COLLC_ALLTOALL = 7,
  COLLC_GATHER = 8,
  COLLC_SCATTER = 9,
  COLLC_BARRIER = 10
};

typedef struct collc_plan_info {
  int collective;      /* COLLC_ALLREDUCE, ... */
  int ranks;           /* communicator size the plan is for */
  int root;            /* reduce, bcast, gather, scatter; 0 otherwise */
  int chunks;
  int commutative;     /* 1: only correct for commutative operations */
  int in_place;        /* 1: proven with MPI_IN_PLACE too */
  const char *algorithm; /* owned by the plan */
  int verified;        /* 1: the file records a proof (collc compile without --no-verify) */
  int identical;       /* 1: proven to give every rank the same bits (allreduce) */
} collc_plan_info;

/* Loading. The bytes are fully validated before anything can run. */
int collc_plan_load_file(const char *path, collc_plan *plan);
int collc_plan_load_memory(const void *data, size_t size, collc_plan *plan);
/* Frees the plan and sets *plan to COLLC_PLAN_NULL. Requests made from it
 * must have been freed. */
int collc_plan_free(collc_plan *plan);
int collc_plan_get_info(collc_plan plan, collc_plan_info *info);

/* Blocking execution. */
int collc_allreduce(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int collc_reduce(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                 MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm);

/* Non-blocking: the request completes in collc_test/collc_wait, which free
 * it and set *request to COLLC_REQUEST_NULL. Several may be in flight on
 * one communicator; they are started in the same order on every rank. */
int collc_iallreduce(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, collc_request *request);
int collc_ireduce(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                  MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                  collc_request *request);

/* Persistent: binds buffers once; collc_start runs it again (allocating
 * nothing), collc_test/collc_wait complete one run and keep the request;
 * collc_request_free releases it. */
int collc_allreduce_init(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                         collc_request *request);
int collc_reduce_init(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                      MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                      collc_request *request);
int collc_start(collc_request request);

/* The rest of the family, with MPI's arguments and meanings (MPI_IN_PLACE as
 * each MPI function defines it). A reduce_scatter_block plan serves both
 * reduce-scatters: with recvcounts, block r of its chunks holds recvcounts[r]
 * elements. allgather: count is what each rank contributes (one datatype and
 * count for send and receive). Each comes blocking, non-blocking (i...) and
 * persistent (..._init), as allreduce does. */
int collc_reduce_scatter_block(collc_plan plan, const void *sendbuf, void *recvbuf,
                               MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm);
int collc_ireduce_scatter_block(collc_plan plan, const void *sendbuf, void *recvbuf,
                                MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm comm, collc_request *request);
int collc_reduce_scatter_block_init(collc_plan plan, const void *sendbuf, void *recvbuf,
                                    MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op,
                                    MPI_Comm comm, collc_request *request);
int collc_reduce_scatter(collc_plan plan, const void *sendbuf, void *recvbuf,
                         const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op,
                         MPI_Comm comm);
int collc_ireduce_scatter(collc_plan plan, const void *sendbuf, void *recvbuf,
                          const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm, collc_request *request);
int collc_reduce_scatter_init(collc_plan plan, const void *sendbuf, void *recvbuf,
                              const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm, collc_request *request);
int collc_scan(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int collc_iscan(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, collc_request *request);
int collc_scan_init(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, collc_request *request);
/* Rank 0's recvbuf is not significant (MPI: undefined after the call); it
 * may be NULL unless sendbuf is MPI_IN_PLACE. */
int collc_exscan(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int collc_iexscan(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, collc_request *request);
int collc_exscan_init(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, collc_request *request);
int collc_allgather(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                    MPI_Datatype datatype, MPI_Comm comm);
int collc_iallgather(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                     MPI_Datatype datatype, MPI_Comm comm, collc_request *request);
int collc_allgather_init(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Comm comm, collc_request *request);
/* allgatherv on an allgather plan: rank r contributes recvcounts[r] elements
 * (zeros allowed), and recvbuf holds the p blocks one after another, block r
 * at recvcounts[0] + ... + recvcounts[r-1] (MPI_Allgatherv with displs the
 * prefix sums); MPI_IN_PLACE as sendbuf takes rank r's block from there. An
 * allgather plan is proven for every such count vector (docs/plan-format.md). */
int collc_allgatherv(collc_plan plan, const void *sendbuf, void *recvbuf,
                     const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Comm comm);
int collc_iallgatherv(collc_plan plan, const void *sendbuf, void *recvbuf,
                      const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Comm comm,
                      collc_request *request);
int collc_allgatherv_init(collc_plan plan, const void *sendbuf, void *recvbuf,
                          const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Comm comm,
                          collc_request *request);
int collc_bcast(collc_plan plan, void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
                MPI_Comm comm);
int collc_ibcast(collc_plan plan, void *buffer, MPI_Count count, MPI_Datatype datatype,
                 int root, MPI_Comm comm, collc_request *request);
int collc_bcast_init(collc_plan plan, void *buffer, MPI_Count count, MPI_Datatype datatype,
                     int root, MPI_Comm comm, collc_request *request);

/* The collectives that move blocks. count is the elements of one block (one
 * datatype and count for send and receive, as MPI's sendcount/sendtype with
 * matching recvcount/recvtype). alltoall: sendbuf and recvbuf hold p blocks;
 * MPI_IN_PLACE as sendbuf takes the data from recvbuf. gather: every rank
 * sends one block, the root's recvbuf receives p (only the root's recvbuf is
 * significant; MPI_IN_PLACE as the root's sendbuf: its block is already in
 * place). scatter: the root's sendbuf holds p blocks, every rank receives
 * one (MPI_IN_PLACE as the root's recvbuf: its block stays in sendbuf). */
int collc_alltoall(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                   MPI_Datatype datatype, MPI_Comm comm);
int collc_ialltoall(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                    MPI_Datatype datatype, MPI_Comm comm, collc_request *request);
int collc_alltoall_init(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Comm comm, collc_request *request);
int collc_gather(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                 MPI_Datatype datatype, int root, MPI_Comm comm);
int collc_igather(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                  MPI_Datatype datatype, int root, MPI_Comm comm, collc_request *request);
int collc_gather_init(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                      MPI_Datatype datatype, int root, MPI_Comm comm, collc_request *request);
int collc_scatter(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                  MPI_Datatype datatype, int root, MPI_Comm comm);
int collc_iscatter(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                   MPI_Datatype datatype, int root, MPI_Comm comm, collc_request *request);
int collc_scatter_init(collc_plan plan, const void *sendbuf, void *recvbuf, MPI_Count count,
                       MPI_Datatype datatype, int root, MPI_Comm comm, collc_request *request);

/* The v-variants of the block movers, on plans of gather, scatter and
 * alltoall whose every rank moves only the blocks of its own call, straight
 * between in and out (the library's linear gather and scatter, linear and
 * pairwise alltoall): a rank knows the sizes of those blocks only. Blocks lie
 * one after another (MPI's displs the prefix sums of the counts); zero
 * counts are allowed. gatherv: every rank sends sendcount elements; the
 * root's recvcounts (significant there only) give each rank's block, its own
 * equal to its sendcount unless sendbuf is MPI_IN_PLACE. scatterv: the
 * root's sendcounts (significant there only), recvcount at each rank, the
 * root's equal to its sendcounts entry unless recvbuf is MPI_IN_PLACE.
 * alltoallv: block j of sendbuf (sendcounts[j] elements) goes to rank j,
 * block j of recvbuf (recvcounts[j]) comes from rank j; MPI_IN_PLACE as
 * sendbuf takes the data from recvbuf, laid out by recvcounts. A plan that
 * moves another rank's block (binomial, Bruck) is refused with
 * COLLC_ERR_UNSUPPORTED on the ranks it would make do so. */
int collc_gatherv(collc_plan plan, const void *sendbuf, MPI_Count sendcount, void *recvbuf,
                  const MPI_Count recvcounts[], MPI_Datatype datatype, int root, MPI_Comm comm);
int collc_igatherv(collc_plan plan, const void *sendbuf, MPI_Count sendcount, void *recvbuf,
                   const MPI_Count recvcounts[], MPI_Datatype datatype, int root, MPI_Comm comm,
                   collc_request *request);
int collc_gatherv_init(collc_plan plan, const void *sendbuf, MPI_Count sendcount, void *recvbuf,
                       const MPI_Count recvcounts[], MPI_Datatype datatype, int root,
                       MPI_Comm comm, collc_request *request);
int collc_scatterv(collc_plan plan, const void *sendbuf, const MPI_Count sendcounts[],
                   void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, int root,
                   MPI_Comm comm);
int collc_iscatterv(collc_plan plan, const void *sendbuf, const MPI_Count sendcounts[],
                    void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, int root,
                    MPI_Comm comm, collc_request *request);
int collc_scatterv_init(collc_plan plan, const void *sendbuf, const MPI_Count sendcounts[],
                        void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, int root,
                        MPI_Comm comm, collc_request *request);
int collc_alltoallv(collc_plan plan, const void *sendbuf, const MPI_Count sendcounts[],
                    void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype,
                    MPI_Comm comm);
int collc_ialltoallv(collc_plan plan, const void *sendbuf, const MPI_Count sendcounts[],
                     void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype,
                     MPI_Comm comm, collc_request *request);
int collc_alltoallv_init(collc_plan plan, const void *sendbuf, const MPI_Count sendcounts[],
                         void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype,
                         MPI_Comm comm, collc_request *request);

/* The barrier, on a barrier plan: its messages carry no bytes, and the
 * verifier proved that no rank leaves before every rank has entered
 * (docs/plan-format.md, "Barrier"). */
int collc_barrier(collc_plan plan, MPI_Comm comm);
int collc_ibarrier(collc_plan plan, MPI_Comm comm, collc_request *request);
int collc_barrier_init(collc_plan plan, MPI_Comm comm, collc_request *request);

/* *flag = 1 when the request's execution has finished. */
int collc_test(collc_request *request, int *flag);
int collc_wait(collc_request *request);
int collc_request_free(collc_request *request);

/* Transports (docs/shm-transport.md). Ranks of a communicator that share a
 * node exchange messages through shared memory, the others through MPI
 * point-to-point; results are the same either way, bit for bit. The choice
 * is process-wide, from COLLC_TRANSPORT=auto|shm|mpi (default auto) or
 * collc_set_transport(), and applies to communicators collc first uses
 * afterwards; every rank of a communicator must make the same choice. Where
 * shared memory cannot be set up, the ranks use MPI instead (never an
 * error): such fallbacks are counted, explained with COLLC_DEBUG=1, and with
 * COLLC_TRANSPORT=shm also warned about on stderr. */
typedef enum collc_transport {
  COLLC_TRANSPORT_AUTO = 0, /* shared memory between ranks of a node, MPI otherwise */
  COLLC_TRANSPORT_SHM = 1,  /* the same, and a fallback to MPI is a warning */
  COLLC_TRANSPORT_MPI = 2   /* MPI point-to-point for every message */
} collc_transport;
int collc_set_transport(collc_transport transport);
int collc_get_transport(collc_transport *transport);
/* How many other ranks of `comm` this rank reaches through shared memory
 * (0 with the MPI transport). Sets up the shared memory of a communicator
 * still on MPI (COLLC_SHM_AFTER), so it is collective the first time collc
 * sees `comm` and until then. */
int collc_comm_shm_peers(MPI_Comm comm, int *peers);
/* How many times shared memory was wanted but MPI used instead (a node where
 * it could not be set up, an element larger than a segment), in this process. */
int collc_transport_fallbacks(long long *count);

/* "invalid argument", ... for a code; never NULL. */
const char *collc_strerror(int status);
/* What the last failing call on this thread said, e.g. "plan 'ring' needs a
 * commutative operation, but the operation is not commutative"; "" if none. */
const char *collc_error_message(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* COLLC_COLLC_H */
