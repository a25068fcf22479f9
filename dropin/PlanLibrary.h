// dropin/PlanLibrary.h: the plans the interposer can run — files
// from COLLC_PLAN_PATH and plans generated on demand.
//
// scan() reads every `.cplan` and `.cbundle` in the COLLC_PLAN_PATH folders
// (each folder in order, its files sorted by name) through the validating
// loaders; a file that cannot be used is a warning naming the file and the
// reason, never silently skipped; so is a file that records no proof unless
// COLLC_VERIFY (proven before first use, disassembled first) or
// COLLC_ACCEPT_UNPROVEN.
//
// Library algorithms: build() makes the plan a rank runs. By default that is
// the rank's own program alone (dropin/RankCompile.h: its program and its
// peers', as a partial plan), in time proportional to them, never the whole
// plan; which proof covers it (guaranteeFor) is the CI bound, a proof record
// (COLLC_PROOF_CACHE), or none. With COLLC_VERIFY it is the whole plan,
// generated, proven and compiled with every pass proven (generated()). Both
// compile with the same pipeline, so every rank runs the same program either
// way. The bytes are kept per (collective, algorithm, ranks, root[, rank]),
// so every communicator of that shape loads the same bytes.
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

/// Which proof covers a plan the library built (docs/dropin.md, "Which
/// guarantee holds when"). The text is what COLLC_STATS and COLLC_DEBUG print.
#define COLLC_GUARANTEES(X)                                                                \
  X(ProvenOnLoad, "proven on load (the whole plan)")                        \
  X(ProvenInCi, "proven by collc's tests (a library algorithm at p <= 32)")                \
  X(ProofRecord, "proven by a proof record (COLLC_PROOF_CACHE)")                           \
  X(ProvenOnFirstUse, "proven on first use (a user's algorithm, COLLC_LIBRARY)")            \
  X(None, "not proven (p above the tests' bound of 32, no proof record)")
enum class Guarantee : uint8_t {
#define COLLC_X(E, T) E,
  COLLC_GUARANTEES(COLLC_X)
#undef COLLC_X
      Count
};
constexpr unsigned numGuarantees = unsigned(Guarantee::Count);
const char *text(Guarantee g);

/// A plan build() made for one rank.
struct BuiltPlan {
  std::shared_ptr<const std::vector<uint8_t>> bytes;
  bool whole = false;      ///< the whole plan (COLLC_VERIFY), else the rank's partial plan
  Guarantee guarantee = Guarantee::None;
  uint32_t sections = 0;   ///< partial: programs it holds
  uint64_t ownOps = 0, contextOps = 0;
  double seconds = 0;      ///< CPU time of building it (0 when it was cached)
  std::string record;      ///< ProofRecord: the record's file
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
  /// A hash of what the library's algorithms are (their names and texts)
  /// and of the pipeline that compiles them: ranks running different builds
  /// of the drop-in would run different programs. With `user`, of the user's
  /// algorithms (COLLC_LIBRARY) instead.
  static uint64_t libraryHash(bool user = false);
  /// Adds the algorithm files of the COLLC_LIBRARY folders `folders` to the
  /// generators (once, before any other use); a file that cannot be used, or
  /// that another user could have written (Trust.h; `trusted`:
  /// COLLC_TRUSTED), is left out, with a warning.
  static void addUserAlgorithms(const std::vector<std::string> &folders,
                                const std::vector<std::string> &trusted,
                                std::vector<std::string> &warnings);
  /// Whether a generator `name` exists for `c`, and if its plans need a
  /// commutative operation.
  static bool generatorInfo(Coll c, std::string_view name, bool &needsCommutative);
  /// Whether the generator `name`'s `require` lines accept `ranks` and `root`.
  static bool generatorFits(Coll c, std::string_view name, uint32_t ranks, uint32_t root);

  /// The bytes of the generated plan, or null with `error`: generated,
  /// proven (for allreduce, identical too), then optimized at -O2 with every
  /// pass proven; a plan that does not verify is never returned. Cached.
  std::shared_ptr<const std::vector<uint8_t>> generated(Coll c, std::string_view name,
                                                        uint32_t ranks, uint32_t root,
                                                        std::string &error);
  /// COLLC_VERIFY for plan file `id`: disassembles and proves it (cached).
  bool verifyFile(int id, std::string &error);

  /// The plan rank `rank` runs for library algorithm `name` of `c` on
  /// `ranks` ranks with `root`: with config.verify, or for an allreduce that
  /// nonIdenticalAllreduce names, the whole plan (generated()), else the
  /// rank's own compiled program (a partial plan).
  /// False with `error` when it cannot be had (the algorithm's `require`
  /// refuses the shape, or it does not verify). A proof record that cannot
  /// be used is a warning in `warnings` (once per record). Cached.
  bool build(Coll c, std::string_view name, uint32_t ranks, uint32_t root, uint32_t rank,
             const Config &config, BuiltPlan &out, std::string &error,
             std::vector<std::string> &warnings);

  /// Which proof covers the per-rank plans of `name` for (c, ranks, root):
  /// the CI bound (ranks <= ciProvenRanks), a proof record in
  /// config.proofCache, or none; `record` receives the record's file. Cached.
  Guarantee guaranteeFor(Coll c, std::string_view name, uint32_t ranks, uint32_t root,
                         const Config &config, std::string &record,
                         std::vector<std::string> &warnings);

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
  struct Built {
    BuiltPlan plan;
    std::string error;
  };
  std::map<std::tuple<unsigned, std::string, uint32_t, uint32_t, uint32_t>, Built> built_;
  std::map<std::tuple<unsigned, std::string, uint32_t, uint32_t>,
           std::pair<Guarantee, std::string>>
      guarantees_;
  std::map<int, std::pair<bool, std::string>> fileVerified_;
};

} // namespace collc::dropin

#endif // COLLC_DROPIN_PLANLIBRARY_H
