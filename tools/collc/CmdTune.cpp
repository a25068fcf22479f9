// tools/collc/CmdTune.cpp: `collc tune` — search the library for the fastest
// proven plan per message size on a topology and write a bundle, rules and a
// report (docs/tune.md). The search is tune (collc::tune).
#include "tools/collc/Commands.h"

#include "model/Topology.h"
#include "tune/Report.h"
#include "tune/Tuner.h"
#include "runtime/kernels/Kernels.h"
#include "schedules/Generators.h"
#include "ir/Wording.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>

namespace collc::tool {

llvm::cl::SubCommand &TuneCommand() {
  static llvm::cl::SubCommand sub(
      "tune", "Find the fastest proven plan per message size on a topology and write a bundle, "
              "rules and a report (exit 0 written, 1 nothing could be compiled, 2 unreadable "
              "input or misuse)");
  return sub;
}

namespace {
namespace cl = llvm::cl;
cl::opt<std::string> topologyPath("topology", cl::desc("The machine (collc-topology/1 file)"),
                                  cl::value_desc("FILE"), cl::sub(TuneCommand()),
                                  cl::cat(category()));
cl::opt<std::string> collective("collective", cl::desc("The collective (default allreduce)"),
                                cl::value_desc("C"), cl::init("allreduce"),
                                cl::sub(TuneCommand()), cl::cat(category()));
cl::opt<std::string> ranksFlag("ranks", cl::desc("The rank count P"), cl::value_desc("P"),
                               cl::sub(TuneCommand()), cl::cat(category()));
cl::opt<unsigned> root("root", cl::desc("Root rank (reduce, bcast; default 0)"),
                       cl::value_desc("R"), cl::init(0), cl::sub(TuneCommand()),
                       cl::cat(category()));
cl::opt<std::string> sizesFlag("sizes",
                               cl::desc("Vector sizes to tune for: MIN..MAX (every power of two "
                                        "between) or A,B,C; K, M, G suffixes (default 8..256M)"),
                               cl::value_desc("SIZES"), cl::init("8..256M"),
                               cl::sub(TuneCommand()), cl::cat(category()));
cl::opt<std::string> dtype("dtype",
                           cl::desc("Element type: its size and the topology's reduce cost "
                                    "(default double)"),
                           cl::value_desc("T"), cl::init("double"), cl::sub(TuneCommand()),
                           cl::cat(category()));
cl::opt<bool> noncommutative("noncommutative",
                             cl::desc("Only plans proven for non-commutative operations"),
                             cl::sub(TuneCommand()), cl::cat(category()));
cl::opt<std::string> algorithmsFlag("algorithms",
                                    cl::desc("Only these algorithms: names (collc list) or "
                                             "files ending in .calgo (default: all of the "
                                             "collective)"),
                                    cl::value_desc("a,b"), cl::sub(TuneCommand()),
                                    cl::cat(category()));
cl::opt<std::string> segmentsFlag("segments",
                                  cl::desc("Pipelining segment counts to try, 1 = off "
                                           "(default 1,2,4,8)"),
                                  cl::value_desc("1,2,4"), cl::init("1,2,4,8"),
                                  cl::sub(TuneCommand()), cl::cat(category()));
cl::opt<std::string> budgetFlag("budget",
                                cl::desc("Time for the search, with its unit (60s, 1500ms), or "
                                         "'none' (default 60s)"),
                                cl::value_desc("TIME"), cl::init("60s"), cl::sub(TuneCommand()),
                                cl::cat(category()));
cl::opt<std::string> output("o", cl::desc("The bundle to write (.cbundle)"),
                            cl::value_desc("FILE"), cl::sub(TuneCommand()), cl::cat(category()));
cl::opt<std::string> rulesPath("rules", cl::desc("Also write a rules file (collc-rules/1)"),
                               cl::value_desc("FILE"), cl::sub(TuneCommand()),
                               cl::cat(category()));
cl::opt<std::string> reportPath("report", cl::desc("Also write the report (markdown)"),
                                cl::value_desc("FILE"), cl::sub(TuneCommand()),
                                cl::cat(category()));
cl::opt<std::string> jsonPath("json", cl::desc("Also write the report as JSON (collc-tune/1)"),
                              cl::value_desc("FILE"), cl::sub(TuneCommand()),
                              cl::cat(category()));
cl::opt<bool> quiet("quiet", cl::desc("No progress lines on stderr"), cl::sub(TuneCommand()),
                    cl::cat(category()));

llvm::Error misuse(const llvm::Twine &m) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), m.str());
}

/// "1,2,4" as a list of segment counts 1..64, ascending and distinct.
llvm::Expected<std::vector<unsigned>> segmentCounts(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef, 8> items;
  text.split(items, ',');
  std::vector<unsigned> out;
  for (llvm::StringRef it : items) {
    unsigned k = 0;
    if (it.trim().getAsInteger(10, k) || k < 1 || k > 64)
      return misuse(llvm::formatv("--segments '{0}' is not a list of segment counts 1..64 "
                                  "(1 = no pipelining)",
                                  text));
    out.push_back(k);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> names(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef, 16> items;
  text.split(items, ',', -1, /*KeepEmpty=*/false);
  std::vector<std::string> out;
  for (llvm::StringRef it : items)
    out.push_back(it.trim().str());
  return out;
}

/// The options from the command line; errors are misuse.
llvm::Expected<tune::TuneOptions> optionsFromFlags() {
  tune::TuneOptions o;
  std::optional<ir::Collective> c = ir::parseCollective(collective);
  if (!c)
    return misuse(llvm::formatv("unknown collective '{0}'", collective.getValue()));
  o.collective = *c;
  uint32_t p = 0;
  if (ranksFlag.empty())
    return misuse("--ranks P is required");
  if (llvm::StringRef(ranksFlag).getAsInteger(10, p) || p < 1 || p > ir::maxRanks)
    return misuse(llvm::formatv("--ranks '{0}' is not a rank count (1..{1})",
                                ranksFlag.getValue(), ir::maxRanks));
  o.ranks = p;
  if (ir::hasRoot(o.collective) ? root >= p : root != 0)
    return misuse(ir::hasRoot(o.collective)
                      ? llvm::formatv("--root {0} out of range (ranks = {1})", root, p).str()
                      : llvm::formatv("{0} has no root", ir::name(o.collective)).str());
  o.root = root;
  std::optional<rt::ElemType> et = rt::parseElemType(dtype.getValue());
  if (!et)
    return misuse(llvm::formatv("--dtype: unknown element type '{0}'", dtype.getValue()));
  o.dtype = dtype;
  o.elemBytes = static_cast<uint32_t>(rt::elemSize(*et));
  llvm::Expected<std::vector<uint64_t>> sizes = tune::parseSizes(sizesFlag, o.elemBytes);
  if (!sizes)
    return sizes.takeError();
  o.sizes = std::move(*sizes);
  o.noncommutative = noncommutative;
  o.candidates.algorithms = names(algorithmsFlag);
  // A file (added to the registry by loadUserLibraries) is its algorithm.
  auto sameFile = [](llvm::StringRef a, llvm::StringRef b) {
    llvm::SmallString<256> ra, rb;
    return a == b || (!llvm::sys::fs::real_path(a, ra) && !llvm::sys::fs::real_path(b, rb) &&
                      ra == rb);
  };
  for (std::string &n : o.candidates.algorithms)
    if (llvm::StringRef(n).endswith(".calgo"))
      for (const sched::Algorithm &a : sched::algorithms())
        if (a.user && sameFile(a.file, n)) {
          if (a.collective != o.collective)
            return misuse(llvm::formatv("--algorithms: '{0}' is {1} {2} algorithm, not {3}", n,
                                        ir::article(ir::name(a.collective)),
                                        ir::name(a.collective), ir::name(o.collective)));
          n = a.name.str();
        }
  for (const std::string &a : o.candidates.algorithms)
    if (!sched::findAlgorithm(o.collective, a))
      return misuse(llvm::formatv("--algorithms: '{0}' is not an algorithm of {1} (collc list)",
                                  a, ir::name(o.collective)));
  llvm::Expected<std::vector<unsigned>> segs = segmentCounts(segmentsFlag);
  if (!segs)
    return segs.takeError();
  o.candidates.segments = std::move(*segs);
  if (budgetFlag == "none") {
    o.budget = std::numeric_limits<double>::infinity();
  } else {
    std::optional<double> t = model::parseTime(budgetFlag);
    if (!t || *t <= 0)
      return misuse(llvm::formatv("--budget '{0}' is not a time with its unit (such as 60s, "
                                  "1500ms) or 'none'",
                                  budgetFlag.getValue()));
    o.budget = *t;
  }
  if (!quiet)
    o.progress = &llvm::errs();
  return o;
}

std::string commandLine() {
  std::string s = "collc tune --topology " + topologyPath + " --collective " + collective +
                  " --ranks " + ranksFlag;
  if (ir::parseCollective(collective) && ir::hasRoot(*ir::parseCollective(collective)))
    s += " --root " + std::to_string(root);
  s += " --sizes " + sizesFlag;
  if (dtype != "double")
    s += " --dtype " + dtype;
  if (noncommutative)
    s += " --noncommutative";
  if (!algorithmsFlag.empty())
    s += " --algorithms " + algorithmsFlag;
  s += " --segments " + segmentsFlag + " --budget " + budgetFlag + " -o " + output;
  if (!rulesPath.empty())
    s += " --rules " + rulesPath;
  return s;
}

} // namespace

int runTune() {
  if (topologyPath.empty())
    return reportMisuse(misuse("--topology FILE is required"));
  if (output.empty())
    return reportMisuse(misuse("-o FILE.cbundle is required"));
  llvm::Expected<tune::TuneOptions> opts = optionsFromFlags();
  if (!opts)
    return reportMisuse(opts.takeError());
  // Before a search of up to --budget: every output can be written, once.
  std::vector<std::string> outputs;
  for (const std::string *path : {&output.getValue(), &rulesPath.getValue(),
                                  &reportPath.getValue(), &jsonPath.getValue()}) {
    if (path->empty() || *path == "-")
      continue;
    if (llvm::is_contained(outputs, *path))
      return reportMisuse(misuse("'" + *path + "' is named for two outputs"));
    outputs.push_back(*path);
    llvm::StringRef dir = llvm::sys::path::parent_path(*path);
    if (!llvm::sys::fs::is_directory(dir.empty() ? llvm::StringRef(".") : dir))
      return reportMisuse(misuse("cannot write '" + *path + "': its folder '" + dir +
                                 "' does not exist"));
  }
  llvm::Expected<model::Topology> topo = model::readTopologyFile(topologyPath);
  if (!topo) {
    llvm::errs() << "collc: " << llvm::toString(topo.takeError()) << '\n';
    return Misuse;
  }
  if (llvm::Expected<model::Placement> pl = model::place(*topo, opts->ranks); !pl)
    return reportMisuse(pl.takeError());
  llvm::Expected<tune::TuneResult> result = tune::tune(*topo, *opts);
  if (!result) {
    llvm::errs() << "collc: " << llvm::toString(result.takeError()) << '\n';
    return Refused;
  }
  tune::OutputNames names{topologyPath, output, rulesPath, commandLine()};
  llvm::Expected<std::vector<uint8_t>> bundle = tune::bundleOf(*result);
  if (!bundle) {
    llvm::errs() << "collc: internal error: " << llvm::toString(bundle.takeError()) << '\n';
    return Refused;
  }
  if (!writeOutput(output, llvm::StringRef(reinterpret_cast<const char *>(bundle->data()),
                                           bundle->size())))
    return Misuse;
  if (!rulesPath.empty() && !writeOutput(rulesPath, tune::rulesOf(*result, names)))
    return Misuse;
  if (!reportPath.empty() && !writeOutput(reportPath, tune::reportOf(*result, names)))
    return Misuse;
  if (!jsonPath.empty() && !writeOutput(jsonPath, tune::jsonOf(*result)))
    return Misuse;
  llvm::outs() << tune::summaryOf(*result);
  return Success;
}

} // namespace collc::tool
