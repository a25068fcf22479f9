// MpiTypes.h - predefined MPI datatypes and ops mapped onto the kernels' ElemType / ReduceOp.
//
// Handles are compared, not switched on: in Open MPI they are addresses of globals, and some
// predefined names are the same handle (MPI_LONG_LONG is MPI_LONG_LONG_INT, MPI_C_COMPLEX is
// MPI_C_FLOAT_COMPLEX). The C integer handles map by size and signedness of their C type
// (MPI_LONG is Int64 on LP64); MPI_AINT / MPI_OFFSET / MPI_COUNT map onto the integer of their
// typedef's width. Fortran datatypes, MPI_PACKED and derived datatypes map to nothing.
#pragma once

#include "runtime/kernels/Kernels.h"

#include <mpi.h>

#include <optional>
#include <span>
#include <string_view>

namespace collc::rt {

/// One predefined MPI datatype the kernels know.
struct MpiTypeInfo {
  MPI_Datatype handle;
  std::string_view mpiName; ///< "MPI_DOUBLE_INT"
  ElemType type;
  /// MPI_AINT, MPI_OFFSET, MPI_COUNT: the standard's "multi-language types", which have every
  /// C integer op except the logical ones.
  bool multiLanguage;
};

/// One predefined MPI reduce op.
struct MpiOpInfo {
  MPI_Op handle;
  std::string_view mpiName; ///< "MPI_MAXLOC"
  ReduceOp op;
};

/// Every predefined datatype the kernels know, including names that are the same handle in this
/// MPI (each listed under every name). Valid before MPI_Init.
std::span<const MpiTypeInfo> predefinedMpiTypes();
/// The twelve predefined reduce ops (not MPI_REPLACE / MPI_NO_OP, which only RMA accepts).
std::span<const MpiOpInfo> predefinedMpiOps();

/// The ElemType of a predefined datatype, or nullopt for anything else (derived, Fortran,
/// MPI_PACKED, MPI_DATATYPE_NULL).
std::optional<ElemType> elemTypeOf(MPI_Datatype dt);
/// The ReduceOp of a predefined op, or nullopt (user-defined ops, MPI_REPLACE, MPI_OP_NULL).
std::optional<ReduceOp> reduceOpOf(MPI_Op op);

/// The kernel for a predefined (op, datatype) pair that MPI defines, else nullptr: findKernel on
/// the mapped types, minus the logical ops on MPI_AINT / MPI_OFFSET / MPI_COUNT. The kernel
/// computes dst = a ∘ b; MPI_Reduce_local(in, inout) is inout = in ∘ inout.
KernelFn findMpiKernel(MPI_Op op, MPI_Datatype dt);

} // namespace collc::rt
