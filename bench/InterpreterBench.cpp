// InterpreterBench.cpp - the interpreter's own cost per op, and the C API's cost per call.
//
// Interpreter/...: one rank's program of a generated plan runs on a null transport, where every
// send and receive completes at once (receives leave their buffer as it is), so the time is the
// dataflow machine alone: posting, dependency counting, message bookkeeping, and the combiner
// (double sum through the kernel table) on n = 1 element. `per_op` divides an execution's time
// by the rank's op count. n = 0 is there to show the shortcut: an execution of 0 elements sends
// nothing on any rank and returns at once.
//
// Threads/...: all p ranks as threads of this process on the threaded test transport (eager
// copies under a mutex, condition-variable wake-ups), n = 1; `per_op` divides rank 0's time by
// its op count, so it includes waiting for the other ranks.
//
// Api/...: the C API on MPI_COMM_SELF (p = 1: the plan is one copy), one double: what a
// blocking collc_allreduce costs per call (request set-up included) next to a persistent
// request's collc_start + collc_wait and to native MPI_Allreduce.
//
//   mpirun -np 1 collc-interpreter-bench [--benchmark_filter=Interpreter] [...]
#include "collc/collc.h"
#include "compiler/Lower.h"
#include "runtime/bytecode/Loader.h"
#include "runtime/core/Executor.h"
#include "runtime/core/ThreadTransport.h"
#include "runtime/kernels/Kernels.h"
#include "schedules/Generators.h"

#include <benchmark/benchmark.h>
#include <mpi.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace collc;

namespace {

/// Every request completes at once; receives do not touch their buffer.
class NullTransport final : public rt::Transport {
public:
  int maxTag() const override { return 0x7fffffff; }
  rt::Status send(const void *, size_t, uint32_t, int, uint32_t id) override {
    done_.push_back(id);
    return rt::Status::success();
  }
  rt::Status recv(void *, size_t, uint32_t, int, uint32_t id) override {
    done_.push_back(id);
    return rt::Status::success();
  }
  rt::Status poll(bool, std::vector<uint32_t> &completed) override {
    completed.insert(completed.end(), done_.begin(), done_.end());
    done_.clear();
    return rt::Status::success();
  }
  void reserve(uint32_t capacity) override { done_.reserve(capacity); }

private:
  std::vector<uint32_t> done_;
};

void kernelCombine(const void *ctx, const void *a, const void *b, void *dst, size_t n, void *) {
  reinterpret_cast<rt::KernelFn>(const_cast<void *>(ctx))(a, b, dst, n);
}

rt::Combiner doubleSum() {
  return {kernelCombine,
          reinterpret_cast<const void *>(rt::findKernel(rt::ReduceOp::Sum, rt::ElemType::Double))};
}

rt::LoadedPlan loadPlan(const char *alg, uint32_t p) {
  sched::GenOptions g;
  g.ranks = p;
  const sched::Algorithm *a = sched::findAlgorithm(ir::Collective::Allreduce, alg);
  std::vector<uint8_t> bytes = compiler::lower(a->build(g));
  rt::LoadedPlan plan;
  if (rt::Status s = rt::load(bytes, plan); !s.ok()) {
    std::fprintf(stderr, "load: %s\n", s.message().c_str());
    std::abort();
  }
  return plan;
}

void interpreterBench(benchmark::State &state, const char *alg) {
  const uint32_t p = uint32_t(state.range(0));
  const size_t n = size_t(state.range(1));
  rt::LoadedPlan plan = loadPlan(alg, p);
  rt::PreparedRank prep = rt::prepareRank(plan, 0);
  std::vector<double> in(n + 1, 1.0), out(n + 1, 0.0);
  rt::Buffers b{in.data(), out.data(), n, sizeof(double)};
  NullTransport t;
  rt::Executor ex;
  if (rt::Status s = ex.bind(prep, b, doubleSum(), t); !s.ok()) {
    state.SkipWithError(s.message().c_str());
    return;
  }
  uint64_t execution = 0;
  for (auto _ : state) {
    rt::Status s = ex.start(execution++);
    if (s.ok())
      s = ex.wait();
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
    benchmark::ClobberMemory();
  }
  state.counters["ops"] = double(prep.ops.size());
  state.counters["per_op"] =
      benchmark::Counter(double(prep.ops.size()),
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void threadsBench(benchmark::State &state, const char *alg) {
  const uint32_t p = uint32_t(state.range(0));
  const size_t n = 1;
  rt::LoadedPlan plan = loadPlan(alg, p);
  rt::ThreadFabric fabric(p);
  std::vector<rt::PreparedRank> preps;
  for (uint32_t r = 0; r < p; ++r)
    preps.push_back(rt::prepareRank(plan, r));
  // Ranks 1..p-1 run as helper threads, each execution after rank 0 starts it.
  std::atomic<uint64_t> go{0};
  std::atomic<bool> stop{false};
  auto rankLoop = [&](uint32_t r) {
    std::vector<double> in(n + 1, 1.0), out(n + 1, 0.0);
    rt::ThreadTransport t(fabric, r, sizeof(double));
    rt::Executor ex;
    if (!ex.bind(preps[r], rt::Buffers{in.data(), out.data(), n, sizeof(double)}, doubleSum(), t)
             .ok())
      std::abort();
    for (uint64_t k = 0;; ++k) {
      while (go.load(std::memory_order_acquire) <= k) {
        if (stop.load(std::memory_order_acquire))
          return;
        std::this_thread::yield(); // 2 cores: let rank 0 run
      }
      if (!ex.start(k).ok() || !ex.wait().ok())
        std::abort();
    }
  };
  std::vector<std::thread> helpers;
  for (uint32_t r = 1; r < p; ++r)
    helpers.emplace_back(rankLoop, r);
  std::vector<double> in(n + 1, 1.0), out(n + 1, 0.0);
  rt::ThreadTransport t(fabric, 0, sizeof(double));
  rt::Executor ex;
  if (!ex.bind(preps[0], rt::Buffers{in.data(), out.data(), n, sizeof(double)}, doubleSum(), t)
           .ok())
    std::abort();
  uint64_t k = 0;
  for (auto _ : state) {
    go.store(k + 1, std::memory_order_release);
    if (!ex.start(k).ok() || !ex.wait().ok())
      std::abort();
    ++k;
  }
  stop.store(true, std::memory_order_release);
  for (auto &h : helpers)
    h.join();
  state.counters["ops"] = double(preps[0].ops.size());
  state.counters["per_op"] =
      benchmark::Counter(double(preps[0].ops.size()),
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// --- the C API on MPI_COMM_SELF ----------------------------------------------------------

struct SelfPlan {
  collc_plan plan = COLLC_PLAN_NULL;
  SelfPlan() {
    sched::GenOptions g;
    g.ranks = 1;
    std::vector<uint8_t> bytes =
        compiler::lower(sched::findAlgorithm(ir::Collective::Allreduce, "ring")->build(g));
    if (collc_plan_load_memory(bytes.data(), bytes.size(), &plan) != COLLC_SUCCESS)
      std::abort();
  }
  ~SelfPlan() { collc_plan_free(&plan); }
};

void apiBlocking(benchmark::State &state) {
  SelfPlan sp;
  double in = 1, out = 0;
  for (auto _ : state)
    if (collc_allreduce(sp.plan, &in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF) !=
        COLLC_SUCCESS)
      state.SkipWithError(collc_error_message());
}

void apiPersistent(benchmark::State &state) {
  SelfPlan sp;
  double in = 1, out = 0;
  collc_request req;
  if (collc_allreduce_init(sp.plan, &in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF, &req) !=
      COLLC_SUCCESS) {
    state.SkipWithError(collc_error_message());
    return;
  }
  for (auto _ : state)
    if (collc_start(req) != COLLC_SUCCESS || collc_wait(&req) != COLLC_SUCCESS)
      state.SkipWithError(collc_error_message());
  collc_request_free(&req);
}

void nativeSelf(benchmark::State &state) {
  double in = 1, out = 0;
  for (auto _ : state)
    MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
}

void registerAll() {
  for (const char *alg : {"ring", "recursive_doubling", "rabenseifner", "binary_tree"})
    benchmark::RegisterBenchmark((std::string("Interpreter/") + alg).c_str(), interpreterBench,
                                 alg)
        ->ArgNames({"p", "n"})
        ->ArgsProduct({{8, 64}, {0, 1}});
  for (const char *alg : {"ring", "recursive_doubling"})
    benchmark::RegisterBenchmark((std::string("Threads/") + alg).c_str(), threadsBench, alg)
        ->ArgName("p")
        ->Arg(2)
        ->Arg(4)
        ->UseRealTime();
  benchmark::RegisterBenchmark("Api/collc_allreduce/p=1", apiBlocking);
  benchmark::RegisterBenchmark("Api/persistent_start_wait/p=1", apiPersistent);
  benchmark::RegisterBenchmark("Api/MPI_Allreduce/p=1", nativeSelf);
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  registerAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    MPI_Finalize();
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  MPI_Finalize();
  return 0;
}
