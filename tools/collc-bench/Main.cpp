// tools/collc-bench/Main.cpp: collc-bench, compiled plans timed against the
// native MPI collective in the same run, on the same buffers.
//
// For each plan and size: warm-up, then --iters timed iterations of native
// MPI_Allreduce / MPI_Reduce and of the plan (collc_allreduce / collc_reduce,
// or a persistent request with --persistent), interleaved so that machine
// noise hits both alike. Each timed call is bracketed by MPI_Barrier; an
// iteration's time is the maximum over ranks, a row reports the median over
// iterations. --check then runs the plan once more on a poisoned output and
// compares it with the exact sequential fold (Workload.h). Links the collc
// runtime and MPI only.
#include "collc/collc.h"
#include "runtime/bytecode/Bundle.h"
#include "tools/collc-bench/Calls.h"
#include "tools/collc-bench/Workload.h"

#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using collc::bench::Workload;

namespace {

constexpr const char *kHelp = R"(collc-bench: time compiled collc plans against native MPI in the same run

USAGE: mpirun -np P collc-bench (--plan FILE | --plan-dir DIR)... [options]

Every rank must get the same arguments. Rank 0 prints one row per plan and size.

OPTIONS:
  --plan FILE      a compiled plan (.cplan, from `collc compile`); repeatable
  --plan-dir DIR   every *.cplan file in DIR, in name order (after the --plan
                   files); repeatable, the directories in the order given. A plan
                   that cannot be loaded is an error (exit 2) before any timing
  --dtype T        element type (default double): int8 uint8 int16 uint16 int32
                   uint32 int64 uint64 float double long_double float_complex
                   double_complex long_double_complex bool byte float_int
                   double_int long_int 2int short_int long_double_int, or a C
                   name (int, unsigned_long, long_long, signed_char, _Bool, ...)
  --op OP          sum (default) prod max min band bor bxor land lor lxor maxloc
                   minloc, or noncommutative: the 2x2 matrix product over uint32
                   modulo 2^32 (datatype mat2x2_uint32, a contiguous datatype of 4
                   MPI_UINT32_T; a user op made with MPI_Op_create(commute = 0):
                   associative, not commutative); or usersum: MPI_SUM on double as
                   a user op (MPI_Op_create(commute = 1)). MPI must define OP on T.
  --collective C   time every plan as the MPI call C: allreduce, reduce,
                   reduce_scatter_block, reduce_scatter (evenly split recvcounts),
                   scan, exscan, allgather, bcast, alltoall, gather, scatter,
                   allgatherv (on an allgather plan, evenly split recvcounts),
                   gatherv, scatterv or alltoallv (on a gather, scatter or
                   alltoall plan that moves each rank's own blocks only, evenly
                   split counts) or barrier (no data: each size runs the same
                   zero-byte barrier)
                   (default: each plan's own collective; a reduce_scatter_block plan as
                   MPI_Reduce_scatter_block). A plan for another collective gives a
                   refused row.
  --sizes LIST     vector sizes in bytes, comma separated, with optional K, M, G
                   suffixes (powers of 1024) (default 8,64K,1M): the whole vector —
                   allreduce, reduce, scan, exscan, bcast: the buffer; the
                   reduce-scatters: each rank's input, of which it gets 1/P;
                   allgather and gather: the result, of which each rank gives 1/P;
                   alltoall: each rank's input (and output), P blocks; scatter: the
                   root's input, of which each rank gets 1/P. The element
                   count is floor(size / element size) (rounded down to a multiple
                   of P where blocks are per rank); the bytes column is what was
                   run. A size smaller than one element (but not 0)
                   is an error, or with --all-pairs a refused row for that pair.
  --iters N        timed iterations per plan and size (default 20)
  --warmup N       untimed iterations before them (default 3)
  --in-place       MPI_IN_PLACE as each MPI call defines it (reduce: the root;
                   bcast: ignored); the input is restored before every call,
                   outside the timed region
  --persistent     time the persistent form (collc_allreduce_init, ...) once,
                   then collc_start + collc_wait per iteration, instead of the
                   blocking call
  --check          after timing, run the plan once more on an output filled with
                   0xa5 and compare it with the collective's sequential model: the
                   fold x_0 o x_1 o ... o x_{P-1} in rank order (scan: up to x_r,
                   exscan: up to x_{r-1}; reduce-scatters: rank r's block of it),
                   allgather's and gather's blocks, bcast's root input, the
                   alltoall's and scatter's blocks, computed on every rank
                   by a scalar model
                   of the operation (neither collc's kernels nor MPI's) from inputs
                   each rank regenerates from (rank, index). The inputs make every
                   reduction order give the same bits (floating point: integers in
                   [-8, 8], +-1 and +-2 for prod; pairs: small values with ties),
                   so the comparison is exact — no tolerance — field by field
                   (padding is not compared). Native MPI is checked the same way;
                   if it is wrong, a note goes to stderr (Open MPI 4.1's op/avx
                   sums 8- and 16-bit integers with saturation) but the row's ok
                   is the plan's verdict.
  --all-pairs      run every (op, datatype) pair MPI defines and collc has a kernel
                   for, then the noncommutative op, instead of --dtype / --op
                   (with --check: the whole table in one run)
  --json           one JSON object per row instead of the table
  --help           this text

COLUMNS:
  native_us, plan_us  median over iterations of the slowest rank's time, in microseconds
  ratio               plan_us / native_us
  bound_us            memory-bandwidth lower bound: rank 0 times memcpy of `bytes`
                      bytes (best of 5) before the runs; an allreduce (and the root of
                      a reduce) must at least read two vectors and write one, memcpy
                      reads one and writes one, so bound = 1.5 x t_memcpy (P = 1: a
                      copy, 1.0 x; P = 1 in place: 0). It ignores latency, messages
                      and the sharing of cores among ranks: a loose lower bound.
  ok                  the --check verdict: yes / NO, or - (not checked, or refused)

A plan that does not fit the run (its rank count or root is not the
communicator's) or that refuses the operation (a plan that needs commutativity
with --op noncommutative) gives a row with collc's message instead of times.

EXIT STATUS: 0 when every checked row is ok, 1 when a checked row is wrong or a
plan fails with anything but such a refusal, 2 on a usage error or a plan that
cannot be loaded.
)";

struct Options {
  std::vector<std::string> plans;
  std::vector<std::string> planDirs;
  std::string dtype, op = "sum";
  std::vector<size_t> sizes = {8, 64 << 10, 1 << 20};
  int iters = 20, warmup = 3;
  bool inPlace = false, persistent = false, check = false, json = false, help = false;
  bool allPairs = false;
  /// --collective: the MPI call every plan is timed as (else its own).
  std::optional<collc::bench::CallKind> collective;
};

bool parseInt(const std::string &s, int &out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

/// Parses argv; returns "" or the usage error.
std::string parseArgs(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    bool hasValue = false;
    if (size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      hasValue = true;
    }
    auto takeValue = [&]() -> bool {
      if (hasValue)
        return true;
      if (i + 1 >= argc)
        return false;
      value = argv[++i];
      return true;
    };
    auto flag = [&](bool &f) -> std::string {
      if (hasValue)
        return arg + " takes no value";
      f = true;
      return "";
    };
    std::string err;
    if (arg == "--help" || arg == "-h") {
      err = flag(o.help);
    } else if (arg == "--in-place") {
      err = flag(o.inPlace);
    } else if (arg == "--persistent") {
      err = flag(o.persistent);
    } else if (arg == "--check") {
      err = flag(o.check);
    } else if (arg == "--json") {
      err = flag(o.json);
    } else if (arg == "--all-pairs") {
      err = flag(o.allPairs);
    } else if (arg == "--plan" || arg == "--plan-dir" || arg == "--dtype" || arg == "--op" ||
               arg == "--sizes" || arg == "--iters" || arg == "--warmup" ||
               arg == "--collective") {
      if (!takeValue())
        return arg + " needs a value";
      if (arg == "--plan") {
        o.plans.push_back(value);
      } else if (arg == "--plan-dir") {
        o.planDirs.push_back(value);
      } else if (arg == "--dtype") {
        o.dtype = value;
      } else if (arg == "--collective") {
        o.collective = collc::bench::parseCallKind(value);
        if (!o.collective)
          return "--collective: unknown collective '" + value +
                 "' (allreduce, reduce, reduce_scatter_block, reduce_scatter, scan, exscan, "
                 "allgather, bcast, alltoall, gather, scatter, allgatherv)";
      } else if (arg == "--op") {
        o.op = value;
      } else if (arg == "--sizes") {
        o.sizes.clear();
        size_t at = 0;
        while (at <= value.size()) {
          size_t comma = value.find(',', at);
          std::string item = value.substr(at, comma == std::string::npos ? std::string::npos
                                                                           : comma - at);
          uint64_t bytes = 0; // "8", "64K", "1M", "2G" (powers of 1024)
          if (!collc::rt::parseByteCount(item, bytes) || bytes > SIZE_MAX)
            return "--sizes: '" + item + "' is not a size (bytes, optional K/M/G suffix)";
          o.sizes.push_back(size_t(bytes));
          if (comma == std::string::npos)
            break;
          at = comma + 1;
        }
      } else {
        int &n = arg == "--iters" ? o.iters : o.warmup;
        if (!parseInt(value, n) || n < (arg == "--iters" ? 1 : 0))
          return arg + ": '" + value + "' is not a " +
                 (arg == "--iters" ? "positive" : "non-negative") + " integer";
      }
    } else {
      return "unknown argument '" + std::string(argv[i]) + "'";
    }
    if (!err.empty())
      return err;
  }
  if (o.help)
    return "";
  for (const std::string &dir : o.planDirs) {
    std::error_code ec;
    std::vector<std::string> found;
    std::filesystem::directory_iterator it(dir, ec), end;
    for (; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".cplan")
        found.push_back(it->path().string());
    if (ec)
      return "--plan-dir: cannot read '" + dir + "': " + ec.message();
    std::sort(found.begin(), found.end());
    if (found.empty())
      return "--plan-dir: no *.cplan files in '" + dir + "'";
    o.plans.insert(o.plans.end(), found.begin(), found.end());
  }
  if (o.plans.empty())
    return "no plans: give --plan FILE or --plan-dir DIR";
  return "";
}

// --- buffers ------------------------------------------------------------------------

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};
using Bytes = std::unique_ptr<char[], FreeDeleter>;

/// 64-byte aligned, at least one cache line, zeroed (pages faulted in).
Bytes allocate(size_t bytes) {
  size_t rounded = (bytes + 63) / 64 * 64 + 64;
  auto *p = static_cast<char *>(std::aligned_alloc(64, rounded));
  if (!p) {
    std::fprintf(stderr, "collc-bench: out of memory (%zu bytes)\n", bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  std::memset(p, 0, rounded);
  return Bytes(p);
}

// --- the memory-bandwidth bound -------------------------------------------------------

/// Seconds for one memcpy of `bytes` bytes, best of 5 batches (rank 0 alone).
double memcpySeconds(size_t bytes) {
  if (bytes == 0)
    return 0;
  Bytes src = allocate(bytes), dst = allocate(bytes);
  std::memset(src.get(), 1, bytes);
  // A batch moves at least 64 MiB, so that a small copy is timed many times over.
  const size_t reps = std::max<size_t>(1, (size_t(64) << 20) / bytes);
  double best = 1e30;
  for (int batch = 0; batch < 6; ++batch) { // the first batch warms up
    double t0 = MPI_Wtime();
    for (size_t r = 0; r < reps; ++r) {
      std::memcpy(dst.get(), src.get(), bytes);
      asm volatile("" : : "r"(dst.get()) : "memory"); // keep every copy
    }
    double t = (MPI_Wtime() - t0) / double(reps);
    if (batch > 0)
      best = std::min(best, t);
  }
  return best;
}

// --- rows -----------------------------------------------------------------------------

struct Row {
  std::string plan, collective = "?", algorithm = "?";
  int ranks = 0, root = -1;
  size_t bytes = 0;
  std::optional<double> nativeUs, planUs;
  double boundUs = 0;
  std::optional<bool> ok;
  std::string error;
  bool refused = false; ///< a shape or operation refusal, not a failure
};

std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      out += esc;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

std::string number(std::optional<double> v, const char *none) {
  if (!v)
    return none;
  char text[32];
  std::snprintf(text, sizeof text, *v < 1 ? "%.3f" : *v < 100 ? "%.2f" : "%.1f", *v);
  return text;
}

void printJson(const Row &r, const Workload &w, bool inPlace, bool persistent) {
  std::printf("{\"collective\": %s, \"algorithm\": %s, \"ranks\": %d, \"bytes\": %zu, "
              "\"dtype\": %s, \"op\": %s, \"native_us\": %s, \"plan_us\": %s, \"ok\": %s, "
              "\"plan\": %s, \"root\": %d, \"bound_us\": %s, \"in_place\": %s, "
              "\"persistent\": %s",
              jsonString(r.collective).c_str(), jsonString(r.algorithm).c_str(), r.ranks,
              r.bytes, jsonString(w.typeName).c_str(), jsonString(w.opName).c_str(),
              number(r.nativeUs, "null").c_str(), number(r.planUs, "null").c_str(),
              r.ok ? (*r.ok ? "true" : "false") : "null", jsonString(r.plan).c_str(),
              r.root, number(r.boundUs, "null").c_str(), inPlace ? "true" : "false",
              persistent ? "true" : "false");
  if (!r.error.empty())
    std::printf(", \"error\": %s", jsonString(r.error).c_str());
  std::printf("}\n");
}

constexpr const char *kTableFormat = "%-24s %-22s %5s %10s %-8s %-6s %10s %10s %6s %9s %4s";

void printTableHeader() {
  std::printf(kTableFormat, "plan", "algorithm", "ranks", "bytes", "dtype", "op", "native_us",
              "plan_us", "ratio", "bound_us", "ok");
  std::printf("\n");
}

void printTableRow(const Row &r, const Workload &w) {
  std::string ratio = "-";
  if (r.nativeUs && r.planUs && *r.nativeUs > 0) {
    char text[16];
    std::snprintf(text, sizeof text, "%.2f", *r.planUs / *r.nativeUs);
    ratio = text;
  }
  std::string plan = r.plan, alg = r.algorithm;
  if (r.collective == "reduce" || r.collective == "bcast")
    alg = r.collective + "/" + alg + "@" + std::to_string(r.root);
  else if (r.collective != "allreduce")
    alg = r.collective + "/" + alg;
  std::printf(kTableFormat, plan.c_str(), alg.c_str(), std::to_string(r.ranks).c_str(),
              std::to_string(r.bytes).c_str(), w.typeName.c_str(), w.opName.c_str(),
              number(r.nativeUs, "-").c_str(), number(r.planUs, "-").c_str(), ratio.c_str(),
              number(r.boundUs, "-").c_str(), r.ok ? (*r.ok ? "yes" : "NO") : "-");
  if (!r.error.empty())
    std::printf("  %s%s", r.refused ? "refused: " : "ERROR: ", r.error.c_str());
  std::printf("\n");
}

// --- running ------------------------------------------------------------------------

/// All ranks agree on the first failure (lowest failing rank): its code and message.
int agree(int rc, std::string &message, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = rc != 0 ? rank : size, first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size)
    return 0;
  int len = int(message.size());
  MPI_Bcast(&rc, 1, MPI_INT, first, comm);
  MPI_Bcast(&len, 1, MPI_INT, first, comm);
  message.resize(size_t(len));
  MPI_Bcast(message.data(), len, MPI_CHAR, first, comm);
  return rc;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

struct Bench {
  Options opt;
  Workload w;
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0, size = 1;
  std::map<size_t, double> memcpyUs; ///< per size, from rank 0
  std::vector<collc_plan> plans;      ///< opt.plans, loaded

  Row run(collc_plan plan, const collc_plan_info &info, size_t requested, std::string name);
};

[[noreturn]] void abortWith(const char *what, int rc) {
  std::fprintf(stderr, "collc-bench: %s failed during the timed runs: %s: %s\n", what,
               collc_strerror(rc), collc_error_message());
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

Row Bench::run(collc_plan plan, const collc_plan_info &info, size_t requested,
               std::string name) {
  using collc::bench::CallKind;
  Row row;
  row.plan = std::move(name);
  // The MPI call: --collective, or the plan's own collective.
  std::optional<CallKind> kind = opt.collective;
  if (!kind)
    for (CallKind k : collc::bench::allCallKinds)
      if (collc::bench::planCollective(k) == info.collective &&
          !collc::bench::Call::varies(k)) {
        kind = k;
        break;
      }
  row.collective = kind ? collc::bench::name(*kind) : "?";
  row.algorithm = info.algorithm;
  row.ranks = info.ranks;
  row.root = info.root;
  const size_t count = requested / w.extent;
  row.bytes = count * w.extent;
  row.boundUs = memcpyUs[requested] * (size == 1 ? (opt.inPlace ? 0.0 : 1.0) : 1.5);
  if (count == 0 && requested > 0) {
    row.error = std::to_string(requested) + " bytes is less than one " + w.typeName +
                " element (" + std::to_string(w.extent) + " bytes)";
    row.refused = true;
    return row;
  }
  if (!kind || collc::bench::planCollective(*kind) != info.collective) {
    row.error = "the plan is not for " + row.collective;
    row.refused = true;
    return row;
  }
  if (count > size_t(INT_MAX)) {
    row.error = "the element count exceeds the int counts of MPI's collectives";
    return row;
  }
  collc::bench::Call call(*kind, w, comm, count, opt.inPlace, info.root);
  row.bytes = call.elements() * w.extent;
  call.prepare(0);

  // Whether the plan serves this call, decided before anything is sent: the
  // checks are local and the same on every rank, and agree() makes sure.
  collc_request req = COLLC_REQUEST_NULL;
  int rc = call.collc(plan, 2, &req);
  std::string message = rc ? std::string(collc_strerror(rc)) + ": " + collc_error_message() : "";
  if (int agreed = agree(rc, message, comm); agreed != 0) {
    if (req != COLLC_REQUEST_NULL)
      collc_request_free(&req);
    row.error = message;
    row.refused = agreed == COLLC_ERR_SHAPE || agreed == COLLC_ERR_UNSUPPORTED;
    if (!row.refused)
      row.ok = false;
    return row;
  }
  if (!opt.persistent)
    collc_request_free(&req);

  // In place, every call needs its input back (outside the timed region).
  auto refill = [&] {
    if (opt.inPlace)
      call.prepare(0);
  };
  auto native = [&] {
    if (call.native() != MPI_SUCCESS)
      MPI_Abort(comm, 1);
  };
  auto viaPlan = [&] {
    int r;
    if (opt.persistent) {
      r = collc_start(req);
      if (r == COLLC_SUCCESS)
        r = collc_wait(&req);
    } else {
      r = call.collc(plan, 0, nullptr);
    }
    if (r != COLLC_SUCCESS)
      abortWith(info.algorithm, r);
  };

  for (int i = 0; i < opt.warmup; ++i) {
    refill();
    native();
    refill();
    viaPlan();
  }
  std::vector<double> tNative(size_t(opt.iters)), tPlan(size_t(opt.iters));
  for (int i = 0; i < opt.iters; ++i) {
    refill();
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    native();
    tNative[size_t(i)] = MPI_Wtime() - t0;
    refill();
    MPI_Barrier(comm);
    t0 = MPI_Wtime();
    viaPlan();
    tPlan[size_t(i)] = MPI_Wtime() - t0;
  }
  std::vector<double> maxNative(tNative.size()), maxPlan(tPlan.size());
  MPI_Reduce(tNative.data(), maxNative.data(), opt.iters, MPI_DOUBLE, MPI_MAX, 0, comm);
  MPI_Reduce(tPlan.data(), maxPlan.data(), opt.iters, MPI_DOUBLE, MPI_MAX, 0, comm);
  row.nativeUs = median(maxNative) * 1e6;
  row.planUs = median(maxPlan) * 1e6;

  if (opt.check) {
    // One more call on a poisoned output; every rank learns the first wrong
    // rank's first wrong element.
    auto verdict = [&](auto &&run, std::string &what) -> bool {
      call.prepare(1);
      run();
      what = call.check(1);
      return agree(what.empty() ? 0 : 1, what, comm) == 0;
    };
    std::string planWhat, nativeWhat;
    row.ok = verdict(viaPlan, planWhat);
    if (!*row.ok)
      row.error = "wrong result: " + planWhat;
    if (!verdict(native, nativeWhat) && rank == 0)
      std::fprintf(stderr,
                   "collc-bench: note: %s: native MPI's result is not the exact one (%s %s, "
                   "%zu bytes): %s\n",
                   row.plan.c_str(), w.opName.c_str(), w.typeName.c_str(), row.bytes,
                   nativeWhat.c_str());
  }
  if (req != COLLC_REQUEST_NULL)
    collc_request_free(&req);
  return row;
}

std::string baseName(const std::string &path) {
  return std::filesystem::path(path).filename().string();
}

/// Times (and checks) every plan at every size for the workload in b.w;
/// false when a checked row is wrong or a plan fails other than by refusal.
bool runWorkload(Bench &b) {
  // The bandwidth bound: rank 0 alone, the others wait.
  std::vector<double> copyUs(b.opt.sizes.size());
  if (b.rank == 0)
    for (size_t k = 0; k < b.opt.sizes.size(); ++k)
      copyUs[k] = memcpySeconds(b.opt.sizes[k] / b.w.extent * b.w.extent) * 1e6;
  MPI_Bcast(copyUs.data(), int(copyUs.size()), MPI_DOUBLE, 0, b.comm);
  for (size_t k = 0; k < b.opt.sizes.size(); ++k)
    b.memcpyUs[b.opt.sizes[k]] = copyUs[k];

  if (b.rank == 0 && !b.opt.json) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    std::string v(version, size_t(len));
    v = v.substr(0, v.find_first_of(",\n"));
    std::printf("# collc-bench: %d ranks, %s %s, %s%s, %d iterations (median of the slowest "
                "rank) after %d warm-up; native: %s\n",
                b.size, b.w.typeName.c_str(), b.w.opName.c_str(),
                b.opt.persistent ? "persistent requests" : "blocking calls",
                b.opt.inPlace ? ", in place" : "", b.opt.iters, b.opt.warmup, v.c_str());
    printTableHeader();
  }
  bool allOk = true;
  for (size_t k = 0; k < b.plans.size(); ++k) {
    collc_plan plan = b.plans[k];
    collc_plan_info info{};
    (void)collc_plan_get_info(plan, &info);
    for (size_t size : b.opt.sizes) {
      Row row = b.run(plan, info, size, baseName(b.opt.plans[k]));
      if ((row.ok && !*row.ok) || (!row.error.empty() && !row.refused))
        allOk = false;
      if (b.rank == 0) {
        if (b.opt.json)
          printJson(row, b.w, b.opt.inPlace, b.opt.persistent);
        else
          printTableRow(row, b.w);
        std::fflush(stdout);
      }
    }
  }
  return allOk;
}

/// Loads every plan on every rank; "" or the first failure (the same on all
/// ranks).
std::string loadPlans(Bench &b) {
  for (const std::string &file : b.opt.plans) {
    collc_plan plan = COLLC_PLAN_NULL;
    int rc = collc_plan_load_file(file.c_str(), &plan);
    std::string message = rc ? std::string(collc_error_message()) : "";
    if (agree(rc, message, b.comm) != 0) {
      if (plan != COLLC_PLAN_NULL)
        collc_plan_free(&plan);
      return "cannot load a plan: " + message;
    }
    b.plans.push_back(plan);
  }
  return "";
}

int benchMain(int argc, char **argv) {
  Bench b;
  MPI_Comm_rank(b.comm, &b.rank);
  MPI_Comm_size(b.comm, &b.size);
  if (std::string err = parseArgs(argc, argv, b.opt); !err.empty()) {
    if (b.rank == 0)
      std::fprintf(stderr, "collc-bench: error: %s (see --help)\n", err.c_str());
    return 2;
  }
  if (b.opt.help) {
    if (b.rank == 0)
      std::fputs(kHelp, stdout);
    return 0;
  }
  // Time the steady state: the communicator on shared memory from the first
  // timed call, not after its first COLLC_SHM_AFTER executions over MPI.
  int shmPeers = 0;
  (void)collc_comm_shm_peers(b.comm, &shmPeers);
  std::vector<Workload> workloads;
  if (b.opt.allPairs) {
    for (auto [op, type] : collc::bench::validPairs())
      workloads.push_back(collc::bench::builtinWorkload(op, type));
    workloads.push_back(collc::bench::matrixWorkload());
  } else {
    std::string err;
    std::optional<Workload> w = collc::bench::parseWorkload(b.opt.op, b.opt.dtype, err);
    if (!w) {
      if (b.rank == 0)
        std::fprintf(stderr, "collc-bench: error: %s\n", err.c_str());
      return 2;
    }
    workloads.push_back(*w);
  }
  if (!b.opt.allPairs)
    for (size_t size : b.opt.sizes)
      if (size > 0 && size < workloads[0].extent) {
        if (b.rank == 0)
          std::fprintf(stderr,
                       "collc-bench: error: --sizes: %zu bytes is less than one %s element "
                       "(%zu bytes)\n",
                       size, workloads[0].typeName.c_str(), workloads[0].extent);
        return 2;
      }
  if (std::string err = loadPlans(b); !err.empty()) {
    if (b.rank == 0)
      std::fprintf(stderr, "collc-bench: error: %s\n", err.c_str());
    for (collc_plan &p : b.plans)
      collc_plan_free(&p);
    return 2;
  }
  bool allOk = true;
  for (const Workload &w : workloads) {
    b.w = w;
    allOk = runWorkload(b) && allOk;
  }
  for (collc_plan &p : b.plans)
    collc_plan_free(&p);
  return allOk ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int status = benchMain(argc, argv);
  collc::bench::freeMatrixWorkload();
  MPI_Finalize();
  return status;
}
