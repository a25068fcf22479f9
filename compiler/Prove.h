// compiler/Prove.h: proving a plan and recording the strongest properties
// proven — what `collc compile` writes into a .cplan's proof status.
#ifndef COLLC_COMPILER_PROVE_H
#define COLLC_COMPILER_PROVE_H

#include "compiler/Verifier.h"
#include "runtime/bytecode/Format.h"

namespace collc::compiler {

/// The outcome of proveStrongest.
struct Proven {
  VerifyResult result; ///< the proof of the plan as strengthened (or the failure)
  rt::Proof proof;     ///< verified (and identical) only when result.proven()
};

/// Proves `plan` with its own claims; if that holds, strengthens the claims
/// to the strongest the verifier proves — `commutative: false` when the plan
/// also keeps the canonical rank order, `in_place: true` when it is also
/// correct with in and out aliased — and updates plan.shape to say so.
/// Properties are proven, not declared: a generator's or a file's claim is
/// only a lower bound. `opts` adds requirements (requireIdentical).
/// `known`, when given, is a verification of exactly this plan with its own
/// claims (e.g. the pipeline's last, PipelineOptions::resultProof); it
/// stands for the first proof when it proves the plan and meets `opts`.
Proven proveStrongest(ir::Plan &plan, VerifyOptions opts = {},
                      const VerifyResult *known = nullptr);

} // namespace collc::compiler

#endif // COLLC_COMPILER_PROVE_H
