// tools/collc/CmdExplain.cpp: `collc explain` — the drop-in's default choice
// of algorithm over rank counts and sizes, as a heatmap (docs/draw.md); with a
// topology, each choice's predicted time and, beside the table, the library
// algorithm the simulator predicts fastest.
#include "tools/collc/AlgorithmFlags.h"
#include "tools/collc/Commands.h"

#include "lang/Instantiator.h"
#include "model/Simulator.h"
#include "dropin/RankCompile.h"
#include "dropin/Selection.h"
#include "ir/Plan.h"
#include "runtime/bytecode/Bundle.h"
#include "runtime/kernels/Kernels.h"
#include "schedules/Generators.h"
#include "tools/draw/Heatmap.h"
#include "tools/draw/Svg.h"
#include "tools/draw/TunedChoice.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <variant>

namespace collc::tool {

llvm::cl::SubCommand &ExplainCommand() {
  static llvm::cl::SubCommand sub(
      "explain", "Draw which algorithm the drop-in's default table picks for each rank count "
                 "and size, as a heatmap with the choice and its reason on hover; with "
                 "--topology, its predicted time, and with --by model the fastest library "
                 "algorithm beside it (exit 0 drawn, 2 misuse)");
  return sub;
}

namespace {
namespace cl = llvm::cl;
cl::opt<std::string> collective("collective",
                                cl::desc("allreduce (default), reduce, reduce_scatter, scan, "
                                         "exscan, allgather, bcast, alltoall, gather, scatter "
                                         "or barrier"),
                                cl::value_desc("C"), cl::init("allreduce"),
                                cl::sub(ExplainCommand()), cl::cat(category()));
cl::opt<std::string> ranks("ranks", cl::desc("Rank counts A..B (rows), or one P"),
                           cl::value_desc("A..B"), cl::init("2..128"), cl::sub(ExplainCommand()),
                           cl::cat(category()));
cl::opt<std::string> sizes("sizes",
                           cl::desc("Bytes MIN..MAX of the whole vector, as the drop-in's "
                                    "rules match it (allgather and the block movers: all p "
                                    "blocks), K/M/G = KiB/MiB/GiB (columns: powers of two; "
                                    "default 8..64M)"),
                           cl::value_desc("MIN..MAX"), cl::init("8..64M"),
                           cl::sub(ExplainCommand()), cl::cat(category()));
cl::opt<unsigned> typeSize("type-size", cl::desc("Bytes per element (default 8, a double)"),
                           cl::value_desc("N"), cl::init(8), cl::sub(ExplainCommand()),
                           cl::cat(category()));
cl::opt<bool> noncommutative("noncommutative", cl::desc("Choices for a non-commutative operation"),
                             cl::sub(ExplainCommand()), cl::cat(category()));
cl::opt<bool> userOp("user-op", cl::desc("Choices for a user-defined operation (MPI_Op_create)"),
                     cl::sub(ExplainCommand()), cl::cat(category()));
cl::opt<std::string> output("o", cl::Required, cl::desc("Output file: .svg or .html (- = stdout)"),
                            cl::value_desc("FILE"), cl::sub(ExplainCommand()), cl::cat(category()));
cl::opt<std::string> format("format", cl::desc("svg or html (default: from the file name)"),
                            cl::value_desc("svg|html"), cl::sub(ExplainCommand()),
                            cl::cat(category()));
cl::opt<std::string> topologyPath("topology",
                                  cl::desc("Predict each choice's time on this machine "
                                           "(collc-topology/1; collc simulate's model)"),
                                  cl::value_desc("FILE"), cl::sub(ExplainCommand()),
                                  cl::cat(category()));
cl::opt<std::string> by("by",
                        cl::desc("table: the default table (default); model: also, beside it, "
                                 "the library algorithm predicted fastest on --topology"),
                        cl::value_desc("table|model"), cl::init("table"),
                        cl::sub(ExplainCommand()), cl::cat(category()));
cl::list<std::string> tunedFiles("tuned",
                                 cl::desc("Also draw what collc tune chose: its --json report, "
                                          "one per rank count (the rows are theirs)"),
                                 cl::value_desc("FILE.json"), cl::sub(ExplainCommand()),
                                 cl::cat(category()));
cl::opt<bool> noPrune("no-prune",
                      cl::desc("--by model: simulate every algorithm at every size (tests "
                               "compare this with the pruned search)"),
                      cl::Hidden, cl::sub(ExplainCommand()), cl::cat(category()));
cl::opt<unsigned> optLevel("O", cl::Prefix,
                           cl::desc("With --topology: predict the plans as the drop-in runs them "
                                    "(2, its -O2 pipeline; default) or as written (0)"),
                           cl::value_desc("N"), cl::init(2), cl::sub(ExplainCommand()),
                           cl::cat(category()));
cl::opt<std::string> dtype("dtype",
                           cl::desc("With --topology: the element type, its size and reduce "
                                    "cost (instead of --type-size; default double)"),
                           cl::value_desc("T"), cl::sub(ExplainCommand()), cl::cat(category()));

llvm::Error misuse(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

/// The rows: every p of the range up to 256 of them, else about 256 spread
/// geometrically (always with both ends).
std::vector<uint32_t> rankRows(uint32_t lo, uint32_t hi) {
  std::vector<uint32_t> rows;
  if (hi - lo < 256) {
    for (uint32_t p = lo; p <= hi; ++p)
      rows.push_back(p);
    return rows;
  }
  const double ratio = std::pow(double(hi) / lo, 1.0 / 255);
  double v = lo;
  for (uint32_t p = lo; p < hi; v *= ratio) {
    rows.push_back(p);
    p = std::max(p + 1, static_cast<uint32_t>(std::lround(v * ratio)));
  }
  rows.push_back(hi);
  return rows;
}

/// A time as the hover text gives it: "12.345 µs", "1.234 ms", "2.000 s".
std::string timeText(double seconds) {
  if (seconds < 1e-3)
    return llvm::formatv("{0:f3} µs", seconds * 1e6).str();
  if (seconds < 1)
    return llvm::formatv("{0:f3} ms", seconds * 1e3).str();
  return llvm::formatv("{0:f3} s", seconds).str();
}

/// Library algorithms instantiated for one rank count at a time on a
/// topology (the ranks placed by its mapping) and simulated for any size:
/// each plan is built once per p, the first time it is asked for.
class Predictor {
public:
  /// Plans with more ops than this are not simulated (the hover says so).
  static constexpr uint64_t maxOps = uint64_t(1) << 22;

  Predictor(const model::Topology &topo, uint32_t elemBytes, double gamma, bool optimize)
      : topo_(topo), elemBytes_(elemBytes), gamma_(gamma), optimize_(optimize) {}

  /// Moves to rank count p, dropping the plans of the previous one.
  llvm::Error setRanks(uint32_t p) {
    plans_.clear();
    p_ = p;
    llvm::Expected<model::Placement> pl = model::place(topo_, p);
    if (!pl)
      return pl.takeError();
    placement_.emplace(std::move(*pl));
    llvm::Expected<std::shared_ptr<const lang::Layout>> layout = layoutOf(topo_, *placement_);
    if (!layout)
      return layout.takeError();
    layout_ = std::move(*layout);
    return llvm::Error::success();
  }

  /// The predicted time in seconds of `a` at the current p for a vector of
  /// `bytes`, or why there is none ("refused by require (...)", too many ops).
  std::variant<double, std::string> time(const sched::Algorithm &a, uint64_t bytes) {
    Entry &e = entry(a);
    if (const std::string *why = std::get_if<std::string>(&e.why))
      return *why;
    model::SimOptions o;
    o.elemBytes = elemBytes_;
    o.bytes = bytes / elemBytes_ * elemBytes_;
    o.gamma = gamma_;
    o.criticalPath = false;
    const double t = std::get<model::PreparedSimulation>(e.why).run(o).time;
    e.last = std::make_pair(o.bytes / elemBytes_, t);
    ++simulations;
    return t;
  }

  /// A time `a` cannot beat at `bytes` (0 when none is known): its time at
  /// the last size it was simulated for, when the element count has grown
  /// from that one by a power of two (or from 0). Then no chunk shrinks —
  /// floor(2(c+1)n/C) - floor(2cn/C) >= floor((c+1)n/C) - floor(cn/C) — so
  /// no op is shorter, and the simulator's times are max-plus functions of
  /// the op durations (Simulator.h): the time cannot drop.
  double lowerBound(const sched::Algorithm &a, uint64_t bytes) const {
    auto it = plans_.find(&a);
    if (it == plans_.end() || !it->second.last)
      return 0;
    const auto [n0, t0] = *it->second.last;
    const uint64_t n = bytes / elemBytes_;
    if (n0 == 0)
      return t0;
    if (n < n0 || n % n0 != 0 || ((n / n0) & (n / n0 - 1)) != 0)
      return 0;
    return t0;
  }

  /// The ops of `a`'s plan at the current p (0: it has none to simulate).
  uint64_t ops(const sched::Algorithm &a) {
    const Entry &e = entry(a);
    return std::holds_alternative<model::PreparedSimulation>(e.why) ? e.plan.numOps() : 0;
  }

  uint64_t simulations = 0; ///< runs so far

private:
  /// A plan and its simulation prepared once, or why there is none (an
  /// empty reason: the plan is built, its simulation not prepared yet).
  struct Entry {
    ir::Plan plan;
    std::variant<model::PreparedSimulation, std::string> why = std::string();
    std::optional<std::pair<uint64_t, double>> last; ///< elements and time of the last run
  };

  /// `a`'s entry at the current p, built and prepared the first time.
  Entry &entry(const sched::Algorithm &a) {
    auto it = plans_.find(&a);
    if (it != plans_.end())
      return it->second;
    Entry &e = plans_.emplace(&a, build(a)).first->second;
    // Prepared where it stays: the simulation refers to the plan.
    if (std::get<std::string>(e.why).empty()) {
      llvm::Expected<model::PreparedSimulation> prep =
          model::PreparedSimulation::prepare(e.plan, topo_, *placement_);
      if (prep)
        e.why = std::move(*prep);
      else
        e.why = "cannot simulate: " + llvm::toString(prep.takeError());
    }
    return e;
  }

  Entry build(const sched::Algorithm &a) const {
    Entry e;
    std::variant<ir::Plan, std::string> plan = instantiate(a);
    if (const std::string *why = std::get_if<std::string>(&plan)) {
      e.why = *why;
      return e;
    }
    e.plan = std::move(std::get<ir::Plan>(plan));
    return e;
  }

  std::variant<ir::Plan, std::string> instantiate(const sched::Algorithm &a) const {
    lang::InstantiateOptions o;
    o.ranks = p_;
    o.layout = layout_;
    o.maxOps = maxOps;
    llvm::Expected<bool> ok = lang::accepts(*a.module, o);
    if (!ok)
      return "refused: " + llvm::toString(ok.takeError());
    if (!*ok)
      return std::string("refused by its require lines at p = ") + std::to_string(p_);
    llvm::Expected<ir::Plan> plan = lang::instantiate(*a.module, o);
    if (!plan) {
      llvm::consumeError(plan.takeError());
      return "more than " + std::to_string(maxOps) + " ops: not simulated";
    }
    if (!optimize_)
      return std::move(*plan);
    // The drop-in's pipeline (its passes are proven where it runs them).
    llvm::Expected<ir::Plan> optimized =
        compiler::optimize(std::move(*plan), dropin::dropinPipeline(/*verifyEach=*/false));
    if (!optimized)
      return "-O2 refused: " + llvm::toString(optimized.takeError());
    return std::move(*optimized);
  }

  const model::Topology &topo_;
  uint32_t elemBytes_;
  double gamma_;
  bool optimize_;
  uint32_t p_ = 0;
  std::optional<model::Placement> placement_;
  std::shared_ptr<const lang::Layout> layout_;
  std::map<const sched::Algorithm *, Entry> plans_; ///< node-based: entries stay put
};

/// The category index of `name` in `h`, added at the end when new.
uint32_t categoryOf(draw::Heatmap &h, llvm::StringRef name) {
  auto it = std::find(h.categories.begin(), h.categories.end(), name.str());
  if (it == h.categories.end())
    it = h.categories.insert(it, name.str());
  return static_cast<uint32_t>(it - h.categories.begin());
}
} // namespace

int runExplain() {
  llvm::Expected<draw::PictureKind> kind = draw::pictureKindFor(output, format);
  if (!kind)
    return reportMisuse(kind.takeError());
  // Every collective the drop-in serves; its plans' collective (both
  // reduce-scatters are served by reduce_scatter_block plans).
  std::optional<dropin::Coll> served;
  for (unsigned i = 0; i < dropin::numColls; ++i)
    if (collective == dropin::name(dropin::Coll(i)))
      served = dropin::Coll(i);
  if (collective == "reduce_scatter_block")
    served = dropin::Coll::ReduceScatter;
  std::optional<ir::Collective> plans = ir::parseCollective(
      served == dropin::Coll::ReduceScatter ? llvm::StringRef("reduce_scatter_block")
                                            : llvm::StringRef(collective.getValue()));
  if (!served || !plans)
    return reportMisuse(misuse("--collective '" + collective + "': the drop-in serves " +
                               dropin::collNames()));
  const dropin::Coll coll = *served;
  const ir::Collective irColl = *plans;
  auto [a, b] = llvm::StringRef(ranks).split("..");
  uint32_t lo = 0, hi = 0;
  if (a.getAsInteger(10, lo) || (b.empty() ? (hi = lo, false) : b.getAsInteger(10, hi)) || lo < 1 ||
      hi < lo || hi > ir::maxRanks)
    return reportMisuse(misuse("--ranks '" + ranks + "' is not a rank count or a range A..B (1.." +
                               std::to_string(ir::maxRanks) + ")"));
  auto [sa, sb] = llvm::StringRef(sizes).split("..");
  uint64_t minBytes = 0, maxBytes = 0;
  if (!rt::parseByteCount(sa.str(), minBytes) || !rt::parseByteCount(sb.str(), maxBytes) ||
      minBytes < 1 || maxBytes < minBytes || maxBytes > (uint64_t(1) << 40))
    return reportMisuse(
        misuse("--sizes '" + sizes + "' is not MIN..MAX bytes (1 <= MIN <= MAX <= 1T; K, M, G)"));
  if (typeSize < 1 || typeSize > 1024)
    return reportMisuse(misuse("--type-size must be 1..1024 bytes"));
  if (by != "table" && by != "model")
    return reportMisuse(misuse("--by '" + by + "' is not table or model"));
  const bool byModel = by == "model";

  // What collc tune chose, one report per rank count: then those are the rows.
  std::vector<draw::TunedChoice> tuned;
  for (const std::string &path : tunedFiles) {
    llvm::Expected<draw::TunedChoice> t = draw::readTunedChoice(path);
    if (!t)
      return reportMisuse(t.takeError());
    if (t->collective != collective)
      return reportMisuse(misuse(llvm::formatv("{0}: tuned for {1}, not {2}", path,
                                               t->collective, collective.getValue())));
    if (t->noncommutative != noncommutative)
      return reportMisuse(misuse(
          llvm::formatv("{0}: tuned {1}, and this picture is for {2} operations{3}", path,
                        t->noncommutative ? "for non-commutative operations"
                                          : "with commutative-only plans allowed",
                        noncommutative ? "non-commutative" : "commutative",
                        noncommutative ? " (collc tune --noncommutative makes one)"
                                       : " (add --noncommutative)")));
    for (const draw::TunedChoice &o : tuned)
      if (o.ranks == t->ranks)
        return reportMisuse(
            misuse(llvm::formatv("{0}: a second report for {1} ranks", path, t->ranks)));
    tuned.push_back(std::move(*t));
  }
  std::sort(tuned.begin(), tuned.end(),
            [](const draw::TunedChoice &x, const draw::TunedChoice &y) { return x.ranks < y.ranks; });
  if (!tuned.empty() && ranks.getNumOccurrences())
    return reportMisuse(misuse("--ranks and --tuned: the rows are the rank counts of the "
                               "tuned reports"));
  std::vector<uint32_t> rowRanks;
  if (tuned.empty())
    rowRanks = rankRows(lo, hi);
  else
    for (const draw::TunedChoice &t : tuned)
      rowRanks.push_back(t.ranks);
  hi = rowRanks.back();

  // The machine, when there is one: its element type and γ.
  std::optional<model::Topology> topo;
  std::optional<Predictor> predictor;
  uint32_t elemBytes = typeSize;
  std::string typeName;
  if (topologyPath.empty()) {
    if (byModel)
      return reportMisuse(misuse("--by model needs --topology FILE: the machine to predict on"));
    if (!dtype.empty())
      return reportMisuse(misuse("--dtype applies with --topology (else --type-size)"));
  } else {
    if (!dtype.empty() && typeSize.getNumOccurrences())
      return reportMisuse(misuse("give --dtype or --type-size, not both"));
    llvm::Expected<model::Topology> t = model::readTopologyFile(topologyPath);
    if (!t)
      return reportMisuse(t.takeError());
    topo = std::move(*t);
    double gamma = topo->gamma;
    if (!dtype.empty() || !typeSize.getNumOccurrences()) {
      const std::string name = dtype.empty() ? std::string("double") : dtype.getValue();
      std::optional<rt::ElemType> et = rt::parseElemType(name);
      if (!et)
        return reportMisuse(misuse("--dtype: unknown element type '" + name + "'"));
      elemBytes = static_cast<uint32_t>(rt::elemSize(*et));
      typeName = std::string(rt::elemTypeName(*et));
      gamma = topo->gammaOf(typeName);
    }
    if (hi > topo->capacity())
      return reportMisuse(misuse(llvm::formatv("--ranks up to {0}, but the topology '{1}' has "
                                               "only {2} slots",
                                               hi, topo->name, topo->capacity())));
    if (optLevel != 0 && optLevel != 2)
      return reportMisuse(misuse("-O" + std::to_string(optLevel) +
                                 ": explain predicts with -O2 (the drop-in's pipeline) or -O0"));
    predictor.emplace(*topo, elemBytes, gamma, optLevel == 2);
  }

  draw::Heatmap h;
  const std::string op = std::string(noncommutative ? "non-commutative" : "commutative") +
                         (userOp ? " user-defined operation" : " predefined operation");
  const std::string elements =
      typeName.empty() ? std::to_string(elemBytes) + "-byte elements"
                       : std::to_string(elemBytes) + "-byte " + typeName + " elements";
  // The collectives that move data combine nothing: no operation to name.
  const bool combines = coll != dropin::Coll::Allgather && coll != dropin::Coll::Bcast &&
                        !dropin::movesBlocks(coll);
  const std::string what =
      std::string(dropin::name(coll)) + (combines ? ", " + op : "") + ", " + elements;
  // The columns are the whole vector as rules match it: p blocks where the
  // call's count is one rank's block.
  const std::string columns = dropin::movesBlocks(coll) || coll == dropin::Coll::Allgather ||
                                      coll == dropin::Coll::ReduceScatter
                                  ? "bytes of all p blocks"
                                  : "bytes per rank";
  h.title = "drop-in default: " + what;
  h.subtitle = "the algorithm the default table picks per rank count (rows) and " + columns +
               " (columns); COLLC_ALGORITHM, rules and plan files come first";
  if (topo)
    h.subtitle += "; hover: the time predicted on " + topo->name +
                  (optLevel == 2 ? " (plans at -O2, as the drop-in runs them)" : " (plans as written, -O0)");
  if (byModel) {
    h.title = "drop-in default and the model's fastest on " + topo->name + ": " + what;
    h.subtitle = "left: the default table's choice per rank count (rows) and " + columns +
                 " (columns); right: the library algorithm predicted fastest on " +
                 topo->name + " (collc simulate's model)";
    h.dotLegend = "the table's choice is predicted at least 10 % slower than the fastest";
  }
  if (!tuned.empty() && !byModel)
    h.title = "drop-in default and collc tune: " + what;
  h.rowAxis = "ranks";
  h.columnAxis = columns;
  std::vector<uint64_t> cols;
  for (uint64_t s = minBytes; s <= maxBytes; s *= 2) {
    cols.push_back(s);
    h.columns.push_back(draw::bytesText(s));
    if (s > maxBytes / 2)
      break;
  }
  h.panels.resize(byModel ? 2 : 1);
  draw::HeatmapPanel &table = h.panels[0];
  if (byModel) {
    table.caption = "drop-in default table";
    h.panels[1].caption = "fastest on " + topo->name + " (simulated)";
  }
  // Categories in library order, so an algorithm keeps its colour.
  for (uint32_t p : rowRanks) {
    h.rows.push_back(std::to_string(p));
    if (predictor)
      if (llvm::Error e = predictor->setRanks(p))
        return reportMisuse(std::move(e));
    auto &cells = table.cells.emplace_back();
    auto &hover = table.hover.emplace_back();
    if (byModel) {
      table.dots.emplace_back();
      h.panels[1].cells.emplace_back();
      h.panels[1].hover.emplace_back();
    }
    for (uint64_t bytes : cols) {
      dropin::CallTraits t;
      t.collective = coll;
      t.ranks = p;
      t.bytes = bytes;
      t.count = bytes / elemBytes;
      t.commutative = !noncommutative;
      t.predefinedOp = !userOp;
      const dropin::DefaultChoice d = dropin::defaultAlgorithm(t);
      cells.push_back(categoryOf(h, d.algorithm));
      const std::string where = llvm::formatv("p = {0}, {1} ({2} elements)", p,
                                              draw::bytesText(bytes), t.count)
                                    .str();
      std::string text = where + ": " + d.algorithm + "\n" + d.reason;
      if (!predictor) {
        hover.push_back(std::move(text));
        continue;
      }
      // The table's choice on the machine.
      const sched::Algorithm *chosen = sched::findAlgorithm(irColl, d.algorithm);
      std::variant<double, std::string> mine =
          chosen ? predictor->time(*chosen, bytes)
                 : std::variant<double, std::string>("not a library algorithm");
      const double *mineTime = std::get_if<double>(&mine);
      text += "\npredicted on " + topo->name + ": " +
              (mineTime ? timeText(*mineTime) : std::get<std::string>(mine));
      if (!byModel) {
        hover.push_back(std::move(text));
        continue;
      }
      // Every library algorithm that serves the call, fastest first (library
      // order among equals). The three fastest are exact; an algorithm whose
      // lower bound (its time at a smaller size) already exceeds the third
      // fastest so far cannot be among them and is not simulated. The
      // smallest plans go first, so that the bound bites on the big ones.
      std::vector<const sched::Algorithm *> serving;
      for (const sched::Algorithm &alg : sched::algorithms())
        if (alg.collective == irColl && !(noncommutative && alg.needsCommutative))
          serving.push_back(&alg);
      std::vector<std::pair<uint64_t, size_t>> byOps; // (ops, index in serving)
      for (size_t k = 0; k < serving.size(); ++k) {
        byOps.push_back({predictor->ops(*serving[k]), k});
      }
      std::stable_sort(byOps.begin(), byOps.end());
      const size_t kept = 3; // the hover lists the three fastest
      std::vector<std::pair<double, size_t>> found; // (time, index in serving)
      size_t refused = 0, pruned = 0;
      for (const auto &[ops, k] : byOps) {
        if (ops == 0) {
          ++refused;
          continue;
        }
        if (!noPrune && found.size() >= kept) {
          std::vector<double> times;
          for (const auto &f : found)
            times.push_back(f.first);
          std::nth_element(times.begin(), times.begin() + (kept - 1), times.end());
          if (predictor->lowerBound(*serving[k], bytes) > times[kept - 1]) {
            ++pruned;
            continue;
          }
        }
        std::variant<double, std::string> r = predictor->time(*serving[k], bytes);
        if (const double *v = std::get_if<double>(&r))
          found.push_back({*v, k});
        else
          ++refused;
      }
      std::sort(found.begin(), found.end()); // by time, then library order
      std::vector<std::pair<double, const sched::Algorithm *>> ranked;
      for (const auto &[v, k] : found)
        ranked.push_back({v, serving[k]});
      const size_t candidates = serving.size() - refused;
      draw::HeatmapPanel &model = h.panels[1];
      if (ranked.empty()) { // cannot happen for the library: something serves every p
        model.cells.back().push_back(cells.back());
        model.hover.back().push_back(where + ": " + d.algorithm + "\nno library plan simulated");
        table.dots.back().push_back(0);
        hover.push_back(std::move(text));
        continue;
      }
      const double best = ranked.front().first;
      const std::string bestName = ranked.front().second->name.str();
      const bool slower = mineTime && *mineTime > 1.1 * best;
      if (mineTime && bestName != d.algorithm)
        text += llvm::formatv(", {0:f2}x the fastest ({1}, {2})", *mineTime / best, bestName,
                              timeText(best))
                    .str();
      table.dots.back().push_back(slower ? 1 : 0);
      hover.push_back(std::move(text));
      std::string mt = where + ": " + bestName + "\nfastest of " + std::to_string(candidates) +
                       " library algorithms on " + topo->name;
      if (pruned)
        mt += " (" + std::to_string(pruned) + " not simulated: slower at a smaller size already)";
      mt += ":";
      for (size_t k = 0; k < ranked.size() && k < 3; ++k)
        mt += (k ? ", " : " ") + ranked[k].second->name.str() + " " + timeText(ranked[k].first);
      if (mineTime)
        mt += llvm::formatv("\nthe default table's choice: {0}, {1} ({2:f2}x)", d.algorithm,
                            timeText(*mineTime), *mineTime / best)
                  .str();
      model.cells.back().push_back(categoryOf(h, bestName));
      model.hover.back().push_back(std::move(mt));
    }
  }
  if (!tuned.empty()) {
    // collc tune's ranges, each report a row; its predicted time where it
    // simulated that very size.
    draw::HeatmapPanel &panel = h.panels.emplace_back();
    std::string machines;
    for (const draw::TunedChoice &t : tuned)
      if (llvm::StringRef(machines).find(t.topology) == llvm::StringRef::npos)
        machines += (machines.empty() ? "" : ", ") + t.topology;
    panel.caption = "collc tune on " + machines;
    if (h.panels.size() == 2)
      h.panels[0].caption = "drop-in default table";
    h.subtitle += "; last: the plan collc tune chose for each size range";
    for (size_t r = 0; r < tuned.size(); ++r) {
      const draw::TunedChoice &t = tuned[r];
      auto &cells = panel.cells.emplace_back();
      auto &hover = panel.hover.emplace_back();
      for (uint64_t bytes : cols) {
        const draw::TunedRange &g = t.rangeOf(bytes);
        cells.push_back(categoryOf(h, g.plan));
        std::string text =
            llvm::formatv("p = {0}, {1} ({2} elements): {3}\ncollc tune on {4} ({5}): {6} {7}",
                          t.ranks, draw::bytesText(bytes), bytes / std::max(1u, t.elemBytes),
                          g.plan,
                          t.topology, t.dtype,
                          g.maxBytes ? "from " + draw::bytesText(g.minBytes) + " up to" : "from",
                          g.maxBytes ? draw::bytesText(*g.maxBytes) + " (exclusive)"
                                     : draw::bytesText(g.minBytes) + " on")
                .str();
        if (const draw::TunedSize *z = t.sizeAt(bytes))
          text += "\npredicted at this size: " + timeText(z->time);
        hover.push_back(std::move(text));
      }
    }
  }
  const std::string svg = draw::heatmapSvg(h);
  return writeOutput(output, *kind == draw::PictureKind::Svg ? svg : draw::htmlPage(h.title, svg))
             ? Success
             : Misuse;
}

} // namespace collc::tool
