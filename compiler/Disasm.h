// compiler/Disasm.h: .cplan bytecode back to an ir::Plan (and so to format v1).
#ifndef COLLC_COMPILER_DISASM_H
#define COLLC_COMPILER_DISASM_H

#include "ir/Plan.h"
#include "runtime/bytecode/Format.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>

namespace collc::compiler {

/// The ir::Plan a validated bytecode plan stands for. Fields an op kind does
/// not use get ir::Op's defaults, so fromBytecodePlan(toBytecodePlan(p)) == p
/// for every plan built with ir::PlanBuilder or read by ir::parsePlan. A
/// partial plan gives one program per rank, empty but for its sections'.
ir::Plan fromBytecodePlan(const rt::LoadedPlan &plan);

/// Loads `bytes` with the validating loader and converts the result. A loader
/// error becomes an llvm::Error carrying the loader's message. A plan returned
/// is well-formed (ir/Plan.h) and its messages pair up.
/// The file's proof status goes to `*proof` when given. A partial plan is an
/// error: it is not a plan of every rank.
llvm::Expected<ir::Plan> disassemble(llvm::ArrayRef<uint8_t> bytes, rt::Proof *proof = nullptr);

/// One line saying what `proof` and the plan's claims mean, for listings:
/// "proven: any associative operation, in place, identical results on all
/// ranks" or "unproven (compiled with --no-verify): claims ...".
std::string describeProof(const ir::Shape &shape, const rt::Proof &proof);

/// The properties a proof of a plan of `collective` states, each after ", ":
/// the operations it holds for (collectives that combine), `inPlaceWords`
/// when `inPlace`, and whether the ranks' results are identical when
/// `identical` is given (allreduce only: the one collective whose every rank
/// holds every reduced value).
std::string proofProperties(ir::Collective collective, bool commutative, bool inPlace,
                            std::optional<bool> identical,
                            const char *inPlaceWords = "also in place");

} // namespace collc::compiler

#endif // COLLC_COMPILER_DISASM_H
