// compiler/Verifier.h: proves that a plan computes its collective.
//
// The verifier executes the plan symbolically for all ranks at once
// (docs/plan-format.md, "Verification") and returns structured diagnostics. See
// Verifier.cpp for the full list of invariants it checks.
#ifndef COLLC_COMPILER_VERIFIER_H
#define COLLC_COMPILER_VERIFIER_H

#include "ir/Plan.h"

#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace collc::compiler {

/// A diagnostic class (compiler/Diagnostics.def).
enum class DiagClass : uint8_t {
#define COLLC_DIAG(Enum, Text) Enum,
#include "compiler/Diagnostics.def"
};
llvm::StringRef name(DiagClass c);

/// One problem found in a plan.
struct Diagnostic {
  DiagClass cls = DiagClass::Invalid;
  std::optional<uint32_t> rank;  ///< the rank at fault, when there is one
  std::optional<uint32_t> op;    ///< op index in that rank's program
  std::optional<uint32_t> chunk; ///< vector chunk (nondeterministic) when no op
  std::string opText;            ///< describe(op), e.g. "recv_reduce out[1] from 1"
  std::optional<ir::Slots> slots; ///< the slots involved
  /// missing-contribution with `slots` and `op`: `op` last wrote the
  /// slots in its rank's program order; false: nothing wrote them and `op`
  /// is the rank's last op.
  bool lastWriter = false;
  std::string got;               ///< symbolic value found, e.g. "x[3..3] ∘ x[1..2]"
  std::string expected;          ///< symbolic value expected, if any
  std::string message;           ///< the rest of the explanation
  bool inPlace = false;          ///< found with in and out aliased
  /// Where the op was written, "ring.calgo:14", when the plan knows
  /// (Plan::source and the op's SourceLine; filled in by verify()).
  std::string location;
  /// What the author's program was doing when it emitted the op, "s = 1"
  /// (filled in by the language front end, lang::explain).
  std::string context;
};

/// Prints `rank 2, op 5 (recv_reduce out[1] from 1): order: <message>`, with
/// `ring.calgo:14: ` in front when the location is known and ` (s = 1)` after
/// the rank when the context is.
void print(const Diagnostic &d, llvm::raw_ostream &os);
std::string toString(const Diagnostic &d);

struct VerifyOptions {
  /// Verify for operations that are only associative, even if the plan says
  /// `commutative: true`.
  bool noncommutative = false;
  /// Report ranks computing different reduction trees as `nondeterministic`.
  bool requireIdentical = false;
  /// Keep at most this many diagnostics (0 = no limit); the rest are counted.
  unsigned maxErrors = 20;
  /// Only whether the plan is proven matters: stop at the first problem
  /// found. A proven plan's result is the same as without it; an unproven
  /// one's holds some of its diagnostics (not necessarily those a full run
  /// reports first) and partial stats.
  bool stopAtFirstError = false;
  /// In-place plans: always prove the aliased layout by a second symbolic
  /// run, even when the plain run and the order of input reads before
  /// output writes already decide it (for tests of that shortcut).
  bool alwaysSimulateAliased = false;
};

/// Measurements of a plan, filled in whenever the plan is well-formed.
struct PlanStats {
  uint64_t ops = 0;
  uint64_t messages = 0;
  uint64_t chunksMoved = 0;
  uint64_t scratch = 0;
  /// Longest chain of dependent ops and messages (a message counts once).
  uint64_t criticalPath = 0;
  /// Every rank ends with the same reduction tree for each result chunk.
  bool identical = true;
};

struct VerifyResult {
  std::vector<Diagnostic> diagnostics;
  size_t dropped = 0; ///< diagnostics beyond maxErrors
  PlanStats stats;
  /// In-place plans: the aliased layout was proven from the plain run and
  /// the order of input reads before output writes, without a second run.
  bool aliasedByOrder = false;
  /// verifyReordered: proven from the earlier proof (races and times checked
  /// again, values carried over) rather than by a full run.
  bool reordered = false;
  bool proven() const { return diagnostics.empty() && dropped == 0; }
};

/// Verifies `plan`. Any plan may be given (also ones not from the reader);
/// malformed ones yield `invalid` diagnostics.
VerifyResult verify(const ir::Plan &plan, const VerifyOptions &opts = {});

/// Proves `plan`, whose ops are exactly those of a plan that `before` proved
/// with the same `opts`, but for their dependencies (the caller guarantees
/// that, e.g. by having replaced only the dependency fields itself). When
/// every dependency joins two ops that conflict (one writes a slot the other
/// touches; in and out one memory for in-place plans), the plan proven
/// before, being race-free, ordered each such pair the same way: the new
/// order is contained in the old one, and if the new plan is race-free too,
/// every op reads what it read before and messages match as before. Then
/// values, results, reduction trees and deadlock freedom carry over, and
/// only the race check and the critical path (a timing run without values)
/// are redone. Otherwise — a dependency between ops that do not conflict, a
/// race, anything found — it verifies the plan in full. Either way the
/// result is what verify(plan, opts) gives (docs/plan-format.md,
/// "Verification").
VerifyResult verifyReordered(const ir::Plan &plan, const VerifyOptions &opts,
                             const VerifyResult &before);

namespace detail {
class Verifier;
}

/// Verifies one plan several times — with other options, or after changing
/// only its `commutative` or `in_place` claim (proveStrongest's attempts) —
/// sharing what does not depend on them: the structure check, the
/// dependency graphs and the message matching, when the first run found
/// nothing wrong there. Each verify() gives what verify(plan, opts) would.
/// The plan is held by reference; its ops and the rest of its shape must
/// not change while the Prover is used.
class Prover {
public:
  explicit Prover(const ir::Plan &plan);
  ~Prover();
  Prover(const Prover &) = delete;
  Prover &operator=(const Prover &) = delete;
  VerifyResult verify(const VerifyOptions &opts = {});

private:
  const ir::Plan &plan_;
  std::unique_ptr<detail::Verifier> v_;
};

/// Prints stats as `key: value` lines (ops, messages, chunks-moved, scratch,
/// critical-path, identical).
void printStats(const PlanStats &s, llvm::raw_ostream &os);

} // namespace collc::compiler

#endif // COLLC_COMPILER_VERIFIER_H
