// dropin/Config.h: the interposer's settings, read from the
// environment (docs/dropin.md): COLLC_ALGORITHM, COLLC_RULES, COLLC_PLAN_PATH,
// COLLC_DEBUG, COLLC_STATS, COLLC_VERIFY, COLLC_ACCEPT_UNPROVEN,
// COLLC_PROOF_CACHE, and the transport's (COLLC_TRANSPORT, COLLC_SHM_SEGMENT,
// COLLC_SHM_FAST, COLLC_SHM_AFTER, COLLC_NODE_MAP: runtime/shm/TransportSettings.h), which the
// interposer hands to the runtime.
//
// Parsing never fails: a bad value becomes one warning (in Config::warnings,
// which the interposer prints once, on rank 0) and the variable's default.
// A rules file is all or nothing — any error and none of its rules apply — so
// a typo can never leave half a policy in force. MPI-free, LLVM-free.
#ifndef COLLC_DROPIN_CONFIG_H
#define COLLC_DROPIN_CONFIG_H

#include "runtime/bytecode/Format.h"
#include "runtime/shm/TransportSettings.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace collc::dropin {

/// The collectives the interposer serves, as selection sees them: the
/// non-blocking and persistent forms count as their blocking call, and
/// ReduceScatter covers MPI_Reduce_scatter_block and MPI_Reduce_scatter (one
/// kind of plan, reduce_scatter_block, serves both).
enum class Coll : uint8_t {
  Allreduce,
  Reduce,
  ReduceScatter,
  Scan,
  Exscan,
  Allgather,
  Bcast,
  Alltoall,
  Gather,
  Scatter,
  Barrier
};
inline constexpr unsigned numColls = 11;
/// "allreduce", "reduce", "reduce_scatter", "scan", "exscan", "allgather",
/// "bcast", "alltoall", "gather", "scatter", "barrier".
const char *name(Coll c);
/// The names, for messages: "allreduce, reduce, ... or bcast".
const char *collNames();
rt::Collective toRt(Coll c);
/// The collective has a root (reduce, bcast, gather, scatter).
inline bool hasRoot(Coll c) {
  return c == Coll::Reduce || c == Coll::Bcast || c == Coll::Gather || c == Coll::Scatter;
}
/// The collective moves one block per rank (or per pair of ranks), with a
/// send side and a receive side of their own datatypes: alltoall, gather,
/// scatter (dropin/ByteView.h serves them as bytes).
inline bool movesBlocks(Coll c) {
  return c == Coll::Alltoall || c == Coll::Gather || c == Coll::Scatter;
}

/// The pseudo-algorithm that sends a call to native MPI.
inline constexpr std::string_view nativeAlgorithm = "native";

/// One line of a rules file: calls of `collective` on communicators of
/// minRanks..maxRanks ranks (inclusive) moving [minBytes, maxBytes) bytes per
/// rank use `algorithm` (a generator, a plan file's name, or "native").
struct Rule {
  Coll collective = Coll::Allreduce;
  uint32_t minRanks = 1, maxRanks = UINT32_MAX;
  uint64_t minBytes = 0, maxBytes = ~uint64_t(0);
  std::string algorithm;
  std::string where; ///< "rules.yaml:7", for messages

  bool matches(uint32_t ranks, uint64_t bytes) const {
    return ranks >= minRanks && ranks <= maxRanks && bytes >= minBytes && bytes < maxBytes;
  }
};

/// Algorithm names a setting may use, per collective (generators and the
/// names of loaded plan files); "native" is always allowed.
struct KnownAlgorithms {
  std::vector<std::string> names[numColls];
  bool contains(Coll c, std::string_view name) const;
  std::string list(Coll c) const; ///< "a, b, c"
};

/// COLLC_FAULT, a test aid (docs/dropin.md): a failure made to happen on one
/// rank, at one of the points where a rank can fail alone after the ranks
/// agreed on a plan — to show that they agree again instead of parting.
enum class Fault : uint8_t {
  Setup,  ///< setting up a communicator (the runtime's duplicate, shared memory)
  Build,  ///< generating a library plan
  Load,   ///< loading a plan's bytes
  Tags,   ///< a channel longer than the communicator's tags
  Memory, ///< memory for the plan's first request
};
inline constexpr unsigned numFaults = 5;
/// "setup", "build", "load", "tags", "memory".
const char *name(Fault f);

/// COLLC_FAULT=what@rank[,what@rank...] parsed: per kind, the world ranks it
/// fails on. False with a message on a malformed value (nothing is set).
bool parseFaults(std::string_view value, std::vector<int> (&faults)[numFaults],
                 std::string &problem);

struct Config {
  bool debug = false;  ///< COLLC_DEBUG: log every decision
  bool stats = false;  ///< COLLC_STATS: counts at MPI_Finalize
  bool verify = false; ///< COLLC_VERIFY: prove plans before first use
  /// COLLC_ACCEPT_UNPROVEN: use plan files that record no proof (compiled with
  /// --no-verify) or, for allreduce, no identical results — on purpose.
  bool acceptUnproven = false;
  std::string forced[numColls]; ///< COLLC_ALGORITHM, "" where not given
  std::vector<Rule> rules;      ///< COLLC_RULES, in file order
  std::string rulesFile;
  std::vector<std::string> planPath; ///< COLLC_PLAN_PATH entries, in order
  std::vector<std::string> library;  ///< COLLC_LIBRARY folders, in order
  /// COLLC_TRUSTED: folders (or files) read even where others could have
  /// written them (Trust.h).
  std::vector<std::string> trusted;
  /// COLLC_PROOF_CACHE: the folder of proof records `collc verify --cache`
  /// writes (dropin/ProofCache.h); "" for none.
  std::string proofCache;
  /// COLLC_TRANSPORT, COLLC_SHM_SEGMENT, COLLC_SHM_FAST, COLLC_SHM_AFTER, COLLC_NODE_MAP.
  rt::TransportSettings transport;
  /// COLLC_FAULT: per kind, the world ranks where it is made to fail.
  std::vector<int> faults[numFaults];
  std::vector<std::string> warnings;

  bool fails(Fault f, int worldRank) const {
    for (int r : faults[unsigned(f)])
      if (r == worldRank)
        return true;
    return false;
  }
};

using GetEnv = std::function<const char *(const char *)>;

/// A decimal number (digits only, at most 19) of at most `maxValue`.
bool parseDecimal(std::string_view s, uint64_t maxValue, uint64_t &v);

/// COLLC_DEBUG, COLLC_STATS, COLLC_VERIFY, COLLC_ACCEPT_UNPROVEN,
/// COLLC_PROOF_CACHE, COLLC_FAULT, COLLC_PLAN_PATH (the folders are only split here;
/// PlanLibrary reads them) and the transport settings.
void parseBasics(const GetEnv &env, Config &config);

/// COLLC_PROOF_CACHE as this process sees it: "" when it is unset or names a
/// folder, else why it cannot be used ("no such folder", "not a folder").
std::string proofCacheProblem(const std::string &dir);

/// COLLC_ALGORITHM ("allreduce:ring,reduce:binomial"), checked against `known`.
void parseAlgorithm(const char *value, const KnownAlgorithms &known, Config &config);

/// A rules file's text (docs/dropin.md "Rules files"). Returns false with
/// every problem found in `errors` ("rules.yaml:7: ...") and no rules.
bool parseRules(std::string_view text, const std::string &file, const KnownAlgorithms &known,
                std::vector<Rule> &rules, std::vector<std::string> &errors);

/// COLLC_RULES: reads the file named by `value` and parses it into config.rules,
/// or adds one warning (listing the errors) and leaves no rules.
void loadRules(const char *value, const KnownAlgorithms &known, Config &config);

} // namespace collc::dropin

#endif // COLLC_DROPIN_CONFIG_H
