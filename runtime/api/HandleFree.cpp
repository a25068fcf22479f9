// runtime/api/HandleFree.cpp: MPI_Op_free and MPI_Type_free, deferred while
// a request holds the handle (Handles.h). Compiled into every library that
// must export them (libcollc.so, libcollc.a, libcollc_mpi.so).
#include "runtime/api/Handles.h"

extern "C" {

int MPI_Op_free(MPI_Op *op) { return collc::rt::freeOp(op); }

int MPI_Type_free(MPI_Datatype *type) { return collc::rt::freeType(type); }

} // extern "C"
