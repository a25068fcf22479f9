// Kernels.cpp - the reduce kernels: one template loop (KernelLoops.h), instantiated for every
// valid (op, type), for the baseline instruction set here and for AVX2 in KernelsAvx2.cpp;
// findKernel() picks the table the CPU can run. Names and parsing of types and ops.
#include "runtime/kernels/KernelLoops.h"
#include "runtime/kernels/KernelTables.h"

#include <utility>

namespace collc::rt {
namespace {
constexpr std::array<std::string_view, kNumElemTypes> kElemTypeNames = {
#define COLLC_ELEM_TYPE(Enum, Name, Repr, Class) Name,
#include "runtime/kernels/ElemTypes.def"
};
constexpr std::array<std::string_view, kNumReduceOps> kReduceOpNames = {
#define COLLC_REDUCE_OP(Enum, Name, Classes) Name,
#include "runtime/kernels/ReduceOps.def"
};

/// C type names (underscores for spaces) accepted by parseElemType besides the canonical names.
struct CTypeAlias {
  std::string_view name;
  ElemType type;
};
constexpr CTypeAlias kCTypeAliases[] = {
    {"signed_char", integerElemType<signed char>()},
    {"unsigned_char", integerElemType<unsigned char>()},
    {"short", integerElemType<short>()},
    {"unsigned_short", integerElemType<unsigned short>()},
    {"int", integerElemType<int>()},
    {"unsigned", integerElemType<unsigned>()},
    {"unsigned_int", integerElemType<unsigned>()},
    {"long", integerElemType<long>()},
    {"unsigned_long", integerElemType<unsigned long>()},
    {"long_long", integerElemType<long long>()},
    {"unsigned_long_long", integerElemType<unsigned long long>()},
    {"wchar_t", ElemType::WChar},
    {"_Bool", ElemType::Bool},
};

} // namespace

const KernelFn *baselineKernelTable() { return kKernels.data(); }

KernelFn findKernel(ReduceOp op, ElemType t) {
  // The AVX2 build of the loops where the CPU has it (twice the vector width
  // of the x86-64 baseline SSE2), chosen once.
  static const KernelFn *const table = [] {
#if defined(__x86_64__) && defined(COLLC_HAVE_AVX2_KERNELS)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2"))
      return avx2KernelTable();
#endif
    return baselineKernelTable();
  }();
  size_t o = static_cast<size_t>(op), e = static_cast<size_t>(t);
  if (o >= kNumReduceOps || e >= kNumElemTypes)
    return nullptr;
  return table[o * kNumElemTypes + e];
}

std::string_view elemTypeName(ElemType t) { return kElemTypeNames[static_cast<size_t>(t)]; }

std::optional<ElemType> parseElemType(std::string_view name) {
  for (ElemType t : kAllElemTypes)
    if (elemTypeName(t) == name)
      return t;
  for (const CTypeAlias &a : kCTypeAliases)
    if (a.name == name)
      return a.type;
  return std::nullopt;
}

std::string_view reduceOpName(ReduceOp op) { return kReduceOpNames[static_cast<size_t>(op)]; }

std::optional<ReduceOp> parseReduceOp(std::string_view name) {
  for (ReduceOp op : kAllReduceOps)
    if (reduceOpName(op) == name)
      return op;
  return std::nullopt;
}

std::string_view elemClassName(ElemClass c) {
  switch (c) {
  case ElemClass::Integer:
    return "integer";
  case ElemClass::Floating:
    return "floating";
  case ElemClass::Complex:
    return "complex";
  case ElemClass::Logical:
    return "logical";
  case ElemClass::Byte:
    return "byte";
  case ElemClass::Pair:
    return "pair";
  case ElemClass::Character:
    return "character";
  }
  return "?";
}

} // namespace collc::rt
