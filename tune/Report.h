// tune/Report.h: what `collc tune` writes from a search — the bundle
// and rules the drop-in loads, the report for people and its JSON form for
// tools (docs/tune.md, "Outputs"). Every writer is deterministic: the same
// result gives the same bytes.
#ifndef COLLC_TUNE_REPORT_H
#define COLLC_TUNE_REPORT_H

#include "tune/Tuner.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace collc::tune {

/// Where the outputs go, for the notes they carry about each other.
struct OutputNames {
  std::string topologyFile; ///< as given on the command line
  std::string bundle;       ///< the bundle's path
  std::string rules;        ///< the rules file's path (empty: none written)
  std::string command;      ///< the command line, for the report
};

/// Whether a range is served by a plan (not all native MPI, as --measure may
/// find).
bool hasPlans(const TuneResult &r);

/// The bundle (docs/bundle.md): one entry per size range a plan serves, each
/// the winning plan under its name (CandidateResult::name), read back by the
/// bundle reader before it is returned. Precondition: hasPlans(r).
llvm::Expected<std::vector<uint8_t>> bundleOf(const TuneResult &r);

/// The rules file (collc-rules/1, docs/dropin.md): one rule per size range
/// naming the bundle's plan, for COLLC_RULES next to the bundle on
/// COLLC_PLAN_PATH.
std::string rulesOf(const TuneResult &r, const OutputNames &names);

/// The report (markdown): the choice per size range, the winner per size with
/// its predicted time, the runner-up and why, every candidate's fate.
std::string reportOf(const TuneResult &r, const OutputNames &names);

/// The same as one JSON object (format "collc-tune/1", docs/tune.md).
std::string jsonOf(const TuneResult &r);

/// The short summary `collc tune` prints: one line per size range.
std::string summaryOf(const TuneResult &r);

/// Why the winner at size index `s` wins: its largest term, and what the
/// runner-up spends more on ("β network 62%; vs ring: 0.41 ms less α
/// network (8 vs 510 messages)").
std::string whyAt(const TuneResult &r, size_t s);

} // namespace collc::tune

#endif // COLLC_TUNE_REPORT_H
