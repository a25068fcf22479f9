// dropin/PlanAcquisition.h: from a call's selection inputs to a loaded plan —
// the per-communicator decision cache (select() once per set of inputs) and
// the plan a decision names: a plan file from COLLC_PLAN_PATH or a plan the
// library generates, loaded once per communicator, and used once every rank
// has it.
#ifndef COLLC_DROPIN_PLANACQUISITION_H
#define COLLC_DROPIN_PLANACQUISITION_H

#include "dropin/State.h"

namespace collc::dropin {

/// The cached decision for `t` on `cs`, or a new one from select().
Decision &decide(Global &g, CommState &cs, const CallTraits &t);

/// The slot of the plan `sel` names for collective `c` with `root` on `cs`:
/// loaded on first use (a new slot, Pending until the ranks agree:
/// agreeSlots) and kept with the communicator; its plan is null, with the
/// error, where it cannot be had here (generation failed or refused, the
/// bytes do not load).
PlanSlot &slotFor(Global &g, CommState &cs, Coll c, uint32_t root, const Selection &sel);

} // namespace collc::dropin

#endif // COLLC_DROPIN_PLANACQUISITION_H
