// runtime/bytecode/ReadFile.cpp: readRegularFile with open/fstat/read.
#include "runtime/bytecode/ReadFile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace collc::rt {

namespace {

const char *kindOf(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode))
    return "a device";
  return "not a regular file";
}

Status ioError(const char *what) {
  return Status::error(ErrorCode::Io, std::string(what) + ": " + std::strerror(errno));
}

} // namespace

Status readRegularFile(const std::string &path, std::vector<uint8_t> &bytes) {
  bytes.clear();
  // O_NONBLOCK: opening a FIFO with no writer must not wait (fstat then
  // refuses it).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return Status::error(ErrorCode::Io, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    Status s = ioError("cannot stat it");
    ::close(fd);
    return s;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    if (S_ISDIR(st.st_mode))
      return Status::error(ErrorCode::Io, "it is a directory, not a file");
    return Status::error(ErrorCode::Io,
                         std::string("it is ") + kindOf(st.st_mode) + ", not a regular file");
  }
  bytes.resize(size_t(st.st_size));
  size_t got = 0;
  while (true) {
    if (got == bytes.size())
      bytes.resize(bytes.size() + 4096); // the file may have grown
    const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      Status s = ioError("cannot read it");
      ::close(fd);
      bytes.clear();
      return s;
    }
    if (n == 0)
      break;
    got += size_t(n);
  }
  ::close(fd);
  bytes.resize(got);
  return Status::success();
}

} // namespace collc::rt
