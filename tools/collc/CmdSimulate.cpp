// tools/collc/CmdSimulate.cpp: `collc simulate` — predict what a plan costs on a
// topology (docs/topology.md, "collc simulate").
#include "tools/collc/AlgorithmFlags.h"
#include "tools/collc/Commands.h"
#include "tools/collc/PipelineFlags.h"

#include "model/Simulator.h"
#include "ir/PlanIO.h"
#include "ir/Wording.h"
#include "runtime/bytecode/Bundle.h"
#include "runtime/kernels/Kernels.h"
#include "schedules/Generators.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>

namespace collc::tool {

llvm::cl::SubCommand &SimulateCommand() {
  static llvm::cl::SubCommand sub(
      "simulate", "Predict a plan's time on a topology: finish times, traffic per level, the "
                  "busiest link and the critical path (exit 0 simulated, 1 the plan cannot "
                  "run, 2 unreadable input or misuse)");
  return sub;
}

namespace {
namespace cl = llvm::cl;
cl::opt<std::string> input(cl::Positional, cl::Required, cl::desc("PLAN|FILE.calgo|ALGORITHM"),
                           cl::sub(SimulateCommand()), cl::cat(category()));
cl::opt<std::string> bytesFlag("bytes",
                               cl::desc("The vector's size in bytes (K, M, G suffixes: "
                                        "powers of 1024)"),
                               cl::value_desc("N"), cl::sub(SimulateCommand()),
                               cl::cat(category()));
cl::opt<std::string> dtype("dtype",
                           cl::desc("Element type: its size and the topology's reduce cost "
                                    "(default double)"),
                           cl::value_desc("T"), cl::init("double"), cl::sub(SimulateCommand()),
                           cl::cat(category()));
cl::opt<bool> json("json", cl::desc("Print the prediction as one JSON object"),
                   cl::sub(SimulateCommand()), cl::cat(category()));
cl::opt<unsigned> maxPath("max-path",
                          cl::desc("Print at most N ops of the critical path (default 40; "
                                   "--json has them all)"),
                          cl::value_desc("N"), cl::init(40), cl::sub(SimulateCommand()),
                          cl::cat(category()));

llvm::Error misuse(const llvm::Twine &m) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), m.str());
}

std::string us(double seconds) { return llvm::formatv("{0:f3} us", seconds * 1e6).str(); }

std::string opText(const ir::Plan &plan, uint32_t rank, uint32_t index) {
  return ir::describe(plan.programs[rank].ops[index]);
}

std::string lineOf(const ir::Plan &plan, uint32_t rank, uint32_t index) {
  const uint32_t line = plan.programs[rank].ops[index].loc.line;
  if (line == 0)
    return "";
  return (plan.source.empty() ? std::string("line") : plan.source) + ":" + std::to_string(line);
}

void printText(const ir::Plan &plan, const ShownPlan &how, const model::Topology &topo,
               const model::Placement &pl, const model::SimResult &r, uint64_t bytes,
               uint32_t elemBytes, llvm::raw_ostream &os) {
  const uint32_t p = plan.shape.ranks;
  os << llvm::formatv("plan: {0} ({1}, {2}, {3}){4}\n", plan.algorithm,
                      ir::name(plan.shape.collective), ir::counted(p, "rank"),
                      ir::counted(plan.shape.chunks, "chunk"),
                      plan.source.empty() ? std::string() : " from " + plan.source);
  os << "read: " << how.input << ", " << how.optimized << '\n';
  os << llvm::formatv("topology: {0} ({1} level{2})\n", topo.name, topo.levels.size(),
                      topo.levels.size() == 1 ? "" : "s");
  os << llvm::formatv("bytes: {0} ({1} of {2})\n", bytes, ir::counted(bytes / elemBytes, "element"),
                      ir::counted(elemBytes, "byte"));
  os << "predicted: " << us(r.time) << '\n';
  if (p <= 16) {
    os << "finish:\n";
    for (uint32_t q = 0; q < p; ++q)
      os << llvm::formatv("  rank {0,-4} {1,14}  at {2}\n", q, us(r.rankFinish[q]),
                          pl.location(q));
  } else {
    const auto [lo, hi] = std::minmax_element(r.rankFinish.begin(), r.rankFinish.end());
    os << llvm::formatv("finish: first rank {0} at {1}, last rank {2} at {3}\n",
                        lo - r.rankFinish.begin(), us(*lo), hi - r.rankFinish.begin(), us(*hi));
  }
  os << "levels:\n";
  for (size_t j = 0; j < topo.levels.size(); ++j)
    os << llvm::formatv("  {0,-10} {1,14} bytes in {2}\n", topo.levels[j].name,
                        r.levels[j].bytes, ir::counted(r.levels[j].messages, "message"));
  if (r.busiestLink)
    os << llvm::formatv("busiest link: {0}: {1} busy, {2} bytes in {3}\n",
                        model::describeLink(topo, pl, *r.busiestLink), us(r.busiestLink->busy),
                        r.busiestLink->bytes, ir::counted(r.busiestLink->messages, "message"));
  else
    os << "busiest link: none (no messages)\n";
  os << llvm::formatv("critical path ({0}):\n", ir::counted(r.criticalPath.size(), "op"));
  const size_t shown = std::min<size_t>(r.criticalPath.size(), maxPath);
  const size_t skip = r.criticalPath.size() - shown; // show the end of the path
  if (skip)
    os << llvm::formatv("  ... {0} earlier\n", ir::counted(skip, "op"));
  for (size_t i = skip; i < r.criticalPath.size(); ++i) {
    const model::PathStep &s = r.criticalPath[i];
    std::string what = opText(plan, s.rank, s.op);
    if (ir::isMessage(plan.programs[s.rank].ops[s.op].kind))
      what += " (" + topo.levels[s.level].name + ")";
    os << llvm::formatv("  {0,14} .. {1,14}  rank {2,-4} op {3,-5} {4,-40} after {5,-10} {6}\n",
                        us(s.start), us(s.end), s.rank, s.op, what, model::name(s.cause),
                        lineOf(plan, s.rank, s.op))
              .str();
  }
}

/// A JSON writer, pretty-printed with two-space indents like llvm::json's; it
/// does not use llvm/Support/JSON.h, whose containers do not compile with
/// clang 14 and libstdc++ 12 in C++20 (the sanitizer builds use clang).
class JsonWriter {
public:
  explicit JsonWriter(llvm::raw_ostream &os) : os(os) {}

  void object(const std::function<void()> &body) { open('{', body, '}'); }
  void array(const std::function<void()> &body) { open('[', body, ']'); }
  void key(llvm::StringRef k) {
    element();
    string(k);
    os << ": ";
    afterKey = true;
  }
  void value(llvm::StringRef v) { element(), string(v); }
  void value(int64_t v) { element(), os << v; }
  void value(double v) {
    element();
    char text[32];
    std::snprintf(text, sizeof text, "%.*g", 17, v);
    os << text;
  }
  template <typename T> void attribute(llvm::StringRef k, const T &v) { key(k), value(v); }
  void attribute(llvm::StringRef k, const std::string &v) { key(k), value(llvm::StringRef(v)); }
  void attribute(llvm::StringRef k, const char *v) { key(k), value(llvm::StringRef(v)); }

private:
  void open(char o, const std::function<void()> &body, char c) {
    element();
    os << o;
    ++depth;
    first = true;
    body();
    --depth;
    if (!first)
      newline();
    os << c;
    first = false;
  }
  // Before a value or a key: a comma after a sibling, then a new line, unless
  // the value follows its key.
  void element() {
    if (afterKey) {
      afterKey = false;
      return;
    }
    if (depth == 0)
      return;
    if (!first)
      os << ',';
    first = false;
    newline();
  }
  void newline() { os << '\n' << std::string(2 * depth, ' '); }
  void string(llvm::StringRef v) {
    os << '"';
    for (unsigned char ch : v) {
      if (ch == '"' || ch == '\\')
        os << '\\' << ch;
      else if (ch == '\n')
        os << "\\n";
      else if (ch < 0x20)
        os << llvm::format("\\u%04x", ch);
      else
        os << ch;
    }
    os << '"';
  }

  llvm::raw_ostream &os;
  unsigned depth = 0;
  bool first = true, afterKey = false;
};

void printJson(const ir::Plan &plan, const ShownPlan &how, const model::Topology &topo,
               const model::Placement &pl, const model::SimResult &r, uint64_t bytes,
               llvm::raw_ostream &os) {
  // Keys in sorted order, as llvm::json prints an object.
  JsonWriter j(os);
  j.object([&] {
    j.attribute("algorithm", plan.algorithm);
    if (r.busiestLink) {
      j.key("busiest_link");
      j.object([&] {
        j.attribute("busy", r.busiestLink->busy);
        j.attribute("bytes", int64_t(r.busiestLink->bytes));
        j.attribute("level", topo.levels[r.busiestLink->level].name);
        j.attribute("messages", int64_t(r.busiestLink->messages));
        j.attribute("name", model::describeLink(topo, pl, *r.busiestLink));
      });
    }
    j.attribute("bytes", int64_t(bytes));
    j.attribute("collective", ir::name(plan.shape.collective));
    j.key("critical_path");
    j.array([&] {
      for (const model::PathStep &s : r.criticalPath)
        j.object([&] {
          const ir::Op &op = plan.programs[s.rank].ops[s.op];
          j.attribute("bytes", int64_t(s.bytes));
          j.attribute("cause", model::name(s.cause));
          j.attribute("end", s.end);
          if (ir::isMessage(op.kind))
            j.attribute("level", topo.levels[s.level].name);
          if (uint32_t line = op.loc.line)
            j.attribute("line", int64_t(line));
          j.attribute("op", int64_t(s.op));
          j.attribute("rank", int64_t(s.rank));
          j.attribute("start", s.start);
          j.attribute("what", opText(plan, s.rank, s.op));
        });
    });
    j.key("finish");
    j.array([&] {
      for (double t : r.rankFinish)
        j.value(t);
    });
    j.attribute("input", how.input);
    j.key("levels");
    j.array([&] {
      for (size_t l = 0; l < topo.levels.size(); ++l)
        j.object([&] {
          j.attribute("bytes", int64_t(r.levels[l].bytes));
          j.attribute("messages", int64_t(r.levels[l].messages));
          j.attribute("name", topo.levels[l].name);
        });
    });
    j.attribute("optimized", how.optimized);
    j.attribute("ranks", int64_t(plan.shape.ranks));
    if (!plan.source.empty())
      j.attribute("source", plan.source);
    j.attribute("time", r.time);
    j.attribute("topology", topo.name);
  });
  os << '\n';
}

} // namespace

int runSimulate() {
  llvm::Expected<const model::Topology *> machine = topologyFromFlags();
  if (!machine)
    return reportMisuse(machine.takeError());
  if (!*machine)
    return reportMisuse(misuse("--topology FILE is required"));
  uint64_t bytes = 0;
  if (!bytesFlag.empty() && !rt::parseByteCount(bytesFlag.getValue(), bytes))
    return reportMisuse(misuse(llvm::formatv("--bytes '{0}' is not a size (bytes, optional K, "
                                             "M or G suffix)",
                                             bytesFlag.getValue())));
  std::optional<rt::ElemType> et = rt::parseElemType(dtype.getValue());
  if (!et)
    return reportMisuse(misuse(llvm::formatv("--dtype: unknown element type '{0}'",
                                             dtype.getValue())));
  const uint32_t elemBytes = static_cast<uint32_t>(rt::elemSize(*et));
  // An algorithm is instantiated for this machine (AlgorithmFlags), and
  // simulated on it placed the same way.
  const model::Topology *topo = *machine;
  // As tune and the drop-in run it: optimized (-O2, weighed on the machine).
  ShownPlan how;
  if (int rc = loadShownPlan(input, how); rc != Success)
    return rc;
  const ir::Plan *plan = &how.plan;
  // A barrier moves no bytes (the simulator counts none), so it needs no size.
  if (plan->shape.collective == ir::Collective::Barrier)
    bytes = 0;
  else if (bytesFlag.empty())
    return reportMisuse(misuse("--bytes is required: the size of the call's vector (bytes, "
                               "optional K, M or G suffix)"));
  llvm::Expected<model::Placement> pl = model::place(*topo, plan->shape.ranks);
  if (!pl)
    return reportMisuse(pl.takeError());
  model::SimOptions opts;
  opts.bytes = bytes / elemBytes * elemBytes;
  opts.elemBytes = elemBytes;
  opts.gamma = topo->gammaOf(dtype);
  llvm::Expected<model::SimResult> r = model::simulate(*plan, *topo, *pl, opts);
  if (!r) {
    llvm::errs() << "collc: " << llvm::toString(r.takeError()) << '\n';
    return Refused;
  }
  if (json)
    printJson(*plan, how, *topo, *pl, *r, opts.bytes, llvm::outs());
  else
    printText(*plan, how, *topo, *pl, *r, opts.bytes, elemBytes, llvm::outs());
  return Success;
}

} // namespace collc::tool
