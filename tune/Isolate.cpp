// tune/Isolate.cpp: runIsolated over fork, a pipe and poll.
#include "tune/Isolate.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <exception>

#include <poll.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/wait.h>
#include <unistd.h>

namespace collc::tune {

namespace {

/// Writes all of `data` (the child's one message); false on a broken pipe.
bool writeAll(int fd, const std::string &data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += size_t(n);
  }
  return true;
}

std::string describeStatus(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    std::string s = "it was killed by signal " + std::to_string(sig);
    if (const char *name = strsignal(sig))
      s += std::string(" (") + name + ")";
    if (sig == SIGKILL)
      s += "; out of memory?";
    return s;
  }
  return "it exited with status " + std::to_string(WEXITSTATUS(status));
}

} // namespace

Isolated runIsolated(const std::function<std::string()> &work,
                     std::chrono::steady_clock::time_point deadline) {
  Isolated out;
  int fds[2];
  if (::pipe(fds) != 0) {
    out.why = std::string("cannot make a pipe: ") + std::strerror(errno);
    return out;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    out.why = std::string("cannot fork: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return out;
  }
  if (pid == 0) { // the child: work, hand the bytes over, leave without cleanup
#ifdef __linux__
    ::prctl(PR_SET_PDEATHSIG, SIGKILL); // never outlive the search
    if (::getppid() == 1)
      ::_exit(4); // the parent is already gone
#endif
    ::close(fds[0]);
    std::string bytes;
    int status = 0;
    try {
      bytes = "R" + work();
    } catch (const std::exception &e) {
      bytes = std::string("E") + e.what();
    } catch (...) {
      bytes = "Eunknown exception";
    }
    if (!writeAll(fds[1], bytes))
      status = 3;
    ::close(fds[1]);
    ::_exit(status);
  }
  ::close(fds[1]);
  std::string got;
  bool eof = false, late = false;
  char buf[1 << 16];
  while (!eof) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      late = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, int(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR)
      break;
    if (ready <= 0)
      continue;
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      eof = true;
    else
      got.append(buf, size_t(n));
  }
  ::close(fds[0]);
  if (late)
    ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (late) {
    out.outcome = Outcome::Deadline;
    return out;
  }
  if (!eof || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || got.empty()) {
    out.why = eof ? describeStatus(status) : std::string("reading its result failed");
    return out;
  }
  if (got[0] == 'E') {
    out.why = got.substr(1);
    return out;
  }
  out.outcome = Outcome::Done;
  out.bytes = got.substr(1);
  return out;
}

} // namespace collc::tune
