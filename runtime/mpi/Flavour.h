// runtime/mpi/Flavour.h: what differs between the MPI libraries collc is
// built against (cmake/CollcMpi.cmake, docs/mpi.md), in one place.
//
// collc uses MPI's standard C API only: handles are opaque values of the
// handle types (pointers in Open MPI, ints in MPICH), compared with == and
// hashed by value, never cast. What the standard leaves to the library is
// here:
//  - the names of the persistent collectives: MPI 4's MPI_*_init, or Open
//    MPI 4.1's MPIX_*_init (mpi-ext.h, "pcollreq"); none in other MPI 3
//    libraries (COLLC_HAVE_PERSISTENT 0);
//  - which library a binary was built for, and whether the library in the
//    process is that one (a drop-in built for Open MPI preloaded into an
//    MPICH program, or the other way round, must not call a single MPI
//    function: the handle types differ).
#ifndef COLLC_RUNTIME_MPI_FLAVOUR_H
#define COLLC_RUNTIME_MPI_FLAVOUR_H

#include <mpi.h>

#include <string>

#if MPI_VERSION >= 4
#define COLLC_HAVE_PERSISTENT 1
#define COLLC_INIT(Name) MPI_##Name##_init
#define COLLC_PINIT(Name) PMPI_##Name##_init
#elif defined(OPEN_MPI) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#if MPI_VERSION < 4 && defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define COLLC_HAVE_PERSISTENT 1
#define COLLC_INIT(Name) MPIX_##Name##_init
#define COLLC_PINIT(Name) PMPIX_##Name##_init
#elif MPI_VERSION < 4
#define COLLC_HAVE_PERSISTENT 0
#endif

namespace collc::rt {

/// The MPI library family this binary was compiled for: "Open MPI",
/// "MPICH" (and the libraries of its ABI), or "MPI" for another.
const char *builtFor();

/// Whether the MPI library in this process is the family this binary was
/// compiled for, from MPI_Get_library_version (callable before MPI_Init and
/// with the same signature in every MPI). On false, *found is the library's
/// own first line.
bool libraryMatches(std::string *found);

} // namespace collc::rt

#endif // COLLC_RUNTIME_MPI_FLAVOUR_H
