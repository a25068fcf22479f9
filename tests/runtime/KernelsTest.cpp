// KernelsTest.cpp - the reduce kernels against the man page's table and the reference models.
#include "runtime/kernels/Kernels.h"
#include "tests/runtime/KernelModels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

namespace collc::rt {
namespace {

using test::ModelOf;
using test::withElemType;
using enum ReduceOp;

// ------------------------------------------------------------------------------------------
// The validity table, written out again here from the MPI_Reduce man page (not derived from
// ReduceOps.def), one row per ElemType; x = MPI defines the op on the type.
// ------------------------------------------------------------------------------------------
struct ExpectedRow {
  const char *type;
  const char *ops; // max min sum prod land lor lxor band bor bxor maxloc minloc
};
constexpr ReduceOp kColumns[] = {Max, Min, Sum, Prod, Land, Lor, Lxor, Band, Bor, Bxor, Maxloc, Minloc};
constexpr ExpectedRow kManPageTable[] = {
    //                           mmsplllbbbmm
    //                           aiurooxoxxai
    {"int8",                    "xxxxxxxxxx--"},
    {"uint8",                   "xxxxxxxxxx--"},
    {"int16",                   "xxxxxxxxxx--"},
    {"uint16",                  "xxxxxxxxxx--"},
    {"int32",                   "xxxxxxxxxx--"},
    {"uint32",                  "xxxxxxxxxx--"},
    {"int64",                   "xxxxxxxxxx--"},
    {"uint64",                  "xxxxxxxxxx--"},
    {"char",                    "------------"},
    {"wchar",                   "------------"},
    {"float",                   "xxxx--------"},
    {"double",                  "xxxx--------"},
    {"long_double",             "xxxx--------"},
    {"float_complex",           "--xx--------"},
    {"double_complex",          "--xx--------"},
    {"long_double_complex",     "--xx--------"},
    {"bool",                    "----xxx-----"},
    {"byte",                    "-------xxx--"},
    {"float_int",               "----------xx"},
    {"double_int",              "----------xx"},
    {"long_int",                "----------xx"},
    {"2int",                    "----------xx"},
    {"short_int",               "----------xx"},
    {"long_double_int",         "----------xx"},
};

struct OpType {
  ReduceOp op;
  ElemType type;
};

std::vector<OpType> pairsFromTable(bool valid) {
  std::vector<OpType> out;
  for (const ExpectedRow &row : kManPageTable) {
    std::optional<ElemType> t = parseElemType(row.type);
    if (!t)
      continue; // reported by TEST(KernelValidity, TableCoversEveryElemType)
    for (size_t c = 0; c < std::size(kColumns); ++c)
      if ((row.ops[c] == 'x') == valid)
        out.push_back({kColumns[c], *t});
  }
  return out;
}

TEST(KernelValidity, TableCoversEveryElemType) {
  std::set<ElemType> seen;
  for (const ExpectedRow &row : kManPageTable) {
    std::optional<ElemType> t = parseElemType(row.type);
    ASSERT_TRUE(t) << row.type;
    EXPECT_EQ(elemTypeName(*t), row.type);
    EXPECT_TRUE(seen.insert(*t).second) << row.type << " listed twice";
    EXPECT_EQ(std::strlen(row.ops), std::size(kColumns)) << row.type;
  }
  EXPECT_EQ(seen.size(), kNumElemTypes);
}

TEST(KernelValidity, FindKernelMatchesManPageTable) {
  size_t valid = 0, invalid = 0;
  for (const ExpectedRow &row : kManPageTable) {
    ElemType t = *parseElemType(row.type);
    for (size_t c = 0; c < std::size(kColumns); ++c) {
      bool expected = row.ops[c] == 'x';
      SCOPED_TRACE(std::string(reduceOpName(kColumns[c])) + " on " + row.type);
      EXPECT_EQ(findKernel(kColumns[c], t) != nullptr, expected);
      EXPECT_EQ(isValid(kColumns[c], t), expected);
      (expected ? valid : invalid)++;
    }
  }
  EXPECT_EQ(valid, 116u);
  EXPECT_EQ(invalid, 172u);
}

TEST(KernelValidity, RejectsWhatTheManPageDoesNotAllow) {
  EXPECT_EQ(findKernel(Band, ElemType::Float), nullptr);
  EXPECT_EQ(findKernel(Bxor, ElemType::Double), nullptr);
  EXPECT_EQ(findKernel(Land, ElemType::Double), nullptr);
  EXPECT_EQ(findKernel(Max, ElemType::DoubleComplex), nullptr);
  EXPECT_EQ(findKernel(Min, ElemType::FloatComplex), nullptr);
  EXPECT_EQ(findKernel(Lor, ElemType::LongDoubleComplex), nullptr);
  EXPECT_EQ(findKernel(Maxloc, ElemType::Int32), nullptr);
  EXPECT_EQ(findKernel(Minloc, ElemType::Double), nullptr);
  EXPECT_EQ(findKernel(Sum, ElemType::DoubleInt), nullptr);
  EXPECT_EQ(findKernel(Max, ElemType::TwoInt), nullptr);
  EXPECT_EQ(findKernel(Sum, ElemType::Char), nullptr);
  EXPECT_EQ(findKernel(Bor, ElemType::WChar), nullptr);
  EXPECT_EQ(findKernel(Sum, ElemType::Bool), nullptr);
  EXPECT_EQ(findKernel(Band, ElemType::Bool), nullptr);
  EXPECT_EQ(findKernel(Land, ElemType::Byte), nullptr);
  EXPECT_EQ(findKernel(Max, ElemType::Byte), nullptr);
  static_assert(!isValid(Band, ElemType::Float) && isValid(Lxor, ElemType::Uint64));
}

TEST(KernelValidity, RejectsOutOfRangeEnumerators) {
  EXPECT_EQ(findKernel(static_cast<ReduceOp>(kNumReduceOps), ElemType::Int32), nullptr);
  EXPECT_EQ(findKernel(Sum, static_cast<ElemType>(kNumElemTypes)), nullptr);
  EXPECT_EQ(findKernel(static_cast<ReduceOp>(255), static_cast<ElemType>(255)), nullptr);
}

// ------------------------------------------------------------------------------------------
// Every valid (op, type): all pairs of the model's edge values, n = 0, 1, 7, 1000, with dst
// distinct, dst == a, dst == b and a == b == dst, at an aligned and a shifted start.
// ------------------------------------------------------------------------------------------
enum class Alias { Distinct, DstIsA, DstIsB, AllSame };
constexpr Alias kAliases[] = {Alias::Distinct, Alias::DstIsA, Alias::DstIsB, Alias::AllSame};
const char *aliasName(Alias a) {
  switch (a) {
  case Alias::Distinct:
    return "dst distinct";
  case Alias::DstIsA:
    return "dst == a";
  case Alias::DstIsB:
    return "dst == b";
  case Alias::AllSame:
    return "a == b == dst";
  }
  return "?";
}

constexpr size_t kSizes[] = {0, 1, 7, 1000};
constexpr size_t kGuard = 3;           // elements past n that must stay untouched
constexpr unsigned char kCanary = 0xA5;

/// Element k of the sweep is (values[k % V], values[(k / V + k) % V]): the first V*V elements
/// hold every ordered pair of values exactly once.
template <class T> void fillSweep(const std::vector<T> &values, T *a, T *b, size_t n) {
  size_t v = values.size();
  for (size_t k = 0; k < n; ++k) {
    a[k] = values[k % v];
    b[k] = values[(k / v + k) % v];
  }
}

template <ElemType E> void sweep(ReduceOp op) {
  using T = typename ElemTraits<E>::Repr;
  using M = ModelOf<E>;
  KernelFn kernel = findKernel(op, E);
  ASSERT_NE(kernel, nullptr);
  const std::vector<T> values = M::values();
  ASSERT_GE(1000u, values.size() * values.size()) << "n = 1000 must cover every pair";

  for (size_t n : kSizes)
    for (size_t shift : {size_t(0), size_t(1)})
      for (Alias alias : kAliases) {
        size_t len = shift + n + kGuard;
        std::vector<T> bufA(len), bufB(len), bufD(len);
        for (std::vector<T> *buf : {&bufA, &bufB, &bufD})
          std::memset(static_cast<void *>(buf->data()), kCanary, len * sizeof(T));
        T *a = bufA.data() + shift, *b = bufB.data() + shift, *d = bufD.data() + shift;
        fillSweep(values, a, b, n);
        if (alias == Alias::AllSame)
          std::memcpy(static_cast<void *>(b), a, n * sizeof(T));
        std::vector<T> expected(n);
        for (size_t i = 0; i < n; ++i)
          expected[i] = M::apply(op, a[i], b[i]);
        // Byte snapshots: copying a long double element copies its 10 value bytes only.
        auto bytesOf = [&](const std::vector<T> &buf) {
          const auto *p = reinterpret_cast<const unsigned char *>(buf.data());
          return std::vector<unsigned char>(p, p + len * sizeof(T));
        };
        const std::vector<unsigned char> origA = bytesOf(bufA), origB = bytesOf(bufB),
                                         origD = bytesOf(bufD);

        T *out = d;
        switch (alias) {
        case Alias::Distinct:
          kernel(a, b, d, n);
          break;
        case Alias::DstIsA:
          kernel(a, b, a, n);
          out = a;
          break;
        case Alias::DstIsB:
          kernel(a, b, b, n);
          out = b;
          break;
        case Alias::AllSame:
          kernel(a, a, a, n);
          out = a;
          break;
        }

        std::string where = std::string(reduceOpName(op)) + " on " + std::string(elemTypeName(E)) +
                            ", n = " + std::to_string(n) + ", shift " + std::to_string(shift) +
                            ", " + aliasName(alias);
        for (size_t i = 0; i < n; ++i)
          if (!M::same(out[i], expected[i])) {
            ADD_FAILURE() << where << ": element " << i << ": " << M::show(a[i]) << " ∘ "
                          << M::show(alias == Alias::AllSame ? a[i] : b[i]) << " = "
                          << M::show(out[i]) << ", expected " << M::show(expected[i]);
            break;
          }
        // Nothing outside dst[0, n) was written.
        auto untouched = [&](const std::vector<T> &buf, const std::vector<unsigned char> &q, bool isOut) {
          const auto *p = reinterpret_cast<const unsigned char *>(buf.data());
          size_t bytes = len * sizeof(T);
          size_t lo = isOut ? shift * sizeof(T) : bytes, hi = isOut ? (shift + n) * sizeof(T) : bytes;
          for (size_t i = 0; i < bytes; ++i)
            if ((i < lo || i >= hi) && p[i] != q[i])
              return false;
          return true;
        };
        EXPECT_TRUE(untouched(bufA, origA, out == a)) << where << ": a written outside dst";
        EXPECT_TRUE(untouched(bufB, origB, out == b)) << where << ": b written outside dst";
        EXPECT_TRUE(untouched(bufD, origD, out == d)) << where << ": dst written past n";
      }
}

class ValidKernel : public ::testing::TestWithParam<OpType> {};

TEST_P(ValidKernel, MatchesModelOnEveryValuePairSizeAndAliasing) {
  OpType p = GetParam();
  withElemType(p.type, [&](auto tag) {
    constexpr ElemType E = decltype(tag)::value;
    if constexpr (ElemTraits<E>::kClass != ElemClass::Character)
      sweep<E>(p.op);
    else
      FAIL() << "character types have no valid op";
  });
}

INSTANTIATE_TEST_SUITE_P(AllValidPairs, ValidKernel, ::testing::ValuesIn(pairsFromTable(true)),
                         [](const ::testing::TestParamInfo<OpType> &info) {
                           return std::string(reduceOpName(info.param.op)) + "_" +
                                  std::string(elemTypeName(info.param.type));
                         });

TEST(Kernels, AcceptEmptyRangeWithNullPointers) {
  for (OpType p : pairsFromTable(true)) {
    KernelFn k = findKernel(p.op, p.type);
    ASSERT_NE(k, nullptr) << reduceOpName(p.op) << " on " << elemTypeName(p.type);
    k(nullptr, nullptr, nullptr, 0);
  }
}

/// The sweep data must tell every two valid ops on a type apart, or a kernel table with two
/// entries swapped could pass.
TEST(Kernels, SweepDataTellsEveryTwoOpsApart) {
  for (ElemType t : kAllElemTypes)
    withElemType(t, [&](auto tag) {
      constexpr ElemType E = decltype(tag)::value;
      if constexpr (ElemTraits<E>::kClass != ElemClass::Character) {
        using T = typename ElemTraits<E>::Repr;
        using M = ModelOf<E>;
        std::vector<T> values = M::values(), a(1000), b(1000);
        fillSweep(values, a.data(), b.data(), a.size());
        std::vector<std::pair<ReduceOp, std::vector<T>>> outs;
        for (ReduceOp op : kAllReduceOps)
          if (KernelFn k = findKernel(op, E)) {
            std::vector<T> d(a.size());
            k(a.data(), b.data(), d.data(), d.size());
            outs.emplace_back(op, d);
          }
        for (size_t i = 0; i < outs.size(); ++i)
          for (size_t j = i + 1; j < outs.size(); ++j) {
            bool differ = false;
            for (size_t k = 0; k < a.size() && !differ; ++k)
              differ = !M::same(outs[i].second[k], outs[j].second[k]);
            EXPECT_TRUE(differ) << elemTypeName(E) << ": " << reduceOpName(outs[i].first)
                                << " and " << reduceOpName(outs[j].first) << " agree everywhere";
          }
      }
    });
}

// ------------------------------------------------------------------------------------------
// Literal cases: values chosen so that a plausible wrong kernel (saturating, signed compare on
// unsigned, bitwise for logical, truncation to a narrower type, wider accumulation) fails.
// ------------------------------------------------------------------------------------------
struct IntCase {
  ReduceOp op;
  ElemType type;
  long long a, b, expected; // converted to the element type modulo 2^bits
};
constexpr long long kI32Min = INT32_MIN, kI32Max = INT32_MAX, kI64Min = INT64_MIN, kI64Max = INT64_MAX;
constexpr IntCase kIntCases[] = {
    // sum wraps (no saturation)
    {Sum, ElemType::Int8, 127, 1, -128},
    {Sum, ElemType::Int8, -128, -1, 127},
    {Sum, ElemType::Int8, 100, 100, -56},
    {Sum, ElemType::Uint8, 255, 1, 0},
    {Sum, ElemType::Uint8, 200, 200, 144},
    {Sum, ElemType::Int16, 32767, 1, -32768},
    {Sum, ElemType::Uint16, 65535, 2, 1},
    {Sum, ElemType::Int32, kI32Max, 1, kI32Min},
    {Sum, ElemType::Uint32, 0xFFFFFFFF, 1, 0},
    {Sum, ElemType::Int64, kI64Max, 1, kI64Min},
    {Sum, ElemType::Uint64, -1, 1, 0},
    // prod wraps
    {Prod, ElemType::Int8, 16, 8, -128},
    {Prod, ElemType::Int8, 100, 3, 44},
    {Prod, ElemType::Int8, -128, -1, -128},
    {Prod, ElemType::Uint8, 16, 16, 0},
    {Prod, ElemType::Int16, -32768, -1, -32768},
    {Prod, ElemType::Uint16, 65535, 65535, 1}, // overflows int if done after promotion
    {Prod, ElemType::Int32, 65536, 65536, 0},
    {Prod, ElemType::Int32, kI32Min, -1, kI32Min},
    {Prod, ElemType::Uint32, 0xFFFFFFFF, 0xFFFFFFFF, 1},
    {Prod, ElemType::Int64, kI64Min, -1, kI64Min},
    {Prod, ElemType::Uint64, 1LL << 32, 1LL << 32, 0},
    // max/min compare in the element's signedness
    {Max, ElemType::Uint8, 200, 100, 200},
    {Max, ElemType::Int8, -1, 1, 1},
    {Min, ElemType::Uint32, 0x80000000, 1, 1},
    {Min, ElemType::Int32, kI32Min, 0, kI32Min},
    {Max, ElemType::Uint64, -1, 0, -1},
    {Min, ElemType::Int64, kI64Min, kI64Max, kI64Min},
    {Max, ElemType::Int16, -32768, -32767, -32767},
    // logical: nonzero is true, result is 0/1
    {Land, ElemType::Int32, 2, 4, 1},      // band would give 0
    {Land, ElemType::Int64, 1LL << 32, 1, 1}, // truncating to 32 bits would give 0
    {Land, ElemType::Uint16, 256, 1, 1},   // truncating to 8 bits would give 0
    {Land, ElemType::Int8, -1, 0, 0},
    {Lor, ElemType::Int8, 2, 0, 1},        // bor would give 2
    {Lor, ElemType::Uint64, 0, 0, 0},
    {Lor, ElemType::Uint64, 1LL << 40, 0, 1},
    {Lxor, ElemType::Int16, 2, 3, 0},      // bxor would give 1
    {Lxor, ElemType::Int32, -1, 0, 1},
    {Lxor, ElemType::Uint8, 0x80, 0x80, 0},
    // bitwise
    {Band, ElemType::Int8, -1, 0x5A, 0x5A},
    {Bor, ElemType::Uint16, 0xF000, 0x000F, 0xF00F},
    {Bxor, ElemType::Int64, -1, 1, -2},
    {Bxor, ElemType::Uint32, 0xFFFF0000, 0x00FFFF00, 0xFF00FF00},
    // bool: any nonzero byte is true
    {Land, ElemType::Bool, 2, 1, 1},
    {Lor, ElemType::Bool, 0, 0, 0},
    {Lor, ElemType::Bool, 0x80, 0, 1},
    {Lxor, ElemType::Bool, 2, 1, 0},
    {Lxor, ElemType::Bool, 0, 0xFF, 1},
    // byte
    {Band, ElemType::Byte, 0xF0, 0x3C, 0x30},
    {Bor, ElemType::Byte, 0xF0, 0x0C, 0xFC},
    {Bxor, ElemType::Byte, 0xFF, 0x0F, 0xF0},
};

TEST(KernelSemantics, IntegerLiteralCases) {
  for (const IntCase &c : kIntCases)
    withElemType(c.type, [&](auto tag) {
      constexpr ElemType E = decltype(tag)::value;
      using T = typename ElemTraits<E>::Repr;
      if constexpr (std::is_integral_v<T>) {
        T a = static_cast<T>(c.a), b = static_cast<T>(c.b), want = static_cast<T>(c.expected);
        KernelFn k = findKernel(c.op, E);
        ASSERT_NE(k, nullptr) << reduceOpName(c.op) << " on " << elemTypeName(E);
        for (bool swapped : {false, true}) { // every integer op is commutative
          T d{};
          k(swapped ? &b : &a, swapped ? &a : &b, &d, 1);
          EXPECT_EQ(d, want) << reduceOpName(c.op) << " on " << elemTypeName(E) << ": " << c.a
                             << ", " << c.b << (swapped ? " (swapped)" : "");
        }
      } else {
        ADD_FAILURE() << "not an integer case";
      }
    });
}

/// a ∘ b through the kernel (a failed test and T{} if there is none).
template <class T> T run1(ReduceOp op, ElemType t, T a, T b) {
  T d{};
  if (KernelFn k = findKernel(op, t))
    k(&a, &b, &d, 1);
  else
    ADD_FAILURE() << "no kernel for " << reduceOpName(op) << " on " << elemTypeName(t);
  return d;
}

template <class T> void checkFloatingNaNAndZeros(ElemType t) {
  SCOPED_TRACE(std::string(elemTypeName(t)));
  const T nan = std::numeric_limits<T>::quiet_NaN(), one = 1, pz = 0, nz = -T(0);
  for (ReduceOp op : {Max, Min}) {
    SCOPED_TRACE(std::string(reduceOpName(op)));
    EXPECT_TRUE(std::isnan(run1(op, t, nan, one)));
    EXPECT_TRUE(std::isnan(run1(op, t, one, nan)));
    EXPECT_TRUE(std::isnan(run1(op, t, nan, nan)));
    // Equal values: b (the `a > b ? a : b` rule), observable on signed zeros.
    EXPECT_TRUE(std::signbit(run1(op, t, pz, nz)));
    EXPECT_FALSE(std::signbit(run1(op, t, nz, pz)));
  }
  EXPECT_EQ(run1(Max, t, T(-3), T(2)), T(2));
  EXPECT_EQ(run1(Min, t, T(-3), T(2)), T(-3));
  EXPECT_EQ(run1(Max, t, -std::numeric_limits<T>::infinity(), std::numeric_limits<T>::lowest()),
            std::numeric_limits<T>::lowest());
  EXPECT_TRUE(std::isnan(run1(Sum, t, std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity())));
  EXPECT_TRUE(std::isnan(run1(Prod, t, pz, std::numeric_limits<T>::infinity())));
  EXPECT_EQ(run1(Sum, t, std::numeric_limits<T>::max(), std::numeric_limits<T>::max()),
            std::numeric_limits<T>::infinity());
}

TEST(KernelSemantics, FloatingMaxMinPropagateNaN) {
  checkFloatingNaNAndZeros<float>(ElemType::Float);
  checkFloatingNaNAndZeros<double>(ElemType::Double);
  checkFloatingNaNAndZeros<long double>(ElemType::LongDouble);
}

TEST(KernelSemantics, FloatingArithmeticIsInTheElementType) {
  EXPECT_EQ(run1(Sum, ElemType::Double, 0.1, 0.2), 0.30000000000000004);
  EXPECT_EQ(run1(Sum, ElemType::Float, 0.1f, 0.2f), 0.1f + 0.2f);
  EXPECT_EQ(run1(Prod, ElemType::Float, 3.0f, 1.0f / 3.0f), 3.0f * (1.0f / 3.0f));
  // long double keeps the bits a double would lose
  long double tiny = std::ldexp(1.0L, -60);
  EXPECT_EQ(run1(Sum, ElemType::LongDouble, 1.0L, tiny) - 1.0L, tiny);
  EXPECT_EQ(run1(Prod, ElemType::LongDouble, 1.0L + tiny, 1.0L + tiny) - 1.0L, 2 * tiny); // tiny² rounds off
}

TEST(KernelSemantics, ComplexSumAndProduct) {
  using C = std::complex<double>;
  EXPECT_EQ(run1(Prod, ElemType::DoubleComplex, C(1, 2), C(3, 4)), C(-5, 10));
  EXPECT_EQ(run1(Sum, ElemType::DoubleComplex, C(1, 2), C(3, -4)), C(4, -2));
  EXPECT_EQ(run1(Prod, ElemType::FloatComplex, std::complex<float>(0, 1), std::complex<float>(0, 1)),
            std::complex<float>(-1, 0));
  using L = std::complex<long double>;
  long double tiny = std::ldexp(1.0L, -60);
  EXPECT_EQ(run1(Prod, ElemType::LongDoubleComplex, L(1 + tiny, 0), L(0, 1)), L(0, 1 + tiny));
}

template <class V> void checkLocTies(ElemType t) {
  using P = ValueIndex<V>;
  SCOPED_TRACE(std::string(elemTypeName(t)));
  auto same = [](P x, P y) { return x.value == y.value && x.index == y.index; };
  for (ReduceOp op : {Maxloc, Minloc}) {
    SCOPED_TRACE(std::string(reduceOpName(op)));
    // equal values: the lower index wins, whatever the operand order
    EXPECT_TRUE(same(run1(op, t, P{V(3), 5}, P{V(3), 2}), P{V(3), 2}));
    EXPECT_TRUE(same(run1(op, t, P{V(3), 2}, P{V(3), 5}), P{V(3), 2}));
    EXPECT_TRUE(same(run1(op, t, P{V(-1), -7}, P{V(-1), 0}), P{V(-1), -7}));
    EXPECT_TRUE(same(run1(op, t, P{V(0), 4}, P{V(0), 4}), P{V(0), 4}));
  }
  // otherwise the better value wins with its own index, in both orders
  EXPECT_TRUE(same(run1(Maxloc, t, P{V(3), 1}, P{V(4), 9}), P{V(4), 9}));
  EXPECT_TRUE(same(run1(Maxloc, t, P{V(4), 9}, P{V(3), 1}), P{V(4), 9}));
  EXPECT_TRUE(same(run1(Minloc, t, P{V(3), 1}, P{V(4), 0}), P{V(3), 1}));
  EXPECT_TRUE(same(run1(Minloc, t, P{V(4), 0}, P{V(3), 1}), P{V(3), 1}));
  EXPECT_TRUE(same(run1(Maxloc, t, P{std::numeric_limits<V>::lowest(), 0}, P{V(0), 3}), P{V(0), 3}));
  EXPECT_TRUE(same(run1(Minloc, t, P{std::numeric_limits<V>::max(), 0}, P{V(0), 3}), P{V(0), 3}));
}

TEST(KernelSemantics, LocTiesPickTheLowerIndex) {
  checkLocTies<float>(ElemType::FloatInt);
  checkLocTies<double>(ElemType::DoubleInt);
  checkLocTies<long>(ElemType::LongInt);
  checkLocTies<int>(ElemType::TwoInt);
  checkLocTies<short>(ElemType::ShortInt);
  checkLocTies<long double>(ElemType::LongDoubleInt);
}

TEST(KernelSemantics, LocNaNValueWinsAndSignedZerosTieOnIndex) {
  using P = ValueIndex<double>;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (ReduceOp op : {Maxloc, Minloc}) {
    SCOPED_TRACE(std::string(reduceOpName(op)));
    P r = run1(op, ElemType::DoubleInt, P{nan, 7}, P{1.0, 0});
    EXPECT_TRUE(std::isnan(r.value) && r.index == 7);
    r = run1(op, ElemType::DoubleInt, P{1.0, 0}, P{nan, 7});
    EXPECT_TRUE(std::isnan(r.value) && r.index == 7);
    r = run1(op, ElemType::DoubleInt, P{nan, 7}, P{nan, 3});
    EXPECT_TRUE(std::isnan(r.value) && r.index == 3);
    // -0 == +0: a tie, and the whole lower-index pair is the result in both orders
    r = run1(op, ElemType::DoubleInt, P{-0.0, 4}, P{0.0, 1});
    EXPECT_TRUE(!std::signbit(r.value) && r.index == 1);
    r = run1(op, ElemType::DoubleInt, P{0.0, 1}, P{-0.0, 4});
    EXPECT_TRUE(!std::signbit(r.value) && r.index == 1);
  }
}

// ------------------------------------------------------------------------------------------
// Sizes, names, parsing.
// ------------------------------------------------------------------------------------------
template <class V> struct CPair { // the C struct MPI describes, declared independently
  V v;
  int i;
};

TEST(ElemTypes, SizesAreThoseOfTheCTypes) {
  EXPECT_EQ(elemSize(ElemType::Int8), 1u);
  EXPECT_EQ(elemSize(ElemType::Uint16), 2u);
  EXPECT_EQ(elemSize(ElemType::Int32), 4u);
  EXPECT_EQ(elemSize(ElemType::Uint64), 8u);
  EXPECT_EQ(elemSize(ElemType::Char), sizeof(char));
  EXPECT_EQ(elemSize(ElemType::WChar), sizeof(wchar_t));
  EXPECT_EQ(elemSize(ElemType::Float), sizeof(float));
  EXPECT_EQ(elemSize(ElemType::Double), sizeof(double));
  EXPECT_EQ(elemSize(ElemType::LongDouble), sizeof(long double));
  EXPECT_EQ(elemSize(ElemType::FloatComplex), 2 * sizeof(float));
  EXPECT_EQ(elemSize(ElemType::DoubleComplex), 2 * sizeof(double));
  EXPECT_EQ(elemSize(ElemType::LongDoubleComplex), 2 * sizeof(long double));
  EXPECT_EQ(elemSize(ElemType::Bool), sizeof(bool));
  EXPECT_EQ(elemSize(ElemType::Byte), 1u);
  EXPECT_EQ(elemSize(ElemType::FloatInt), sizeof(CPair<float>));
  EXPECT_EQ(elemSize(ElemType::DoubleInt), sizeof(CPair<double>));
  EXPECT_EQ(elemSize(ElemType::LongInt), sizeof(CPair<long>));
  EXPECT_EQ(elemSize(ElemType::TwoInt), sizeof(CPair<int>));
  EXPECT_EQ(elemSize(ElemType::ShortInt), sizeof(CPair<short>));
  EXPECT_EQ(elemSize(ElemType::LongDoubleInt), sizeof(CPair<long double>));
  EXPECT_EQ(offsetof(ValueIndex<short>, index), offsetof(CPair<short>, i));
  EXPECT_EQ(offsetof(ValueIndex<long double>, index), offsetof(CPair<long double>, i));
}

TEST(ElemTypes, CIntegerTypesMapBySizeAndSignedness) {
  static_assert(integerElemType<signed char>() == ElemType::Int8);
  static_assert(integerElemType<unsigned char>() == ElemType::Uint8);
  static_assert(integerElemType<short>() == ElemType::Int16);
  static_assert(integerElemType<unsigned short>() == ElemType::Uint16);
  static_assert(integerElemType<int>() == ElemType::Int32);
  static_assert(integerElemType<unsigned>() == ElemType::Uint32);
  static_assert(integerElemType<long long>() == ElemType::Int64);
  static_assert(integerElemType<unsigned long long>() == ElemType::Uint64);
  EXPECT_EQ(elemSize(integerElemType<long>()), sizeof(long));
  EXPECT_EQ(elemSize(integerElemType<unsigned long>()), sizeof(unsigned long));
}

TEST(ElemTypes, NamesRoundTripAndAreUnique) {
  std::set<std::string_view> names;
  for (ElemType t : kAllElemTypes) {
    EXPECT_EQ(parseElemType(elemTypeName(t)), t) << elemTypeName(t);
    EXPECT_TRUE(names.insert(elemTypeName(t)).second) << elemTypeName(t);
  }
  EXPECT_EQ(elemTypeName(ElemType::Double), "double");
  EXPECT_EQ(elemTypeName(ElemType::DoubleInt), "double_int");
  EXPECT_EQ(elemTypeName(ElemType::TwoInt), "2int");
  EXPECT_EQ(elemTypeName(ElemType::LongDoubleComplex), "long_double_complex");
}

TEST(ElemTypes, ParsesCTypeNames) {
  EXPECT_EQ(parseElemType("int"), ElemType::Int32);
  EXPECT_EQ(parseElemType("unsigned"), ElemType::Uint32);
  EXPECT_EQ(parseElemType("unsigned_int"), ElemType::Uint32);
  EXPECT_EQ(parseElemType("short"), ElemType::Int16);
  EXPECT_EQ(parseElemType("unsigned_short"), ElemType::Uint16);
  EXPECT_EQ(parseElemType("signed_char"), ElemType::Int8);
  EXPECT_EQ(parseElemType("unsigned_char"), ElemType::Uint8);
  EXPECT_EQ(parseElemType("long"), integerElemType<long>());
  EXPECT_EQ(parseElemType("unsigned_long"), integerElemType<unsigned long>());
  EXPECT_EQ(parseElemType("long_long"), ElemType::Int64);
  EXPECT_EQ(parseElemType("unsigned_long_long"), ElemType::Uint64);
  EXPECT_EQ(parseElemType("_Bool"), ElemType::Bool);
  EXPECT_EQ(parseElemType("wchar_t"), ElemType::WChar);
  EXPECT_EQ(parseElemType("char"), ElemType::Char);
  EXPECT_EQ(parseElemType("Double"), std::nullopt);
  EXPECT_EQ(parseElemType("double "), std::nullopt);
  EXPECT_EQ(parseElemType(""), std::nullopt);
  EXPECT_EQ(parseElemType("int128"), std::nullopt);
}

TEST(ReduceOps, NamesRoundTrip) {
  const char *expected[] = {"max", "min", "sum", "prod", "land", "lor", "lxor", "band", "bor", "bxor", "maxloc", "minloc"};
  ASSERT_EQ(std::size(expected), kNumReduceOps);
  for (size_t i = 0; i < kNumReduceOps; ++i) {
    EXPECT_EQ(reduceOpName(kAllReduceOps[i]), expected[i]);
    EXPECT_EQ(parseReduceOp(expected[i]), kAllReduceOps[i]);
  }
  EXPECT_EQ(parseReduceOp("SUM"), std::nullopt);
  EXPECT_EQ(parseReduceOp("replace"), std::nullopt);
  EXPECT_EQ(parseReduceOp(""), std::nullopt);
}

TEST(ElemTypes, ClassesAndTheirNames) {
  EXPECT_EQ(elemClass(ElemType::Uint16), ElemClass::Integer);
  EXPECT_EQ(elemClass(ElemType::Char), ElemClass::Character);
  EXPECT_EQ(elemClass(ElemType::LongDouble), ElemClass::Floating);
  EXPECT_EQ(elemClass(ElemType::FloatComplex), ElemClass::Complex);
  EXPECT_EQ(elemClass(ElemType::Bool), ElemClass::Logical);
  EXPECT_EQ(elemClass(ElemType::Byte), ElemClass::Byte);
  EXPECT_EQ(elemClass(ElemType::ShortInt), ElemClass::Pair);
  EXPECT_EQ(elemClassName(ElemClass::Pair), "pair");
  EXPECT_EQ(elemClassName(ElemClass::Integer), "integer");
}

} // namespace
} // namespace collc::rt
