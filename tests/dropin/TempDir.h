// tests/dropin/TempDir.h: a fresh folder for a test's files.
#ifndef COLLC_TESTS_DROPIN_TEMPDIR_H
#define COLLC_TESTS_DROPIN_TEMPDIR_H

#include <filesystem>
#include <string>
#include <unistd.h>

namespace collc::test {

/// An empty folder under the system's temporary directory, named after `name`
/// and the process (removed first if it exists).
inline std::string freshDir(const std::string &name) {
  const std::filesystem::path d = std::filesystem::temp_directory_path() /
                                  ("collc-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d.string();
}

} // namespace collc::test

#endif // COLLC_TESTS_DROPIN_TEMPDIR_H
