// tools/collc/CmdVerify.cpp: `collc verify` — prove a plan or an algorithm, or say why not.
#include "tools/collc/AlgorithmFlags.h"
#include "tools/collc/Commands.h"
#include "tools/collc/DrawVerdict.h"

#include "compiler/Disasm.h"
#include "compiler/Verifier.h"
#include "lang/Parser.h"
#include "dropin/ProofCache.h"
#include "dropin/RankCompile.h"
#include "ir/PlanIO.h"
#include "runtime/bytecode/Bundle.h"
#include "schedules/Generators.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace collc::tool {

llvm::cl::SubCommand &VerifyCommand() {
  static llvm::cl::SubCommand sub(
      "verify", "Prove that a plan, or an algorithm file for a range of rank counts, computes "
                "its collective (exit 0 proven, 1 disproved or invalid, 2 unreadable input, not "
                "a plan (syntax) or misuse)");
  return sub;
}

namespace {
namespace cl = llvm::cl;
cl::opt<std::string> input(cl::Positional, cl::Required,
                           cl::desc("FILE|ALG|- (a plan: YAML, .cplan or .cbundle; or an "
                                    "algorithm: a file .calgo or a name of collc list)"),
                           cl::sub(VerifyCommand()), cl::cat(category()));
cl::opt<std::string> cacheDir(
    "cache",
    cl::desc("Also prove the drop-in's compilation of an algorithm and write a proof record "
             "per rank count to DIR (COLLC_PROOF_CACHE)"),
    cl::value_desc("DIR"), cl::sub(VerifyCommand()), cl::cat(category()));
cl::opt<bool> noncommutative(
    "noncommutative",
    cl::desc("Prove the plan for operations that are only associative (keeps rank order)"),
    cl::sub(VerifyCommand()), cl::cat(category()));
cl::opt<bool> requireIdentical(
    "require-identical",
    cl::desc("Refuse plans whose ranks compute different reduction trees"),
    cl::sub(VerifyCommand()), cl::cat(category()));
cl::opt<unsigned> maxErrors("max-errors",
                            cl::desc("Report at most N diagnostics (0 = all; default 20)"),
                            cl::value_desc("N"), cl::init(20), cl::sub(VerifyCommand()),
                            cl::cat(category()));
cl::opt<bool> stats("stats",
                    cl::desc("Print key: value statistics of the plan (of an algorithm: one "
                             "line per rank count)"),
                    cl::sub(VerifyCommand()), cl::cat(category()));
cl::opt<std::string> roots("roots",
                           cl::desc("Roots to prove an algorithm for: 'all' (default: --root)"),
                           cl::value_desc("all"), cl::sub(VerifyCommand()), cl::cat(category()));
cl::opt<std::string> drawTo("draw",
                            cl::desc("Also draw the plan (.svg or .html), marking the op the "
                                     "first diagnostic names (of an algorithm: the first p "
                                     "that fails, else the last)"),
                            cl::value_desc("FILE"), cl::sub(VerifyCommand()), cl::cat(category()));
} // namespace

namespace {

/// ", commutative operations, also in place, identical results on all ranks"
/// (what applies to the collective: compiler::proofProperties).
std::string properties(const ir::Shape &s, bool identical) {
  return compiler::proofProperties(s.collective, s.commutative && !noncommutative, s.inPlace,
                                   identical);
}

/// The one-line verdict of a proven plan.
void printProven(const ir::Plan &plan, const compiler::VerifyResult &result,
                 llvm::raw_ostream &os) {
  const ir::Shape &s = plan.shape;
  os << "proven: " << ir::name(s.collective) << " '" << plan.algorithm << "', " << s.ranks
     << (s.ranks == 1 ? " rank" : " ranks") << properties(s, result.stats.identical) << '\n';
}

/// "disproved: N errors" (and how many --max-errors left out), without a newline.
void printDisproved(const compiler::VerifyResult &result, llvm::raw_ostream &os) {
  size_t n = result.diagnostics.size() + result.dropped;
  os << "disproved: " << n << (n == 1 ? " error" : " errors");
  if (result.dropped)
    os << " (" << result.dropped << " not shown; see --max-errors)";
}

/// Verifies one plan and prints its diagnostics and verdict; true if proven.
bool verifyAndReport(const ir::Plan &plan, compiler::VerifyOptions opts,
                     llvm::raw_ostream &os) {
  compiler::VerifyResult result = compiler::verify(plan, opts);
  for (const compiler::Diagnostic &d : result.diagnostics) {
    compiler::print(d, os);
    os << '\n';
  }
  if (result.proven()) {
    printProven(plan, result, os);
  } else {
    printDisproved(result, os);
    os << '\n';
  }
  if (stats)
    compiler::printStats(result.stats, os);
  if (!drawTo.empty())
    drawVerdict(plan, result, drawTo);
  return result.proven();
}

compiler::VerifyOptions optionsFromFlags() {
  compiler::VerifyOptions opts;
  opts.noncommutative = noncommutative;
  opts.requireIdentical = requireIdentical;
  opts.maxErrors = maxErrors;
  return opts;
}

/// A compiled plan's own proof status is a claim too: a file that records
/// identical results is proven to have them.
bool verifyCompiled(const ir::Plan &plan, const rt::Proof &proof, llvm::raw_ostream &os) {
  os << "recorded: " << compiler::describeProof(plan.shape, proof) << '\n';
  compiler::VerifyOptions opts = optionsFromFlags();
  opts.requireIdentical = opts.requireIdentical || proof.identical;
  return verifyAndReport(plan, opts, os);
}

/// `collc verify X.cplan` and `collc verify X.cbundle`: straight from the
/// bytes, no text in between.
int verifyBinary(llvm::StringRef name, llvm::ArrayRef<uint8_t> bytes) {
  llvm::raw_ostream &os = llvm::outs();
  const std::span<const uint8_t> span(bytes.data(), bytes.size());
  if (!rt::looksLikeBundle(span)) {
    rt::Proof proof;
    llvm::Expected<ir::Plan> plan = compiler::disassemble(bytes, &proof);
    if (!plan) {
      llvm::errs() << "collc: " << name << ": " << llvm::toString(plan.takeError()) << '\n';
      return Refused;
    }
    return verifyCompiled(*plan, proof, os) ? Success : Refused;
  }
  if (!drawTo.empty())
    return reportMisuse(llvm::createStringError(llvm::inconvertibleErrorCode(),
                                                "--draw takes one plan, not a bundle"));
  rt::Bundle b;
  if (rt::Status st = rt::readBundle(span, b); !st.ok()) {
    llvm::errs() << "collc: " << name << ": " << st.message() << '\n';
    return Refused;
  }
  size_t proven = 0;
  for (size_t i = 0; i < b.entries.size(); ++i) {
    const rt::BundleEntry &e = b.entries[i];
    os << "entry " << i << " (bytes " << rt::formatByteRange(e.minBytes, e.maxBytes) << "):\n";
    rt::Proof proof;
    llvm::Expected<ir::Plan> plan = compiler::disassemble(e.plan, &proof);
    if (!plan) { // readBundle loaded it already
      llvm::errs() << "collc: " << name << " entry " << i << ": "
                   << llvm::toString(plan.takeError()) << '\n';
      return Refused;
    }
    proven += verifyCompiled(*plan, proof, os);
  }
  os << "bundle: " << proven << " of " << b.entries.size() << " plans proven\n";
  return proven == b.entries.size() ? Success : Refused;
}

/// Reader errors: an `invalid` plan is disproved like any other wrong plan
/// (its diagnostic on standard output, exit 1); unreadable input is exit 2.
int reportUnreadable(llvm::Error err) {
  int code = Misuse;
  llvm::handleAllErrors(
      std::move(err),
      [&](const ir::PlanReadError &e) {
        if (e.kind() != ir::ReadErrorKind::Invalid) {
          llvm::errs() << "collc: " << e.message() << '\n';
          return;
        }
        code = Refused;
        llvm::outs() << e.message() << "\ndisproved: 1 error\n";
      },
      [&](const llvm::ErrorInfoBase &e) { llvm::errs() << "collc: " << e.message() << '\n'; });
  return code;
}

/// With --cache: proves the drop-in's compilation of `plan` (every rank's
/// program as the drop-in builds it, dropin::compileWhole: each pass's
/// result proven) and adds `root` to `record`; false with the diagnostics
/// printed when it does not hold.
bool proveForCache(const lang::Module &m, const lang::InstantiateOptions &o,
                   dropin::ProofRecord &record, llvm::raw_ostream &os) {
  llvm::Expected<ir::Plan> compiled = dropin::compileWhole(m, o, /*verifyEach=*/true);
  if (!compiled) {
    os << "the drop-in's compilation does not verify: " << llvm::toString(compiled.takeError())
       << '\n';
    return false;
  }
  compiler::VerifyOptions vo = optionsFromFlags();
  vo.requireIdentical = vo.requireIdentical || m.collective == ir::Collective::Allreduce;
  compiler::VerifyResult r = compiler::verify(*compiled, vo);
  if (!r.proven()) {
    for (const compiler::Diagnostic &d : r.diagnostics)
      os << compiler::toString(d) << '\n';
    os << "the drop-in's compilation is not proven";
    if (vo.requireIdentical && !noncommutative && !requireIdentical)
      os << " with identical results on all ranks (what the drop-in needs of an allreduce)";
    os << '\n';
    return false;
  }
  const bool any = !compiled->shape.commutative || noncommutative;
  if (record.roots.empty()) {
    record.anyAssociative = any;
    record.inPlace = compiled->shape.inPlace;
    record.identical = r.stats.identical;
  } else { // every root of one record proves the same
    record.anyAssociative = record.anyAssociative && any;
    record.inPlace = record.inPlace && compiled->shape.inPlace;
    record.identical = record.identical && r.stats.identical;
  }
  record.roots.push_back(o.root);
  return true;
}

/// Progress of a long range on stderr: at most one line every 10 seconds, the
/// first after 10, with an estimate of the time left. The estimate assumes a
/// plan's cost grows as p^k, k fitted to the ops of the plans so far (1 to 3),
/// times p more with every root.
class RangeProgress {
public:
  RangeProgress(uint32_t first, uint32_t last, bool everyRoot)
      : first_(first), last_(last), everyRoot_(everyRoot), start_(Clock::now()), next_(start_ + period) {}

  /// Every root of `p` is done; a plan of p had `ops` (0: p was refused).
  void done(uint32_t p, uint64_t ops) {
    if (ops > 0 && p != lastP_) {
      if (lastP_ > 0 && lastOps_ > 0 && p > lastP_)
        k_ = std::clamp(std::log(double(ops) / double(lastOps_)) / std::log(double(p) / lastP_),
                        1.0, 3.0);
      lastP_ = p;
      lastOps_ = ops;
    }
    if (Clock::now() < next_ || p >= last_)
      return;
    next_ = Clock::now() + period;
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const double doneWork = work(first_, p), leftWork = work(p + 1, last_);
    const double left = doneWork > 0 ? elapsed * leftWork / doneWork : 0;
    llvm::errs() << llvm::formatv("collc verify: p = {0}..{1} done of {0}..{2} ({3:F1} % of the "
                                  "work), about {4} left\n",
                                  first_, p, last_, 100 * doneWork / (doneWork + leftWork),
                                  duration(left));
  }

private:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds period{10};

  double work(uint32_t from, uint32_t to) const {
    double w = 0;
    for (uint32_t q = from; q <= to && q >= from; ++q)
      w += std::pow(double(q), k_ + (everyRoot_ ? 1 : 0));
    return w;
  }
  static std::string duration(double s) {
    if (s < 90)
      return std::to_string(int(s + 0.5)) + " s";
    if (s < 5400)
      return std::to_string(int(s / 60 + 0.5)) + " min";
    return llvm::formatv("{0:F1} h", s / 3600).str();
  }

  uint32_t first_, last_;
  bool everyRoot_;
  Clock::time_point start_, next_;
  uint32_t lastP_ = 0;
  uint64_t lastOps_ = 0;
  double k_ = 2;
};

/// `collc verify FILE.calgo|ALG --ranks A..B [--roots all] [--cache DIR]`.
int verifyAlgorithm() {
  llvm::Expected<const lang::Module *> found = algorithmFromFlags(input);
  if (!found)
    return reportMisuse(found.takeError());
  const lang::Module *m = *found;
  llvm::Expected<std::pair<uint32_t, uint32_t>> range = ranksFromFlags(/*allowRange=*/true);
  if (!range)
    return reportMisuse(range.takeError());
  const bool allRoots = roots == "all";
  if (!roots.empty() && !allRoots)
    return reportMisuse(llvm::createStringError(llvm::inconvertibleErrorCode(),
                                                "--roots '%s' (expected 'all')",
                                                roots.c_str()));
  const bool rooted = ir::hasRoot(m->collective);
  llvm::raw_ostream &os = llvm::outs();
  uint64_t proven = 0, refused = 0, records = 0;
  bool identical = true;
  std::optional<ir::Shape> shape;
  // A proof record names integer parameters only (the drop-in runs library
  // algorithms with their defaults).
  std::vector<std::pair<std::string, int64_t>> sortedParams;
  if (!cacheDir.empty()) {
    llvm::Expected<lang::ParamValues> params = paramsFromFlags();
    if (!params)
      return reportMisuse(params.takeError());
    for (const auto &[name, value] : *params) {
      if (value.isAlgorithm())
        return reportMisuse(llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "--cache: --set %s=%s: a proof record holds integer parameters only",
            name.c_str(), lang::formatParamValue(value).c_str()));
      sortedParams.emplace_back(name, value.number);
    }
    std::sort(sortedParams.begin(), sortedParams.end());
  }
  const std::string sourceHash = dropin::sha256Hex(m->source.text);
  RangeProgress progress(range->first, range->second, allRoots && rooted);
  for (uint32_t p = range->first; p <= range->second; ++p) {
    uint64_t opsAtP = 0;
    const uint32_t firstRoot = allRoots ? 0 : rootFromFlag();
    const uint32_t lastRoot = allRoots && rooted ? p - 1 : firstRoot;
    dropin::ProofRecord record;
    record.key.algorithm = m->name;
    record.key.collective = ir::name(m->collective).str();
    record.key.sourceHash = sourceHash;
    record.key.ranks = p;
    record.key.params = sortedParams;
    for (uint32_t root = firstRoot; root <= lastRoot; ++root) {
      llvm::Expected<lang::InstantiateOptions> opts =
          instantiateOptionsFromFlags(p, uint64_t(1) << 24);
      if (!opts)
        return reportMisuse(opts.takeError());
      lang::InstantiateOptions &o = *opts;
      o.root = root;
      llvm::Expected<bool> ok = lang::accepts(*m, o);
      if (!ok)
        return reportMisuse(ok.takeError());
      if (!*ok) {
        ++refused;
        continue;
      }
      llvm::Expected<ir::Plan> plan = lang::instantiate(*m, o);
      if (!plan)
        return reportMisuse(plan.takeError());
      compiler::VerifyResult result = compiler::verify(*plan, optionsFromFlags());
      if (stats)
        os << llvm::formatv("p = {0}{1}: ops {2}, messages {3}, chunks-moved {4}, scratch {5}, "
                            "critical-path {6}, identical {7}\n",
                            p, rooted ? " root = " + std::to_string(root) : "",
                            result.stats.ops, result.stats.messages, result.stats.chunksMoved,
                            result.stats.scratch, result.stats.criticalPath,
                            result.stats.identical ? "yes" : "no");
      if (!result.proven() || (!drawTo.empty() && p == range->second && root == lastRoot))
        if (!drawTo.empty())
          drawVerdict(*plan, result, drawTo);
      if (!result.proven()) {
        printDiagnostics(result.diagnostics, m, o, os);
        printDisproved(result, os);
        os << " for p = " << p << (rooted ? ", root = " + std::to_string(root) : "") << '\n';
        return Refused;
      }
      if (!cacheDir.empty() && !proveForCache(*m, o, record, os)) {
        printDisproved(result, os);
        os << " for p = " << p << (rooted ? ", root = " + std::to_string(root) : "")
           << " (the drop-in's compilation)\n";
        return Refused;
      }
      ++proven;
      identical = identical && result.stats.identical;
      shape = plan->shape;
      opsAtP = plan->numOps();
    }
    if (!cacheDir.empty() && !record.roots.empty()) {
      std::string error;
      if (!dropin::writeProof(cacheDir, record, error)) {
        llvm::errs() << "collc: --cache: " << error << '\n';
        return Misuse;
      }
      ++records;
    }
    progress.done(p, opsAtP);
  }
  if (!shape) {
    // Which line refuses, at the first p (as gen says it).
    std::string first;
    if (llvm::Expected<lang::InstantiateOptions> o =
            instantiateOptionsFromFlags(range->first, uint64_t(1) << 24)) {
      o->root = allRoots ? 0 : rootFromFlag();
      if (llvm::Expected<ir::Plan> plan = lang::instantiate(*m, *o); !plan)
        first = llvm::toString(plan.takeError());
    } else {
      first = llvm::toString(o.takeError());
    }
    llvm::errs() << llvm::formatv("collc: {0}: its 'require' lines refuse every p in "
                                  "{1}..{2}{3}\n",
                                  input, range->first, range->second,
                                  first.empty() ? "" : "; at p = " + std::to_string(range->first) +
                                                           ":");
    if (!first.empty()) {
      llvm::SmallVector<llvm::StringRef, 4> lines;
      llvm::StringRef(first).split(lines, '\n');
      for (llvm::StringRef l : lines)
        llvm::errs() << "collc: " << l << '\n';
    }
    return Misuse;
  }
  os << "proven: " << ir::name(m->collective) << " '" << m->name << "' for p = " << range->first;
  if (range->second != range->first)
    os << ".." << range->second;
  os << (allRoots && rooted ? " and every root" : "") << " (" << proven
     << (proven == 1 ? " instantiation" : " instantiations");
  if (refused)
    os << ", " << refused << " refused by require";
  os << ")" << properties(*shape, identical) << '\n';
  if (!cacheDir.empty())
    os << "cache: " << records << (records == 1 ? " record" : " records") << " in " << cacheDir
       << " (the drop-in's compiled plans proven too)\n";
  return Success;
}
} // namespace

int runVerify() {
  if (!drawTo.empty())
    if (llvm::Error e = checkDrawPath(drawTo))
      return reportMisuse(std::move(e));
  // With --cache, input that is no file can only be meant as an algorithm
  // (verifyAlgorithm then says that it is none).
  if (isAlgorithm(input) || (!cacheDir.empty() && input != "-" && !llvm::sys::fs::exists(input)))
    return verifyAlgorithm();
  if (!cacheDir.empty())
    return reportMisuse(llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "--cache applies to algorithms (an algorithm file or a library algorithm)"));
  if (!roots.empty())
    return reportMisuse(llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "--roots applies to algorithms (FILE.calgo or a name of collc list)"));
  if (llvm::Error e = refuseAlgorithmFlags(input))
    return reportMisuse(std::move(e));
  auto buf = llvm::MemoryBuffer::getFileOrSTDIN(input, /*IsText=*/false);
  if (!buf) {
    llvm::errs() << "collc: cannot read '" << input << "': " << buf.getError().message()
                 << '\n';
    return Misuse;
  }
  const llvm::StringRef name = input == "-" ? llvm::StringRef("<stdin>") : input;
  const llvm::StringRef data = (*buf)->getBuffer();
  if (data.startswith("\x7f" "CPL") || data.startswith("\x7f" "CPB"))
    return verifyBinary(name, llvm::ArrayRef<uint8_t>(
                                  reinterpret_cast<const uint8_t *>(data.data()), data.size()));
  llvm::Expected<ir::Plan> plan = ir::parsePlan(data, name);
  if (!plan) {
    const int code = reportUnreadable(plan.takeError());
    if (!drawTo.empty())
      llvm::errs() << "collc: --draw: nothing drawn, the plan could not be read\n";
    return code;
  }
  return verifyAndReport(*plan, optionsFromFlags(), llvm::outs()) ? Success : Refused;
}

} // namespace collc::tool
