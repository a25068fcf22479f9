// runtime/Status.h: the runtime's error type — a code and a message, no LLVM.
//
// Anything outside input can make fail (a byte string given to the loader,
// later an MPI call) returns a Status; `assert` is for our own bugs only.
// A Status is [[nodiscard]]: ignoring one is a compiler warning.
#ifndef COLLC_RUNTIME_STATUS_H
#define COLLC_RUNTIME_STATUS_H

#include <cstdint>
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
  Invalid,     ///< well encoded, but the plan breaks a rule (DESIGN.md "Plans")
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
class [[nodiscard]] Status {
public:
  /// Success.
  Status() = default;
  static Status success() { return {}; }
  /// A failure. Precondition: code != ErrorCode::Ok.
  static Status error(ErrorCode code, std::string message) {
    Status s;
    s.code_ = code;
    s.message_ = std::move(message);
    return s;
  }

  bool ok() const { return code_ == ErrorCode::Ok; }
  ErrorCode code() const { return code_; }
  /// Empty on success.
  const std::string &message() const { return message_; }

private:
  ErrorCode code_ = ErrorCode::Ok;
  std::string message_;
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
