// runtime/Status.h: the runtime's error type — a code and a message, no LLVM.
//
// Anything outside input can make fail (a byte string given to the loader,
// later an MPI call) returns a Status; `assert` is for our own bugs only.
// A Status is [[nodiscard]]: ignoring one is a compiler warning.
#ifndef COLLC_RUNTIME_STATUS_H
#define COLLC_RUNTIME_STATUS_H

#include <cassert>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace collc::rt {

/// What kind of failure a Status reports. The runtime issue extends this.
enum class ErrorCode : uint8_t {
  Ok = 0,
  NotAPlan,    ///< the bytes are not a compiled plan (wrong magic, empty)
  Unsupported, ///< not supported: a newer format version, or a datatype / operation
               ///< the plan cannot serve (the call should use native MPI)
  Corrupt,     ///< truncated, trailing bytes or checksum mismatch
  Malformed,   ///< a field is not encoded as docs/bytecode.md says
  Invalid,     ///< well encoded, but the plan breaks a rule (docs/plan-format.md, "Shape")
  Mismatch,    ///< the ranks' messages do not pair up
  // Raised when a plan is executed (runtime API).
  Argument, ///< a null pointer, negative count, or handle misuse
  Io,       ///< a plan file cannot be read
  Shape,    ///< the plan does not fit the call (communicator size, root, collective)
  Mpi,      ///< an MPI call failed
  State,    ///< a request used in the wrong state
};

/// Lowercase name of a code ("corrupt").
const char *name(ErrorCode c);

/// Success, or a failure with a code and a human-readable message.
///
/// One pointer wide: success is a null pointer, so the interpreter's hot path
/// passes and tests one pointer and never constructs or destroys a string.
/// (A moved-from Status is a success.)
class [[nodiscard]] Status {
public:
  /// Success.
  Status() = default;
  static Status success() { return {}; }
  /// A failure. Precondition: code != ErrorCode::Ok.
  static Status error(ErrorCode code, std::string message) {
    assert(code != ErrorCode::Ok && "a failure needs a failure code");
    Status s;
    s.failure_.reset(new Failure{code, std::move(message)});
    return s;
  }
  Status(Status &&) noexcept = default;
  Status &operator=(Status &&) noexcept = default;
  Status(const Status &o) : failure_(o.failure_ ? new Failure(*o.failure_) : nullptr) {}
  Status &operator=(const Status &o) {
    if (this != &o)
      failure_.reset(o.failure_ ? new Failure(*o.failure_) : nullptr);
    return *this;
  }

  bool ok() const { return !failure_; }
  ErrorCode code() const { return failure_ ? failure_->code : ErrorCode::Ok; }
  /// Empty on success.
  const std::string &message() const {
    static const std::string none;
    return failure_ ? failure_->message : none;
  }

private:
  struct Failure {
    ErrorCode code;
    std::string message;
  };
  std::unique_ptr<Failure> failure_;
};

inline const char *name(ErrorCode c) {
  switch (c) {
  case ErrorCode::Ok:
    return "ok";
  case ErrorCode::NotAPlan:
    return "not-a-plan";
  case ErrorCode::Unsupported:
    return "unsupported";
  case ErrorCode::Corrupt:
    return "corrupt";
  case ErrorCode::Malformed:
    return "malformed";
  case ErrorCode::Invalid:
    return "invalid";
  case ErrorCode::Mismatch:
    return "mismatch";
  case ErrorCode::Argument:
    return "argument";
  case ErrorCode::Io:
    return "io";
  case ErrorCode::Shape:
    return "shape";
  case ErrorCode::Mpi:
    return "mpi";
  case ErrorCode::State:
    return "state";
  }
  return "unknown";
}

} // namespace collc::rt

/// Returns from the enclosing function when `expr` (a Status) is a failure.
#define COLLC_RT_TRY(expr)                                                               \
  do {                                                                                   \
    if (::collc::rt::Status collcTryStatus_ = (expr); !collcTryStatus_.ok())             \
      return collcTryStatus_;                                                            \
  } while (0)

#endif // COLLC_RUNTIME_STATUS_H
