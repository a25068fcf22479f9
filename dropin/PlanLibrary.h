// dropin/PlanLibrary.h: the plans the interposer can run — files
// from COLLC_PLAN_PATH and plans generated on demand.
//
// scan() reads every `.cplan` and `.cbundle` in the COLLC_PLAN_PATH folders
// (each folder in order, its files sorted by name) through the validating
// loaders; a file that cannot be used is a warning naming the file and the
// reason, never silently skipped; so is a file that records no proof unless
// COLLC_VERIFY (proven before first use, disassembled first) or
// COLLC_ACCEPT_UNPROVEN. generated() runs a generator (sched::generate),
// proves the plan, optimizes and lowers it (compiler::lower) the first time a
// (collective, algorithm, ranks, root) is asked for and keeps the bytes, so
// every communicator of that shape loads the same bytes.
// Thread-safe: the file list is fixed after scan(); the caches take a mutex,
// only on the first use of a plan.
#ifndef COLLC_DROPIN_PLANLIBRARY_H
#define COLLC_DROPIN_PLANLIBRARY_H

#include "dropin/Config.h"
#include "dropin/Selection.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace collc::dropin {

/// One plan from a file: a .cplan, or one entry of a bundle.
struct PlanFile {
  std::string origin; ///< "dir/x.cplan", or "dir/b.cbundle#2" for entry 2
  std::vector<uint8_t> bytes;
  rt::Collective collective = rt::Collective::Allreduce;
  uint32_t ranks = 1, root = 0;
  bool commutative = true, inPlace = false;
  std::string algorithm;
  uint64_t minBytes = 0, maxBytes = ~uint64_t(0);
  uint32_t crc = 0; ///< of the plan bytes (for the configuration fingerprint)
};

class PlanLibrary {
public:
  /// Loads the plan files of `folders` (a folder may also be a single file).
  /// A plan whose file records no proof (or, for allreduce, no identical
  /// results) is refused with a warning unless config.verify (it is proven
  /// before first use then) or config.acceptUnproven.
  void scan(const std::vector<std::string> &folders, const Config &config,
            std::vector<std::string> &warnings);

  const std::vector<PlanFile> &files() const { return files_; }
  /// The plan files for collective `c` and `ranks`, in scan order.
  std::vector<FileCandidate> candidates(Coll c, uint32_t ranks) const;

  /// Generator names and plan-file algorithm names, per collective.
  KnownAlgorithms knownAlgorithms() const;
  /// Whether a generator `name` exists for `c`, and if its plans need a
  /// commutative operation.
  static bool generatorInfo(Coll c, std::string_view name, bool &needsCommutative);

  /// The bytes of the generated plan, or null with `error`: generated,
  /// proven (for allreduce, identical too), then optimized at -O2 with every
  /// pass proven; a plan that does not verify is never returned. Cached.
  std::shared_ptr<const std::vector<uint8_t>> generated(Coll c, std::string_view name,
                                                        uint32_t ranks, uint32_t root,
                                                        std::string &error);
  /// COLLC_VERIFY for plan file `id`: disassembles and proves it (cached).
  bool verifyFile(int id, std::string &error);

private:
  void addFile(const std::string &path, const Config &config,
               std::vector<std::string> &warnings);
  /// Adds `f` unless its proof status refuses it (a warning then).
  void admit(PlanFile f, const rt::Proof &proof, const Config &config,
             std::vector<std::string> &warnings);

  struct Generated {
    std::shared_ptr<const std::vector<uint8_t>> bytes;
    std::string error;
    std::string optimizeError; ///< why -O2 was not applied (never expected)
  };
  std::vector<PlanFile> files_;
  std::mutex mu_;
  std::map<std::tuple<unsigned, std::string, uint32_t, uint32_t>, Generated> generated_;
  std::map<int, std::pair<bool, std::string>> fileVerified_;
};

} // namespace collc::dropin

#endif // COLLC_DROPIN_PLANLIBRARY_H
