// compiler/Lower.h: lowering an ir::Plan to .cplan bytecode (docs/bytecode.md).
#ifndef COLLC_COMPILER_LOWER_H
#define COLLC_COMPILER_LOWER_H

#include "ir/Plan.h"
#include "runtime/bytecode/Format.h"

#include <cstdint>
#include <vector>

namespace collc::compiler {

/// The bytecode form of `plan`'s shape, name and programs, field for field,
/// with `proof` as its proof status (docs/bytecode.md, "Proof status").
/// Precondition: the plan is well-formed (ir::checkShape and ir::checkOp hold).
rt::LoadedPlan toBytecodePlan(const ir::Plan &plan, rt::Proof proof = {});

/// Encodes `plan` as .cplan bytes; deterministic (same plan, same bytes).
/// Precondition: the plan is well-formed (ir::checkShape and ir::checkOp hold).
/// Peers are not part of well-formedness: a plan with a peer out of range or
/// equal to its own rank still lowers, and the loader refuses the result with
/// a message naming the op.
/// `proof` is recorded as given: only say `verified` of a plan the verifier
/// proved (compiler/Prove.h does both).
std::vector<uint8_t> lower(const ir::Plan &plan, rt::Proof proof = {});

/// The partial plan of rank `own` (docs/bytecode.md, "Partial plans"): the
/// shape and name of `plan` and the programs of `sections` (strictly
/// increasing, `own` among them), with no proof recorded. The loader refuses
/// it unless every rank own exchanges messages with is in `sections`.
/// Precondition: as lower(); plan.programs has one entry per rank (those not
/// in `sections` are ignored).
rt::LoadedPlan toPartialBytecodePlan(const ir::Plan &plan, uint32_t own,
                                     llvm::ArrayRef<uint32_t> sections);
std::vector<uint8_t> lowerPartial(const ir::Plan &plan, uint32_t own,
                                  llvm::ArrayRef<uint32_t> sections);

} // namespace collc::compiler

#endif // COLLC_COMPILER_LOWER_H
