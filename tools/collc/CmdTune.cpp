// tools/collc/CmdTune.cpp: `collc tune` — search the library for the fastest
// proven plan per message size on a topology and write a bundle, rules and a
// report (docs/tune.md). The search is tune (collc::tune).
#include "tools/collc/AlgorithmFlags.h"
#include "tools/collc/Commands.h"
#include "tools/collc/TuneMeasure.h"

#include "model/Topology.h"
#include "tune/Native.h"
#include "tune/Refit.h"
#include "tune/Report.h"
#include "tune/Tuner.h"
#include "runtime/bytecode/Bundle.h"
#include "runtime/kernels/Kernels.h"
#include "schedules/Generators.h"
#include "ir/Wording.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <chrono>
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
cl::list<std::string> emitFlags(
    "emit",
    cl::desc("--emit FORMAT FILE: also write a tuning file for an MPI's own algorithms: "
             "ompi-rules (Open MPI's coll/tuned rules) or mpich-json (MPICH's selection JSON); "
             "an existing FILE is merged into (repeatable)"),
    cl::value_desc("FORMAT FILE"), cl::multi_val(2), cl::sub(TuneCommand()),
    cl::cat(category()));
#ifndef COLLC_MPICH_LIBRARY
#define COLLC_MPICH_LIBRARY ""
#endif
const std::string mpichLibraryHelp =
    std::string("--emit mpich-json: the libmpich whose own selection a new file starts from "
                "(default: the one collc was built beside") +
    (*COLLC_MPICH_LIBRARY ? std::string(", ") + COLLC_MPICH_LIBRARY : std::string(", none")) +
    ")";
cl::opt<std::string> mpichLibrary(
    "mpich-library", cl::desc(mpichLibraryHelp),
    cl::value_desc("FILE"), cl::init(COLLC_MPICH_LIBRARY), cl::sub(TuneCommand()),
    cl::cat(category()));
cl::opt<bool> quiet("quiet", cl::desc("No progress lines on stderr"), cl::sub(TuneCommand()),
                    cl::cat(category()));
cl::opt<bool> measureFlag("measure",
                          cl::desc("Under mpirun -np P: time the model's best plans and native "
                                   "MPI per size on this machine; the measured fastest wins, "
                                   "native included"),
                          cl::sub(TuneCommand()), cl::cat(category()));
cl::opt<unsigned> measureTop("measure-top",
                             cl::desc("--measure: plans timed per size beside native MPI, the "
                                      "model's fastest (default 3)"),
                             cl::value_desc("K"), cl::init(3), cl::sub(TuneCommand()),
                             cl::cat(category()));
cl::opt<std::string> refitPath("refit",
                               cl::desc("--measure: also write the topology with its costs "
                                        "refitted to the measured times"),
                               cl::value_desc("FILE"), cl::sub(TuneCommand()),
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
  llvm::Expected<lang::ParamValues> fixed = paramsFromFlags();
  if (!fixed)
    return fixed.takeError();
  o.candidates.fixed = std::move(*fixed);
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

/// `w` as one shell word: quoted when it holds anything but letters, digits
/// and _ . / = , : + - @ %.
std::string shellWord(llvm::StringRef w) {
  if (!w.empty() && llvm::all_of(w, [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) ||
               llvm::StringRef("_./=,:+-@%").contains(c);
      }))
    return w.str();
  std::string q = "'";
  for (char c : w)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string commandLine() {
  std::string s = "collc tune";
  for (const std::string &dir : libraryFlags())
    s += " --library " + shellWord(dir);
  s += " --topology " + shellWord(topologyPath) + " --collective " + collective +
       " --ranks " + ranksFlag;
  if (ir::parseCollective(collective) && ir::hasRoot(*ir::parseCollective(collective)))
    s += " --root " + std::to_string(root);
  s += " --sizes " + sizesFlag;
  if (dtype != "double")
    s += " --dtype " + dtype;
  if (noncommutative)
    s += " --noncommutative";
  if (!algorithmsFlag.empty())
    s += " --algorithms " + shellWord(algorithmsFlag);
  if (llvm::Expected<lang::ParamValues> fixed = paramsFromFlags())
    for (const auto &[k, v] : *fixed)
      s += " --set " + shellWord(k + "=" + lang::formatParamValue(v));
  else
    llvm::consumeError(fixed.takeError());
  s += " --segments " + segmentsFlag + " --budget " + budgetFlag + " -o " + shellWord(output);
  if (!rulesPath.empty())
    s += " --rules " + shellWord(rulesPath);
  if (measureFlag)
    s += " --measure --measure-top " + std::to_string(measureTop);
  if (!refitPath.empty())
    s += " --refit " + shellWord(refitPath);
  for (size_t i = 0; i + 1 < emitFlags.size(); i += 2)
    s += " --emit " + shellWord(emitFlags[i]) + " " + shellWord(emitFlags[i + 1]);
  return s;
}

/// An --emit FORMAT FILE, with the file's current text (empty: none yet).
struct Emit {
  tune::NativeFormat format;
  std::string path;
  std::string existing;
};

/// The --emit pairs; errors are misuse.
llvm::Expected<std::vector<Emit>> emitsFromFlags() {
  std::vector<Emit> out;
  for (size_t i = 0; i + 1 < emitFlags.size(); i += 2) {
    std::optional<tune::NativeFormat> f = tune::parseNativeFormat(emitFlags[i]);
    if (!f)
      return misuse(llvm::formatv("--emit '{0}': the formats are ompi-rules (Open MPI's "
                                  "coll/tuned rules) and mpich-json (MPICH's selection JSON)",
                                  emitFlags[i]));
    Emit e{*f, emitFlags[i + 1], ""};
    if (e.path == "-")
      return misuse("--emit " + emitFlags[i] + " needs a file (it merges into what is there)");
    out.push_back(std::move(e));
  }
  return out;
}

/// Reads what each --emit merges into: the file there, or for a new MPICH
/// file MPICH's own selection; errors are misuse.
llvm::Error readMergeBases(std::vector<Emit> &emits, ir::Collective collective) {
  for (Emit &e : emits) {
    const std::string flag = "--emit " + tune::name(e.format).str();
    if (llvm::sys::fs::exists(e.path)) {
      llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buf =
          llvm::MemoryBuffer::getFile(e.path);
      if (!buf)
        return misuse(flag + ": cannot read '" + e.path + "': " + buf.getError().message());
      e.existing = (*buf)->getBuffer().str();
      if (llvm::Error err = tune::checkNativeFile(e.format, collective, e.existing))
        return misuse(flag + ": '" + e.path + "' exists and cannot be merged into: " +
                      llvm::toString(std::move(err)) + " (choose another file or remove it)");
    } else if (e.format == tune::NativeFormat::MpichJson) {
      if (mpichLibrary.empty())
        return misuse("--emit mpich-json: a new file starts from MPICH's own selection; give "
                      "--mpich-library with the path of libmpich (collc was built without "
                      "MPICH)");
      llvm::Expected<std::string> base = tune::mpichDefaultSelection(mpichLibrary);
      if (!base)
        return misuse("--emit mpich-json: " + llvm::toString(base.takeError()));
      e.existing = std::move(*base);
    }
  }
  return llvm::Error::success();
}

/// What an --emit wrote, on stdout: the file and its ranges.
std::string nativeSummary(const tune::TuneResult &r, const Emit &e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "wrote " << tune::mpiName(e.format) << "'s selection for " << ir::name(r.options.collective)
     << " at " << r.options.ranks << " ranks to " << e.path << ":\n";
  llvm::Expected<std::vector<tune::NativeRange>> ranges = tune::nativeRanges(r, e.format);
  if (!ranges) {
    llvm::consumeError(ranges.takeError());
    return os.str();
  }
  for (const tune::NativeRange &g : *ranges)
    os << llvm::formatv("  {0,-16} {1,-20} {2}\n", rt::formatByteRange(g.minBytes, g.maxBytes),
                        g.algorithm.collc,
                        e.format == tune::NativeFormat::OmpiRules
                            ? llvm::formatv("{0} ({1})", g.algorithm.name, g.algorithm.id).str()
                            : g.algorithm.name.str());
  return os.str();
}

/// Rank 0's model search and outputs, or (with `world`) every rank's part in
/// --measure; the exit status.
int tuneOn(MPI_Comm world);

} // namespace

int runTune() {
  if (!refitPath.empty() && !measureFlag)
    return reportMisuse(misuse("--refit FILE needs --measure: it fits the topology to the "
                               "measured times"));
  if (!measureFlag)
    return tuneOn(MPI_COMM_NULL);
  if (measureTop < 1 || measureTop > 16)
    return reportMisuse(misuse("--measure-top " + std::to_string(measureTop) +
                               " out of range (1..16)"));
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized && MPI_Init(nullptr, nullptr) != MPI_SUCCESS) {
    llvm::errs() << "collc: --measure: MPI_Init failed\n";
    return Misuse;
  }
  int rc = tuneOn(MPI_COMM_WORLD);
  // Every rank exits with rank 0's status.
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}

namespace {
int tuneOn(MPI_Comm world) {
  int me = 0, ranks = 1;
  if (world != MPI_COMM_NULL) {
    MPI_Comm_rank(world, &me);
    MPI_Comm_size(world, &ranks);
  }
  // The other ranks of --measure only time what rank 0 asks for.
  auto notMeasuring = [&](int rc) {
    if (world != MPI_COMM_NULL && me == 0)
      (void)measure(nullptr, tune::TuneOptions{}, MeasureOptions{}, world);
    return rc;
  };
  if (me != 0) {
    llvm::Expected<tune::TuneOptions> opts = optionsFromFlags();
    if (!opts) { // rank 0 says so
      llvm::consumeError(opts.takeError());
      (void)measure(nullptr, tune::TuneOptions{}, MeasureOptions{}, world);
      return Misuse;
    }
    (void)measure(nullptr, *opts, MeasureOptions{}, world);
    return Success;
  }
  if (topologyPath.empty())
    return notMeasuring(reportMisuse(misuse("--topology FILE is required")));
  if (output.empty())
    return notMeasuring(reportMisuse(misuse("-o FILE.cbundle is required")));
  llvm::Expected<tune::TuneOptions> opts = optionsFromFlags();
  if (!opts)
    return notMeasuring(reportMisuse(opts.takeError()));
  if (world != MPI_COMM_NULL && uint32_t(ranks) != opts->ranks)
    return notMeasuring(reportMisuse(misuse(llvm::formatv(
        "--measure times the plans on the ranks of this job: run it under mpirun -np {0} "
        "(--ranks {0}); this job has {1}",
        opts->ranks, ranks))));
  // --budget covers both phases: the model's search gets two thirds of it,
  // the measurement the rest and whatever the search left.
  const auto started = std::chrono::steady_clock::now();
  const double budget = opts->budget;
  if (world != MPI_COMM_NULL && std::isfinite(budget))
    opts->budget = budget * 2 / 3;
  // Before a search of up to --budget: every output can be written, once.
  llvm::Expected<std::vector<Emit>> emits = emitsFromFlags();
  if (!emits)
    return notMeasuring(reportMisuse(emits.takeError()));
  std::vector<const std::string *> paths = {&output.getValue(), &rulesPath.getValue(),
                                            &reportPath.getValue(), &jsonPath.getValue(),
                                            &refitPath.getValue()};
  for (const Emit &e : *emits)
    paths.push_back(&e.path);
  std::vector<std::string> outputs;
  for (const std::string *path : paths) {
    if (path->empty() || *path == "-")
      continue;
    if (llvm::is_contained(outputs, *path))
      return notMeasuring(reportMisuse(misuse("'" + *path + "' is named for two outputs")));
    outputs.push_back(*path);
    llvm::StringRef dir = llvm::sys::path::parent_path(*path);
    if (!llvm::sys::fs::is_directory(dir.empty() ? llvm::StringRef(".") : dir))
      return notMeasuring(reportMisuse(misuse("cannot write '" + *path + "': its folder '" + dir +
                                 "' does not exist")));
  }
  if (llvm::Error err = readMergeBases(*emits, opts->collective))
    return notMeasuring(reportMisuse(std::move(err)));
  llvm::Expected<model::Topology> topo = model::readTopologyFile(topologyPath);
  if (!topo) {
    llvm::errs() << "collc: " << llvm::toString(topo.takeError()) << '\n';
    return notMeasuring(Misuse);
  }
  if (llvm::Expected<model::Placement> pl = model::place(*topo, opts->ranks); !pl)
    return notMeasuring(reportMisuse(pl.takeError()));
  llvm::Expected<tune::TuneResult> result = tune::tune(*topo, *opts);
  if (!result) {
    llvm::errs() << "collc: " << llvm::toString(result.takeError()) << '\n';
    return notMeasuring(Refused);
  }
  if (world != MPI_COMM_NULL) {
    MeasureOptions mo;
    mo.top = measureTop;
    mo.budget =
        budget - std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    mo.progress = quiet ? nullptr : &llvm::errs();
    tune::applyMeasurements(*result, measure(&*result, *opts, mo, world));
    result->options.budget = budget;
  }
  std::string refitSection;
  if (!refitPath.empty()) {
    llvm::Expected<tune::Refit> f = tune::refit(*topo, *result);
    if (!f) {
      llvm::errs() << "collc: note: --refit: " << llvm::toString(f.takeError())
                   << "; no topology is written\n";
    } else {
      if (!writeOutput(refitPath, model::printTopology(f->topology)))
        return Misuse;
      refitSection = tune::refitReport(*f);
      if (!quiet)
        llvm::errs() << llvm::formatv("collc tune: wrote the refitted topology to {0}: rms of "
                                      "ln(predicted / measured) {1:f3} -> {2:f3} over {3} "
                                      "measured plan times\n",
                                      refitPath.getValue(), f->errorBefore, f->errorAfter,
                                      f->samples);
    }
  }
  tune::OutputNames names{topologyPath, output, rulesPath, commandLine()};
  if (tune::hasPlans(*result)) {
    llvm::Expected<std::vector<uint8_t>> bundle = tune::bundleOf(*result);
    if (!bundle) {
      llvm::errs() << "collc: internal error: " << llvm::toString(bundle.takeError()) << '\n';
      return Refused;
    }
    if (!writeOutput(output, llvm::StringRef(reinterpret_cast<const char *>(bundle->data()),
                                             bundle->size())))
      return Misuse;
  } else {
    // Only --measure gets here: native MPI was fastest at every size.
    llvm::errs() << "collc: note: native MPI was measured fastest at every size; no bundle "
                    "is written"
                 << (rulesPath.empty() ? " (--rules writes rules that say native)"
                                       : ", and the rules say native")
                 << '\n';
    llvm::sys::fs::remove(output); // not an older search's bundle beside the new rules
  }
  if (!rulesPath.empty() && !writeOutput(rulesPath, tune::rulesOf(*result, names)))
    return Misuse;
  if (!reportPath.empty() &&
      !writeOutput(reportPath, tune::reportOf(*result, names) + refitSection))
    return Misuse;
  if (!jsonPath.empty() && !writeOutput(jsonPath, tune::jsonOf(*result)))
    return Misuse;
  llvm::outs() << tune::summaryOf(*result);
  for (const Emit &e : *emits) {
    llvm::Expected<std::string> text = tune::nativeFile(*result, e.format, e.existing);
    if (!text) {
      llvm::errs() << "collc: " << llvm::toString(text.takeError()) << '\n';
      return Refused;
    }
    if (!writeOutput(e.path, *text))
      return Misuse;
    llvm::outs() << nativeSummary(*result, e);
  }
  return Success;
}

} // namespace

} // namespace collc::tool
