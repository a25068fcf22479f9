// compiler/Prove.cpp: proveStrongest.
#include "compiler/Prove.h"

namespace collc::compiler {

Proven proveStrongest(ir::Plan &plan, VerifyOptions opts, const VerifyResult *known) {
  opts.noncommutative = false; // the plan's own claim first
  const bool useKnown =
      known && known->proven() && (!opts.requireIdentical || known->stats.identical);
  // The attempts below change only the plan's claims: they share the
  // structure check, graphs and message matching of one Prover.
  Prover prover(plan);
  Proven out{useKnown ? *known : prover.verify(opts), {}};
  if (!out.result.proven())
    return out;
  // Each strengthening is tried on its own and kept only if the whole plan
  // is proven with it.
  auto tryClaim = [&](bool &claim, bool stronger) {
    const bool old = claim;
    claim = stronger;
    VerifyOptions quick = opts;
    quick.stopAtFirstError = true; // a refused claim is dropped unseen
    VerifyResult r = prover.verify(quick);
    if (r.proven())
      out.result = std::move(r);
    else
      claim = old;
  };
  if (plan.shape.commutative)
    tryClaim(plan.shape.commutative, false);
  if (!plan.shape.inPlace && ir::allowsInPlace(plan.shape.collective))
    tryClaim(plan.shape.inPlace, true);
  out.proof.verified = true;
  out.proof.identical = out.result.stats.identical;
  return out;
}

} // namespace collc::compiler
