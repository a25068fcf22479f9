// tools/collc/TuneMeasure.cpp: collc tune --measure (TuneMeasure.h).
#include "tools/collc/TuneMeasure.h"

#include "tune/Report.h"
#include "collc/collc.h"
#include "runtime/kernels/Kernels.h"
#include "tools/collc-bench/Calls.h"
#include "tools/collc-bench/Workload.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <thread>

namespace collc::tool {

namespace {

/// What rank 0 sends: per size the candidates to time, and their plans.
struct Request {
  std::vector<std::vector<uint32_t>> timed; ///< per size
  std::map<uint32_t, std::vector<uint8_t>> plans;
};

void put(std::vector<uint8_t> &out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out.push_back(uint8_t(v >> (8 * i)));
}

uint64_t take(const std::vector<uint8_t> &in, size_t &at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= uint64_t(in[at + size_t(i)]) << (8 * i);
  at += 8;
  return v;
}

std::vector<uint8_t> encode(const Request &q) {
  std::vector<uint8_t> out;
  put(out, q.timed.size());
  for (const std::vector<uint32_t> &t : q.timed) {
    put(out, t.size());
    for (uint32_t c : t)
      put(out, c);
  }
  put(out, q.plans.size());
  for (const auto &[c, bytes] : q.plans) {
    put(out, c);
    put(out, bytes.size());
    out.insert(out.end(), bytes.begin(), bytes.end());
  }
  return out;
}

Request decode(const std::vector<uint8_t> &in) {
  Request q;
  size_t at = 0;
  q.timed.resize(take(in, at));
  for (std::vector<uint32_t> &t : q.timed) {
    t.resize(take(in, at));
    for (uint32_t &c : t)
      c = uint32_t(take(in, at));
  }
  for (uint64_t n = take(in, at); n > 0; --n) {
    const uint32_t c = uint32_t(take(in, at));
    const size_t len = take(in, at);
    q.plans[c].assign(in.begin() + std::ptrdiff_t(at), in.begin() + std::ptrdiff_t(at + len));
    at += len;
  }
  return q;
}

/// A broadcast from rank 0 that the other ranks wait for asleep: rank 0 may
/// be compiling for minutes, and spinning ranks would take its cores.
void patientBcast(void *data, int count, MPI_Datatype type, MPI_Comm comm) {
  MPI_Request req;
  MPI_Ibcast(data, count, type, 0, comm, &req);
  for (int done = 0;;) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done)
      return;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

bench::CallKind callKindOf(ir::Collective c) {
  switch (c) {
  case ir::Collective::Allreduce:
    return bench::CallKind::Allreduce;
  case ir::Collective::Reduce:
    return bench::CallKind::Reduce;
  case ir::Collective::ReduceScatterBlock:
    return bench::CallKind::ReduceScatterBlock;
  case ir::Collective::Scan:
    return bench::CallKind::Scan;
  case ir::Collective::Exscan:
    return bench::CallKind::Exscan;
  case ir::Collective::Allgather:
    return bench::CallKind::Allgather;
  case ir::Collective::Bcast:
    return bench::CallKind::Bcast;
  case ir::Collective::Alltoall:
    return bench::CallKind::Alltoall;
  case ir::Collective::Gather:
    return bench::CallKind::Gather;
  case ir::Collective::Scatter:
    return bench::CallKind::Scatter;
  case ir::Collective::Barrier:
    return bench::CallKind::Barrier;
  }
  return bench::CallKind::Allreduce;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// The slowest rank's time per call of `iters` calls of `run` (started
/// together after a barrier); negative when a call failed on any rank.
template <class Run> double timeTurn(Run &&run, int iters, MPI_Comm comm) {
  MPI_Barrier(comm);
  const double t0 = MPI_Wtime();
  int failed = 0;
  for (int i = 0; i < iters && !failed; ++i)
    failed = run() != 0;
  double t[2] = {(MPI_Wtime() - t0) / iters, double(failed)};
  MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, comm);
  return t[1] > 0 ? -1 : t[0];
}

} // namespace

std::vector<tune::Measurement> measure(const tune::TuneResult *result,
                                       const tune::TuneOptions &opts,
                                       const MeasureOptions &mo, MPI_Comm comm) {
  int me = 0;
  MPI_Comm_rank(comm, &me);
  const auto start = std::chrono::steady_clock::now();
  // Time the steady state: shared memory from the first timed execution (not
  // after the communicator's first COLLC_SHM_AFTER over MPI).
  int shmPeers = 0;
  (void)collc_comm_shm_peers(comm, &shmPeers);

  // Rank 0's request, to every rank (length 0: nothing to measure).
  std::vector<uint8_t> blob;
  if (me == 0 && result) {
    Request q;
    for (size_t s = 0; s < opts.sizes.size(); ++s) {
      std::vector<uint32_t> t;
      for (size_t c : tune::measureCandidates(*result, s, mo.top)) {
        t.push_back(uint32_t(c));
        q.plans.emplace(uint32_t(c), result->candidates[c].plan);
      }
      q.timed.push_back(std::move(t));
    }
    blob = encode(q);
  }
  uint64_t length = blob.size();
  patientBcast(&length, 1, MPI_UINT64_T, comm);
  if (length == 0)
    return {};
  blob.resize(length);
  MPI_Bcast(blob.data(), int(length), MPI_BYTE, 0, comm);
  const Request q = decode(blob);

  // Every plan loaded on every rank; a plan the runtime refuses anywhere is
  // not timed.
  std::map<uint32_t, collc_plan> plans;
  for (const auto &[c, bytes] : q.plans) {
    collc_plan p = nullptr;
    int bad = collc_plan_load_memory(bytes.data(), bytes.size(), &p) != COLLC_SUCCESS;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm);
    if (!bad)
      plans[c] = p;
    else if (p)
      collc_plan_free(&p);
  }

  // Order-preserving plans are timed with an operation that is not
  // commutative, as the users they are for will run them: collc-bench's 2x2
  // matrix product, a user op on 16-byte elements.
  const std::optional<rt::ElemType> et = rt::parseElemType(opts.dtype);
  const bool matrix = opts.noncommutative && ir::reduces(opts.collective);
  const bench::Workload w =
      matrix ? bench::matrixWorkload() : bench::builtinWorkload(rt::ReduceOp::Sum, *et);
  const bench::CallKind kind = callKindOf(opts.collective);
  const int root = ir::hasRoot(opts.collective) ? int(opts.root) : 0;
  std::vector<tune::Measurement> out;
  for (size_t s = 0; s < opts.sizes.size(); ++s) {
    tune::Measurement m;
    m.timed.assign(q.timed[s].begin(), q.timed[s].end());
    m.times.assign(m.timed.size(), -1);
    m.native = -1;
    // Rank 0's clock decides whether the budget allows this size.
    int go = 1;
    if (me == 0)
      go = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
           mo.budget;
    MPI_Bcast(&go, 1, MPI_INT, 0, comm);
    if (!go) {
      out.push_back(std::move(m)); // not measured: the model's choice stays
      continue;
    }
    const uint64_t count = std::max<uint64_t>(1, opts.sizes[s] / w.extent);
    bench::Call call(kind, w, comm, count, /*inPlace=*/false, root);
    call.prepare(0);
    // Contestant 0 is native MPI; then the plans.
    std::vector<std::function<int()>> runs;
    runs.push_back([&] { return call.native() == MPI_SUCCESS ? 0 : 1; });
    for (uint32_t c : q.timed[s]) {
      auto it = plans.find(c);
      collc_plan p = it == plans.end() ? nullptr : it->second;
      runs.push_back([&call, p] { return p ? call.collc(p, 0, nullptr) : 1; });
    }
    // Warm up each once; as many calls per turn as take about 5 ms natively.
    for (auto &run : runs)
      (void)run();
    const double once = timeTurn(runs[0], 1, comm);
    const int iters = int(std::clamp(std::ceil(5e-3 / std::max(once, 1e-7)), 1.0, 200.0));
    if (mo.progress && me == 0) {
      *mo.progress << "collc tune: measuring " << tune::formatBytes(opts.sizes[s])
                   << (matrix ? " with a non-commutative user op (2x2 matrix product)" : "")
                   << ": native";
      for (uint32_t c : q.timed[s])
        *mo.progress << ", " << result->candidates[c].name;
      *mo.progress << llvm::formatv(" ({0} rounds of {1} calls)\n", mo.rounds, iters);
      mo.progress->flush();
    }
    std::vector<std::vector<double>> times(runs.size());
    for (uint32_t round = 0; round < mo.rounds; ++round)
      for (size_t k = 0; k < runs.size(); ++k) {
        const size_t j = (k + round) % runs.size();
        times[j].push_back(timeTurn(runs[j], iters, comm));
      }
    auto summary = [](const std::vector<double> &v) {
      return std::any_of(v.begin(), v.end(), [](double t) { return t < 0; }) ? -1.0
                                                                              : median(v);
    };
    m.native = summary(times[0]);
    for (size_t j = 0; j < m.timed.size(); ++j)
      m.times[j] = summary(times[j + 1]);
    out.push_back(std::move(m));
  }
  for (auto &[c, p] : plans)
    collc_plan_free(&p);
  if (matrix)
    bench::freeMatrixWorkload();
  if (me != 0)
    return {};
  return out;
}

} // namespace collc::tool
