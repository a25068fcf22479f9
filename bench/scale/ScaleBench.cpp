// bench/scale/ScaleBench.cpp: compile and verify at scale, against the targets docs/performance.md states.
//
// Usage: collc-scale-bench [--quick] [--phases]
// Each case runs in a child process (so its peak resident set is its own)
// and prints one row: the plan's ops, instantiation, `verify` and `compile`
// times and compile's peak memory per op, each beside its target. Times are
// wall-clock seconds with the process's CPU seconds in parentheses (on a
// shared machine the CPU time is the steadier number). "compile" is what
// `collc compile` does after reading its input: verify, -O2 with every
// pass's result proven again, the proof of the strongest properties, and
// lowering. --phases adds, per case, each pass's time and the time of the
// verification after it. --quick: p = 1024 and 256 instead of 4096 and 1024.
// Then one rank's program alone (lang::instantiateRank) at p = 4096 and
// 65536, the first-call cost of a runtime that builds only its own program.
#include "compiler/HeapSetup.h"
#include "compiler/Lower.h"
#include "lang/Instantiator.h"
#include "compiler/Prove.h"
#include "compiler/Verifier.h"
#include "compiler/passes/Pipeline.h"
#include "schedules/Generators.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace collc;

namespace {

/// Wall and CPU seconds since construction.
struct Timer {
  std::chrono::steady_clock::time_point wall0 = std::chrono::steady_clock::now();
  double cpu0 = cpuNow();
  static double cpuNow() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
  }
  double wall() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  }
  double cpu() const { return cpuNow() - cpu0; }
};

struct Case {
  const char *algorithm;
  uint32_t ranks;
  double verifyTarget, compileTarget; ///< seconds
};

/// What a child reports.
struct Row {
  uint64_t ops = 0;
  double genWall = 0, genCpu = 0, verifyWall = 0, verifyCpu = 0, compileWall = 0,
         compileCpu = 0;
  uint64_t bytes = 0; ///< .cplan size
  long baselineKB = 0; ///< the child's peak resident set before the plan existed
  bool ok = false;
};

constexpr double bytesPerOpTarget = 200;

Row measure(const Case &c, bool phases) {
  Row row;
  rusage self{};
  getrusage(RUSAGE_SELF, &self);
  row.baselineKB = self.ru_maxrss; // libraries and the heap's start: not the plan's

  sched::GenOptions g;
  g.ranks = c.ranks;
  Timer tg;
  llvm::Expected<ir::Plan> plan = sched::generate(ir::Collective::Allreduce, c.algorithm, g);
  row.genWall = tg.wall();
  row.genCpu = tg.cpu();
  if (!plan) {
    llvm::errs() << llvm::toString(plan.takeError()) << "\n";
    return row;
  }
  row.ops = plan->numOps();

  Timer tv;
  const compiler::VerifyResult input = compiler::verify(*plan);
  const bool proven = input.proven();
  row.verifyWall = tv.wall();
  row.verifyCpu = tv.cpu();

  if (phases) {
    // Pass by pass, on a copy, each followed by the verification -O2 does.
    ir::Plan work = *plan;
    compiler::PipelineOptions o;
    llvm::Expected<std::vector<std::string>> names = compiler::pipelineFor(o);
    compiler::VerifyOptions vo;
    vo.requireIdentical = compiler::verify(work).stats.identical;
    for (const std::string &name : *names) {
      std::unique_ptr<compiler::Pass> pass = compiler::createPass(name, o);
      Timer tp;
      const bool changed = pass->run(work);
      const double passCpu = tp.cpu();
      Timer tq;
      const bool ok = !changed || compiler::verify(work, vo).proven();
      llvm::outs() << llvm::formatv("    {0,-16} pass {1,7:f3} s cpu   verify {2,7:f3} s cpu{3}{4}\n",
                                    name, passCpu, changed ? tq.cpu() : 0.0,
                                    changed ? "" : "   (unchanged)", ok ? "" : "   NOT PROVEN");
    }
    llvm::outs().flush();
  }

  // As `collc compile` does after reading its input (its first step, the
  // verification, is the one just timed).
  Timer tc;
  bool ok = proven;
  if (ok) {
    compiler::PipelineOptions o2;
    std::optional<compiler::VerifyResult> last;
    o2.inputProof = &input;
    o2.resultProof = &last;
    llvm::Expected<ir::Plan> opt = compiler::optimize(std::move(*plan), o2);
    if (!opt) {
      llvm::errs() << llvm::toString(opt.takeError()) << "\n";
      ok = false;
    } else {
      compiler::Proven pr = compiler::proveStrongest(*opt, {}, last ? &*last : nullptr);
      ok = pr.result.proven();
      row.bytes = compiler::lower(*opt, pr.proof).size();
    }
  }
  row.compileWall = tc.wall() + row.verifyWall;
  row.compileCpu = tc.cpu() + row.verifyCpu;
  row.ok = ok;
  return row;
}

std::string verdict(double got, double target) {
  if (got <= target)
    return "met";
  return llvm::formatv("{0:f1}x over", got / target).str();
}

} // namespace

int main(int argc, char **argv) {
  // As the collc tool does, so the times are the tool's.
  (void)collc::compiler::prepareHeapForLargePlans();
  bool quick = false, phases = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) {
      quick = true;
    } else if (!std::strcmp(argv[i], "--phases")) {
      phases = true;
    } else {
      llvm::errs() << "usage: collc-scale-bench [--quick] [--phases]\n";
      return 2;
    }
  }
  const std::vector<Case> cases = {
      {"rabenseifner", quick ? 1024u : 4096u, 0.5, 2.0},
      {"ring", quick ? 256u : 1024u, 2.0, 5.0},
  };
  llvm::raw_ostream &os = llvm::outs();
  os << "times: wall s (cpu s); compile = verify, -O2 with every pass proven again, "
        "strongest proof, lowering\n";
  os << llvm::formatv("{0,-13} {1,5} {2,9} {3,14} {4,24} {5,24} {6,18}\n", "allreduce", "p",
                      "ops", "gen", "verify (target)", "compile (target)",
                      "compile B/op (200)");
  for (const Case &c : cases) {
    int fds[2];
    if (pipe(fds) != 0)
      return 1;
    os.flush();
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      const Row row = measure(c, phases);
      const ssize_t n = write(fds[1], &row, sizeof row);
      _exit(n == sizeof row ? 0 : 1);
    }
    close(fds[1]);
    Row row;
    const ssize_t got = read(fds[0], &row, sizeof row);
    close(fds[0]);
    int status = 0;
    rusage ru{};
    wait4(pid, &status, 0, &ru);
    if (got != sizeof row || !row.ok) {
      os << c.algorithm << " p=" << c.ranks << ": failed\n";
      continue;
    }
    const double bytesPerOp = double(ru.ru_maxrss - row.baselineKB) * 1024.0 / double(row.ops);
    auto cell = [](double wall, double cpu, double target) {
      return llvm::formatv("{0:f2} ({1:f2}) ≤{2} {3}", wall, cpu, target,
                           verdict(wall, target))
          .str();
    };
    os << llvm::formatv("{0,-13} {1,5} {2,9} {3,14} {4,24} {5,24} {6,18}\n", c.algorithm,
                        c.ranks, row.ops,
                        llvm::formatv("{0:f2} ({1:f2})", row.genWall, row.genCpu).str(),
                        cell(row.verifyWall, row.verifyCpu, c.verifyTarget),
                        cell(row.compileWall, row.compileCpu, c.compileTarget),
                        llvm::formatv("{0:f0} {1}", bytesPerOp,
                                      verdict(bytesPerOp, bytesPerOpTarget))
                            .str());
  }
  os << "peak memory: the growth of the process's peak resident set from before the plan "
        "existed (plan, instantiation and compile) per op of the input plan\n\n";

  // One rank's program alone (lang::instantiateRank): what a runtime that
  // builds only its own rank's program pays at a communicator's first call.
  os << "rank r's program alone (median of 5; r = p/2 + 1), ms\n";
  os << llvm::formatv("{0,-20} {1,7} {2,9} {3,10} {4,8} {5,10}\n", "allreduce", "p", "ops",
                      "ms", "target", "");
  for (const char *name : {"rabenseifner", "ring", "recursive_doubling"})
    for (uint32_t p : {4096u, 65536u}) {
      const sched::Algorithm *a = sched::findAlgorithm(ir::Collective::Allreduce, name);
      lang::InstantiateOptions o;
      o.ranks = p;
      o.maxOps = uint64_t(1) << 40;
      const uint32_t r = p / 2 + 1;
      std::vector<double> ms;
      size_t ops = 0;
      for (int run = 0; run < 5; ++run) {
        Timer t;
        llvm::Expected<ir::Program> prog = lang::instantiateRank(*a->module, o, r);
        ms.push_back(t.wall() * 1e3);
        if (!prog) {
          os << llvm::toString(prog.takeError()) << "\n";
          return 1;
        }
        ops = prog->ops.size();
      }
      std::sort(ms.begin(), ms.end());
      const double target = p <= 4096 ? 10 : 50;
      os << llvm::formatv("{0,-20} {1,7} {2,9} {3,10:f3} {4,8} {5,10}\n", name, p, ops,
                          ms[2], llvm::formatv("≤{0}", target).str(), verdict(ms[2], target));
    }
  return 0;
}
