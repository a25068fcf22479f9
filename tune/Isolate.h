// tune/Isolate.h: running one piece of work in a child process, so
// that a deadline can stop it wherever it is (the tuner's budget) and a crash
// or an exhausted memory costs only that piece.
//
// POSIX (fork, pipe, poll, waitpid). The work runs in a forked copy of the
// process and hands back a byte string through a pipe; the parent waits for
// it until the deadline and then kills the child (SIGKILL). Nothing the child
// does reaches the parent but those bytes: it must not print, and its buffered
// output is never flushed (it ends with _exit).
#ifndef COLLC_TUNE_ISOLATE_H
#define COLLC_TUNE_ISOLATE_H

#include <chrono>
#include <functional>
#include <string>

namespace collc::tune {

/// How an isolated piece of work ended.
enum class Outcome : uint8_t {
  Done,     ///< it returned; `bytes` is what it returned
  Deadline, ///< the deadline came first: the child was killed
  Failed,   ///< it could not run or died (a signal, an exit status): `why` says
};

struct Isolated {
  Outcome outcome = Outcome::Failed;
  std::string bytes;
  std::string why;
};

/// Runs `work` in a child process until it returns or `deadline` passes.
/// Exceptions thrown by `work` end it as Failed with their message.
Isolated runIsolated(const std::function<std::string()> &work,
                     std::chrono::steady_clock::time_point deadline);

} // namespace collc::tune

#endif // COLLC_TUNE_ISOLATE_H
