// dropin/PlanAcquisition.h: from a call's selection inputs to a loaded plan —
// the per-communicator decision cache (select() once per set of inputs) and
// the plan a decision names: a plan file from COLLC_PLAN_PATH or a plan the
// library generates, loaded once per communicator.
#ifndef COLLC_DROPIN_PLANACQUISITION_H
#define COLLC_DROPIN_PLANACQUISITION_H

#include "dropin/State.h"

namespace collc::dropin {

/// The cached decision for `t` on `cs`, or a new one from select().
Decision &decide(Global &g, CommState &cs, const CallTraits &t);

/// The plan `sel` names for collective `c` with `root` on `cs`, loaded on
/// first use and kept with the communicator; null with `error` when it cannot
/// be had (generation failed or refused, the bytes do not load).
collc_plan planFor(Global &g, CommState &cs, Coll c, uint32_t root, const Selection &sel,
                   std::string &error);

} // namespace collc::dropin

#endif // COLLC_DROPIN_PLANACQUISITION_H
