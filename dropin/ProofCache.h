// dropin/ProofCache.h: proof records — what `collc verify ALG --ranks A..B
// --cache DIR` proved, read back by the drop-in (COLLC_PROOF_CACHE=DIR;
// docs/dropin.md, "Proof cache").
//
// A record is one text file per (algorithm text, collective, p, parameters):
//
//   format: collc-proof/1
//   algorithm: rabenseifner
//   collective: allreduce
//   source: sha256:<64 hex digits of the algorithm file's bytes>
//   pipeline: dropin-O2-per-rank/1
//   ranks: 4096
//   params: none                (or k=4,m=2: name=value, sorted by name)
//   roots: 0                    (the roots proven: 0..4095, or 0,3,7..9)
//   operations: any             (any associative operation, or commutative)
//   in_place: yes
//   identical: yes
//
// in that order, each key once, nothing else. It says that for every listed
// root the plan the file instantiates for p, and the drop-in's compilation of
// it (RankCompile.h: the per-rank -O2 pipeline, every pass's result proven
// again), are proven with the properties given. It is named
// <collective>-<algorithm>-<first 16 hex digits of the hash>[-<params>]-p<P>.proof
// so the drop-in reads exactly the record it needs and nothing else.
// A record proves nothing about another text (the hash), another pipeline or
// another shape: the reader compares every field with what it looks up.
// LLVM-free (the hash is computed here), MPI-free.
#ifndef COLLC_DROPIN_PROOFCACHE_H
#define COLLC_DROPIN_PROOFCACHE_H

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace collc::dropin {

/// The pipeline a record's compiled form was made with; a record of another
/// pipeline does not apply.
inline constexpr std::string_view proofPipeline = "dropin-O2-per-rank/1";

/// What a record is about.
struct ProofKey {
  std::string algorithm;  ///< the file's algorithm name ("rabenseifner")
  std::string collective; ///< format-v1 name ("allreduce")
  std::string sourceHash; ///< sha256Hex of the algorithm file's bytes
  uint32_t ranks = 1;
  /// Parameters given (--set), sorted by name; empty: the file's defaults.
  std::vector<std::pair<std::string, int64_t>> params;
};

/// What was proven.
struct ProofRecord {
  ProofKey key;
  std::string pipeline = std::string(proofPipeline);
  std::vector<uint32_t> roots;  ///< sorted, distinct
  bool anyAssociative = false;  ///< false: commutative operations only
  bool inPlace = false;
  bool identical = false;
};

/// The SHA-256 of `bytes` as 64 lowercase hex digits (FIPS 180-4).
std::string sha256Hex(std::string_view bytes);

/// The record's file name (no folder).
std::string recordFileName(const ProofKey &key);

/// The record as text (the format above).
std::string formatRecord(const ProofRecord &r);

/// Parses a record; false with "line N: reason" in `error` for anything
/// else than the format above.
bool parseRecord(std::string_view text, ProofRecord &out, std::string &error);

/// What the drop-in needs a record to say.
struct ProofNeeds {
  bool anyAssociative = false; ///< the plan is used for non-commutative operations
  bool inPlace = false;        ///< the plan claims in-place correctness
  bool identical = false;      ///< allreduce: every rank computes the same trees
};

enum class Lookup : uint8_t {
  Absent,  ///< no record for the key (or no folder)
  Proven,  ///< a record for the key lists the root and proves what is needed
  NotRoot, ///< a record for the key, but not for this root
  Invalid, ///< the file named for the key is unreadable, malformed, for
           ///< another key or pipeline, or proves less than needed: `why`
};

/// Looks up the record for `key` in `dir`. Never throws, never aborts: a bad
/// file is Invalid with the reason in `why` (naming the file). With
/// `trusted` (COLLC_TRUSTED), a record another user could have written
/// (Trust.h) is Invalid too: a record makes the drop-in skip a proof.
Lookup lookupProof(const std::string &dir, const ProofKey &key, uint32_t root,
                   const ProofNeeds &needs, std::string &why,
                   const std::vector<std::string> *trusted = nullptr);

/// Writes `r` to `dir` (created if missing), merging its roots with those
/// of a valid record already there for the same key, pipeline and
/// properties (any other file of that name is replaced). Written to a
/// temporary file and renamed, so a reader never sees half a record.
/// False with the reason in `error`.
bool writeProof(const std::string &dir, ProofRecord r, std::string &error);

} // namespace collc::dropin

#endif // COLLC_DROPIN_PROOFCACHE_H
