// KernelBench.cpp - throughput of the reduce kernels next to memcpy of the same bytes.
//
// Each kernel benchmark computes dst = a ∘ b over `bytes` bytes of dst: it reads two streams and
// writes one, memcpy reads one and writes one. `bytes_per_second` counts dst bytes (for memcpy:
// bytes copied), so the two columns compare directly; `traffic` counts every byte read or
// written. `inplace` variants run dst == a, as the interpreter's recv_reduce does.
//
//   collc-kernel-bench [--benchmark_filter=sum/double] [--benchmark_repetitions=5 ...]
#include "runtime/kernels/Kernels.h"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>

namespace {

using collc::rt::ElemType;
using collc::rt::KernelFn;
using collc::rt::ReduceOp;

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};
using Buffer = std::unique_ptr<unsigned char[], FreeDeleter>;

Buffer allocate(size_t bytes) {
  size_t rounded = (bytes + 63) / 64 * 64;
  auto *p = static_cast<unsigned char *>(std::aligned_alloc(64, rounded ? rounded : 64));
  std::memset(p, 0, rounded ? rounded : 64); // fault the pages in before timing
  return Buffer(p);
}

/// Ordinary values of the type: no NaNs or subnormals (which would time the FPU's slow path).
void fill(ElemType t, unsigned char *p, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> real(-1000.0, 1000.0);
  switch (t) {
  case ElemType::Double:
    for (size_t i = 0; i < n; ++i)
      reinterpret_cast<double *>(p)[i] = real(rng);
    return;
  case ElemType::Float:
    for (size_t i = 0; i < n; ++i)
      reinterpret_cast<float *>(p)[i] = static_cast<float>(real(rng));
    return;
  case ElemType::DoubleInt:
    for (size_t i = 0; i < n; ++i)
      reinterpret_cast<collc::rt::ValueIndex<double> *>(p)[i] = {double(rng() % 1000), int(rng() % 64)};
    return;
  default: // integers: any bits
    for (size_t i = 0; i < n * collc::rt::elemSize(t); ++i)
      p[i] = static_cast<unsigned char>(rng());
    return;
  }
}

void kernelBench(benchmark::State &state, ReduceOp op, ElemType t, bool inPlace) {
  KernelFn kernel = collc::rt::findKernel(op, t);
  size_t n = size_t(state.range(0)) / collc::rt::elemSize(t);
  size_t bytes = n * collc::rt::elemSize(t);
  Buffer a = allocate(bytes), b = allocate(bytes), d = allocate(bytes);
  fill(t, a.get(), n, 1);
  fill(t, b.get(), n, 2);
  // In place, dst == a accumulates; max/maxloc/sum on these values stay ordinary numbers for
  // any iteration count the benchmark runs (sums grow by at most 1000 per pass).
  unsigned char *dst = inPlace ? a.get() : d.get();
  for (auto _ : state) {
    kernel(a.get(), b.get(), dst, n);
    benchmark::DoNotOptimize(dst);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
  state.counters["traffic"] =
      benchmark::Counter(double(state.iterations()) * double(bytes) * 3, benchmark::Counter::kIsRate,
                         benchmark::Counter::kIs1024);
}

void memcpyBench(benchmark::State &state) {
  size_t bytes = size_t(state.range(0));
  Buffer a = allocate(bytes), d = allocate(bytes);
  fill(ElemType::Uint8, a.get(), bytes, 1);
  for (auto _ : state) {
    std::memcpy(d.get(), a.get(), bytes);
    benchmark::DoNotOptimize(d.get());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
  state.counters["traffic"] =
      benchmark::Counter(double(state.iterations()) * double(bytes) * 2, benchmark::Counter::kIsRate,
                         benchmark::Counter::kIs1024);
}

struct Case {
  const char *op, *type;
  bool inPlace;
};
constexpr Case kCases[] = {
    {"sum", "double", false}, {"sum", "double", true}, {"sum", "float", false},
    {"sum", "int32", false},  {"sum", "int8", false},  {"max", "double", false},
    {"maxloc", "double_int", false},
};
constexpr int64_t kSizes[] = {64 << 10, 1 << 20, 16 << 20};

void registerAll() {
  for (int64_t size : kSizes)
    benchmark::RegisterBenchmark("memcpy", memcpyBench)->Arg(size);
  for (const Case &c : kCases) {
    ReduceOp op = *collc::rt::parseReduceOp(c.op);
    ElemType t = *collc::rt::parseElemType(c.type);
    std::string name = std::string(c.op) + "/" + c.type + (c.inPlace ? "/inplace" : "");
    for (int64_t size : kSizes)
      benchmark::RegisterBenchmark(name.c_str(), kernelBench, op, t, c.inPlace)->Arg(size);
  }
}

} // namespace

int main(int argc, char **argv) {
  registerAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
