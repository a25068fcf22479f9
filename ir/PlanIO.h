// ir/PlanIO.h: plan text format v1 — the reader and the canonical printer.
//
// The reader guarantees that a plan it returns is well-formed (ir/Plan.h):
// every key known and of the right type, shape and op ranges valid. Errors
// read `file:line:column: class: message` with class `syntax` (malformed YAML,
// unknown or duplicate keys, wrong types, missing keys) or `invalid` (values
// out of range). The printer is canonical: the same plan always prints to the
// same bytes, and print(parse(print(plan))) == print(plan).
#ifndef COLLC_IR_PLANIO_H
#define COLLC_IR_PLANIO_H

#include "ir/Plan.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace collc::ir {

/// What kind of input problem a reader error is (tools pick exit codes by it:
/// docs/plan-format.md, "Exit codes").
enum class ReadErrorKind : uint8_t {
  Io,      ///< the file cannot be read
  Syntax,  ///< not a plan: malformed YAML, unknown/duplicate/missing keys, wrong types
  Invalid, ///< a plan, but a value breaks the format's rules (ranges, counts, ranks)
};

/// An error of the plan reader. Its message is the full diagnostic:
/// `file:line:column: syntax|invalid: message`, or `cannot read 'file': why`.
class PlanReadError : public llvm::ErrorInfo<PlanReadError> {
public:
  static char ID;
  PlanReadError(ReadErrorKind kind, std::string message)
      : kind_(kind), message_(std::move(message)) {}
  ReadErrorKind kind() const { return kind_; }
  void log(llvm::raw_ostream &os) const override { os << message_; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

private:
  ReadErrorKind kind_;
  std::string message_;
};

/// The format tag this build reads and writes.
inline constexpr llvm::StringLiteral formatTag = "collc-plan/1";

/// Parses plan text; `fileName` labels error positions.
llvm::Expected<Plan> parsePlan(llvm::StringRef text, llvm::StringRef fileName);

/// Reads and parses a file; "-" reads standard input.
llvm::Expected<Plan> readPlanFile(llvm::StringRef path);

/// Writes one op as the canonical flow mapping of its line in a plan:
/// `{step: 1, op: send, to: 1, buf: out, chunk: 0}`.
void printOp(const Op &op, llvm::raw_ostream &os);

/// Writes the canonical text of `plan`.
void printPlan(const Plan &plan, llvm::raw_ostream &os);
std::string printPlan(const Plan &plan);

} // namespace collc::ir

#endif // COLLC_IR_PLANIO_H
