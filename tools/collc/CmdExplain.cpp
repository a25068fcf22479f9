// tools/collc/CmdExplain.cpp: `collc explain` — the drop-in's default choice
// of algorithm over rank counts and sizes, as a heatmap (docs/draw.md).
#include "tools/collc/Commands.h"

#include "dropin/Selection.h"
#include "ir/Plan.h"
#include "runtime/bytecode/Bundle.h"
#include "tools/draw/Heatmap.h"
#include "tools/draw/Svg.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

namespace collc::tool {

llvm::cl::SubCommand &ExplainCommand() {
  static llvm::cl::SubCommand sub(
      "explain", "Draw which algorithm the drop-in's default table picks for each rank count "
                 "and size, as a heatmap with the choice and its reason on hover (exit 0 "
                 "drawn, 2 misuse)");
  return sub;
}

namespace {
namespace cl = llvm::cl;
cl::opt<std::string> collective("collective", cl::desc("allreduce (default) or reduce"),
                                cl::value_desc("C"), cl::init("allreduce"),
                                cl::sub(ExplainCommand()), cl::cat(category()));
cl::opt<std::string> ranks("ranks", cl::desc("Rank counts A..B (rows), or one P"),
                           cl::value_desc("A..B"), cl::init("2..128"), cl::sub(ExplainCommand()),
                           cl::cat(category()));
cl::opt<std::string> sizes("sizes",
                           cl::desc("Bytes per rank MIN..MAX, K/M/G = KiB/MiB/GiB (columns: "
                                    "powers of two; default 8..64M)"),
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
} // namespace

int runExplain() {
  llvm::Expected<draw::PictureKind> kind = draw::pictureKindFor(output, format);
  if (!kind)
    return reportMisuse(kind.takeError());
  dropin::Coll coll;
  if (collective == "allreduce")
    coll = dropin::Coll::Allreduce;
  else if (collective == "reduce")
    coll = dropin::Coll::Reduce;
  else
    return reportMisuse(
        misuse("--collective '" + collective + "': the drop-in serves allreduce and reduce"));
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

  draw::Heatmap h;
  h.title = std::string("drop-in default: ") + dropin::name(coll) + ", " +
            (noncommutative ? "non-commutative" : "commutative") +
            (userOp ? " user-defined operation" : " predefined operation") + ", " +
            std::to_string(typeSize) + "-byte elements";
  h.subtitle = "the algorithm the default table picks per rank count (rows) and bytes per rank "
               "(columns); COLLC_ALGORITHM, rules and plan files come first";
  h.rowAxis = "ranks";
  h.columnAxis = "bytes per rank";
  // Categories in library order, so an algorithm keeps its colour.
  std::vector<uint64_t> cols;
  for (uint64_t s = minBytes; s <= maxBytes; s *= 2) {
    cols.push_back(s);
    h.columns.push_back(draw::bytesText(s));
    if (s > maxBytes / 2)
      break;
  }
  for (uint32_t p : rankRows(lo, hi)) {
    h.rows.push_back(std::to_string(p));
    auto &cells = h.cells.emplace_back();
    auto &hover = h.hover.emplace_back();
    for (uint64_t bytes : cols) {
      dropin::CallTraits t;
      t.collective = coll;
      t.ranks = p;
      t.bytes = bytes;
      t.count = bytes / typeSize;
      t.commutative = !noncommutative;
      t.predefinedOp = !userOp;
      const dropin::DefaultChoice d = dropin::defaultAlgorithm(t);
      auto it = std::find(h.categories.begin(), h.categories.end(), d.algorithm);
      if (it == h.categories.end())
        it = h.categories.insert(it, d.algorithm);
      cells.push_back(static_cast<uint32_t>(it - h.categories.begin()));
      // Where a predicted time per algorithm becomes available (a machine
      // model), it goes on the next line of this text.
      hover.push_back(llvm::formatv("p = {0}, {1} ({2} elements): {3}\n{4}", p, draw::bytesText(bytes),
                                    t.count, d.algorithm, d.reason)
                          .str());
    }
  }
  const std::string svg = draw::heatmapSvg(h);
  return writeOutput(output, *kind == draw::PictureKind::Svg ? svg : draw::htmlPage(h.title, svg))
             ? Success
             : Misuse;
}

} // namespace collc::tool
