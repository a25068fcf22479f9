// tests/support/FamilyPlans.h: simple plans for the collectives beyond
// allreduce and reduce — test oracles for the runtime, the drop-in and the
// library's algorithm files, written with ir::PlanBuilder.
#ifndef COLLC_TESTS_SUPPORT_FAMILYPLANS_H
#define COLLC_TESTS_SUPPORT_FAMILYPLANS_H

#include "ir/Plan.h"

namespace collc::testplans {

/// reduce_scatter_block by a ring of p chunks: at step s rank r passes its
/// partial of chunk r−s−1 to r+1 and combines the partial of chunk r−s−2
/// from r−1 (commutative only); after p−1 steps rank r owns chunk r.
ir::Plan ringReduceScatter(uint32_t p);
/// scan (or exscan) along a chain: rank r receives the prefix of ranks
/// 0..r−1 from r−1 and passes 0..r on. Order-preserving.
ir::Plan chainScan(uint32_t p, bool exclusive);
/// allgather around a ring of p chunks (chunk r is rank r's block).
ir::Plan ringAllgather(uint32_t p);
/// bcast down a binomial tree rooted at `root`.
ir::Plan binomialBcast(uint32_t p, uint32_t root);

} // namespace collc::testplans

#endif // COLLC_TESTS_SUPPORT_FAMILYPLANS_H
