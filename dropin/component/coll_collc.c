/* dropin/component/coll_collc.c: coll/collc, the Open MPI component
 * (mca_coll_collc.so) — Open MPI's own way into an unmodified program, beside
 * the LD_PRELOAD library (docs/dropin.md, "The Open MPI component").
 *
 * Selected by priority like coll/tuned and coll/han: with
 * `--mca coll_collc_priority 90` (0, the default, leaves it out) its module
 * takes the collectives collc serves on every intra-communicator, and keeps
 * the functions of the modules below it (those Open MPI had installed when
 * our module is enabled: the next by priority). Each of its functions calls
 * the collc_dropin_* function of dropin/Calls.h, the decision path libcollc_mpi.so
 * runs too; the native calls that path makes go back through MPI into this
 * module, which passes them, and everything collc itself calls while it
 * serves a call, to the module below (the thread-local `nested`).
 *
 * Under the component:
 *  - a non-blocking call with a derived datatype or a user-defined
 *    operation goes to the module below: Open MPI's MPI_I* functions
 *    attach those handles to the request they get back as if it were one of
 *    Open MPI's own (ompi_coll_base_retain_op), which collc's is not;
 *  - so are MPI_Ialltoall, MPI_Igather and MPI_Iscatter, whatever their
 *    datatypes: a rank's own datatypes cannot decide (the ranks may pass
 *    different ones of one signature, and a gather's non-root has no receive
 *    datatype), so that all ranks decide alike;
 *  - persistent collectives (MPIX_*_init) are the module below's;
 *  - collc's work ends at MPI_Finalize through an attribute on
 *    MPI_COMM_SELF (deleted first thing in MPI_Finalize, MPI still working),
 *    and on a communicator being freed through collc's own attribute on it.
 * Its settings are MCA parameters (coll_collc_*), each the COLLC_* variable
 * of the same name, which wins when both are set.
 *
 * C, not C++: it includes Open MPI's internal headers (C only). */
#include "ompi_config.h"

#include "mpi.h"
#include "ompi/attribute/attribute.h"
#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/coll/base/base.h"
#include "ompi/mca/coll/coll.h"
#include "opal/util/output.h"

#include "dropin/Calls.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- the component ------------------------------------------------------- */

typedef struct {
  mca_coll_base_component_2_0_0_t super;
  int priority;
} collc_component_t;

static int collc_register(void);
static int collc_open(void);
static int collc_init_query(bool threads, bool mpi_threads);
static mca_coll_base_module_t *collc_comm_query(struct ompi_communicator_t *comm, int *priority);

/* The symbol Open MPI's component loader looks for: mca_coll_collc_component. */
OMPI_MODULE_DECLSPEC extern collc_component_t mca_coll_collc_component;
collc_component_t mca_coll_collc_component = {
    .super =
        {
            .collm_version =
                {
                    MCA_COLL_BASE_VERSION_2_0_0,
                    .mca_component_name = "collc",
                    MCA_BASE_MAKE_VERSION(component, OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION,
                                          OMPI_RELEASE_VERSION),
                    .mca_open_component = collc_open,
                    .mca_register_component_params = collc_register,
                },
            .collm_data = {MCA_BASE_METADATA_PARAM_NONE},
            .collm_init_query = collc_init_query,
            .collm_comm_query = collc_comm_query,
        },
    .priority = 0,
};

/* Settings: MCA parameter coll_collc_NAME is the variable COLLC_VAR. */
static const struct {
  const char *name, *var, *help;
} settings[] = {
    {"algorithm", "COLLC_ALGORITHM", "Force algorithms, COLLECTIVE:NAME,... (docs/dropin.md)"},
    {"rules", "COLLC_RULES", "A rules file (collc-rules/1) choosing plans by size and ranks"},
    {"plan_path", "COLLC_PLAN_PATH", "Plan files and bundles (.cplan, .cbundle), colon-separated"},
    {"library", "COLLC_LIBRARY", "Folders of your own algorithms (.calgo), colon-separated"},
    {"stats", "COLLC_STATS", "1: print what collc served and why not at MPI_Finalize"},
    {"debug", "COLLC_DEBUG", "1: one line per decision on stderr"},
    {"verify", "COLLC_VERIFY", "1: prove every plan whole on load"},
    {"transport", "COLLC_TRANSPORT", "auto, shm or mpi: how plans move data"},
    {"trusted", "COLLC_TRUSTED", "Users whose files collc reads besides root and you"},
    {"proof_cache", "COLLC_PROOF_CACHE", "A folder of proof records (collc verify --cache)"},
};
enum { numSettings = sizeof settings / sizeof settings[0] };
static char *values[numSettings];

static int collc_register(void) {
  mca_base_component_t *c = &mca_coll_collc_component.super.collm_version;
  mca_coll_collc_component.priority = 0;
  (void)mca_base_component_var_register(
      c, "priority",
      "Priority of coll/collc (0: not used; 90: above tuned and han, serving the collectives "
      "collc serves and passing the rest to the next component)",
      MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY,
      &mca_coll_collc_component.priority);
  for (int i = 0; i < numSettings; ++i) {
    char help[256];
    snprintf(help, sizeof help, "%s (the variable %s, which wins when both are set)",
             settings[i].help, settings[i].var);
    values[i] = NULL;
    (void)mca_base_component_var_register(c, settings[i].name, help, MCA_BASE_VAR_TYPE_STRING, NULL,
                                          0, 0, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
                                          &values[i]);
  }
  return OMPI_SUCCESS;
}

/* A component built against another Open MPI than the one it is loaded
 * into declines to open (Open MPI then leaves it out) with one message.
 * (tests/dropin/component-load.sh builds one that claims another version.) */
#ifndef COLLC_BUILT_FOR_MAJOR
#define COLLC_BUILT_FOR_MAJOR OMPI_MAJOR_VERSION
#endif
static int collc_open(void) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  unsigned major = 0, minor = 0, release = 0;
  if (PMPI_Get_library_version(version, &len) == MPI_SUCCESS &&
      sscanf(version, "Open MPI v%u.%u.%u", &major, &minor, &release) == 3 &&
      (major != COLLC_BUILT_FOR_MAJOR || minor != OMPI_MINOR_VERSION)) {
    opal_output(0,
                "coll/collc: built for Open MPI %d.%d.%d, loaded into Open MPI %u.%u.%u: not "
                "used (rebuild collc against this Open MPI)",
                COLLC_BUILT_FOR_MAJOR, OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION, major, minor,
                release);
    return OMPI_ERROR;
  }
  for (int i = 0; i < numSettings; ++i)
    if (values[i] && *values[i])
      setenv(settings[i].var, values[i], 0);
  collc_dropin_component_mode();
  return OMPI_SUCCESS;
}

static int collc_init_query(bool threads, bool mpi_threads) {
  (void)threads;
  (void)mpi_threads;
  return OMPI_SUCCESS;
}

/* --- the finalize hook --------------------------------------------------- */

static int finalizeKey = MPI_KEYVAL_INVALID;

static int atFinalize(MPI_Comm comm, int key, void *value, void *extra) {
  (void)comm;
  (void)key;
  (void)value;
  (void)extra;
  collc_dropin_at_finalize();
  return MPI_SUCCESS;
}

/* Not copied when MPI_COMM_SELF is duplicated. */
static int noCopy(MPI_Comm comm, int key, void *extra, void *in, void *out, int *flag,
                  MPI_Comm newcomm) {
  (void)comm;
  (void)key;
  (void)extra;
  (void)in;
  (void)out;
  (void)newcomm;
  *flag = 0;
  return MPI_SUCCESS;
}

/* On MPI_COMM_SELF, whose attributes MPI_Finalize deletes first. */
static void hookFinalize(struct ompi_communicator_t *self) {
  if (finalizeKey != MPI_KEYVAL_INVALID)
    return;
  ompi_attribute_fn_ptr_union_t copy, del;
  copy.attr_communicator_copy_fn = noCopy;
  del.attr_communicator_delete_fn = atFinalize;
  if (ompi_attr_create_keyval(COMM_ATTR, copy, del, &finalizeKey, NULL, 0, NULL) != OMPI_SUCCESS ||
      ompi_attr_set_c(COMM_ATTR, self, &self->c_keyhash, finalizeKey, NULL, false) != OMPI_SUCCESS)
    opal_output(0, "coll/collc: cannot hook MPI_Finalize; COLLC_STATS will print nothing");
}

/* --- the module ---------------------------------------------------------- */

typedef struct {
  mca_coll_base_module_t super;
  mca_coll_base_comm_coll_t below; /* the functions this module replaced */
} collc_module_t;

static void moduleConstruct(collc_module_t *m) { memset(&m->below, 0, sizeof m->below); }

#define COLLC_EACH(X)                                                                              \
  X(allreduce)                                                                                     \
  X(reduce) X(reduce_scatter_block) X(reduce_scatter) X(scan) X(exscan) X(allgather) X(bcast)      \
      X(alltoall) X(gather) X(scatter) X(allgatherv) X(gatherv) X(scatterv) X(alltoallv)           \
          X(barrier) X(iallreduce) X(ireduce)                                                      \
          X(ireduce_scatter_block) X(ireduce_scatter) X(iscan) X(iexscan) X(iallgather)        \
              X(ibcast) X(ibarrier)

static void moduleDestruct(collc_module_t *m) {
#define RELEASE(name)                                                                              \
  if (m->below.coll_##name##_module)                                                               \
    OBJ_RELEASE(m->below.coll_##name##_module);
  COLLC_EACH(RELEASE)
#undef RELEASE
}

OBJ_CLASS_INSTANCE(collc_module_t, mca_coll_base_module_t, moduleConstruct, moduleDestruct);

/* Set while collc serves a call on this thread: every collective it makes
 * meanwhile (natives, agreements) goes to the module below. */
static __thread int nested;

#define BELOW(m, name, ...) (m)->below.coll_##name(__VA_ARGS__, (m)->below.coll_##name##_module)
/* Serves `call` through collc if `ok` (its handles are ones collc can take)
 * and this thread is not already inside collc; else the module below. */
#define SERVE(ok, m, name, call, ...)                                                              \
  do {                                                                                             \
    if (nested || !(ok))                                                                           \
      return BELOW(m, name, __VA_ARGS__);                                                          \
    nested = 1;                                                                                    \
    const int rc_ = (call);                                                                        \
    nested = 0;                                                                                    \
    return rc_;                                                                                    \
  } while (0)
#define M(module) ((collc_module_t *)(module))

/* Open MPI's MPI_I* attach a derived datatype or a user operation to the
 * request as if it were its own (see the top): those go below. (The
 * operations by value: ompi/op/op.h needs Fortran headers Debian does not
 * ship.) */
static int predefinedType(struct ompi_datatype_t *t) {
  return !t || ompi_datatype_is_predefined(t);
}
/* Open MPI's own collectives (a communicator constructor's) reach this
 * module too, some with internal datatypes that MPI cannot describe
 * (MPI_Type_get_envelope fails on them): those go below. */
static int describable(struct ompi_datatype_t *t) { return predefinedType(t) || t->args != NULL; }
static int predefinedOp(struct ompi_op_t *op) {
  static const MPI_Op predefined[] = {MPI_MAX,    MPI_MIN,    MPI_SUM,     MPI_PROD, MPI_LAND,
                                      MPI_BAND,   MPI_LOR,    MPI_BOR,     MPI_LXOR, MPI_BXOR,
                                      MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP};
  if (!op)
    return 1;
  for (size_t i = 0; i < sizeof predefined / sizeof predefined[0]; ++i)
    if (op == predefined[i])
      return 1;
  return 0;
}
static int plainHandles(struct ompi_datatype_t *a, struct ompi_datatype_t *b,
                        struct ompi_op_t *op) {
  return predefinedType(a) && predefinedType(b) && predefinedOp(op);
}

static int allreduce(const void *s, void *r, int n, struct ompi_datatype_t *t, struct ompi_op_t *op,
                     struct ompi_communicator_t *c, mca_coll_base_module_t *mod) {
  SERVE(describable(t), M(mod), allreduce, collc_dropin_allreduce(s, r, n, t, op, c), s, r, n, t,
        op, c);
}
static int reduce(const void *s, void *r, int n, struct ompi_datatype_t *t, struct ompi_op_t *op,
                  int root, struct ompi_communicator_t *c, mca_coll_base_module_t *mod) {
  SERVE(describable(t), M(mod), reduce, collc_dropin_reduce(s, r, n, t, op, root, c), s, r, n, t,
        op, root, c);
}
static int reduce_scatter_block(const void *s, void *r, int n, struct ompi_datatype_t *t,
                                struct ompi_op_t *op, struct ompi_communicator_t *c,
                                mca_coll_base_module_t *mod) {
  SERVE(describable(t), M(mod), reduce_scatter_block,
        collc_dropin_reduce_scatter_block(s, r, n, t, op, c), s, r, n, t, op, c);
}
static int reduce_scatter(const void *s, void *r, const int counts[], struct ompi_datatype_t *t,
                          struct ompi_op_t *op, struct ompi_communicator_t *c,
                          mca_coll_base_module_t *mod) {
  SERVE(describable(t), M(mod), reduce_scatter, collc_dropin_reduce_scatter(s, r, counts, t, op, c),
        s, r, counts, t, op, c);
}
static int scan(const void *s, void *r, int n, struct ompi_datatype_t *t, struct ompi_op_t *op,
                struct ompi_communicator_t *c, mca_coll_base_module_t *mod) {
  SERVE(describable(t), M(mod), scan, collc_dropin_scan(s, r, n, t, op, c), s, r, n, t, op, c);
}
static int exscan(const void *s, void *r, int n, struct ompi_datatype_t *t, struct ompi_op_t *op,
                  struct ompi_communicator_t *c, mca_coll_base_module_t *mod) {
  SERVE(describable(t), M(mod), exscan, collc_dropin_exscan(s, r, n, t, op, c), s, r, n, t, op, c);
}
static int allgather(const void *s, int sn, struct ompi_datatype_t *st, void *r, int rn,
                     struct ompi_datatype_t *rt, struct ompi_communicator_t *c,
                     mca_coll_base_module_t *mod) {
  SERVE(describable(s == MPI_IN_PLACE ? NULL : st) && describable(rt), M(mod), allgather,
        collc_dropin_allgather(s, sn, st, r, rn, rt, c), s, sn, st, r, rn, rt, c);
}
static int bcast(void *b, int n, struct ompi_datatype_t *t, int root, struct ompi_communicator_t *c,
                 mca_coll_base_module_t *mod) {
  SERVE(describable(t), M(mod), bcast, collc_dropin_bcast(b, n, t, root, c), b, n, t, root, c);
}
/* The block movers look at a datatype only where MPI does (ByteView.h):
 * another rank's ignored one may be anything. */
static int alltoall(const void *s, int sn, struct ompi_datatype_t *st, void *r, int rn,
                    struct ompi_datatype_t *rt, struct ompi_communicator_t *c,
                    mca_coll_base_module_t *mod) {
  SERVE(describable(s == MPI_IN_PLACE ? NULL : st) && describable(rt), M(mod), alltoall,
        collc_dropin_alltoall(s, sn, st, r, rn, rt, c), s, sn, st, r, rn, rt, c);
}
static int gather(const void *s, int sn, struct ompi_datatype_t *st, void *r, int rn,
                  struct ompi_datatype_t *rt, int root, struct ompi_communicator_t *c,
                  mca_coll_base_module_t *mod) {
  const int atRoot = ompi_comm_rank(c) == root;
  SERVE(describable(atRoot && s == MPI_IN_PLACE ? NULL : st) && describable(atRoot ? rt : NULL),
        M(mod), gather, collc_dropin_gather(s, sn, st, r, rn, rt, root, c), s, sn, st, r, rn, rt,
        root, c);
}
static int scatter(const void *s, int sn, struct ompi_datatype_t *st, void *r, int rn,
                   struct ompi_datatype_t *rt, int root, struct ompi_communicator_t *c,
                   mca_coll_base_module_t *mod) {
  const int atRoot = ompi_comm_rank(c) == root;
  SERVE(describable(atRoot ? st : NULL) && describable(atRoot && r == MPI_IN_PLACE ? NULL : rt),
        M(mod), scatter, collc_dropin_scatter(s, sn, st, r, rn, rt, root, c), s, sn, st, r, rn,
        rt, root, c);
}
static int allgatherv(const void *s, int sn, struct ompi_datatype_t *st, void *r, const int rn[],
                      const int displs[], struct ompi_datatype_t *rt,
                      struct ompi_communicator_t *c, mca_coll_base_module_t *mod) {
  SERVE(describable(s == MPI_IN_PLACE ? NULL : st) && describable(rt), M(mod), allgatherv,
        collc_dropin_allgatherv(s, sn, st, r, rn, displs, rt, c), s, sn, st, r, rn, displs, rt,
        c);
}
/* The v-variants: each side's datatype only where MPI reads it. */
static int gatherv(const void *s, int sn, struct ompi_datatype_t *st, void *r, const int rn[],
                   const int displs[], struct ompi_datatype_t *rt, int root,
                   struct ompi_communicator_t *c, mca_coll_base_module_t *mod) {
  const int atRoot = ompi_comm_rank(c) == root;
  SERVE(describable(atRoot && s == MPI_IN_PLACE ? NULL : st) && describable(atRoot ? rt : NULL),
        M(mod), gatherv, collc_dropin_gatherv(s, sn, st, r, rn, displs, rt, root, c), s, sn, st,
        r, rn, displs, rt, root, c);
}
static int scatterv(const void *s, const int sn[], const int displs[], struct ompi_datatype_t *st,
                    void *r, int rn, struct ompi_datatype_t *rt, int root,
                    struct ompi_communicator_t *c, mca_coll_base_module_t *mod) {
  const int atRoot = ompi_comm_rank(c) == root;
  SERVE(describable(atRoot ? st : NULL) && describable(atRoot && r == MPI_IN_PLACE ? NULL : rt),
        M(mod), scatterv, collc_dropin_scatterv(s, sn, displs, st, r, rn, rt, root, c), s, sn,
        displs, st, r, rn, rt, root, c);
}
static int alltoallv(const void *s, const int sn[], const int sd[], struct ompi_datatype_t *st,
                     void *r, const int rn[], const int rd[], struct ompi_datatype_t *rt,
                     struct ompi_communicator_t *c, mca_coll_base_module_t *mod) {
  SERVE(describable(s == MPI_IN_PLACE ? NULL : st) && describable(rt), M(mod), alltoallv,
        collc_dropin_alltoallv(s, sn, sd, st, r, rn, rd, rt, c), s, sn, sd, st, r, rn, rd, rt, c);
}
static int barrier(struct ompi_communicator_t *c, mca_coll_base_module_t *mod) {
  SERVE(1, M(mod), barrier, collc_dropin_barrier(c), c);
}

static int iallreduce(const void *s, void *r, int n, struct ompi_datatype_t *t,
                      struct ompi_op_t *op, struct ompi_communicator_t *c, ompi_request_t **q,
                      mca_coll_base_module_t *mod) {
  SERVE(plainHandles(t, NULL, op), M(mod), iallreduce,
        collc_dropin_iallreduce(s, r, n, t, op, c, q), s, r, n, t, op, c, q);
}
static int ireduce(const void *s, void *r, int n, struct ompi_datatype_t *t, struct ompi_op_t *op,
                   int root, struct ompi_communicator_t *c, ompi_request_t **q,
                   mca_coll_base_module_t *mod) {
  SERVE(plainHandles(t, NULL, op), M(mod), ireduce,
        collc_dropin_ireduce(s, r, n, t, op, root, c, q), s, r, n, t, op, root, c, q);
}
static int ireduce_scatter_block(const void *s, void *r, int n, struct ompi_datatype_t *t,
                                 struct ompi_op_t *op, struct ompi_communicator_t *c,
                                 ompi_request_t **q, mca_coll_base_module_t *mod) {
  SERVE(plainHandles(t, NULL, op), M(mod), ireduce_scatter_block,
        collc_dropin_ireduce_scatter_block(s, r, n, t, op, c, q), s, r, n, t, op, c, q);
}
static int ireduce_scatter(const void *s, void *r, const int counts[], struct ompi_datatype_t *t,
                           struct ompi_op_t *op, struct ompi_communicator_t *c, ompi_request_t **q,
                           mca_coll_base_module_t *mod) {
  SERVE(plainHandles(t, NULL, op), M(mod), ireduce_scatter,
        collc_dropin_ireduce_scatter(s, r, counts, t, op, c, q), s, r, counts, t, op, c, q);
}
static int iscan(const void *s, void *r, int n, struct ompi_datatype_t *t, struct ompi_op_t *op,
                 struct ompi_communicator_t *c, ompi_request_t **q, mca_coll_base_module_t *mod) {
  SERVE(plainHandles(t, NULL, op), M(mod), iscan, collc_dropin_iscan(s, r, n, t, op, c, q), s, r, n,
        t, op, c, q);
}
static int iexscan(const void *s, void *r, int n, struct ompi_datatype_t *t, struct ompi_op_t *op,
                   struct ompi_communicator_t *c, ompi_request_t **q, mca_coll_base_module_t *mod) {
  SERVE(plainHandles(t, NULL, op), M(mod), iexscan, collc_dropin_iexscan(s, r, n, t, op, c, q), s,
        r, n, t, op, c, q);
}
static int iallgather(const void *s, int sn, struct ompi_datatype_t *st, void *r, int rn,
                      struct ompi_datatype_t *rt, struct ompi_communicator_t *c, ompi_request_t **q,
                      mca_coll_base_module_t *mod) {
  SERVE(plainHandles(s == MPI_IN_PLACE ? NULL : st, rt, NULL), M(mod), iallgather,
        collc_dropin_iallgather(s, sn, st, r, rn, rt, c, q), s, sn, st, r, rn, rt, c, q);
}
static int ibcast(void *b, int n, struct ompi_datatype_t *t, int root,
                  struct ompi_communicator_t *c, ompi_request_t **q, mca_coll_base_module_t *mod) {
  SERVE(plainHandles(t, NULL, NULL), M(mod), ibcast, collc_dropin_ibcast(b, n, t, root, c, q), b, n,
        t, root, c, q);
}

static int ibarrier(struct ompi_communicator_t *c, ompi_request_t **q,
                    mca_coll_base_module_t *mod) {
  SERVE(1, M(mod), ibarrier, collc_dropin_ibarrier(c, q), c, q);
}

/* Keeps the functions Open MPI installed so far (the modules below this one
 * by priority); a function nothing below provides is not taken over. */
static int moduleEnable(mca_coll_base_module_t *module, struct ompi_communicator_t *comm) {
  collc_module_t *m = M(module);
  m->below = *comm->c_coll;
#define KEEP(name)                                                                                 \
  if (m->below.coll_##name && m->below.coll_##name##_module) {                                     \
    OBJ_RETAIN(m->below.coll_##name##_module);                                                     \
  } else {                                                                                         \
    m->below.coll_##name##_module = NULL;                                                          \
    module->coll_##name = NULL;                                                                    \
  }
  COLLC_EACH(KEEP)
#undef KEEP
  return OMPI_SUCCESS;
}

static mca_coll_base_module_t *collc_comm_query(struct ompi_communicator_t *comm, int *priority) {
  if (mca_coll_collc_component.priority <= 0)
    return NULL;
  if (comm == &ompi_mpi_comm_self.comm)
    hookFinalize(comm);
  if (OMPI_COMM_IS_INTER(comm))
    return NULL;
  collc_module_t *m = OBJ_NEW(collc_module_t);
  if (!m)
    return NULL;
  *priority = mca_coll_collc_component.priority;
  m->super.coll_module_enable = moduleEnable;
#define SET(name) m->super.coll_##name = name;
  COLLC_EACH(SET)
#undef SET
  return &m->super;
}
