// tests/support/ReferenceInterpreter.h: an independent concrete executor of plans, for tests.
//
// The reference interpreter runs a plan on concrete values and checks the
// collective's result. It is written from docs/plan-format.md alone and shares no code
// with the verifier (compiler/), so the two can check each other. From ir/
// it uses only the data structures, names and describe(); buffer layout and
// dependencies are derived here again.
//
// Values. Every slot holds either nothing (undefined) or a sequence of
// tokens (rank q, chunk c), "chunk c of rank q's input". Combining two values
// concatenates their sequences, which is exactly associative and not
// commutative, so a sequence decides correctness for any associative
// operation; comparing sorted sequences (`compareAsMultiset`) decides it for
// commutative ones. Alongside, each value carries its reduction *tree*
// (hash-consed), so identical results on all ranks can be demanded too.
//
// Execution. Each rank's ops form a DAG (docs/plan-format.md, "Dependencies": `step`
// waits for every op of the nearest lower step that has ops, `after` for the
// listed ops). An op is posted when all its dependencies have completed;
// ready ops are posted in FIFO (default) or LIFO order, so runs are
// deterministic. Local ops complete when posted. Sends are unbuffered: a send
// and its matching receive complete together once both are posted; the k-th
// send a→b matches the k-th recv/recv_reduce from a at b. In and out are one
// memory when `aliasInOut` is set (MPI_IN_PLACE): in slot c is out slot c,
// and for allgather in slot i of rank r is out slot r·C/p + i.
// Three-address recv_reduce and reduce (ir/Plan.h `hasDst`) read buf and
// write their result to dst.
//
// Checks, in this order, stopping at the first failure:
//  1. invalid  — malformed shape or op (missing buffer, slots out of range,
//                combining op in a non-reducing collective, bad deps);
//  2. mismatch — peer out of range or self, a message without a matching end,
//                matched ends with different counts;
//  3. input-write — an op writes `in`;
//  4. race     — two ops of a rank with no dependency path between them touch
//                a common slot (after aliasing), one of them writing; a send
//                reads its slots until it completes (checkRaces);
//  5. uninitialized — an op reads an undefined slot; deadlock — ops remain
//                but none can progress;
//  6. the result condition per collective (docs/plan-format.md, "Verification"):
//     missing-contribution (undefined or lacking a token), duplicate-
//     contribution, misplaced (a token of another chunk, or of a rank that
//     does not belong, e.g. in scan), order (right tokens, wrong order; not
//     reported with compareAsMultiset), nondeterministic (requireIdenticalTrees:
//     allreduce ranks hold different reduction trees for a chunk);
//     unsynchronized (barrier: some rank's ops do not all wait, through
//     dependencies and received messages, on an op of every other rank —
//     tracked per op as the set of ranks it has heard from during the run).
#ifndef COLLC_TESTS_SUPPORT_REFERENCEINTERPRETER_H
#define COLLC_TESTS_SUPPORT_REFERENCEINTERPRETER_H

#include "ir/Plan.h"

#include <string>

namespace collc::test {

/// What went wrong, by docs/plan-format.md diagnostic class.
enum class RefErrorKind : uint8_t {
  None,
  Invalid,
  Mismatch,
  InputWrite,
  Race,
  Uninitialized,
  Deadlock,
  MissingContribution,
  DuplicateContribution,
  Misplaced,
  Order,
  Nondeterministic,
  Unsynchronized,
};

/// The class name as in docs/plan-format.md ("missing-contribution"), "ok" for None.
const char *name(RefErrorKind k);

/// The order in which ops that became ready are posted.
enum class ReadyOrder : uint8_t {
  Fifo, ///< oldest ready op first (the default)
  Lifo, ///< newest ready op first
};

struct RefOptions {
  /// Compare results as multisets of tokens (for commutative plans).
  bool compareAsMultiset = false;
  /// In and out are the same memory (MPI_IN_PLACE). Not meaningful for
  /// reduce_scatter_block (reported as invalid); bcast has no in to alias.
  bool aliasInOut = false;
  /// Check for races before running.
  bool checkRaces = true;
  /// Demand that all ranks of an allreduce end with the same reduction tree
  /// per chunk, operand order included.
  bool requireIdenticalTrees = false;
  ReadyOrder readyOrder = ReadyOrder::Fifo;
};

struct RefOutcome {
  bool ok = true;
  RefErrorKind kind = RefErrorKind::None;
  /// "<class>: rank R, op I (<op>): <what>" or "<class>: <what>"; empty when ok.
  std::string error;
  /// Ops that completed (all of them when ok).
  size_t opsCompleted = 0;
};

/// Runs `plan` and checks its result. Never asserts on malformed input.
RefOutcome runReference(const ir::Plan &plan, const RefOptions &opts = {});

} // namespace collc::test

#endif // COLLC_TESTS_SUPPORT_REFERENCEINTERPRETER_H
