// runtime/api/Handles.h: user operations and derived datatypes kept alive
// while executions use them.
//
// MPI says that MPI_Op_free and MPI_Type_free only mark a handle for
// deallocation: pending operations that use it complete normally. A request
// of the runtime holds the user-defined operation and the derived datatype
// of its call (predefined handles cannot be freed); MPI_Op_free and
// MPI_Type_free, which libcollc.so and libcollc_mpi.so define
// (HandleFree.cpp, compiled into each so that each exports them), set the
// caller's handle to the null handle at once but defer the real free of a
// held handle until its last holder releases it. The real free is the next
// definition in the dynamic linker's search order (another interposer, or
// MPI itself), so several layers that do the same compose.
#ifndef COLLC_RUNTIME_API_HANDLES_H
#define COLLC_RUNTIME_API_HANDLES_H

#include <mpi.h>

namespace collc::rt {

/// Holds `op` if it is a user-defined operation; returns whether it did.
bool holdOp(MPI_Op op);
/// Releases a hold that holdOp took; frees `op` if the user freed it and
/// this was the last hold.
void releaseOp(MPI_Op op);
/// Holds `type` if it is a derived datatype; returns whether it did.
bool holdType(MPI_Datatype type);
/// Releases a hold that holdType took, like releaseOp.
void releaseType(MPI_Datatype type);

/// Whether MPI_Op_free and MPI_Type_free, called as the program calls them,
/// reach this runtime's freeOp/freeType — so that a hold really defers the
/// free and a held handle cannot be freed and made again under the same value.
/// Not so where another definition comes first (the Open MPI component, which
/// Open MPI loads behind itself; a program that defines them). Found once, by
/// freeing a held probe datatype through the global symbol. Needs MPI
/// initialized.
bool handleFreesReachUs();

/// A hold on a derived datatype (holdType) for as long as this lives;
/// nothing for a predefined one or before hold().
class TypeHold {
public:
  TypeHold() = default;
  TypeHold(const TypeHold &) = delete;
  TypeHold &operator=(const TypeHold &) = delete;
  ~TypeHold() {
    if (held_)
      releaseType(type_);
  }
  /// Holds `type` (once: a second call is a programming error).
  void hold(MPI_Datatype type) {
    type_ = type;
    held_ = holdType(type);
  }

private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  bool held_ = false;
};

/// MPI_Op_free and MPI_Type_free as the runtime defines them: the handle is
/// set to null; a held one is freed when its last hold goes, any other at
/// once (by the next definition of the function after this library).
int freeOp(MPI_Op *op);
int freeType(MPI_Datatype *type);

} // namespace collc::rt

#endif // COLLC_RUNTIME_API_HANDLES_H
