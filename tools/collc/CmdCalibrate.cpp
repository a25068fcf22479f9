// tools/collc/CmdCalibrate.cpp: `collc calibrate` — measure this machine (or an
// allocation) under MPI and write its topology (docs/topology.md, "collc
// calibrate").
//
// Run as `mpirun -np P collc calibrate -o machine.yaml`. The ranks find the
// nodes (MPI_Comm_split_type shared), then time ping-pongs between one pair
// of ranks per level they can see — two ranks of one node, and rank 0 with
// the first rank of another node — at sizes 0 B, 1 B, 4 B, ... up to
// --max-bytes (powers of 4), the fastest of many round trips each, fit α and β per level (compiler/model/
// Calibration.h), time the runtime's reduce kernels and memcpy for γ and the
// copy bandwidth, and rank 0 writes the topology. Progress goes to stderr,
// the fits to stdout.
#include "tools/collc/Commands.h"

#include "compiler/model/Calibration.h"
#include "compiler/model/Topology.h"
#include "runtime/bytecode/Bundle.h"
#include "runtime/kernels/Kernels.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace collc::tool {

llvm::cl::SubCommand &CalibrateCommand() {
  static llvm::cl::SubCommand sub(
      "calibrate", "Measure the machine under mpirun (ping-pong per level, reduce kernels, "
                   "memcpy), fit α, β and γ, and write a topology (exit 0 written, 2 misuse "
                   "or an MPI error)");
  return sub;
}

namespace {
namespace cl = llvm::cl;
cl::opt<std::string> output("o", cl::desc("The topology file to write (default: standard "
                                          "output)"),
                            cl::value_desc("FILE"), cl::init("-"), cl::sub(CalibrateCommand()),
                            cl::cat(category()));
cl::opt<std::string> maxBytesFlag("max-bytes",
                                  cl::desc("Largest message and kernel size (default 64M)"),
                                  cl::value_desc("N"), cl::init("64M"),
                                  cl::sub(CalibrateCommand()), cl::cat(category()));
cl::opt<std::string> nameFlag("name", cl::desc("The topology's name (default 'this-machine')"),
                              cl::value_desc("NAME"), cl::init("this-machine"),
                              cl::sub(CalibrateCommand()), cl::cat(category()));

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Repetitions that take about `budget` seconds for an operation of `estimate` seconds.
/// At least 30: on a shared machine most repetitions are slowed by others.
int repsFor(double estimate, double budget = 0.1) {
  return static_cast<int>(std::clamp(budget / std::max(estimate, 1e-9), 30.0, 2000.0));
}

/// The fastest repetition: noise (other processes, interrupts) only adds time.
double fastest(const std::vector<double> &v) { return *std::min_element(v.begin(), v.end()); }

std::vector<uint64_t> sizesUpTo(uint64_t maxBytes) {
  std::vector<uint64_t> s = {0};
  for (uint64_t b = 1; b <= maxBytes; b *= 4)
    s.push_back(b);
  return s;
}

/// One-way times between ranks a and b for every size (the fastest round
/// trip / 2), known on every rank. Every rank of `comm` calls it.
std::vector<model::Sample> pingPong(MPI_Comm comm, int a, int b,
                                    const std::vector<uint64_t> &sizes, int me,
                                    llvm::StringRef level) {
  std::vector<model::Sample> out;
  std::vector<char> buf(sizes.back() ? sizes.back() : 1, 1);
  for (uint64_t bytes : sizes) {
    double oneWay = 0;
    if (me == a || me == b) {
      const int peer = me == a ? b : a;
      const int n = static_cast<int>(bytes);
      auto trip = [&] {
        if (me == a) {
          MPI_Send(buf.data(), n, MPI_BYTE, peer, 7, comm);
          MPI_Recv(buf.data(), n, MPI_BYTE, peer, 7, comm, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(buf.data(), n, MPI_BYTE, peer, 7, comm, MPI_STATUS_IGNORE);
          MPI_Send(buf.data(), n, MPI_BYTE, peer, 7, comm);
        }
      };
      // Warm up, estimate, then time round trips one by one; both ends agree
      // on the count (rank a's estimate).
      trip();
      double t0 = now();
      trip();
      int reps = repsFor(now() - t0);
      if (me == a)
        MPI_Send(&reps, 1, MPI_INT, peer, 8, comm);
      else
        MPI_Recv(&reps, 1, MPI_INT, peer, 8, comm, MPI_STATUS_IGNORE);
      std::vector<double> times;
      for (int i = 0; i < reps; ++i) {
        t0 = now();
        trip();
        times.push_back((now() - t0) / 2);
      }
      oneWay = fastest(times);
    }
    MPI_Bcast(&oneWay, 1, MPI_DOUBLE, a, comm);
    out.push_back({double(bytes), oneWay});
    if (me == 0)
      llvm::errs() << llvm::formatv("collc calibrate: {0}: {1,9} B  {2,12:f3} us\n", level,
                                    bytes, oneWay * 1e6);
  }
  return out;
}

/// Seconds per byte of `run(bytes)` over sizes from 64 KiB up, by the fit.
template <class Fn>
model::LinearFit timeKernel(uint64_t maxBytes, llvm::StringRef what, Fn run) {
  std::vector<model::Sample> samples;
  for (uint64_t bytes = 64 * 1024; bytes <= std::max<uint64_t>(maxBytes, 256 * 1024);
       bytes *= 4) {
    run(bytes);
    double t0 = now();
    run(bytes);
    const int reps = repsFor(now() - t0, 0.03);
    std::vector<double> times;
    for (int i = 0; i < reps; ++i) {
      t0 = now();
      run(bytes);
      times.push_back(now() - t0);
    }
    samples.push_back({double(bytes), fastest(times)});
  }
  model::LinearFit f = model::fitLatencyBandwidth(samples);
  llvm::errs() << llvm::formatv("collc calibrate: {0}: {1:f2} GB/s\n", what,
                                f.beta > 0 ? 1e-9 / f.beta : 0.0);
  return f;
}

void printFit(llvm::StringRef level, const model::LinearFit &f, llvm::raw_ostream &os) {
  os << llvm::formatv("{0,-8} alpha {1,10:f3} us  beta {2,10:f4} ns/B ({3:f2} GB/s)  R^2 "
                      "{4:f5}  max error {5:f1}%\n",
                      level, f.alpha * 1e6, f.beta * 1e9, f.beta > 0 ? 1e-9 / f.beta : 0.0,
                      f.r2, f.maxRelativeError * 100);
}

int fail(const char *what, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  llvm::errs() << "collc: calibrate: " << what << ": " << llvm::StringRef(text, len) << '\n';
  return Misuse;
}

} // namespace

int runCalibrate() {
  uint64_t maxBytes = 0;
  if (!rt::parseByteCount(maxBytesFlag.getValue(), maxBytes) || maxBytes > (1u << 30))
    return reportMisuse(llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("--max-bytes '{0}' is not a size up to 1G", maxBytesFlag.getValue())
            .str()));
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    if (int rc = MPI_Init(nullptr, nullptr); rc != MPI_SUCCESS)
      return fail("MPI_Init", rc);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int me = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &p);

  // Nodes: a shared-memory communicator per node; its rank 0 numbers it.
  MPI_Comm node;
  if (int rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL,
                                   &node);
      rc != MPI_SUCCESS)
    return fail("MPI_Comm_split_type", rc);
  int local = 0, perNode = 1;
  MPI_Comm_rank(node, &local);
  MPI_Comm_size(node, &perNode);
  int leader = local == 0 ? me : -1, nodeId = 0;
  std::vector<int> leaders(p), locals(p), nodeIds(p, 0);
  MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, MPI_COMM_WORLD);
  MPI_Allgather(&local, 1, MPI_INT, locals.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int nodes = 0;
  for (int r = 0; r < p; ++r)
    if (leaders[r] >= 0)
      ++nodes;
  // Node numbers in order of their first rank.
  {
    std::vector<int> first;
    for (int r = 0; r < p; ++r)
      if (leaders[r] >= 0)
        first.push_back(r);
    int leaderRank = me;
    MPI_Bcast(&leaderRank, 1, MPI_INT, 0, node); // the world rank of the node's local rank 0
    nodeId = static_cast<int>(std::find(first.begin(), first.end(), leaderRank) - first.begin());
    MPI_Allgather(&nodeId, 1, MPI_INT, nodeIds.data(), 1, MPI_INT, MPI_COMM_WORLD);
  }
  int maxPerNode = 0;
  MPI_Allreduce(&perNode, &maxPerNode, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (me == 0)
    llvm::errs() << llvm::formatv("collc calibrate: {0} ranks on {1} node(s)\n", p, nodes);

  const std::vector<uint64_t> sizes = sizesUpTo(maxBytes);
  model::Topology t;
  t.name = nameFlag;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  t.description = llvm::formatv("measured by collc calibrate: {0} ranks on {1} node(s), {2} "
                                "hardware threads per node",
                                p, nodes, cores)
                      .str();
  std::vector<model::LinearFit> fits;
  // Inside a node: the first node with two ranks, its first two.
  int a = -1, b = -1;
  for (int r = 0; r < p && b < 0; ++r)
    for (int q = r + 1; q < p; ++q)
      if (nodeIds[q] == nodeIds[r]) {
        a = r, b = q;
        break;
      }
  model::Level nodeLevel{"node", static_cast<uint32_t>(std::max<unsigned>(maxPerNode, cores)),
                         0, 0, 1};
  std::string report;
  llvm::raw_string_ostream rep(report);
  if (a >= 0) {
    model::LinearFit f = model::fitLatencyBandwidth(
        pingPong(MPI_COMM_WORLD, a, b, sizes, me, "node"));
    nodeLevel.alpha = f.alpha;
    nodeLevel.beta = f.beta;
    printFit("node", f, rep);
  }
  t.levels.push_back(nodeLevel);
  if (nodes > 1) {
    int other = -1;
    for (int r = 0; r < p; ++r)
      if (nodeIds[r] != nodeIds[0]) {
        other = r;
        break;
      }
    model::LinearFit f = model::fitLatencyBandwidth(
        pingPong(MPI_COMM_WORLD, 0, other, sizes, me, "network"));
    printFit("network", f, rep);
    // One NIC per node: the node's ranks share it.
    t.levels.push_back({"network", static_cast<uint32_t>(nodes), f.alpha, f.beta,
                        static_cast<uint32_t>(nodeLevel.size)});
    if (a < 0) { // one rank per node: nothing measured inside
      t.levels[0].alpha = f.alpha;
      t.levels[0].beta = f.beta;
    }
  } else if (a < 0) {
    if (me == 0)
      llvm::errs() << "collc calibrate: one rank: no messages to time (run it under mpirun "
                      "-np 2 or more); the node level gets latency 0 and bandwidth inf\n";
  }

  // Local work, on rank 0: the reduce kernels (sum) per datatype, and memcpy.
  if (me == 0) {
    const uint64_t kernelMax = std::max<uint64_t>(maxBytes, 256 * 1024);
    std::vector<char> x(kernelMax, 1), y(kernelMax, 2), z(kernelMax);
    auto kernelFit = [&](rt::ElemType et) {
      rt::KernelFn fn = rt::findKernel(rt::ReduceOp::Sum, et);
      const size_t size = rt::elemSize(et);
      std::memset(x.data(), 0, x.size());
      std::memset(y.data(), 0, y.size());
      return timeKernel(kernelMax, rt::elemTypeName(et), [&](uint64_t bytes) {
        fn(x.data(), y.data(), z.data(), bytes / size);
      });
    };
    model::LinearFit d = kernelFit(rt::ElemType::Double);
    t.gamma = d.beta;
    printFit("double", d, rep);
    for (rt::ElemType et : {rt::ElemType::Float, rt::ElemType::Int32, rt::ElemType::Int64}) {
      model::LinearFit f = kernelFit(et);
      t.gammaByType.push_back({std::string(rt::elemTypeName(et)), f.beta});
      printFit(rt::elemTypeName(et), f, rep);
    }
    model::LinearFit c = timeKernel(kernelMax, "memcpy", [&](uint64_t bytes) {
      std::memcpy(z.data(), x.data(), bytes);
    });
    t.copyBeta = c.beta;
    printFit("copy", c, rep);
  }

  // Placement: block when each node holds consecutive ranks from its first.
  bool block = true;
  for (int r = 0; r < p; ++r)
    block = block && nodeIds[r] == r / maxPerNode && locals[r] == r % maxPerNode;
  if (!block) {
    t.mapping = model::Mapping::Explicit;
    for (int r = 0; r < p; ++r) {
      std::vector<uint32_t> loc = {static_cast<uint32_t>(locals[r])};
      if (t.levels.size() > 1)
        loc.push_back(static_cast<uint32_t>(nodeIds[r]));
      t.map.push_back(std::move(loc));
    }
  }
  int code = Success;
  if (me == 0) {
    llvm::outs() << "collc calibrate: fits (one-way time = alpha + bytes * beta; kernels: "
                    "time = alpha + bytes * gamma)\n"
                 << rep.str();
    llvm::outs().flush();
    if (std::optional<std::string> why = model::checkTopology(t)) {
      llvm::errs() << "collc: calibrate: the measured topology is not valid: " << *why << '\n';
      code = Misuse;
    } else if (!writeOutput(output, model::printTopology(t))) {
      code = Misuse;
    } else if (output != "-") {
      llvm::errs() << "collc calibrate: wrote " << output << '\n';
    }
  }
  MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Comm_free(&node);
  MPI_Finalize();
  return code;
}

} // namespace collc::tool
