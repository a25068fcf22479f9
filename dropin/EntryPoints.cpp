// dropin/EntryPoints.cpp: the MPI functions libcollc_mpi.so exports
// (exports.map) — MPI_Allreduce, MPI_Reduce, MPI_Iallreduce, MPI_Ireduce,
// MPI_Barrier, MPI_Ibarrier,
// MPI_Init and MPI_Finalize, and the communicator constructors and
// destructors it watches (the rest of the family: FamilyEntryPoints.cpp and
// PersistentEntryPoints.cpp). Each calls its collc_dropin_* function or event of
// Calls.h, which the Open MPI component (component/) calls too; how the
// library is built and what it guarantees is in State.h and docs/dropin.md.
#include "dropin/Calls.h"

#include <mpi.h>

#include <dlfcn.h>

#define COLLC_EXPORT extern "C" __attribute__((visibility("default")))

namespace {
/// The next definition of `name` after this library: MPI's own, or a PMPI
/// tool's preloaded behind collc (docs/dropin.md, "PMPI tools"), so that
/// the functions collc intercepts only to watch (start-up, finalize) still
/// reach such a tool. `pmpi` if there is none.
template <class F> F nextDefinition(const char *name, F pmpi) {
  void *f = dlsym(RTLD_NEXT, name);
  return f ? reinterpret_cast<F>(f) : pmpi;
}
} // namespace

COLLC_EXPORT int MPI_Init(int *argc, char ***argv) {
  static const auto next = nextDefinition("MPI_Init", &PMPI_Init);
  const int rc = next(argc, argv);
  if (rc == MPI_SUCCESS)
    collc_dropin_after_init();
  return rc;
}

COLLC_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  static const auto next = nextDefinition("MPI_Init_thread", &PMPI_Init_thread);
  const int rc = next(argc, argv, required, provided);
  if (rc == MPI_SUCCESS)
    collc_dropin_after_init();
  return rc;
}

COLLC_EXPORT int MPI_Finalize(void) {
  static const auto next = nextDefinition("MPI_Finalize", &PMPI_Finalize);
  collc_dropin_at_finalize();
  return next();
}

COLLC_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return collc_dropin_allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

COLLC_EXPORT int MPI_Reduce(const void *sendbuf, void *recvbuf, int count,
                            MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm) {
  return collc_dropin_reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
}

COLLC_EXPORT int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                MPI_Request *request) {
  return collc_dropin_iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
}

COLLC_EXPORT int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count,
                             MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                             MPI_Request *request) {
  return collc_dropin_ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request);
}

COLLC_EXPORT int MPI_Barrier(MPI_Comm comm) { return collc_dropin_barrier(comm); }

COLLC_EXPORT int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request) {
  return collc_dropin_ibarrier(comm, request);
}

COLLC_EXPORT int MPI_Comm_free(MPI_Comm *comm) {
  if (comm)
    collc_dropin_before_comm_free(*comm);
  return PMPI_Comm_free(comm);
}
COLLC_EXPORT int MPI_Comm_disconnect(MPI_Comm *comm) {
  if (comm)
    collc_dropin_before_comm_free(*comm);
  return PMPI_Comm_disconnect(comm);
}

// Communicator constructors (collc_dropin_after_comm_create).
#define COLLC_AFTER(call, newcomm)                                                         \
  do {                                                                                     \
    const int rc_ = (call);                                                                \
    if (rc_ == MPI_SUCCESS)                                                                \
      collc_dropin_after_comm_create(newcomm);                                             \
    return rc_;                                                                            \
  } while (0)

COLLC_EXPORT int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Comm_dup(comm, newcomm), *newcomm);
}
COLLC_EXPORT int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Comm_dup_with_info(comm, info, newcomm), *newcomm);
}
COLLC_EXPORT int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Comm_split(comm, color, key, newcomm), *newcomm);
}
COLLC_EXPORT int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info,
                                     MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Comm_split_type(comm, type, key, info, newcomm), *newcomm);
}
COLLC_EXPORT int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Comm_create(comm, group, newcomm), *newcomm);
}
COLLC_EXPORT int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                                       MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Comm_create_group(comm, group, tag, newcomm), *newcomm);
}
COLLC_EXPORT int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Intercomm_merge(intercomm, high, newcomm), *newcomm);
}
COLLC_EXPORT int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                                 int reorder, MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm), *newcomm);
}
COLLC_EXPORT int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Cart_sub(comm, remain_dims, newcomm), *newcomm);
}
COLLC_EXPORT int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[],
                                  const int edges[], int reorder, MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm), *newcomm);
}
COLLC_EXPORT int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[],
                                       const int degrees[], const int destinations[],
                                       const int weights[], MPI_Info info, int reorder,
                                       MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Dist_graph_create(comm, n, sources, degrees, destinations, weights, info,
                                     reorder, newcomm),
              *newcomm);
}
COLLC_EXPORT int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                                const int sourceweights[], int outdegree,
                                                const int destinations[],
                                                const int destweights[], MPI_Info info,
                                                int reorder, MPI_Comm *newcomm) {
  COLLC_AFTER(PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights,
                                              outdegree, destinations, destweights, info,
                                              reorder, newcomm),
              *newcomm);
}
#undef COLLC_AFTER

