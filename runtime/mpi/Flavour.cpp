// runtime/mpi/Flavour.cpp: the MPI library this binary was built for (Flavour.h).
#include "runtime/mpi/Flavour.h"

#include <algorithm>
#include <string_view>
#include <vector>

namespace collc::rt {

const char *builtFor() {
#if defined(OPEN_MPI)
  return "Open MPI";
#elif defined(MPICH_VERSION) || defined(MPICH)
  return "MPICH";
#else
  return "MPI";
#endif
}

bool libraryMatches(std::string *found) {
  // Sized for any MPI, not this header's MPI_MAX_LIBRARY_VERSION_STRING: in
  // a program of the other family the other library writes here (Open MPI's
  // bound is 256, MPICH's 8192).
  static_assert(MPI_MAX_LIBRARY_VERSION_STRING <= 16384);
  std::vector<char> buffer(16384);
  char *version = buffer.data();
  int len = 0;
  if (PMPI_Get_library_version(version, &len) != MPI_SUCCESS)
    return true; // nothing to compare with: trust the link
  std::string_view v(version, size_t(std::clamp(len, 0, int(buffer.size()) - 1)));
  if (size_t nl = v.find('\n'); nl != std::string_view::npos)
    v = v.substr(0, nl);
  std::string_view want = builtFor();
  // Open MPI: "Open MPI v4.1.4, ..."; MPICH: "MPICH Version: 4.0.2"; the
  // MPICH-ABI libraries name themselves (Intel(R) MPI Library, MVAPICH2,
  // Cray MPICH) and are served by the MPICH build.
  bool ok = true;
  if (want == "Open MPI")
    ok = v.starts_with("Open MPI");
  else if (want == "MPICH")
    ok = !v.starts_with("Open MPI");
  if (!ok && found)
    *found = std::string(v);
  return ok;
}

} // namespace collc::rt
