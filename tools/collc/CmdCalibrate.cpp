// tools/collc/CmdCalibrate.cpp: `collc calibrate` — measure this machine (or an
// allocation) under MPI and write its topology (docs/topology.md, "collc
// calibrate").
//
// Run as `mpirun -np P collc calibrate -o machine.yaml`. The ranks find the
// nodes (MPI_Comm_split_type shared), then time ping-pongs between one pair
// of ranks per level they can see — two ranks of one node, and rank 0 with
// the first rank of another node — at sizes 0 B, 1 B, 4 B, ... up to
// --max-bytes (powers of 4), the fastest of many round trips each, fit α and
// β per level (model/Calibration.h), time the runtime's reduce
// kernels and memcpy for γ and the copy bandwidth, and rank 0 writes the
// topology. Progress goes to stderr, the fits to stdout.
//
// The messages are timed as plans send them (--transport collc, the default):
// a round trip is two 2-rank broadcasts run by collc's runtime, one from each
// end, so α and β are those of the transport the runtime picks for the pair
// (shared memory inside a node, MPI across) including the runtime's cost per
// message; --transport mpi times MPI_Send/MPI_Recv instead.
#include "tools/collc/Commands.h"

#include "compiler/Lower.h"
#include "compiler/Prove.h"
#include "model/Calibration.h"
#include "model/Topology.h"
#include "runtime/bytecode/Bundle.h"
#include "runtime/kernels/Kernels.h"
#include "schedules/Generators.h"

#include "collc/collc.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
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
enum class Via { Collc, Mpi };
cl::opt<Via> transportFlag(
    "transport", cl::desc("How messages are timed (default collc)"),
    cl::values(clEnumValN(Via::Collc, "collc",
                          "as plans send them: 2-rank broadcasts run by collc's runtime, "
                          "over the transport it picks (shared memory inside a node)"),
               clEnumValN(Via::Mpi, "mpi", "MPI_Send and MPI_Recv")),
    cl::init(Via::Collc), cl::sub(CalibrateCommand()), cl::cat(category()));
cl::opt<std::string> shapeFlag(
    "topology",
    cl::desc("Keep this topology's levels, sizes, share and mapping, and measure the costs "
             "of every level some pair of ranks crosses (the others keep the file's)"),
    cl::value_desc("FILE"), cl::sub(CalibrateCommand()), cl::cat(category()));
cl::opt<std::string> nameFlag("name", cl::desc("The topology's name (default 'this-machine', or "
                                               "the --topology file's)"),
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

/// Round trips between two ranks, one call per trip: `trip(bytes)` on both.
class Tripper {
public:
  virtual ~Tripper() = default;
  /// One round trip of `bytes` (rank a sends first); false with `error` on failure.
  virtual bool trip(uint64_t bytes, std::string &error) = 0;
};

/// MPI_Send / MPI_Recv.
class MpiTripper final : public Tripper {
public:
  MpiTripper(MPI_Comm comm, bool first, int peer, size_t maxBytes)
      : comm(comm), first(first), peer(peer), buf(std::max<size_t>(maxBytes, 1), 1) {}
  bool trip(uint64_t bytes, std::string &error) override {
    const int n = static_cast<int>(bytes);
    int rc = MPI_SUCCESS;
    if (first) {
      rc = MPI_Send(buf.data(), n, MPI_BYTE, peer, 7, comm);
      if (rc == MPI_SUCCESS)
        rc = MPI_Recv(buf.data(), n, MPI_BYTE, peer, 7, comm, MPI_STATUS_IGNORE);
    } else {
      rc = MPI_Recv(buf.data(), n, MPI_BYTE, peer, 7, comm, MPI_STATUS_IGNORE);
      if (rc == MPI_SUCCESS)
        rc = MPI_Send(buf.data(), n, MPI_BYTE, peer, 7, comm);
    }
    if (rc != MPI_SUCCESS)
      error = "MPI_Send/MPI_Recv failed";
    return rc == MPI_SUCCESS;
  }

private:
  MPI_Comm comm;
  bool first;
  int peer;
  std::vector<char> buf;
};

/// Two 2-rank broadcasts through collc's runtime on a communicator of the
/// pair: from rank 0 of `pair`, then from rank 1 — the message goes there and
/// back over whatever transport the runtime uses between the two.
class CollcTripper final : public Tripper {
public:
  ~CollcTripper() override {
    for (collc_plan &p : plans)
      if (p)
        collc_plan_free(&p);
  }
  /// The plans (the library's binomial broadcast, proven, from each root);
  /// false with `error` when they cannot be made.
  bool init(MPI_Comm pairComm, size_t maxBytes, std::string &error) {
    pair = pairComm;
    buf.assign(std::max<size_t>(maxBytes, 1), 1);
    for (uint32_t root = 0; root < 2; ++root) {
      sched::GenOptions o;
      o.ranks = 2;
      o.root = root;
      llvm::Expected<ir::Plan> plan = sched::generate(ir::Collective::Bcast, "binomial", o);
      if (!plan) {
        error = llvm::toString(plan.takeError());
        return false;
      }
      compiler::Proven proven = compiler::proveStrongest(*plan);
      if (!proven.result.proven()) {
        error = "the 2-rank binomial broadcast does not verify";
        return false;
      }
      std::vector<uint8_t> bytes = compiler::lower(*plan, proven.proof);
      if (int rc = collc_plan_load_memory(bytes.data(), bytes.size(), &plans[root]); rc) {
        error = std::string(collc_strerror(rc)) + ": " + collc_error_message();
        return false;
      }
    }
    return true;
  }
  bool trip(uint64_t bytes, std::string &error) override {
    for (int root = 0; root < 2; ++root)
      if (int rc = collc_bcast(plans[root], buf.data(), static_cast<MPI_Count>(bytes), MPI_BYTE,
                               root, pair);
          rc) {
        error = std::string("collc_bcast: ") + collc_strerror(rc) + ": " + collc_error_message();
        return false;
      }
    return true;
  }

private:
  MPI_Comm pair = MPI_COMM_NULL;
  collc_plan plans[2] = {nullptr, nullptr};
  std::vector<char> buf;
};

/// One-way times between ranks a and b for every size (the fastest round
/// trip / 2), known on every rank; false with `error` (on rank 0) when the
/// messages cannot be timed. Every rank of `comm` calls it.
bool pingPong(MPI_Comm comm, int a, int b, const std::vector<uint64_t> &sizes, int me,
              llvm::StringRef level, std::vector<model::Sample> &out, std::string &error) {
  const bool inPair = me == a || me == b;
  MPI_Comm pair = MPI_COMM_NULL;
  MPI_Comm_split(comm, inPair ? 0 : MPI_UNDEFINED, me == a ? 0 : 1, &pair);
  std::unique_ptr<Tripper> tripper;
  int ok = 1;
  std::string why;
  if (inPair) {
    if (transportFlag == Via::Mpi) {
      tripper = std::make_unique<MpiTripper>(pair, me == a, 1 - (me == a ? 0 : 1),
                                             sizes.back());
    } else {
      auto c = std::make_unique<CollcTripper>();
      ok = c->init(pair, sizes.back(), why);
      tripper = std::move(c);
    }
  }
  // Both ends (and everybody) agree whether to go on.
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
  for (uint64_t bytes : sizes) {
    if (!ok)
      break;
    double oneWay = 0;
    if (inPair) {
      // Warm up, estimate, then time round trips one by one; both ends agree
      // on the count (the larger estimate's).
      ok = tripper->trip(bytes, why) && tripper->trip(bytes, why);
      double t0 = now();
      ok = ok && tripper->trip(bytes, why);
      int reps = repsFor(now() - t0);
      MPI_Allreduce(MPI_IN_PLACE, &reps, 1, MPI_INT, MPI_MIN, pair);
      std::vector<double> times;
      for (int i = 0; i < reps && ok; ++i) {
        t0 = now();
        ok = tripper->trip(bytes, why);
        times.push_back((now() - t0) / 2);
      }
      oneWay = times.empty() ? 0 : fastest(times);
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    MPI_Bcast(&oneWay, 1, MPI_DOUBLE, a, comm);
    out.push_back({double(bytes), oneWay});
    if (me == 0 && ok)
      llvm::errs() << llvm::formatv("collc calibrate: {0}: {1,9} B  {2,12:f3} us\n", level,
                                    bytes, oneWay * 1e6);
  }
  tripper.reset();
  if (pair != MPI_COMM_NULL)
    MPI_Comm_free(&pair);
  if (!ok) {
    // The reason is known where it happened: bring it to rank 0.
    int from = why.empty() ? -1 : me, src = -1;
    MPI_Allreduce(&from, &src, 1, MPI_INT, MPI_MAX, comm);
    int len = static_cast<int>(why.size());
    MPI_Bcast(&len, 1, MPI_INT, src, comm);
    why.resize(len);
    MPI_Bcast(why.data(), len, MPI_CHAR, src, comm);
    error = why;
  }
  return ok;
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

/// Rank 0's local work: the reduce kernels (sum) per datatype for γ, and memcpy
/// for the copy bandwidth, written into `t` and reported on `rep`.
void measureLocal(model::Topology &t, uint64_t maxBytes, llvm::raw_ostream &rep) {
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

int fail(const char *what, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  llvm::errs() << "collc: calibrate: " << what << ": " << llvm::StringRef(text, len) << '\n';
  return Misuse;
}

/// Ends the run on every rank after a failure every rank knows of.
int stop(const std::string &why, MPI_Comm &node) {
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  if (me == 0)
    llvm::errs() << "collc: calibrate: " << why << '\n';
  MPI_Comm_free(&node);
  MPI_Finalize();
  return Misuse;
}

/// Rank 0 prints the fits and writes the topology; every rank ends MPI.
int finish(const model::Topology &t, const std::string &report, MPI_Comm &node) {
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  int code = Success;
  if (me == 0) {
    llvm::outs() << "collc calibrate: fits (one-way time = alpha + bytes * beta; kernels: "
                    "time = alpha + bytes * gamma)\n"
                 << report;
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

/// --topology FILE: FILE's levels and placement, with the costs of every
/// level that a pair of ranks crosses measured between the first such pair
/// (rank 0 and the first rank across that level, where rank 0 has one), and
/// γ and the copy bandwidth measured on rank 0.
int calibrateShape(const std::vector<uint64_t> &sizes, uint64_t maxBytes, MPI_Comm &node) {
  int me = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  llvm::Expected<model::Topology> file = model::readTopologyFile(shapeFlag);
  if (!file)
    return stop(llvm::toString(file.takeError()), node);
  model::Topology t = std::move(*file);
  llvm::Expected<model::Placement> placed = model::place(t, static_cast<uint32_t>(p));
  if (!placed)
    return stop(llvm::formatv("{0}: {1}", shapeFlag.getValue(),
                              llvm::toString(placed.takeError()))
                    .str(),
                node);
  // The file's nodes should be MPI's: ranks of one level-0 group share memory.
  std::vector<int> nodeLeader(p);
  int leader = me;
  MPI_Bcast(&leader, 1, MPI_INT, 0, node);
  MPI_Allgather(&leader, 1, MPI_INT, nodeLeader.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (int a = 0; a < p && me == 0; ++a)
    for (int b = a + 1; b < p; ++b)
      if ((placed->levelOf(a, b) == 0) != (nodeLeader[a] == nodeLeader[b])) {
        llvm::errs() << llvm::formatv(
            "collc calibrate: warning: {0} puts ranks {1} and {2} {3} node, but MPI sees them "
            "{4}: the level costs are measured as MPI places the ranks\n",
            shapeFlag.getValue(), a, b, placed->levelOf(a, b) == 0 ? "in one" : "on different",
            nodeLeader[a] == nodeLeader[b] ? "sharing memory" : "on different nodes");
        a = p;
        break;
      }
  if (t.name.empty() || nameFlag.getNumOccurrences())
    t.name = nameFlag;
  t.description = llvm::formatv("{0}'s levels with costs measured by collc calibrate "
                                "--transport {1}: {2} ranks",
                                t.name, transportFlag == Via::Mpi ? "mpi" : "collc", p)
                      .str();
  std::string report, why;
  llvm::raw_string_ostream rep(report);
  std::vector<model::Sample> samples;
  for (uint32_t j = 0; j < t.levels.size(); ++j) {
    int a = -1, b = -1;
    for (int x = 0; x < p && a < 0; ++x)
      for (int y = x + 1; y < p; ++y)
        if (placed->levelOf(x, y) == j) {
          a = x, b = y;
          break;
        }
    const std::string &name = t.levels[j].name;
    if (a < 0) {
      rep << llvm::formatv("{0,-8} no pair of the {1} ranks crosses it: kept from {2}\n", name,
                           p, shapeFlag.getValue());
      continue;
    }
    samples.clear();
    if (!pingPong(MPI_COMM_WORLD, a, b, sizes, me, name, samples, why))
      return stop("timing messages across level " + name + ": " + why, node);
    model::LinearFit f = model::fitLatencyBandwidth(samples);
    t.levels[j].alpha = f.alpha;
    t.levels[j].beta = f.beta;
    printFit(name, f, rep);
  }
  if (me == 0)
    measureLocal(t, maxBytes, rep);
  return finish(t, rep.str(), node);
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

  std::vector<uint64_t> sizes = sizesUpTo(maxBytes);
  // A plan moves nothing for 0 bytes: its time is not a message's.
  if (transportFlag == Via::Collc)
    sizes.erase(sizes.begin());
  if (!shapeFlag.empty())
    return calibrateShape(sizes, maxBytes, node);
  model::Topology t;
  t.name = nameFlag;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  t.description =
      llvm::formatv("measured by collc calibrate --transport {3}: {0} ranks on {1} node(s), {2} "
                    "hardware threads per node",
                    p, nodes, cores, transportFlag == Via::Mpi ? "mpi" : "collc")
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
  std::string why;
  std::vector<model::Sample> samples;
  if (a >= 0) {
    if (!pingPong(MPI_COMM_WORLD, a, b, sizes, me, "node", samples, why))
      return stop("timing messages inside a node: " + why, node);
    model::LinearFit f = model::fitLatencyBandwidth(samples);
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
    samples.clear();
    if (!pingPong(MPI_COMM_WORLD, 0, other, sizes, me, "network", samples, why))
      return stop("timing messages between nodes: " + why, node);
    model::LinearFit f = model::fitLatencyBandwidth(samples);
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
  if (me == 0)
    measureLocal(t, maxBytes, rep);

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
  return finish(t, rep.str(), node);
}

} // namespace collc::tool
