// KernelModels.h - test-side reference semantics of the reduce kernels, one model per ElemClass.
//
// Written independently of Kernels.cpp: integer results are computed exactly in 128 bits and then
// reduced modulo 2^bits, MAXLOC/MINLOC follow the man page's case formula, and so on. Shared by
// the unit test and the MPI test.
#pragma once

#include "runtime/kernels/Kernels.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace collc::rt::test {

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 Uint128;

/// Calls f(std::integral_constant<ElemType, t>{}) for the runtime value t.
template <class F> void withElemType(ElemType t, F &&f) {
  switch (t) {
#define COLLC_ELEM_TYPE(Enum, Name, Repr, Class)                                                 \
  case ElemType::Enum:                                                                         \
    f(std::integral_constant<ElemType, ElemType::Enum>{});                                     \
    return;
#include "runtime/kernels/ElemTypes.def"
  }
}

template <class T, ElemClass C> struct Model; // no model: no predefined op (Character)

// --- C integer: exact result in 128 bits, then modulo 2^bits -----------------------------------
template <class T> struct Model<T, ElemClass::Integer> {
  using U = std::make_unsigned_t<T>;
  using Wide = std::conditional_t<std::is_signed_v<T>, Int128, Uint128>;

  /// Exact a+b / a*b, as a mathematical integer.
  static Wide exact(ReduceOp op, T a, T b) {
    return op == ReduceOp::Sum ? Wide(a) + Wide(b) : Wide(a) * Wide(b);
  }
  /// x modulo 2^bits, as T (two's complement).
  static T wrap(Wide x) { return static_cast<T>(static_cast<U>(static_cast<Uint128>(x))); }
  static bool fits(Wide x) {
    return x >= Wide(std::numeric_limits<T>::min()) && x <= Wide(std::numeric_limits<T>::max());
  }
  static T saturate(Wide x) {
    if (x < Wide(std::numeric_limits<T>::min()))
      return std::numeric_limits<T>::min();
    if (x > Wide(std::numeric_limits<T>::max()))
      return std::numeric_limits<T>::max();
    return T(x);
  }

  static T apply(ReduceOp op, T a, T b) {
    switch (op) {
    case ReduceOp::Max:
      return std::max(a, b);
    case ReduceOp::Min:
      return std::min(a, b);
    case ReduceOp::Sum:
    case ReduceOp::Prod:
      return wrap(exact(op, a, b));
    case ReduceOp::Land:
      return (a != 0 && b != 0) ? 1 : 0;
    case ReduceOp::Lor:
      return (a != 0 || b != 0) ? 1 : 0;
    case ReduceOp::Lxor:
      return ((a != 0) != (b != 0)) ? 1 : 0;
    case ReduceOp::Band:
      return static_cast<T>(U(a) & U(b));
    case ReduceOp::Bor:
      return static_cast<T>(U(a) | U(b));
    case ReduceOp::Bxor:
      return static_cast<T>(U(a) ^ U(b));
    default:
      throw std::logic_error("integer model: op not defined");
    }
  }

  static std::vector<T> values() {
    using L = std::numeric_limits<T>;
    U ones = static_cast<U>(~U(0));
    std::vector<T> v = {0, 1, 2, 3, 7, 100, static_cast<T>(-1), static_cast<T>(-2),
                        L::min(), static_cast<T>(L::min() + 1), L::max(),
                        static_cast<T>(L::max() - 1), static_cast<T>(L::max() / 2),
                        static_cast<T>(L::max() / 2 + 1), static_cast<T>(ones / 3),
                        static_cast<T>(static_cast<U>(~(ones / 3)))};
    if constexpr (std::is_signed_v<T>)
      v.push_back(-100);
    return v;
  }
  static bool same(T a, T b) { return a == b; }
  static std::string show(T x) {
    if constexpr (std::is_signed_v<T>)
      return std::to_string(static_cast<long long>(x));
    else
      return std::to_string(static_cast<unsigned long long>(x)) + "u";
  }
};

// --- floating point -----------------------------------------------------------------------
template <class T> struct Model<T, ElemClass::Floating> {
  static T apply(ReduceOp op, T a, T b) {
    switch (op) {
    case ReduceOp::Max: // a NaN operand wins; otherwise a > b ? a : b
      if (std::isnan(a))
        return a;
      if (std::isnan(b))
        return b;
      return a > b ? a : b;
    case ReduceOp::Min:
      if (std::isnan(a))
        return a;
      if (std::isnan(b))
        return b;
      return a < b ? a : b;
    case ReduceOp::Sum:
      return a + b;
    case ReduceOp::Prod:
      return a * b;
    default:
      throw std::logic_error("floating model: op not defined");
    }
  }
  static std::vector<T> values() {
    using L = std::numeric_limits<T>;
    return {T(0),         -T(0),        T(1),          T(-1),          T(0.5),
            T(3),         T(-2.25),     T(1e10),       T(-1e-10),      T(0.1),
            L::max(),     L::lowest(),  L::denorm_min(), L::infinity(), -L::infinity(),
            L::quiet_NaN(), T(1) + L::epsilon()};
  }
  /// Equal values with equal sign (so +0 and -0 differ), or both NaN.
  static bool same(T a, T b) {
    if (std::isnan(a) || std::isnan(b))
      return std::isnan(a) && std::isnan(b);
    return a == b && std::signbit(a) == std::signbit(b);
  }
  static std::string show(T x) {
    std::ostringstream s;
    s.precision(std::numeric_limits<T>::max_digits10);
    s << x;
    return s.str();
  }
};

// --- complex: components are small dyadic numbers, so every product is exact -----------------
template <class T> struct Model<T, ElemClass::Complex> {
  using V = typename T::value_type;
  static T apply(ReduceOp op, T a, T b) {
    V p = a.real(), q = a.imag(), r = b.real(), s = b.imag();
    switch (op) {
    case ReduceOp::Sum:
      return T(p + r, q + s);
    case ReduceOp::Prod:
      return T(p * r - q * s, p * s + q * r);
    default:
      throw std::logic_error("complex model: op not defined");
    }
  }
  static std::vector<T> values() {
    const V parts[] = {V(0), V(1), V(-2), V(0.5), V(3), V(-0.25)};
    std::vector<T> v;
    for (V re : parts)
      for (V im : {V(0), V(1), V(-1.5)})
        v.push_back(T(re, im));
    return v;
  }
  static bool same(T a, T b) { return a == b; }
  static std::string show(T x) {
    std::ostringstream s;
    s << "(" << x.real() << "," << x.imag() << ")";
    return s.str();
  }
};

// --- logical: C _Bool on its byte; any nonzero byte is true ---------------------------------
template <> struct Model<uint8_t, ElemClass::Logical> {
  static uint8_t apply(ReduceOp op, uint8_t a, uint8_t b) {
    bool x = a != 0, y = b != 0;
    switch (op) {
    case ReduceOp::Land:
      return x && y;
    case ReduceOp::Lor:
      return x || y;
    case ReduceOp::Lxor:
      return x != y;
    default:
      throw std::logic_error("logical model: op not defined");
    }
  }
  static std::vector<uint8_t> values() { return {0, 1, 2, 0x80, 0xFF}; }
  static bool same(uint8_t a, uint8_t b) { return a == b; }
  static std::string show(uint8_t x) { return std::to_string(x); }
};

// --- byte -----------------------------------------------------------------------------------
template <> struct Model<uint8_t, ElemClass::Byte> {
  static uint8_t apply(ReduceOp op, uint8_t a, uint8_t b) {
    switch (op) {
    case ReduceOp::Band:
      return a & b;
    case ReduceOp::Bor:
      return a | b;
    case ReduceOp::Bxor:
      return a ^ b;
    default:
      throw std::logic_error("byte model: op not defined");
    }
  }
  static std::vector<uint8_t> values() { return {0x00, 0xFF, 0x0F, 0xF0, 0x55, 0xAA, 0x01, 0x80}; }
  static bool same(uint8_t a, uint8_t b) { return a == b; }
  static std::string show(uint8_t x) { return std::to_string(x); }
};

// --- MAXLOC / MINLOC: the man page's formula ---------------------------------------------------
//   w = max(u, v);  k = i if u > v, min(i, j) if u = v, j if u < v   (MINLOC mirrored)
// plus collc's NaN rule (a NaN value is better than any number; two NaNs are equal).
template <class V> struct Model<ValueIndex<V>, ElemClass::Pair> {
  using P = ValueIndex<V>;
  static P apply(ReduceOp op, P a, P b) {
    bool maxloc = op == ReduceOp::Maxloc;
    if (!maxloc && op != ReduceOp::Minloc)
      throw std::logic_error("pair model: op not defined");
    V u = a.value, v = b.value;
    bool uNan = isNan(u), vNan = isNan(v);
    if (uNan || vNan) {
      if (uNan && vNan)
        return {u, std::min(a.index, b.index)};
      return uNan ? a : b;
    }
    if (u == v)
      return {u, std::min(a.index, b.index)};
    bool uWins = maxloc ? u > v : u < v;
    return uWins ? a : b;
  }
  static bool isNan(V x) {
    if constexpr (std::is_floating_point_v<V>)
      return std::isnan(x);
    else
      return false;
  }
  /// Few distinct values, so that ties are common; indices in both orders, negative too.
  static std::vector<P> values() {
    std::vector<P> v;
    for (V x : {V(-1), V(0), V(2), std::numeric_limits<V>::max(), std::numeric_limits<V>::lowest()})
      for (int i : {0, 1, 5, -3})
        v.push_back({x, i});
    return v;
  }
  /// Same index, and equal values (numerically: on a tie either operand's value is the answer).
  static bool same(P a, P b) {
    if (a.index != b.index)
      return false;
    if (isNan(a.value) || isNan(b.value))
      return isNan(a.value) && isNan(b.value);
    return a.value == b.value;
  }
  static std::string show(P x) {
    std::ostringstream s;
    s << "{" << x.value << ", " << x.index << "}";
    return s.str();
  }
};

/// The model of ElemType E (Character types have none).
template <ElemType E>
using ModelOf = Model<typename ElemTraits<E>::Repr, ElemTraits<E>::kClass>;

} // namespace collc::rt::test
