// tools/collc-bench/Workload.cpp: datatype tables, regenerable inputs, the
// reference fold and typed comparison (see Workload.h).
#include "tools/collc-bench/Workload.h"

#include "runtime/kernels/MpiTypes.h"

#include <array>
#include <complex>
#include <cstdio>
#include <cstring>
#include <memory>
#include <type_traits>

namespace collc::bench {

using rt::ElemClass;
using rt::ElemType;
using rt::ReduceOp;

namespace {

using rt::ValueIndex; // ElemTypes.def names it unqualified

/// Calls f(std::type_identity<Repr>{}) with the C++ type the kernels compute `t` on.
template <class F> void withRepr(ElemType t, F &&f) {
  switch (t) {
#define COLLC_ELEM_TYPE(Enum, Name, Repr, Class)                                                 \
  case ElemType::Enum:                                                                         \
    f(std::type_identity<Repr>{});                                                             \
    return;
#include "runtime/kernels/ElemTypes.def"
  }
}

template <class T> struct IsComplex : std::false_type {};
template <class V> struct IsComplex<std::complex<V>> : std::true_type {};
template <class T> struct IsPair : std::false_type {};
template <class V> struct IsPair<rt::ValueIndex<V>> : std::true_type {};

/// SplitMix64: a well-mixed 64-bit value from any 64-bit input.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// The random bits behind element i of rank r's input set `salt`.
uint64_t bitsOf(int rank, uint64_t salt, size_t i) {
  return mix(mix(uint64_t(rank) * 0x2545f4914f6cdd1dull ^ mix(salt)) + uint64_t(i));
}

/// A small integer in [-8, 8].
int small(uint64_t h) { return int(h % 17) - 8; }

template <class T>
void fillTyped(T *p, size_t n, ElemClass c, ReduceOp op, int rank, uint64_t salt) {
  for (size_t i = 0; i < n; ++i) {
    const uint64_t h = bitsOf(rank, salt, i);
    if constexpr (IsPair<T>::value) {
      std::memset(&p[i], 0, sizeof(T)); // padding too: the bytes are deterministic
      p[i].value = static_cast<decltype(p[i].value)>((h >> 8) % 4);
      p[i].index = int((h >> 16) % 1000);
    } else if constexpr (IsComplex<T>::value) {
      using V = typename T::value_type;
      static constexpr int prodRe[6] = {1, -1, 0, 0, 1, 1}, prodIm[6] = {0, 0, 1, -1, 1, -1};
      if (op == ReduceOp::Prod)
        p[i] = T(V(prodRe[h % 6]), V(prodIm[h % 6]));
      else
        p[i] = T(V(small(h >> 8)), V(small(h >> 24)));
    } else if constexpr (std::is_floating_point_v<T>) {
      std::memset(&p[i], 0, sizeof(T)); // long double: six bytes of padding
      if (op == ReduceOp::Prod)
        p[i] = T((h & 1) ? -1 : 1) * T((h & 2) ? 2 : 1);
      else
        p[i] = T(small(h >> 8));
    } else if constexpr (std::is_integral_v<T>) {
      if (c == ElemClass::Logical)
        p[i] = T((h >> 8) & 1);
      else if (c == ElemClass::Byte || c == ElemClass::Character)
        p[i] = T(h >> 8);
      else
        p[i] = (h & 3) == 0 ? T(0) : T(h >> 8);
    }
  }
}

template <class T> bool sameElement(const T &a, const T &b) {
  if constexpr (IsPair<T>::value)
    return a.value == b.value && a.index == b.index;
  else
    return a == b;
}

template <class T> std::string formatTyped(const T &x) {
  char text[96];
  if constexpr (IsPair<T>::value) {
    std::snprintf(text, sizeof text, "{%Lg @ %d}", static_cast<long double>(x.value), x.index);
  } else if constexpr (IsComplex<T>::value) {
    std::snprintf(text, sizeof text, "(%Lg,%Lg)", static_cast<long double>(x.real()),
                  static_cast<long double>(x.imag()));
  } else if constexpr (std::is_floating_point_v<T>) {
    std::snprintf(text, sizeof text, "%.21Lg", static_cast<long double>(x));
  } else if constexpr (std::is_signed_v<T>) {
    std::snprintf(text, sizeof text, "%lld", static_cast<long long>(x));
  } else {
    std::snprintf(text, sizeof text, "%llu", static_cast<unsigned long long>(x));
  }
  return text;
}

// --- the matrix product -------------------------------------------------------------

using Mat = std::array<uint32_t, 4>; // [a b; c d], row-major

Mat mul(const Mat &x, const Mat &y) {
  return {x[0] * y[0] + x[1] * y[2], x[0] * y[1] + x[1] * y[3], x[2] * y[0] + x[3] * y[2],
          x[2] * y[1] + x[3] * y[3]};
}

/// MPI's user-op convention: inout[i] = in[i] ∘ inout[i].
void matrixOp(void *in, void *inout, int *len, MPI_Datatype *) {
  const Mat *x = static_cast<const Mat *>(in);
  Mat *y = static_cast<Mat *>(inout);
  for (int i = 0; i < *len; ++i)
    y[i] = mul(x[i], y[i]);
}

std::unique_ptr<Workload> &matrixSlot() {
  static std::unique_ptr<Workload> w;
  return w;
}

/// MPI_SUM on double, as a user operation.
void userSumOp(void *in, void *inout, int *len, MPI_Datatype *) {
  const double *x = static_cast<const double *>(in);
  double *y = static_cast<double *>(inout);
  for (int i = 0; i < *len; ++i)
    y[i] = x[i] + y[i];
}

std::unique_ptr<Workload> &userSumSlot() {
  static std::unique_ptr<Workload> w;
  return w;
}

/// acc[i] = acc[i] ∘ x[i] for a predefined operation, written from the MPI
/// standard's definitions as plainly as possible (not collc's kernels, not
/// Open MPI's). Only what the inputs of fillTyped need is exact here: no NaN
/// handling, no signed zeros.
template <class T>
void combineTyped(T *acc, const T *x, size_t n, ReduceOp op) {
  for (size_t i = 0; i < n; ++i) {
    T &a = acc[i];
    const T &b = x[i];
    if constexpr (IsPair<T>::value) {
      bool aWins = op == ReduceOp::Maxloc ? a.value > b.value : a.value < b.value;
      bool bWins = op == ReduceOp::Maxloc ? b.value > a.value : b.value < a.value;
      if (bWins || (!aWins && b.index < a.index))
        a = b;
    } else if constexpr (IsComplex<T>::value) {
      a = op == ReduceOp::Sum ? a + b : a * b;
    } else if constexpr (std::is_floating_point_v<T>) {
      switch (op) {
      case ReduceOp::Sum: a = a + b; break;
      case ReduceOp::Prod: a = a * b; break;
      case ReduceOp::Max: a = a > b ? a : b; break;
      case ReduceOp::Min: a = a < b ? a : b; break;
      default: break;
      }
    } else if constexpr (std::is_integral_v<T>) {
      // Wrapping arithmetic in an unsigned type at least as wide as unsigned
      // int (uint16 * uint16 would promote to int and could overflow).
      using U = std::make_unsigned_t<T>;
      using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
      const W u = W(U(a)), v = W(U(b));
      switch (op) {
      case ReduceOp::Sum: a = T(U(u + v)); break;
      case ReduceOp::Prod: a = T(U(u * v)); break;
      case ReduceOp::Max: a = a > b ? a : b; break;
      case ReduceOp::Min: a = a < b ? a : b; break;
      case ReduceOp::Land: a = T(a != 0 && b != 0); break;
      case ReduceOp::Lor: a = T(a != 0 || b != 0); break;
      case ReduceOp::Lxor: a = T((a != 0) != (b != 0)); break;
      case ReduceOp::Band: a = T(U(u & v)); break;
      case ReduceOp::Bor: a = T(U(u | v)); break;
      case ReduceOp::Bxor: a = T(U(u ^ v)); break;
      default: break;
      }
    }
  }
}

} // namespace

MPI_Datatype mpiTypeOf(ElemType t) {
  switch (t) {
  case ElemType::Int8: return MPI_INT8_T;
  case ElemType::Uint8: return MPI_UINT8_T;
  case ElemType::Int16: return MPI_INT16_T;
  case ElemType::Uint16: return MPI_UINT16_T;
  case ElemType::Int32: return MPI_INT32_T;
  case ElemType::Uint32: return MPI_UINT32_T;
  case ElemType::Int64: return MPI_INT64_T;
  case ElemType::Uint64: return MPI_UINT64_T;
  case ElemType::Char: return MPI_CHAR;
  case ElemType::WChar: return MPI_WCHAR;
  case ElemType::Float: return MPI_FLOAT;
  case ElemType::Double: return MPI_DOUBLE;
  case ElemType::LongDouble: return MPI_LONG_DOUBLE;
  case ElemType::FloatComplex: return MPI_C_FLOAT_COMPLEX;
  case ElemType::DoubleComplex: return MPI_C_DOUBLE_COMPLEX;
  case ElemType::LongDoubleComplex: return MPI_C_LONG_DOUBLE_COMPLEX;
  case ElemType::Bool: return MPI_C_BOOL;
  case ElemType::Byte: return MPI_BYTE;
  case ElemType::FloatInt: return MPI_FLOAT_INT;
  case ElemType::DoubleInt: return MPI_DOUBLE_INT;
  case ElemType::LongInt: return MPI_LONG_INT;
  case ElemType::TwoInt: return MPI_2INT;
  case ElemType::ShortInt: return MPI_SHORT_INT;
  case ElemType::LongDoubleInt: return MPI_LONG_DOUBLE_INT;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op mpiOpOf(ReduceOp op) {
  for (const rt::MpiOpInfo &info : rt::predefinedMpiOps())
    if (info.op == op)
      return info.handle;
  return MPI_OP_NULL;
}

std::vector<std::pair<ReduceOp, ElemType>> validPairs() {
  std::vector<std::pair<ReduceOp, ElemType>> pairs;
  for (ReduceOp op : rt::kAllReduceOps)
    for (ElemType t : rt::kAllElemTypes)
      if (rt::findKernel(op, t))
        pairs.emplace_back(op, t);
  return pairs;
}

Workload builtinWorkload(ReduceOp op, ElemType t) {
  Workload w;
  w.opName = std::string(rt::reduceOpName(op));
  w.typeName = std::string(rt::elemTypeName(t));
  w.type = mpiTypeOf(t);
  w.op = mpiOpOf(op);
  w.extent = rt::elemSize(t);
  w.commutative = true; // every predefined operation is
  w.elem = t;
  w.reduceOp = op;
  return w;
}

Workload newMatrixWorkload() {
  Workload w;
  w.opName = kMatrixOpName;
  w.typeName = kMatrixTypeName;
  MPI_Type_contiguous(4, MPI_UINT32_T, &w.type);
  MPI_Type_commit(&w.type);
  MPI_Op_create(&matrixOp, /*commute=*/0, &w.op);
  w.extent = sizeof(Mat);
  w.commutative = false;
  w.matrix = true;
  return w;
}

const Workload &matrixWorkload() {
  std::unique_ptr<Workload> &slot = matrixSlot();
  if (!slot)
    slot = std::make_unique<Workload>(newMatrixWorkload());
  return *slot;
}

void freeMatrixWorkload() {
  if (std::unique_ptr<Workload> &slot = matrixSlot()) {
    MPI_Op_free(&slot->op);
    MPI_Type_free(&slot->type);
    slot.reset();
  }
  if (std::unique_ptr<Workload> &slot = userSumSlot()) {
    MPI_Op_free(&slot->op);
    slot.reset();
  }
}

const Workload &userSumWorkload() {
  std::unique_ptr<Workload> &slot = userSumSlot();
  if (!slot) {
    Workload w = builtinWorkload(ReduceOp::Sum, ElemType::Double);
    w.opName = kUserSumOpName;
    MPI_Op_create(&userSumOp, /*commute=*/1, &w.op);
    slot = std::make_unique<Workload>(w);
  }
  return *slot;
}

std::optional<Workload> parseWorkload(const std::string &op, const std::string &dtype,
                                      std::string &error) {
  if (op == kMatrixOpName) {
    if (!dtype.empty() && dtype != kMatrixTypeName) {
      error = "--op noncommutative has its own datatype (" + std::string(kMatrixTypeName) +
              "); drop --dtype " + dtype;
      return std::nullopt;
    }
    return matrixWorkload();
  }
  if (op == kUserSumOpName) {
    if (!dtype.empty() && dtype != "double") {
      error = "--op usersum sums doubles; drop --dtype " + dtype;
      return std::nullopt;
    }
    return userSumWorkload();
  }
  std::optional<ReduceOp> r = rt::parseReduceOp(op);
  if (!r) {
    error = "unknown --op '" + op + "'";
    return std::nullopt;
  }
  std::optional<ElemType> t = rt::parseElemType(dtype.empty() ? "double" : dtype);
  if (!t) {
    error = "unknown --dtype '" + dtype + "'";
    return std::nullopt;
  }
  if (!rt::isValid(*r, *t)) {
    error = "MPI does not define " + op + " on " + std::string(rt::elemTypeName(*t)) +
            " (it is defined on: " + [&] {
              std::string classes;
              for (ElemClass c : {ElemClass::Integer, ElemClass::Floating, ElemClass::Complex,
                                  ElemClass::Logical, ElemClass::Byte, ElemClass::Pair})
                if (rt::validClasses(*r).contains(c))
                  classes += (classes.empty() ? "" : ", ") + std::string(rt::elemClassName(c));
              return classes;
            }() + " types)";
    return std::nullopt;
  }
  return builtinWorkload(*r, *t);
}

void fillInput(const Workload &w, int rank, uint64_t salt, void *buf, size_t n) {
  if (w.matrix) {
    Mat *m = static_cast<Mat *>(buf);
    for (size_t i = 0; i < n; ++i) {
      uint64_t h = bitsOf(rank, salt, i), g = mix(h);
      m[i] = {uint32_t(h), uint32_t(h >> 32), uint32_t(g), uint32_t(g >> 32)};
    }
    return;
  }
  withRepr(w.elem, [&]<class T>(std::type_identity<T>) {
    fillTyped(static_cast<T *>(buf), n, rt::elemClass(w.elem), w.reduceOp, rank, salt);
  });
}

void referenceFold(const Workload &w, int ranks, uint64_t salt, void *out, void *scratch,
                   size_t n) {
  if (n == 0)
    return;
  // Left to right in rank order: acc = acc ∘ x_q.
  fillInput(w, 0, salt, out, n);
  for (int q = 1; q < ranks; ++q) {
    fillInput(w, q, salt, scratch, n);
    if (w.matrix) {
      Mat *acc = static_cast<Mat *>(out);
      const Mat *x = static_cast<const Mat *>(scratch);
      for (size_t i = 0; i < n; ++i)
        acc[i] = mul(acc[i], x[i]);
      continue;
    }
    withRepr(w.elem, [&]<class T>(std::type_identity<T>) {
      combineTyped(static_cast<T *>(out), static_cast<const T *>(scratch), n, w.reduceOp);
    });
  }
}

size_t firstMismatch(const Workload &w, const void *got, const void *want, size_t n) {
  if (w.matrix) {
    const Mat *g = static_cast<const Mat *>(got), *x = static_cast<const Mat *>(want);
    for (size_t i = 0; i < n; ++i)
      if (g[i] != x[i])
        return i;
    return n;
  }
  size_t at = n;
  withRepr(w.elem, [&]<class T>(std::type_identity<T>) {
    const T *g = static_cast<const T *>(got), *x = static_cast<const T *>(want);
    for (size_t i = 0; i < n; ++i)
      if (!sameElement(g[i], x[i])) {
        at = i;
        return;
      }
  });
  return at;
}

std::string formatElement(const Workload &w, const void *buf, size_t i) {
  if (w.matrix) {
    const Mat &m = static_cast<const Mat *>(buf)[i];
    return "[" + std::to_string(m[0]) + " " + std::to_string(m[1]) + "; " +
           std::to_string(m[2]) + " " + std::to_string(m[3]) + "]";
  }
  std::string text;
  withRepr(w.elem, [&]<class T>(std::type_identity<T>) {
    text = formatTyped(static_cast<const T *>(buf)[i]);
  });
  return text;
}

} // namespace collc::bench
