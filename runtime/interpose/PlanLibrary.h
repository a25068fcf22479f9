// runtime/interpose/PlanLibrary.h: the plans the interposer can run — files
// from COLLC_PLAN_PATH and plans generated on demand.
//
// scan() reads every `.cplan` and `.cbundle` in the COLLC_PLAN_PATH folders
// (each folder in order, its files sorted by name) through the validating
// loaders; a file that cannot be used is a warning naming the file and the
// reason, never silently skipped. generated() runs a generator
// (sched::generate) and lowers the plan (compiler::lower) the first time a
// (collective, algorithm, ranks, root) is asked for and keeps the bytes, so
// every communicator of that shape loads the same bytes. With COLLC_VERIFY the
// verifier proves a plan before its first use (a file disassembled first).
// Thread-safe: the file list is fixed after scan(); the caches take a mutex,
// only on the first use of a plan.
#ifndef COLLC_RUNTIME_INTERPOSE_PLANLIBRARY_H
#define COLLC_RUNTIME_INTERPOSE_PLANLIBRARY_H

#include "runtime/interpose/Config.h"
#include "runtime/interpose/Selection.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace collc::interpose {

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
  void scan(const std::vector<std::string> &folders, std::vector<std::string> &warnings);

  const std::vector<PlanFile> &files() const { return files_; }
  /// The plan files for collective `c` and `ranks`, in scan order.
  std::vector<FileCandidate> candidates(Coll c, uint32_t ranks) const;

  /// Generator names and plan-file algorithm names, per collective.
  KnownAlgorithms knownAlgorithms() const;
  /// Whether a generator `name` exists for `c`, and if its plans need a
  /// commutative operation.
  static bool generatorInfo(Coll c, std::string_view name, bool &needsCommutative);

  /// The bytes of the generated plan, or null with `error`. With `verify`, the
  /// plan must also prove (the result is cached either way).
  std::shared_ptr<const std::vector<uint8_t>> generated(Coll c, std::string_view name,
                                                        uint32_t ranks, uint32_t root,
                                                        bool verify, std::string &error);
  /// COLLC_VERIFY for plan file `id`: disassembles and proves it (cached).
  bool verifyFile(int id, std::string &error);

private:
  void addFile(const std::string &path, std::vector<std::string> &warnings);

  struct Generated {
    std::shared_ptr<const std::vector<uint8_t>> bytes;
    std::string error;
    int verified = -1; ///< -1 not yet, 0 failed, 1 proven
    std::string verifyError;
    std::string optimizeError; ///< why -O2 was not applied (never expected)
  };
  std::vector<PlanFile> files_;
  std::mutex mu_;
  std::map<std::tuple<unsigned, std::string, uint32_t, uint32_t>, Generated> generated_;
  std::map<int, std::pair<bool, std::string>> fileVerified_;
};

} // namespace collc::interpose

#endif // COLLC_RUNTIME_INTERPOSE_PLANLIBRARY_H
