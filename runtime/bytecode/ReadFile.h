// runtime/bytecode/ReadFile.h: reading a whole plan, bundle or rules file
// without blocking, throwing or aborting.
#ifndef COLLC_RUNTIME_BYTECODE_READFILE_H
#define COLLC_RUNTIME_BYTECODE_READFILE_H

#include "runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace collc::rt {

/// Reads the regular file at `path` into `bytes`. A directory, a FIFO, a
/// socket or a device is refused without waiting on it ("is a directory",
/// "is a FIFO, not a regular file"); an unreadable file gives the system's
/// reason ("Permission denied"). The message does not repeat the path.
/// An empty file is read as zero bytes: the caller says what that means.
[[nodiscard]] Status readRegularFile(const std::string &path, std::vector<uint8_t> &bytes);

} // namespace collc::rt

#endif // COLLC_RUNTIME_BYTECODE_READFILE_H
