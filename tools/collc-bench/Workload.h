// tools/collc-bench/Workload.h: what a benchmark or MPI test reduces — an MPI
// datatype and operation, inputs every rank can regenerate from (rank, index),
// and the exact reference result.
//
// The reference is the sequential fold x_0 ∘ x_1 ∘ … ∘ x_{p-1} in canonical
// rank order, computed by a plain scalar model of the MPI operations written
// here — neither collc's kernels nor Open MPI's, whose op/avx component sums
// 8- and 16-bit integers with saturation (open-mpi/ompi#8045). The inputs are
// chosen so that every reduction tree gives that result bit for bit, which
// makes the comparison exact for every valid (op, datatype) pair:
//   - integers, byte, bool: any bits (wrapping arithmetic is exact); about a
//     quarter of the integer elements are 0 so the logical ops see both;
//   - floating sum/max/min: integers in [-8, 8]; prod: ±1 and ±2 (exact while
//     |product| ≤ 2^p fits the exponent, i.e. p < 128 for float);
//   - complex sum: Gaussian integers in [-8, 8]²; prod: 1, -1, i, -i, 1+i, 1-i;
//   - MAXLOC/MINLOC pairs: values in [0, 4) (many ties), indices in [0, 1000);
//   - the matrix op: 2×2 uint32 matrices of any bits, product modulo 2^32.
// Results are compared field by field, so padding (MPI_DOUBLE_INT's four
// bytes, long double's six) is never compared.
#ifndef COLLC_TOOLS_COLLC_BENCH_WORKLOAD_H
#define COLLC_TOOLS_COLLC_BENCH_WORKLOAD_H

#include "runtime/kernels/Kernels.h"

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace collc::bench {

/// One (operation, datatype) to reduce with.
struct Workload {
  std::string opName;   ///< "sum", "noncommutative"
  std::string typeName; ///< "double", "mat2x2_uint32"
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  size_t extent = 0;       ///< bytes per element (the MPI extent)
  bool commutative = true; ///< as MPI_Op_commutative says
  bool matrix = false;     ///< the 2×2 matrix product (then elem/reduceOp are unused)
  rt::ElemType elem = rt::ElemType::Double;
  rt::ReduceOp reduceOp = rt::ReduceOp::Sum;
};

/// The op name of the non-commutative matrix product and its datatype's name.
inline constexpr const char *kMatrixOpName = "noncommutative";
inline constexpr const char *kMatrixTypeName = "mat2x2_uint32";
/// MPI_SUM on double as a user operation (MPI_Op_create, commute = 1).
inline constexpr const char *kUserSumOpName = "usersum";

/// The predefined MPI datatype collc computes `t` on (MPI_INT32_T for int32,
/// MPI_DOUBLE_INT, ...); MPI_DATATYPE_NULL for char / wchar.
MPI_Datatype mpiTypeOf(rt::ElemType t);
/// The predefined MPI operation of `op`.
MPI_Op mpiOpOf(rt::ReduceOp op);

/// Every (op, type) pair of the kernel table that MPI defines (rt::findKernel
/// non-null): 116 of them.
std::vector<std::pair<rt::ReduceOp, rt::ElemType>> validPairs();

/// A predefined operation on a predefined type. Precondition: rt::isValid(op, t).
Workload builtinWorkload(rt::ReduceOp op, rt::ElemType t);
/// The non-commutative matrix product: a contiguous datatype of 4
/// MPI_UINT32_T and a user op created with commute = 0, both made on first
/// use (MPI must be initialized) and freed by freeMatrixWorkload().
const Workload &matrixWorkload();
/// A new matrix workload with its own datatype and op, which the caller frees
/// (MPI_Type_free, MPI_Op_free).
Workload newMatrixWorkload();
/// Frees the matrix datatype and op, if made. Call before MPI_Finalize.
/// Frees the user operations (and the matrix datatype) made so far.
void freeMatrixWorkload();

/// Parses an --op / --dtype pair ("sum", "double"; "noncommutative" with
/// dtype empty or "mat2x2_uint32"). On failure returns nullopt and says why.
std::optional<Workload> parseWorkload(const std::string &op, const std::string &dtype,
                                      std::string &error);

/// Writes elements [0, n) of rank `rank`'s input; `salt` selects another
/// input set (e.g. per iteration of a persistent request).
void fillInput(const Workload &w, int rank, uint64_t salt, void *buf, size_t n);

/// The exact result for `ranks` ranks' inputs into `out` (n elements), using
/// `scratch` (n elements) for the other operand. Precondition: ranks >= 1.
void referenceFold(const Workload &w, int ranks, uint64_t salt, void *out, void *scratch,
                   size_t n);

/// The first element where `got` and `want` differ (fields, not padding), or n.
size_t firstMismatch(const Workload &w, const void *got, const void *want, size_t n);

/// Element i printed for a message: "3.5", "(1,-2)", "{2 @ 17}", "[1 2; 3 4]".
std::string formatElement(const Workload &w, const void *buf, size_t i);

} // namespace collc::bench

#endif // COLLC_TOOLS_COLLC_BENCH_WORKLOAD_H
