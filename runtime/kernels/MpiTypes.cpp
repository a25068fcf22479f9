// MpiTypes.cpp - the handle tables behind MpiTypes.h.
#include "runtime/kernels/MpiTypes.h"

#include <vector>

namespace collc::rt {
namespace {

static_assert(sizeof(bool) == 1, "MPI_CXX_BOOL is computed on its byte");

constexpr bool isLogical(ReduceOp op) {
  return op == ReduceOp::Land || op == ReduceOp::Lor || op == ReduceOp::Lxor;
}

/// The table, built once. The handles are not constant expressions in every MPI (Open MPI casts
/// the address of a global), hence a function-local static rather than a constexpr array.
const std::vector<MpiTypeInfo> &typeTable() {
  static const std::vector<MpiTypeInfo> table = [] {
    std::vector<MpiTypeInfo> t;
    auto add = [&](MPI_Datatype h, std::string_view name, ElemType e, bool multi = false) {
      if (h != MPI_DATATYPE_NULL) // optional types (MPI_LONG_DOUBLE, ...) may be null
        t.push_back({h, name, e, multi});
    };
#define COLLC_INT(H, CType) add(H, #H, integerElemType<CType>())
    // C integer
    add(MPI_CHAR, "MPI_CHAR", ElemType::Char);
    add(MPI_WCHAR, "MPI_WCHAR", ElemType::WChar);
    COLLC_INT(MPI_SIGNED_CHAR, signed char);
    COLLC_INT(MPI_UNSIGNED_CHAR, unsigned char);
    COLLC_INT(MPI_SHORT, short);
    COLLC_INT(MPI_UNSIGNED_SHORT, unsigned short);
    COLLC_INT(MPI_INT, int);
    COLLC_INT(MPI_UNSIGNED, unsigned);
    COLLC_INT(MPI_LONG, long);
    COLLC_INT(MPI_UNSIGNED_LONG, unsigned long);
    COLLC_INT(MPI_LONG_LONG_INT, long long);
    COLLC_INT(MPI_LONG_LONG, long long);
    COLLC_INT(MPI_UNSIGNED_LONG_LONG, unsigned long long);
    COLLC_INT(MPI_INT8_T, int8_t);
    COLLC_INT(MPI_UINT8_T, uint8_t);
    COLLC_INT(MPI_INT16_T, int16_t);
    COLLC_INT(MPI_UINT16_T, uint16_t);
    COLLC_INT(MPI_INT32_T, int32_t);
    COLLC_INT(MPI_UINT32_T, uint32_t);
    COLLC_INT(MPI_INT64_T, int64_t);
    COLLC_INT(MPI_UINT64_T, uint64_t);
#undef COLLC_INT
    // multi-language types
    add(MPI_AINT, "MPI_AINT", integerElemType<MPI_Aint>(), true);
    add(MPI_OFFSET, "MPI_OFFSET", integerElemType<MPI_Offset>(), true);
    add(MPI_COUNT, "MPI_COUNT", integerElemType<MPI_Count>(), true);
    // floating point
    add(MPI_FLOAT, "MPI_FLOAT", ElemType::Float);
    add(MPI_DOUBLE, "MPI_DOUBLE", ElemType::Double);
    add(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", ElemType::LongDouble);
    // logical
    add(MPI_C_BOOL, "MPI_C_BOOL", ElemType::Bool);
#ifdef MPI_CXX_BOOL
    add(MPI_CXX_BOOL, "MPI_CXX_BOOL", ElemType::Bool);
#endif
    // complex
    add(MPI_C_COMPLEX, "MPI_C_COMPLEX", ElemType::FloatComplex);
    add(MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", ElemType::FloatComplex);
    add(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", ElemType::DoubleComplex);
    add(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", ElemType::LongDoubleComplex);
#ifdef MPI_CXX_FLOAT_COMPLEX
    add(MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", ElemType::FloatComplex);
    add(MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", ElemType::DoubleComplex);
    add(MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", ElemType::LongDoubleComplex);
#endif
    // byte
    add(MPI_BYTE, "MPI_BYTE", ElemType::Byte);
    // value/index pairs
    add(MPI_FLOAT_INT, "MPI_FLOAT_INT", ElemType::FloatInt);
    add(MPI_DOUBLE_INT, "MPI_DOUBLE_INT", ElemType::DoubleInt);
    add(MPI_LONG_INT, "MPI_LONG_INT", ElemType::LongInt);
    add(MPI_2INT, "MPI_2INT", ElemType::TwoInt);
    add(MPI_SHORT_INT, "MPI_SHORT_INT", ElemType::ShortInt);
    add(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", ElemType::LongDoubleInt);
    return t;
  }();
  return table;
}

const std::vector<MpiOpInfo> &opTable() {
  static const std::vector<MpiOpInfo> table = {
      {MPI_MAX, "MPI_MAX", ReduceOp::Max},       {MPI_MIN, "MPI_MIN", ReduceOp::Min},
      {MPI_SUM, "MPI_SUM", ReduceOp::Sum},       {MPI_PROD, "MPI_PROD", ReduceOp::Prod},
      {MPI_LAND, "MPI_LAND", ReduceOp::Land},    {MPI_LOR, "MPI_LOR", ReduceOp::Lor},
      {MPI_LXOR, "MPI_LXOR", ReduceOp::Lxor},    {MPI_BAND, "MPI_BAND", ReduceOp::Band},
      {MPI_BOR, "MPI_BOR", ReduceOp::Bor},       {MPI_BXOR, "MPI_BXOR", ReduceOp::Bxor},
      {MPI_MAXLOC, "MPI_MAXLOC", ReduceOp::Maxloc}, {MPI_MINLOC, "MPI_MINLOC", ReduceOp::Minloc},
  };
  return table;
}

const MpiTypeInfo *lookupType(MPI_Datatype dt) {
  if (dt == MPI_DATATYPE_NULL)
    return nullptr;
  for (const MpiTypeInfo &t : typeTable())
    if (t.handle == dt)
      return &t;
  return nullptr;
}

} // namespace

std::span<const MpiTypeInfo> predefinedMpiTypes() { return typeTable(); }
std::span<const MpiOpInfo> predefinedMpiOps() { return opTable(); }

std::optional<ElemType> elemTypeOf(MPI_Datatype dt) {
  if (const MpiTypeInfo *t = lookupType(dt))
    return t->type;
  return std::nullopt;
}

std::optional<ReduceOp> reduceOpOf(MPI_Op op) {
  if (op == MPI_OP_NULL)
    return std::nullopt;
  for (const MpiOpInfo &o : opTable())
    if (o.handle == op)
      return o.op;
  return std::nullopt;
}

KernelFn findMpiKernel(MPI_Op op, MPI_Datatype dt) {
  const MpiTypeInfo *t = lookupType(dt);
  std::optional<ReduceOp> r = reduceOpOf(op);
  if (!t || !r || (t->multiLanguage && isLogical(*r)))
    return nullptr;
  return findKernel(*r, t->type);
}

} // namespace collc::rt
