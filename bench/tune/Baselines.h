// bench/tune/Baselines.h: what users run instead of a tuned choice — the
// allreduce algorithm Open MPI 4.1 and MPICH pick by default, by ranks and
// bytes, re-expressed as collc library algorithms (docs/performance.md,
// "Tuned against the defaults of Open MPI and MPICH").
#ifndef COLLC_BENCH_TUNE_BASELINES_H
#define COLLC_BENCH_TUNE_BASELINES_H

#include <cstdint>
#include <string>

namespace collc::bench {

/// A default's choice for one call.
struct Baseline {
  std::string native;   ///< the implementation's algorithm, by its own name
  std::string collc;    ///< the collc library algorithm that runs the same schedule
  bool exact = true;    ///< false: collc has no equivalent; `collc` is the nearest
};

/// Open MPI 4.1's coll/tuned fixed decision for MPI_Allreduce
/// (ompi_coll_tuned_allreduce_intra_dec_fixed) for a commutative operation on
/// `ranks` ranks and `bytes` bytes of `count` elements, with the fallbacks of
/// the algorithm it names (ring: recursive doubling below one element per
/// rank; Rabenseifner: linear below one element per power-of-two rank).
Baseline openMpi41(uint32_t ranks, uint64_t bytes, uint64_t count);

/// MPICH's MPIR allreduce default (MPIR_Allreduce_intra_auto with the CVAR
/// defaults): recursive doubling up to MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE =
/// 2048 bytes or below one element per power-of-two rank, Rabenseifner's
/// reduce-scatter + allgather above, for a predefined operation.
Baseline mpich(uint32_t ranks, uint64_t bytes, uint64_t count);

} // namespace collc::bench

#endif // COLLC_BENCH_TUNE_BASELINES_H
