// Kernels.h - element types, MPI's predefined reduce ops and the typed loops that apply them.
//
// The runtime interpreter combines chunks with `KernelFn`s: dst[i] = a[i] ∘ b[i]. This header is
// MPI-free; MpiTypes.h maps MPI handles onto ElemType / ReduceOp.
//
// Validity: the op × datatype table of the MPI_Reduce man page (ReduceOps.def, last column), with
// the type groups read as the MPI standard (3.1 §5.9.2 and later) spells them out, because the man
// page's group lists predate the C99 types: "C integer" also has long long, signed/unsigned char
// and the intN_t / uintN_t types; "Logical" is C _Bool and C++ bool; "Complex" is the C
// T _Complex types. MPI_CHAR is in no group. Fortran types are not handled.
//
//             max min sum prod land lor lxor band bor bxor maxloc minloc
//   int8..uint64 (all C integer types)
//              x   x   x   x    x    x   x    x    x   x     -      -
//   char, wchar_t
//              -   -   -   -    -    -   -    -    -   -     -      -
//   float, double, long double
//              x   x   x   x    -    -   -    -    -   -     -      -
//   float/double/long double _Complex
//              -   -   x   x    -    -   -    -    -   -     -      -
//   bool (C _Bool, C++ bool)
//              -   -   -   -    x    x   x    -    -   -     -      -
//   byte
//              -   -   -   -    -    -   -    x    x   x     -      -
//   float_int, double_int, long_int, 2int, short_int, long_double_int
//              -   -   -   -    -    -   -    -    -   -     x      x
//
// (MPI_AINT / MPI_OFFSET / MPI_COUNT, the standard's "multi-language types", have no logical
// ops; they share int64's ElemType, so MpiTypes applies that restriction.)
//
// Semantics (C arithmetic in the element type, nothing wider):
// - Integers wrap modulo 2^bits (computed in the unsigned type of the same width, so signed
//   overflow is never undefined behaviour); no saturation.
// - land/lor/lxor: an element is true iff it is nonzero; the result is 0 or 1 of the element type.
// - band/bor/bxor: on the bits.
// - float max/min: `a > b ? a : b` / `a < b ? a : b`, except that a NaN operand wins: if either
//   operand is NaN the result is NaN (a's if both are). This keeps max/min commutative and
//   associative in the presence of NaN, so the reduction tree a plan uses cannot change whether a
//   NaN survives. Signed zeros compare equal, so max(+0, -0) is b (-0) and max(-0, +0) is +0.
// - float sum/prod: IEEE in the element type; complex prod is C's (Annex G) product.
// - maxloc/minloc (man page): the pair with the greater (maxloc) / smaller (minloc) value wins;
//   on equal values the pair with the lower index wins — the whole pair, so the result does not
//   depend on operand order. A NaN value counts as better than any number (it propagates, as in
//   max/min); two NaNs are equal.
#pragma once

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

namespace collc::rt {

/// MPI's MAXLOC/MINLOC pair: exactly the C struct { V value; int index; } (MPI_FLOAT_INT, ...).
template <class V> struct ValueIndex {
  V value;
  int index;
};

/// An MPI datatype group: the unit the validity table is written in.
enum class ElemClass : uint8_t {
  Integer,   ///< C integer (and the multi-language types)
  Floating,  ///< float, double, long double
  Complex,   ///< T _Complex
  Logical,   ///< C _Bool, C++ bool
  Byte,      ///< MPI_BYTE
  Pair,      ///< the MAXLOC/MINLOC value/index structs
  Character, ///< char, wchar_t: no predefined op
};

/// Element types a kernel can combine; see ElemTypes.def.
enum class ElemType : uint8_t {
#define COLLC_ELEM_TYPE(Enum, Name, Repr, Class) Enum,
#include "runtime/kernels/ElemTypes.def"
};

/// MPI's predefined reduce operations; see ReduceOps.def.
enum class ReduceOp : uint8_t {
#define COLLC_REDUCE_OP(Enum, Name, Classes) Enum,
#include "runtime/kernels/ReduceOps.def"
};

/// Every ElemType, in declaration order.
inline constexpr std::array kAllElemTypes = {
#define COLLC_ELEM_TYPE(Enum, Name, Repr, Class) ElemType::Enum,
#include "runtime/kernels/ElemTypes.def"
};
/// Every ReduceOp, in declaration order.
inline constexpr std::array kAllReduceOps = {
#define COLLC_REDUCE_OP(Enum, Name, Classes) ReduceOp::Enum,
#include "runtime/kernels/ReduceOps.def"
};
inline constexpr size_t kNumElemTypes = kAllElemTypes.size(); ///< enumerators of ElemType
inline constexpr size_t kNumReduceOps = kAllReduceOps.size(); ///< enumerators of ReduceOp

/// Compile-time facts about one ElemType: `Repr` (the C++ type the kernel computes on) and
/// `kClass`.
template <ElemType E> struct ElemTraits;
#define COLLC_ELEM_TYPE(Enum, Name, ReprT, Class)                                                \
  template <> struct ElemTraits<ElemType::Enum> {                                              \
    using Repr = ReprT;                                                                        \
    static constexpr ElemClass kClass = ElemClass::Class;                                      \
  };
#include "runtime/kernels/ElemTypes.def"

/// A set of ElemClasses, so that ReduceOps.def can write `Integer | Floating`.
struct ElemClassSet {
  unsigned bits = 0; ///< bit c set iff ElemClass c is in the set
  /// The empty set.
  constexpr ElemClassSet() = default;
  /// The set {c} (implicit, so that a single class can stand for a set).
  constexpr ElemClassSet(ElemClass c) : bits(1u << static_cast<unsigned>(c)) {}
  /// Whether c is in the set.
  constexpr bool contains(ElemClass c) const { return (bits & ElemClassSet(c).bits) != 0; }
};
/// Set union.
constexpr ElemClassSet operator|(ElemClassSet x, ElemClassSet y) {
  ElemClassSet r;
  r.bits = x.bits | y.bits;
  return r;
}
// Operators on two enums only consider overloads taking the enum, hence this one.
constexpr ElemClassSet operator|(ElemClass x, ElemClass y) { return ElemClassSet(x) | ElemClassSet(y); }

/// The group `t` belongs to.
constexpr ElemClass elemClass(ElemType t) {
  switch (t) {
#define COLLC_ELEM_TYPE(Enum, Name, Repr, Class)                                                 \
  case ElemType::Enum:                                                                         \
    return ElemClass::Class;
#include "runtime/kernels/ElemTypes.def"
  }
  return ElemClass::Character; // unreachable for a valid enumerator
}

/// Size in bytes of one element (the MPI extent for the pair types, padding included).
constexpr size_t elemSize(ElemType t) {
  switch (t) {
#define COLLC_ELEM_TYPE(Enum, Name, Repr, Class)                                                 \
  case ElemType::Enum:                                                                         \
    return sizeof(Repr);
#include "runtime/kernels/ElemTypes.def"
  }
  return 0;
}

/// The groups `op` is defined on (the validity table, one row).
constexpr ElemClassSet validClasses(ReduceOp op) {
  using enum ElemClass;
  switch (op) {
#define COLLC_REDUCE_OP(Enum, Name, Classes)                                                     \
  case ReduceOp::Enum:                                                                         \
    return Classes;
#include "runtime/kernels/ReduceOps.def"
  }
  return {};
}

/// Whether MPI defines `op` on `t`, i.e. whether findKernel(op, t) is non-null.
constexpr bool isValid(ReduceOp op, ElemType t) { return validClasses(op).contains(elemClass(t)); }

/// The ElemType of a C/C++ integer type T (not bool, char or wchar_t), by size and signedness:
/// integerElemType<long>() is Int64 on LP64.
template <class T> constexpr ElemType integerElemType() {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char> &&
                    !std::is_same_v<T, wchar_t>,
                "integerElemType<T>: T must be a C integer type");
  constexpr bool s = std::is_signed_v<T>;
  if constexpr (sizeof(T) == 1)
    return s ? ElemType::Int8 : ElemType::Uint8;
  else if constexpr (sizeof(T) == 2)
    return s ? ElemType::Int16 : ElemType::Uint16;
  else if constexpr (sizeof(T) == 4)
    return s ? ElemType::Int32 : ElemType::Uint32;
  else {
    static_assert(sizeof(T) == 8, "integerElemType<T>: no ElemType of this width");
    return s ? ElemType::Int64 : ElemType::Uint64;
  }
}

/// dst[i] = a[i] ∘ b[i] for i in [0, n). Preconditions: each pointer is aligned for the element
/// type and valid for n elements (any value, including null, when n == 0); dst is either disjoint
/// from a and from b or exactly equal to it (a == b is fine too); no partial overlap.
using KernelFn = void (*)(const void *a, const void *b, void *dst, size_t n);

/// The kernel for `op` on `t`, or nullptr if MPI does not define `op` on `t` (see the table
/// above).
KernelFn findKernel(ReduceOp op, ElemType t);

/// "int8", "double", "double_int", "2int", ... (ElemTypes.def).
std::string_view elemTypeName(ElemType t);
/// The ElemType named `name`: an elemTypeName, or a C type name spelled with underscores
/// ("int", "unsigned_long", "long_long", "signed_char", "_Bool", ...). nullopt if unknown.
std::optional<ElemType> parseElemType(std::string_view name);

/// "sum", "maxloc", ... (ReduceOps.def).
std::string_view reduceOpName(ReduceOp op);
/// The ReduceOp named `name` (a reduceOpName), or nullopt.
std::optional<ReduceOp> parseReduceOp(std::string_view name);

/// "integer", "floating", "complex", "logical", "byte", "pair", "character".
std::string_view elemClassName(ElemClass c);

} // namespace collc::rt
