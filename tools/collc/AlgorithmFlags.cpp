// tools/collc/AlgorithmFlags.cpp: --collective, --ranks, --root, --set, --topology and
// --mapping for algorithms.
#include "tools/collc/AlgorithmFlags.h"

#include "tools/collc/Commands.h"

#include "compiler/Disasm.h"
#include "lang/Parser.h"
#include "ir/PlanIO.h"
#include "ir/Wording.h"
#include "runtime/bytecode/Bundle.h"
#include "runtime/bytecode/Format.h"
#include "schedules/Generators.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cctype>

namespace collc::tool {

namespace {
namespace cl = llvm::cl;
cl::opt<std::string> ranks("ranks",
                           cl::desc("Rank count P for an algorithm (verify: also a range A..B, "
                                    "both included)"),
                           cl::value_desc("P"), cl::sub(GenCommand()), cl::sub(VerifyCommand()),
                           cl::sub(CompileCommand()), cl::sub(OptCommand()),
                           cl::sub(SimulateCommand()), cl::sub(DrawCommand()), cl::cat(category()));
cl::opt<unsigned> root("root", cl::desc("Root rank (reduce; default 0)"), cl::value_desc("R"),
                       cl::init(0), cl::sub(GenCommand()), cl::sub(VerifyCommand()),
                       cl::sub(CompileCommand()), cl::sub(OptCommand()), cl::sub(SimulateCommand()), cl::sub(DrawCommand()), cl::cat(category()));
cl::list<std::string> sets("set", cl::desc("Give an algorithm's parameter a value (tune: fix it "
                                          "for every candidate that has it)"),
                           cl::value_desc("NAME=VALUE"), cl::sub(GenCommand()),
                           cl::sub(TuneCommand()),
                           cl::sub(VerifyCommand()), cl::sub(CompileCommand()),
                           cl::sub(OptCommand()), cl::sub(SimulateCommand()), cl::sub(DrawCommand()), cl::cat(category()));

cl::opt<std::string> collective("collective",
                                cl::desc("Collective of a library algorithm (default allreduce)"),
                                cl::value_desc("C"), cl::init("allreduce"), cl::sub(GenCommand()),
                                cl::sub(VerifyCommand()), cl::sub(CompileCommand()),
                                cl::sub(OptCommand()), cl::sub(SimulateCommand()),
                                cl::sub(DrawCommand()), cl::cat(category()));
cl::opt<std::string> topologyFlag(
    "topology",
    cl::desc("Machine an algorithm is instantiated for (node(r), ppn...; default flat); opt and compile weigh every pass on it"),
    cl::value_desc("FILE"), cl::sub(GenCommand()), cl::sub(VerifyCommand()),
    cl::sub(CompileCommand()), cl::sub(OptCommand()), cl::sub(SimulateCommand()),
    cl::sub(DrawCommand()), cl::cat(category()));
cl::opt<std::string> mappingFlag(
    "mapping",
    cl::desc("With --topology: place the ranks by 'block' or 'round-robin' mapping"),
    cl::value_desc("MAP"), cl::sub(GenCommand()), cl::sub(VerifyCommand()),
    cl::sub(CompileCommand()), cl::sub(OptCommand()), cl::sub(SimulateCommand()),
    cl::sub(DrawCommand()), cl::cat(category()));

llvm::Error misuse(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

std::optional<uint32_t> rankCount(llvm::StringRef s) {
  uint32_t v = 0;
  if (s.getAsInteger(10, v) || v < 1 || v > ir::maxRanks)
    return std::nullopt;
  return v;
}
} // namespace

bool isAlgorithm(llvm::StringRef input) {
  if (input.endswith(".calgo"))
    return true;
  return input != "-" && !input.contains('/') && !input.contains('.') &&
         !llvm::sys::fs::exists(input);
}

llvm::Expected<const lang::Module *> algorithmFromFlags(llvm::StringRef input) {
  static std::optional<lang::Module> file;
  if (input.endswith(".calgo")) {
    if (!file) {
      llvm::Expected<lang::Module> m = lang::parseFile(input);
      if (!m)
        return m.takeError();
      file = std::move(*m);
      file->resolver = &sched::libraryResolver();
    }
    return &*file;
  }
  std::optional<ir::Collective> c = ir::parseCollective(collective);
  if (!c)
    return misuse(llvm::formatv("unknown collective '{0}' (expected {1}; collc list shows the "
                                "algorithms of each)",
                                collective.getValue(), ir::collectiveNames()));
  if (const sched::Algorithm *a = sched::findAlgorithm(*c, input))
    return a->module;
  std::string known;
  for (const sched::Algorithm &a : sched::algorithms())
    if (a.collective == *c)
      known += (known.empty() ? "" : ", ") + a.name.str();
  return misuse(llvm::formatv("unknown {0} algorithm '{1}' (known: {2}; or a file)", ir::name(*c),
                              input, known));
}

llvm::Expected<std::pair<uint32_t, uint32_t>> ranksFromFlags(bool allowRange) {
  if (ranks.empty())
    return misuse("--ranks is required for an algorithm");
  auto [a, b] = llvm::StringRef(ranks).split("..");
  std::optional<uint32_t> lo = rankCount(a), hi = b.empty() ? lo : rankCount(b);
  const bool isRange = llvm::StringRef(ranks).contains("..");
  if (!lo || !hi || *hi < *lo || (isRange && b.empty()))
    return misuse(llvm::formatv("--ranks '{0}' is not {1} (1..{2})", ranks.getValue(),
                                allowRange ? "a rank count or a range A..B"
                                           : "a rank count",
                                ir::maxRanks));
  if (isRange && !allowRange)
    return misuse(llvm::formatv("--ranks '{0}': a range of rank counts is for 'collc verify'",
                                ranks.getValue()));
  return std::make_pair(*lo, *hi);
}

uint32_t rootFromFlag() { return root; }

llvm::Expected<const model::Topology *> topologyFromFlags() {
  static std::optional<model::Topology> topo;
  if (topologyFlag.empty()) {
    if (!mappingFlag.empty())
      return misuse("--mapping needs --topology");
    return nullptr;
  }
  if (!topo) {
    llvm::Expected<model::Topology> t = model::readTopologyFile(topologyFlag);
    if (!t)
      return t.takeError();
    if (mappingFlag == "block") {
      t->mapping = model::Mapping::Block;
    } else if (mappingFlag == "round-robin") {
      t->mapping = model::Mapping::RoundRobin;
      t->mapBy = t->levels.size() >= 2 ? uint32_t(t->levels.size() - 2) : 0;
    } else if (!mappingFlag.empty()) {
      return misuse(llvm::formatv("--mapping '{0}' is not block or round-robin",
                                  mappingFlag.getValue()));
    }
    topo = std::move(*t);
  }
  return &*topo;
}

llvm::Expected<std::shared_ptr<const lang::Layout>> layoutFromFlags(uint32_t p) {
  llvm::Expected<const model::Topology *> topo = topologyFromFlags();
  if (!topo)
    return topo.takeError();
  if (!*topo)
    return nullptr;
  llvm::Expected<model::Placement> pl = model::place(**topo, p);
  if (!pl)
    return pl.takeError();
  return layoutOf(**topo, *pl);
}

llvm::Expected<lang::ParamValues> paramsFromFlags() {
  lang::ParamValues out;
  for (const std::string &s : sets) {
    auto [name, value] = llvm::StringRef(s).split('=');
    if (name.trim().empty() || !llvm::StringRef(s).contains('='))
      return misuse(llvm::formatv("--set '{0}' is not NAME=VALUE", s));
    llvm::Expected<lang::ParamValue> v = lang::parseParamValue(value);
    if (!v)
      return misuse(llvm::formatv("--set '{0}': {1}", s, llvm::toString(v.takeError())));
    out.emplace_back(name.trim().str(), std::move(*v));
  }
  return out;
}

llvm::Expected<lang::InstantiateOptions> instantiateOptionsFromFlags(uint32_t p,
                                                                     uint64_t maxOps) {
  llvm::Expected<lang::ParamValues> params = paramsFromFlags();
  if (!params)
    return params.takeError();
  lang::InstantiateOptions opts;
  opts.ranks = p;
  opts.root = root;
  opts.params = std::move(*params);
  opts.maxOps = maxOps;
  opts.resolver = &sched::libraryResolver();
  llvm::Expected<std::shared_ptr<const lang::Layout>> layout = layoutFromFlags(p);
  if (!layout)
    return layout.takeError();
  opts.layout = std::move(*layout);
  return opts;
}

llvm::Error refuseAlgorithmFlags(llvm::StringRef input, bool allowTopology) {
  // simulate's --topology is also the machine any plan runs on, and opt's
  // and compile's the machine the passes are weighed on.
  const bool machine =
      allowTopology || bool(SimulateCommand()) || bool(OptCommand()) || bool(CompileCommand()) ||
      bool(DrawCommand());
  if (ranks.empty() && sets.empty() &&
      (machine || (topologyFlag.empty() && mappingFlag.empty())))
    return llvm::Error::success();
  return misuse(llvm::formatv("--ranks, --set, --topology and --mapping apply to algorithms "
                              "(FILE.calgo or a name of collc list), not to the plan '{0}'",
                              input));
}

std::string describe(InputForm form, uint32_t ranks) {
  switch (form) {
  case InputForm::Text:
    return "plan text";
  case InputForm::Compiled:
    return "compiled plan";
  case InputForm::Algorithm:
    return "algorithm, instantiated for " + ir::counted(ranks, "rank");
  }
  return "";
}

namespace {
/// A plan file: text, or a compiled plan by its first bytes.
llvm::Expected<ir::Plan> readPlanInput(llvm::StringRef input, InputForm *form) {
  auto buf = llvm::MemoryBuffer::getFileOrSTDIN(input, /*IsText=*/false);
  if (!buf)
    return llvm::make_error<ir::PlanReadError>(
        ir::ReadErrorKind::Io,
        llvm::formatv("cannot read '{0}': {1}", input, buf.getError().message()).str());
  const llvm::StringRef data = (*buf)->getBuffer();
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t *>(data.data()),
                                       data.size());
  const llvm::StringRef name = input == "-" ? llvm::StringRef("<stdin>") : input;
  if (rt::looksLikeBundle(bytes))
    return misuse(llvm::formatv("'{0}' is a bundle, which holds several plans; take one with "
                                "'collc bundle --list {0}' and 'collc bundle --extract {0} "
                                "--entry N -o FILE.cplan'",
                                name));
  if (data.size() >= 4 && std::equal(rt::format::magic, rt::format::magic + 4, bytes.begin())) {
    if (form)
      *form = InputForm::Compiled;
    llvm::Expected<ir::Plan> plan =
        compiler::disassemble(llvm::ArrayRef<uint8_t>(bytes.data(), bytes.size()));
    if (!plan)
      return misuse(name + ": " + llvm::toString(plan.takeError()));
    return plan;
  }
  if (form)
    *form = InputForm::Text;
  return ir::parsePlan(data, name);
}
} // namespace

llvm::Expected<ir::Plan> loadPlan(llvm::StringRef input, const lang::Module **module,
                                  lang::InstantiateOptions *used, uint64_t maxOps,
                                  InputForm *form) {
  if (!isAlgorithm(input)) {
    if (llvm::Error e = refuseAlgorithmFlags(input))
      return e;
    return readPlanInput(input, form);
  }
  if (form)
    *form = InputForm::Algorithm;
  llvm::Expected<const lang::Module *> m = algorithmFromFlags(input);
  if (!m)
    return m.takeError();
  llvm::Expected<std::pair<uint32_t, uint32_t>> p = ranksFromFlags(/*allowRange=*/false);
  if (!p)
    return p.takeError();
  llvm::Expected<lang::InstantiateOptions> opts = instantiateOptionsFromFlags(p->first, maxOps);
  if (!opts)
    return opts.takeError();
  if (module)
    *module = *m;
  if (used)
    *used = *opts;
  if (input.endswith(".calgo"))
    return lang::instantiate(**m, *opts);
  // A library algorithm: the registry words its refusals for the command line.
  sched::GenOptions g;
  g.ranks = opts->ranks;
  g.root = opts->root;
  g.params = opts->params;
  g.maxOps = maxOps;
  g.layout = opts->layout;
  return sched::generate((*m)->collective, input, g);
}

void printDiagnostics(std::vector<compiler::Diagnostic> diags, const lang::Module *module,
                      const lang::InstantiateOptions &opts, llvm::raw_ostream &os) {
  for (compiler::Diagnostic &d : diags) {
    if (module && d.rank && d.op)
      if (std::optional<std::string> c = lang::explain(*module, opts, *d.rank, *d.op))
        d.context = *c;
    compiler::print(d, os);
    os << '\n';
  }
}

} // namespace collc::tool
