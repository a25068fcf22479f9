// dropin/Selection.cpp: the default decision table and select().
//
// The table follows Rabenseifner's adaptive choice (R. Rabenseifner,
// "Optimization of Collective Reduction Operations", ICCS 2004) with the
// generators collc has; α is the latency of a
// message, β the time per byte moved, γ the time per byte reduced, n the
// vector's bytes, p the ranks, p' the largest power of two <= p:
//
//   allreduce, n < 2 KiB (16 KiB for   recursive_doubling  latency-bound: fewest steps
//     a user op), or count < chunks                         (order-preserving)
//   allreduce, long, p = 2^k, or op    rabenseifner        2 lg p α + 2nβ(p-1)/p + nγ(p-1)/p
//     not commutative                                       (+ fold: proven order-preserving)
//   allreduce, long, p <= 8 not 2^k    ring                2(p-1)α + 2nβ(p-1)/p, no fold
//   allreduce, long, p > 8 not 2^k     binary_blocks       halving-doubling per 2^k block
//   reduce, short or count < chunks    binomial            lg p(α+nβ+nγ), order-preserving
//   reduce, long                       rabenseifner        reduce-scatter + binomial gather
//                                                           (order-preserving)
//
// The rest of the family (n is the whole vector: the reduce-scatters' input,
// allgather's result):
//
//   reduce_scatter, op not commutative chain               (2p-2)α + 2nβ(p-1)/p + nγ(p-1)/p
//                                                           (the order-preserving one)
//   reduce_scatter, p = 2^k            recursive_halving   lg p α + nβ(p-1)/p + nγ(p-1)/p
//   reduce_scatter, other p            ring                (p-1)α + nβ(p-1)/p + nγ(p-1)/p
//   scan, exscan, n < 64 KiB or p <= 4 recursive_doubling  lg p(α+nβ+nγ): fewest rounds
//   scan, exscan, long, p > 4          brent_kung          2 lg p(α+nβ+nγ), but about 2n
//                                                           per rank moved instead of n lg p
//   allgather, p = 2^k, n < 512 KiB    recursive_doubling  lg p α + nβ(p-1)/p
//   allgather, n < 80 KiB              bruck               ceil(lg p)α + nβ(p-1)/p
//   allgather, long                    ring                (p-1)α + nβ(p-1)/p, neighbours only
//   bcast, n < 12 KiB, count < p       binomial            ceil(lg p)(α + nβ)
//     or p < 8
//   bcast, long, p >= 8                scatter_allgather   (lg p + p-1)α + 2nβ(p-1)/p
//                                                           (van de Geijn)
//
// All of scan's and exscan's, allgather's and bcast's plans keep the order
// (allgather and bcast combine nothing). The allgather and bcast crossovers
// are MPICH's (MPIR_CVAR_ALLGATHER_SHORT_MSG_SIZE 80 KiB and
// _LONG_MSG_SIZE 512 KiB, MPIR_CVAR_BCAST_SHORT_MSG_SIZE 12 KiB and _MIN_PROCS 8).
//
// 2 KiB is MPICH's MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE, the same crossover
// Rabenseifner measured between doubling and halving-doubling. For a
// user-defined operation, whose every combine goes through MPI_Reduce_local,
// the crossover measured here is later (bench/userop-table.sh: doubling ahead
// up to 4-64 KiB at p = 2 and 4), so user operations switch at 16 KiB.
#include "dropin/Selection.h"

namespace collc::dropin {

namespace {

bool powerOfTwo(uint32_t p) { return p && (p & (p - 1)) == 0; }

uint32_t floorPow2(uint32_t p) {
  uint32_t q = 1;
  while (q <= p / 2)
    q *= 2;
  return q;
}

bool contains(const FileCandidate &f, const CallTraits &t) {
  return t.bytes >= f.minBytes && t.bytes < f.maxBytes;
}

bool rootFits(const FileCandidate &f, const CallTraits &t) {
  return !hasRoot(t.collective) || f.root == t.root;
}

const char *substitutionText(Substitution s) {
  switch (s) {
  case Substitution::None:
    return "";
  case Substitution::NeedsCommutative:
    return "needs a commutative operation, and the operation is not commutative";
  case Substitution::NoSuchPlan:
    return "has no generator and no plan file for this communicator";
  case Substitution::Unverified:
    return "did not verify (COLLC_VERIFY)";
  case Substitution::DoesNotFit:
    return "does not fit this communicator (its require lines)";
  }
  return "";
}

} // namespace

const char *name(Origin o) {
  switch (o) {
  case Origin::Forced:
    return "COLLC_ALGORITHM";
  case Origin::Rule:
    return "COLLC_RULES";
  case Origin::File:
    return "COLLC_PLAN_PATH";
  case Origin::Default:
    return "default";
  }
  return "?";
}

namespace {

DefaultChoice familyDefault(const CallTraits &t) {
  const uint32_t p = t.ranks;
  switch (t.collective) {
  case Coll::ReduceScatter:
    if (!t.commutative)
      return {"chain", "non-commutative operation: the order-preserving chain"};
    if (powerOfTwo(p))
      return {"recursive_halving", "power-of-two ranks: recursive halving"};
    return {"ring", "ranks not a power of two: ring"};
  case Coll::Scan:
  case Coll::Exscan:
    if (t.bytes < scanLongBytes || p <= 4)
      return {"recursive_doubling", "short vector or few ranks: fewest rounds"};
    return {"brent_kung", "long vector, many ranks: work-efficient"};
  case Coll::Allgather:
    if (p == 1)
      return {"ring", "one rank: the plan is a copy"};
    if (powerOfTwo(p) && t.bytes < allgatherLongBytes)
      return {"recursive_doubling", "power-of-two ranks, not long: recursive doubling"};
    if (t.bytes < allgatherShortBytes)
      return {"bruck", "short result: Bruck, ceil(lg p) rounds"};
    return {"ring", "long result: ring"};
  case Coll::Bcast:
    if (t.bytes < bcastShortBytes || t.count < p)
      return {"binomial", "short vector: binomial tree"};
    if (p < bcastMinRanks)
      return {"binomial", "few ranks: binomial tree (at most lg 8 = 3 rounds)"};
    return {"scatter_allgather", "long vector: scatter, then allgather (van de Geijn)"};
  case Coll::Alltoall: {
    const uint64_t block = p ? t.bytes / p : 0;
    if (p == 1)
      return {"pairwise", "one rank: the plan is a copy"};
    if (block <= alltoallShortBlockBytes && p >= alltoallBruckMinRanks)
      return {"bruck", "short blocks, many ranks: Bruck, ceil(lg p) rounds"};
    if (block < alltoallMediumBlockBytes)
      return {"linear", "medium blocks: every exchange posted at once"};
    return {"pairwise", "long blocks: pairwise exchange, one peer a step"};
  }
  case Coll::Gather:
  case Coll::Scatter: {
    const uint64_t block = p ? t.bytes / p : 0;
    if (block < gatherLinearBlockBytes)
      return {"binomial", "short blocks: binomial tree, ceil(lg p) rounds"};
    return {"linear", "long blocks: each sent once, straight to or from the root"};
  }
  case Coll::Barrier:
    return {"dissemination", "dissemination: ceil(lg p) rounds, the fewest (MPICH's barrier)"};
  case Coll::Allreduce:
  case Coll::Reduce:
    break;
  }
  return {"chain", "?"};
}

} // namespace

DefaultChoice defaultAlgorithm(const CallTraits &t) {
  const uint64_t shortLimit = t.predefinedOp ? shortVectorBytes : shortVectorBytesUserOp;
  const uint32_t p = t.ranks;
  if (t.collective != Coll::Allreduce && t.collective != Coll::Reduce)
    return familyDefault(t);
  // Every choice below is order-preserving unless the operation is
  // commutative (ring and binary blocks are not; select() never gives them a
  // non-commutative operation).
  if (t.collective == Coll::Allreduce) {
    if (p == 1)
      return {"recursive_doubling", "one rank: the plan is a copy"};
    if (t.bytes < shortLimit)
      return {"recursive_doubling", "short vector: latency-bound, fewest steps"};
    if (t.count < floorPow2(p))
      return {"recursive_doubling", "fewer elements than chunks of halving-doubling"};
    if (powerOfTwo(p))
      return {"rabenseifner", "long vector, power-of-two ranks: halving-doubling"};
    if (!t.commutative)
      return {"rabenseifner", "long vector, non-commutative operation: halving-doubling "
                              "after a fold, order-preserving"};
    if (p <= ringMaxRanks)
      return t.count < p ? DefaultChoice{"recursive_doubling",
                                         "fewer elements than chunks of the ring"}
                         : DefaultChoice{"ring", "long vector, few ranks (not a power of two): "
                                                 "ring, no fold"};
    return {"binary_blocks", "long vector, many ranks (not a power of two): binary blocks"};
  }
  if (p == 1)
    return {"binomial", "one rank: the plan is a copy"};
  if (t.bytes < shortLimit)
    return {"binomial", "short vector: latency-bound, fewest steps"};
  if (t.count < floorPow2(p))
    return {"binomial", "fewer elements than chunks of reduce-scatter"};
  return {"rabenseifner", "long vector: reduce-scatter and gather"};
}

Selection select(const Config &config, const CallTraits &t, std::span<const FileCandidate> files,
                 const PlanQuery &q) {
  Selection s;
  std::string picked;
  std::string from;
  const unsigned c = unsigned(t.collective);
  if (!config.forced[c].empty()) {
    picked = config.forced[c];
    s.origin = Origin::Forced;
    from = "COLLC_ALGORITHM";
  } else {
    for (const Rule &r : config.rules)
      if (r.collective == t.collective && r.matches(t.ranks, t.bytes)) {
        picked = r.algorithm;
        s.origin = Origin::Rule;
        from = r.where;
        break;
      }
  }

  std::string replaced; // what was picked first, when it had to be replaced
  if (!picked.empty()) {
    if (picked == nativeAlgorithm) {
      s.native = true;
      s.algorithm = picked;
      s.detail = "native (" + from + ")";
      return s;
    }
    // A plan file of that name, preferring one whose range holds the call.
    const FileCandidate *file = nullptr;
    for (const FileCandidate &f : files)
      if (f.algorithm == picked && rootFits(f, t) && (!file || (!contains(*file, t) &&
                                                                contains(f, t))))
        file = &f;
    bool needsCommutative = true;
    bool exists = file || (q.generator && q.generator(t.collective, picked, needsCommutative));
    if (file)
      needsCommutative = file->needsCommutative;
    if (!exists)
      s.substitution = Substitution::NoSuchPlan;
    else if (!file && q.generatorFits && !q.generatorFits(t.collective, picked, t.root))
      s.substitution = Substitution::DoesNotFit;
    else if (needsCommutative && !t.commutative)
      s.substitution = Substitution::NeedsCommutative;
    else if (file ? (q.fileVerifies && !q.fileVerifies(file->id))
                  : (q.generatedVerifies && !q.generatedVerifies(t.collective, picked, t.root)))
      s.substitution = Substitution::Unverified;
    if (s.substitution == Substitution::None) {
      s.algorithm = picked;
      s.fileId = file ? file->id : -1;
      s.detail = picked + (file ? " from " + std::string(file->origin) : std::string()) + " (" +
                 from + ")";
      return s;
    }
    replaced = picked + " (" + from + ") " + substitutionText(s.substitution);
  } else {
    for (const FileCandidate &f : files) {
      if (!rootFits(f, t) || !contains(f, t))
        continue;
      Substitution why = Substitution::None;
      if (f.needsCommutative && !t.commutative)
        why = Substitution::NeedsCommutative;
      else if (q.fileVerifies && !q.fileVerifies(f.id))
        why = Substitution::Unverified;
      if (why == Substitution::None) {
        s.origin = Origin::File;
        s.algorithm = std::string(f.algorithm);
        s.fileId = f.id;
        s.detail = s.algorithm + " from " + std::string(f.origin);
        if (!replaced.empty())
          s.detail += "; instead of " + replaced;
        return s;
      }
      if (s.substitution == Substitution::None) {
        s.substitution = why;
        replaced = std::string(f.algorithm) + " from " + std::string(f.origin) + " " +
                   substitutionText(why);
      }
    }
    if (s.substitution != Substitution::None)
      s.origin = Origin::File;
  }

  const DefaultChoice d = defaultAlgorithm(t);
  s.algorithm = d.algorithm;
  s.fileId = -1;
  s.detail = std::string(d.algorithm) + " (default: " + d.reason + ")";
  if (!replaced.empty())
    s.detail += "; instead of " + replaced;
  if (q.generatedVerifies && !q.generatedVerifies(t.collective, d.algorithm, t.root)) {
    s.native = true;
    s.noPlan = true;
    s.detail = "native: the default plan " + std::string(d.algorithm) +
               " did not verify (COLLC_VERIFY)";
  }
  return s;
}

} // namespace collc::dropin
