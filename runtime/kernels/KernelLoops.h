// runtime/kernels/KernelLoops.h: the kernel loops, included by each kernel
// table's translation unit (Kernels.cpp for the baseline instruction set,
// KernelsAvx2.cpp compiled with -mavx2). Everything here has internal linkage,
// so the two builds of the same templates never meet at link time.
//
// combine<Op>(a, b) is the element operation; kernel<Op, E> is the plain loop around it that GCC
// and Clang vectorize (they version the loop for aliasing; dst == a or dst == b is a dependence
// distance of 0 and takes the vector path). The kernel table is built at compile time from
// isValid(), so the validity table in ReduceOps.def is the only place that decides which
// kernels exist.
#ifndef COLLC_RUNTIME_KERNELS_KERNELLOOPS_H
#define COLLC_RUNTIME_KERNELS_KERNELLOOPS_H

#include "runtime/kernels/Kernels.h"

#include <cstddef>
#include <utility>

namespace collc::rt {
namespace {


static_assert(sizeof(bool) == 1, "C _Bool / C++ bool are computed on their byte");
static_assert(sizeof(ValueIndex<short>) == 8 && offsetof(ValueIndex<short>, index) == 4);
static_assert(sizeof(ValueIndex<double>) == 16 && offsetof(ValueIndex<double>, index) == 8);

template <class T> struct IsComplex : std::false_type {};
template <class V> struct IsComplex<std::complex<V>> : std::true_type {};
template <class T> struct IsPair : std::false_type {};
template <class V> struct IsPair<ValueIndex<V>> : std::true_type {};

template <class> inline constexpr bool kAlwaysFalse = false;

/// The unsigned type integer arithmetic on T is done in: T's width, but at least unsigned int,
/// because narrower types promote to (signed) int and uint16 * uint16 could overflow it.
template <class T>
using WrapT = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

/// x is NaN (never true for integers). Written as a compare so that it vectorizes; this file is
/// never built with -ffast-math.
template <class V> constexpr bool isNan(V x) {
  if constexpr (std::is_floating_point_v<V>)
    return x != x;
  else
    return false;
}

/// MAXLOC (Max == true) / MINLOC: the better value wins, a NaN value beats a number, and on a tie
/// the pair with the lower index wins (see Kernels.h). Branch-free: `&`/`|` on bools and a
/// field-wise select, because on real data the comparison is unpredictable (a branchy version
/// ran 5x slower on random values).
template <bool Max, class V> ValueIndex<V> combineLoc(ValueIndex<V> a, ValueIndex<V> b) {
  bool aNan = isNan(a.value), bNan = isNan(b.value);
  bool aBetter = (Max ? a.value > b.value : a.value < b.value) | (aNan & !bNan);
  bool bBetter = (Max ? b.value > a.value : b.value < a.value) | (bNan & !aNan);
  bool takeA = aBetter | (!bBetter & (a.index <= b.index));
  ValueIndex<V> r;
  r.value = takeA ? a.value : b.value;
  r.index = takeA ? a.index : b.index;
  return r;
}

/// a ∘ b for one element. Only instantiated for valid (Op, T) combinations.
template <ReduceOp Op, class T> inline T combine(T a, T b) {
  using enum ReduceOp;
  if constexpr (std::is_integral_v<T>) {
    using W = WrapT<T>;
    if constexpr (Op == Max)
      return a > b ? a : b;
    else if constexpr (Op == Min)
      return a < b ? a : b;
    else if constexpr (Op == Sum)
      return static_cast<T>(static_cast<W>(a) + static_cast<W>(b));
    else if constexpr (Op == Prod)
      return static_cast<T>(static_cast<W>(a) * static_cast<W>(b));
    else if constexpr (Op == Land)
      return static_cast<T>((a != 0) & (b != 0));
    else if constexpr (Op == Lor)
      return static_cast<T>((a != 0) | (b != 0));
    else if constexpr (Op == Lxor)
      return static_cast<T>((a != 0) ^ (b != 0));
    else if constexpr (Op == Band)
      return static_cast<T>(a & b);
    else if constexpr (Op == Bor)
      return static_cast<T>(a | b);
    else if constexpr (Op == Bxor)
      return static_cast<T>(a ^ b);
    else
      static_assert(kAlwaysFalse<T>, "no such integer op");
  } else if constexpr (std::is_floating_point_v<T>) {
    if constexpr (Op == Max)
      return ((a > b) | isNan(a)) ? a : b;
    else if constexpr (Op == Min)
      return ((a < b) | isNan(a)) ? a : b;
    else if constexpr (Op == Sum)
      return a + b;
    else if constexpr (Op == Prod)
      return a * b;
    else
      static_assert(kAlwaysFalse<T>, "no such floating-point op");
  } else if constexpr (IsComplex<T>::value) {
    if constexpr (Op == Sum)
      return a + b;
    else if constexpr (Op == Prod)
      return a * b;
    else
      static_assert(kAlwaysFalse<T>, "no such complex op");
  } else if constexpr (IsPair<T>::value) {
    if constexpr (Op == Maxloc)
      return combineLoc<true>(a, b);
    else if constexpr (Op == Minloc)
      return combineLoc<false>(a, b);
    else
      static_assert(kAlwaysFalse<T>, "no such pair op");
  } else {
    static_assert(kAlwaysFalse<T>, "no kernels for this representation");
  }
}

template <ReduceOp Op, ElemType E> void kernel(const void *a, const void *b, void *dst, size_t n) {
  using T = typename ElemTraits<E>::Repr;
  const T *x = static_cast<const T *>(a);
  const T *y = static_cast<const T *>(b);
  T *d = static_cast<T *>(dst);
  for (size_t i = 0; i < n; ++i)
    d[i] = combine<Op>(x[i], y[i]);
}

template <ReduceOp Op, ElemType E> constexpr KernelFn entry() {
  if constexpr (isValid(Op, E))
    return &kernel<Op, E>;
  else
    return nullptr;
}

/// kKernels[op * kNumElemTypes + type].
template <size_t... I>
constexpr std::array<KernelFn, sizeof...(I)> makeKernelTable(std::index_sequence<I...>) {
  return {entry<static_cast<ReduceOp>(I / kNumElemTypes), static_cast<ElemType>(I % kNumElemTypes)>()...};
}
constexpr auto kKernels = makeKernelTable(std::make_index_sequence<kNumReduceOps * kNumElemTypes>{});

} // namespace
} // namespace collc::rt

#endif // COLLC_RUNTIME_KERNELS_KERNELLOOPS_H
