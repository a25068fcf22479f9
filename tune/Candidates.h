// tune/Candidates.h: the tuner's search space (docs/tune.md,
// "Candidates").
//
// A candidate is a library algorithm (schedules/, `collc list`) of the
// collective, a value for each of its parameters and a pipelining segment
// count for the -O2 pipeline (1: off). The space is the product of:
//  - every algorithm of the collective (or those named), kept when its
//    `require` lines accept the shape — ranks, root and the topology's
//    layout, so a hierarchical algorithm is enumerated only where it fits;
//  - for each integer parameter, parameterValues(): its default and the
//    radices 2, 3, 4 and 8, where the file accepts them;
//  - for each algorithm parameter (the algorithm a hierarchical plan runs at
//    one level), each of its choices (sched::Parameter::choices) with the
//    other parameters at their defaults — one level varied at a time, not
//    the product of every level's choices;
//  - every segment count of CandidateOptions::segments.
// A choice the sub-shape does not fit (its `require` lines) is listed as not
// fitting, like an algorithm the shape rules out.
// The order is fixed — library order, integer values ascending, then the
// algorithm parameters in file order and their choices in library order,
// segments ascending — so a search is a pure function of its inputs.
#ifndef COLLC_TUNE_CANDIDATES_H
#define COLLC_TUNE_CANDIDATES_H

#include "lang/Instantiator.h"
#include "schedules/Generators.h"

#include "llvm/Support/Error.h"

#include <string>
#include <utility>
#include <vector>

namespace collc::tune {

/// Which candidates to consider.
struct CandidateOptions {
  /// Library algorithms to consider (empty: every one of the collective).
  std::vector<std::string> algorithms;
  /// Pipelining segment counts (1: off), ascending.
  std::vector<unsigned> segments = {1, 2, 4, 8};
  /// A candidate estimated at more ops (after pipelining) is not enumerated.
  uint64_t maxOps = sched::defaultMaxOps;
  /// Parameters fixed for every candidate that has them (`collc tune --set`):
  /// not varied, always this value.
  lang::ParamValues fixed;
};

/// One point of the search space.
struct Candidate {
  /// "ring", "recursive_multiplying.k4", "multi_leader.inter=ring",
  /// "chain.seg4": the algorithm, then ".NAMEVALUE" for each integer
  /// parameter and ".NAME=CHOICE" for each algorithm parameter not at its
  /// default, then ".segK".
  std::string name;
  const sched::Algorithm *algorithm = nullptr;
  /// Parameters given a value other than their default, in file order.
  lang::ParamValues params;
  unsigned segments = 1;
  /// The plan's estimated ops before pipelining (lang::estimateOps).
  uint64_t estimatedOps = 0;

  /// Whether an algorithm parameter is set away from its default (the
  /// search compiles these after every default).
  bool choosesAlgorithms() const {
    for (const auto &kv : params)
      if (kv.second.isAlgorithm())
        return true;
    return false;
  }
};

/// A candidate the shape rules out, and why ("require p == pof2(p) does not
/// hold (p = 6)").
struct NotFitting {
  std::string name;
  std::string why;
};

struct Enumeration {
  std::vector<Candidate> candidates;
  std::vector<NotFitting> notFitting;
};

/// The values tried for parameter `p`: its default and 2, 3, 4, 8, ascending
/// and distinct (enumerate drops those the file's `require` refuses).
std::vector<int64_t> parameterValues(const lang::Param &p);

/// The search space for collective `c` and the shape `shape` (ranks, root,
/// layout, maxOps; its params are ignored). Errors: an algorithm of
/// `opts.algorithms` the library does not have for `c`; a fixed parameter no
/// considered algorithm has, or one given a value of the other kind (a name
/// for an integer parameter, a number for an algorithm parameter).
llvm::Expected<Enumeration> enumerate(ir::Collective c, const lang::InstantiateOptions &shape,
                                      const CandidateOptions &opts);

} // namespace collc::tune

#endif // COLLC_TUNE_CANDIDATES_H
