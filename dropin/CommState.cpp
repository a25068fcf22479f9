// dropin/CommState.cpp: collc's state of each communicator — attached as an
// MPI attribute (freed with the communicator), found again through a small
// thread-local cache, and the runtime's private duplicate made where every
// rank is in a blocking call.
#include "dropin/Requests.h"
#include "dropin/State.h"

#include "runtime/api/Execution.h"

#include <algorithm>
#include <numeric>

namespace collc::dropin {

namespace {

struct TlComm {
  MPI_Comm comm = MPI_COMM_NULL;
  CommState *state = nullptr;
};
constexpr unsigned tlCommSlots = 8;
thread_local TlComm tlComms[tlCommSlots];
thread_local unsigned tlCommNext = 0;
thread_local uint64_t tlEpoch = 0;

void destroyState(Global &g, CommState *cs) {
  retireState(g, *cs);
  if (cs->listed) {
    std::lock_guard<std::mutex> lock(g.activeMu);
    g.active.erase(std::remove(g.active.begin(), g.active.end(), cs), g.active.end());
  }
  for (CachedRequest &c : cs->cache)
    if (c.req)
      (void)collc_request_free(&c.req);
  for (PlanSlot &p : cs->plans)
    (void)collc_plan_free(&p.plan);
  g.epoch.fetch_add(1, std::memory_order_acq_rel);
  delete cs;
}

void remember(MPI_Comm comm, CommState *cs) {
  tlComms[tlCommNext] = {comm, cs};
  tlCommNext = (tlCommNext + 1) % tlCommSlots;
}

/// Of an inter-communicator: whether the local group's rank 0 has a lower
/// world rank than the remote group's (true if either is not in this world).
bool lowerLeader(Global &g, MPI_Comm comm) {
  MPI_Group groups[2] = {MPI_GROUP_NULL, MPI_GROUP_NULL};
  int world[2] = {MPI_UNDEFINED, MPI_UNDEFINED};
  const int zero = 0;
  if (PMPI_Comm_group(comm, &groups[0]) == MPI_SUCCESS &&
      PMPI_Comm_remote_group(comm, &groups[1]) == MPI_SUCCESS)
    for (int i = 0; i < 2; ++i)
      PMPI_Group_translate_ranks(groups[i], 1, &zero, g.worldGroup, &world[i]);
  for (MPI_Group &gr : groups)
    if (gr != MPI_GROUP_NULL)
      PMPI_Group_free(&gr);
  return world[0] == MPI_UNDEFINED || world[1] == MPI_UNDEFINED || world[0] < world[1];
}

/// Attaches collc's state to `comm` (no communication).
CommState *createState(Global &g, MPI_Comm comm) {
  auto cs = std::make_unique<CommState>();
  cs->id = g.nextCommId.fetch_add(1);
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  cs->inter = inter != 0;
  PMPI_Comm_size(comm, &cs->size);
  PMPI_Comm_rank(comm, &cs->rank);
  std::vector<int> world;
  if (!cs->inter) {
    MPI_Group group;
    if (PMPI_Comm_group(comm, &group) == MPI_SUCCESS) {
      std::vector<int> ranks(size_t(cs->size));
      world.resize(size_t(cs->size));
      std::iota(ranks.begin(), ranks.end(), 0);
      if (PMPI_Group_translate_ranks(group, cs->size, ranks.data(), g.worldGroup,
                                     world.data()) != MPI_SUCCESS ||
          std::find(world.begin(), world.end(), MPI_UNDEFINED) != world.end())
        cs->foreign = true;
      PMPI_Group_free(&group);
    }
    for (unsigned c = 0; c < numColls; ++c)
      cs->files[c] = g.library.candidates(Coll(c), uint32_t(cs->size));
  }
  cs->counts = cs->rank == 0 && (!cs->inter || lowerLeader(g, comm));
  if (cs->counts) {
    cs->comm = comm;
    cs->members = commMembers(cs->foreign ? std::vector<int>{} : world, cs->inter);
  }
  if (PMPI_Comm_set_attr(comm, g.keyval, cs.get()) != MPI_SUCCESS)
    return nullptr;
  listState(g, *cs);
  if (g.config.debug) {
    size_t files = 0;
    for (const auto &f : cs->files)
      files += f.size();
    debugLine(g, "comm " + std::to_string(cs->id) + ": " + std::to_string(cs->size) + " ranks" +
                     (cs->inter ? ", inter-communicator" : "") +
                     (cs->foreign ? ", spans another MPI_COMM_WORLD" : "") + ", " +
                     std::to_string(files) + " plan files fit");
  }
  remember(comm, cs.get());
  return cs.release();
}

} // namespace

extern "C" int collcDeleteState(MPI_Comm, int, void *attr, void *) {
  if (Global *g = gGlobal.load(std::memory_order_acquire)) {
    InternalScope internal;
    auto *cs = static_cast<CommState *>(attr);
    // The communicator is being freed and collc's work on it may still be
    // under way: the PMPI library finished it before MPI_Comm_free
    // (collc_dropin_before_comm_free), the Open MPI component, which sees no
    // MPI_Comm_free, finishes it here (the communicator still works).
    if (!g->finalized.load(std::memory_order_relaxed)) {
      finishTurns(*g, *cs);
      drain(*g, *cs);
    }
    destroyState(*g, cs);
  }
  return MPI_SUCCESS;
}

CommState *findState(Global &g, MPI_Comm comm) {
  const uint64_t e = g.epoch.load(std::memory_order_acquire);
  if (tlEpoch != e) {
    for (TlComm &t : tlComms)
      t = {};
    tlEpoch = e;
  }
  for (const TlComm &t : tlComms)
    if (t.comm == comm && t.state)
      return t.state;
  void *attr = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, g.keyval, &attr, &found) != MPI_SUCCESS || !found)
    return nullptr;
  remember(comm, static_cast<CommState *>(attr));
  return static_cast<CommState *>(attr);
}

CommState *stateFor(Global &g, MPI_Comm comm) {
  CommState *cs = findState(g, comm);
  return cs ? cs : createState(g, comm);
}

void prepare(Global &g, CommState &cs, MPI_Comm comm) {
  if (cs.ready || cs.setUpFailed || cs.inter || cs.foreign || g.disabled)
    return;
  InternalScope internal;
  rt::Status s = rt::prepareComm(comm);
  std::string why = s.ok() ? "" : s.message();
  if (s.ok() && g.config.fails(Fault::Setup, g.worldRank))
    why = "COLLC_FAULT=setup";
  // The runtime's part may fail on one rank alone (shared memory agrees
  // within a node, not across them): the ranks agree, or one of them would
  // go native while the others run plans.
  int mine = why.empty() ? 1 : 0, all = 0;
  if (PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
    all = 0;
  cs.ready = all == 1;
  cs.setUpFailed = !cs.ready;
  if (cs.ready)
    cs.dup = rt::privateComm(comm);
  if (!why.empty())
    warn(g, "cannot set up a communicator for collc (" + why + "); it uses native MPI", false);
  else if (!cs.ready && g.config.debug)
    debugLine(g, "comm " + std::to_string(cs.id) +
                     ": another rank could not set it up; it uses native MPI");
}

namespace {

/// The agreement on `slot` is known (`all`): every rank has it, or not.
void settle(Global &g, const CommState &cs, PlanSlot &slot, int all) {
  slot.agreed = all == 1 ? Agreement::Everywhere : Agreement::NotEverywhere;
  if (slot.agreed == Agreement::NotEverywhere && slot.mine == 1) {
    slot.error = "another rank of the communicator could not load it";
    if (g.config.debug)
      debugLine(g, "comm " + std::to_string(cs.id) + ": " + name(slot.collective) + " plan " +
                       slot.algorithm + ": " + slot.error + "; it uses native MPI");
  }
}

} // namespace

bool agreeSlot(Global &g, CommState &cs, MPI_Comm comm, PlanSlot &slot, bool ok) {
  if (slot.agreed != Agreement::Pending)
    return slot.agreed == Agreement::Everywhere;
  slot.mine = slot.plan && ok ? 1 : 0;
  int all = 0;
  InternalScope internal;
  if (PMPI_Allreduce(&slot.mine, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
    all = 0;
  settle(g, cs, slot, all);
  return slot.agreed == Agreement::Everywhere;
}

void postAgreement(Global &g, CommState &cs, MPI_Comm comm, PlanSlot &slot, bool ok) {
  if (slot.agreed != Agreement::Pending || slot.posted)
    return;
  slot.mine = slot.plan && ok ? 1 : 0;
  slot.posted = true;
  InternalScope internal;
  if (PMPI_Iallreduce(&slot.mine, &slot.all, 1, MPI_INT, MPI_MIN, comm, &slot.agreement) !=
      MPI_SUCCESS) {
    // Nothing was started, on this rank at least: the others' agreement
    // can never finish. Raise the error as MPI would have.
    slot.agreement = MPI_REQUEST_NULL;
    settle(g, cs, slot, 0);
    PMPI_Comm_call_errhandler(comm, MPI_ERR_INTERN);
  }
}

bool settleAgreement(Global &g, CommState &cs, PlanSlot &slot, bool wait) {
  if (slot.agreed != Agreement::Pending)
    return true;
  if (!slot.posted)
    return false;
  InternalScope internal;
  int done = 0;
  const int rc = wait ? PMPI_Wait(&slot.agreement, MPI_STATUS_IGNORE)
                      : PMPI_Test(&slot.agreement, &done, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) {
    settle(g, cs, slot, 0);
    return true;
  }
  if (!wait && !done)
    return false;
  settle(g, cs, slot, slot.all);
  return true;
}

void created(MPI_Comm comm) {
  if (tlInternal && comm != MPI_COMM_WORLD && comm != MPI_COMM_SELF)
    return;
  if (comm == MPI_COMM_NULL)
    return;
  Global *g = gGlobal.load(std::memory_order_acquire);
  if (!g || g->disabled || g->finalized)
    return;
  InternalScope internal;
  if (CommState *cs = stateFor(*g, comm))
    prepare(*g, *cs, comm);
}

} // namespace collc::dropin
