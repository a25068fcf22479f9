// dropin/PlanAcquisition.cpp: the decision cache and plan loading
// (PlanAcquisition.h).
#include "dropin/PlanAcquisition.h"

#include <cstdio>

namespace collc::dropin {

namespace {

PlanQuery queryFor(Global &g, const CommState &cs) {
  PlanQuery q;
  q.generator = [](Coll c, std::string_view n, bool &needsCommutative) {
    return PlanLibrary::generatorInfo(c, n, needsCommutative);
  };
  q.generatorFits = [ranks = uint32_t(cs.size)](Coll c, std::string_view n, uint32_t root) {
    return PlanLibrary::generatorFits(c, n, ranks, root);
  };
  if (g.config.verify) {
    q.fileVerifies = [&g](int id) {
      std::string error;
      if (g.library.verifyFile(id, error))
        return true;
      warn(g, "COLLC_VERIFY: plan '" + g.library.files()[size_t(id)].origin +
                  "' does not verify (" + error + "); it is not used");
      return false;
    };
    const uint32_t ranks = uint32_t(cs.size);
    q.generatedVerifies = [&g, ranks](Coll c, std::string_view n, uint32_t root) {
      std::string error;
      if (g.library.generated(c, n, ranks, root, error))
        return true;
      warn(g, "COLLC_VERIFY: the generated " + std::string(name(c)) + " plan '" +
                  std::string(n) + "' for " + std::to_string(ranks) +
                  " ranks does not verify (" + error + ")");
      return false;
    };
  }
  return q;
}

bool sameInputs(const CallTraits &a, const CallTraits &b) {
  return a.collective == b.collective && a.root == b.root && a.bytes == b.bytes &&
         a.count == b.count && a.commutative == b.commutative &&
         a.predefinedOp == b.predefinedOp;
}

} // namespace

Decision &decide(Global &g, CommState &cs, const CallTraits &t) {
  for (Decision &d : cs.decisions)
    if (d.valid && sameInputs(d.key, t)) {
      d.used = ++cs.clock;
      return d;
    }
  Decision *victim = &cs.decisions[0];
  for (Decision &d : cs.decisions)
    if (!d.valid || d.used < victim->used)
      victim = &d;
  victim->valid = true;
  victim->key = t;
  victim->sel = select(g.config, t, cs.files[unsigned(t.collective)], queryFor(g, cs));
  victim->slot = nullptr;
  victim->used = ++cs.clock;
  return *victim;
}

namespace {

/// The plan `sel` names, loaded here; null with `error` when it cannot be had.
collc_plan load(Global &g, CommState &cs, Coll c, uint32_t root, const Selection &sel,
                std::string &error) {
  std::shared_ptr<const std::vector<uint8_t>> keep;
  const std::vector<uint8_t> *bytes = nullptr;
  std::string origin;
  if (sel.fileId >= 0) {
    bytes = &g.library.files()[size_t(sel.fileId)].bytes;
    origin = g.library.files()[size_t(sel.fileId)].origin;
  } else {
    BuiltPlan built;
    std::vector<std::string> warnings;
    const bool ok = g.library.build(c, sel.algorithm, uint32_t(cs.size), root,
                                    uint32_t(cs.rank), g.config, built, error, warnings);
    for (const std::string &w : warnings)
      warn(g, w, false);
    if (!ok)
      return nullptr;
    if (g.config.fails(Fault::Build, g.worldRank)) {
      error = "COLLC_FAULT=build";
      return nullptr;
    }
    keep = built.bytes;
    bytes = keep.get();
    Stats &st = stats(g);
    ++st.built[unsigned(built.guarantee)];
    ++(built.whole ? st.wholePlans : st.rankPlans);
    st.ownOps += built.ownOps;
    st.contextOps += built.contextOps;
    st.buildSeconds += built.seconds;
    if (built.whole) {
      origin = "generated: the whole plan; " + std::string(text(built.guarantee));
    } else {
      char secs[32];
      std::snprintf(secs, sizeof secs, "%.3f", built.seconds * 1e3);
      origin = "generated: rank " + std::to_string(cs.rank) + "'s program, " +
               std::to_string(built.ownOps) + " ops, with " +
               std::to_string(built.sections - 1) + " context sections of " +
               std::to_string(built.contextOps) + " ops, built in " + secs + " ms CPU" +
               (built.seconds == 0 ? " (kept from another communicator)" : "") + "; " +
               text(built.guarantee) + (built.record.empty() ? "" : ": " + built.record);
    }
  }
  collc_plan plan = COLLC_PLAN_NULL;
  if (collc_plan_load_memory(bytes->data(), bytes->size(), &plan) != COLLC_SUCCESS) {
    error = collc_error_message();
    return nullptr;
  }
  if (g.config.fails(Fault::Load, g.worldRank)) {
    (void)collc_plan_free(&plan);
    error = "COLLC_FAULT=load";
    return nullptr;
  }
  if (g.config.debug)
    debugLine(g, "comm " + std::to_string(cs.id) + ": loaded " + name(c) + " plan " +
                     sel.algorithm + " for " + std::to_string(cs.size) + " ranks" +
                     (hasRoot(c) ? ", root " + std::to_string(root) : "") + " (" +
                     origin + ", " + std::to_string(bytes->size()) + " bytes)");
  return plan;
}

} // namespace

PlanSlot &slotFor(Global &g, CommState &cs, Coll c, uint32_t root, const Selection &sel) {
  for (PlanSlot &p : cs.plans)
    if (p.collective == c && p.root == root && p.fileId == sel.fileId &&
        p.algorithm == sel.algorithm)
      return p;
  PlanSlot &p = cs.plans.emplace_back();
  p.collective = c;
  p.root = root;
  p.fileId = sel.fileId;
  p.algorithm = sel.algorithm;
  p.plan = load(g, cs, c, root, sel, p.error);
  if (!p.plan)
    warn(g, std::string("no ") + name(c) + " plan " + sel.algorithm + " for " +
                std::to_string(cs.size) + " ranks: " + p.error + "; using native MPI",
         false);
  return p;
}

} // namespace collc::dropin
