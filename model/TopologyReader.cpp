// model/TopologyReader.cpp: the reader and printer of `collc-topology/1`
// (docs/topology.md).
//
// Guarantees: a returned topology passes checkTopology; every error names
// file:line:column (1-based) and a class, `syntax` (malformed YAML, unknown,
// duplicate or missing keys, wrong types, values without a unit) or `invalid`
// (values out of range). Internally a failure throws Failure, caught at the
// entry point.
#include "model/Topology.h"

#include "ir/YamlDoc.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

namespace collc::model {

namespace {

using Node = ir::yaml::Node;

struct Failure {
  std::string message;
};

/// The datatype names a `reduce` map may use (collc-bench's --dtype).
const llvm::StringRef dtypeNames[] = {
#define COLLC_ELEM_TYPE(Enum, Name, Repr, Class) Name,
#include "runtime/kernels/ElemTypes.def"
};

class Reader {
public:
  explicit Reader(llvm::StringRef file) : file_(file) {}
  Topology read(Node root);

private:
  [[noreturn]] void fail(Node at, llvm::StringRef cls, const llvm::Twine &msg) const {
    int line = at && at.hasMark() ? at.line() + 1 : 1;
    int col = at && at.hasMark() ? at.column() + 1 : 1;
    throw Failure{llvm::formatv("{0}:{1}:{2}: {3}: ", file_, line, col, cls).str() + msg.str()};
  }
  [[noreturn]] void syntax(Node n, const llvm::Twine &msg) const { fail(n, "syntax", msg); }
  [[noreturn]] void invalid(Node n, const llvm::Twine &msg) const { fail(n, "invalid", msg); }

  using Fields = ir::yaml::Fields;
  Fields keys(Node map, llvm::ArrayRef<llvm::StringRef> allowed, llvm::StringRef where) const;
  Node require(Node map, const Fields &f, llvm::StringRef name, llvm::StringRef where) const {
    Node v = f.value(name);
    if (!v)
      syntax(map, llvm::formatv("missing key '{0}' in {1}", name, where));
    return v;
  }
  llvm::StringRef scalar(Node n, llvm::StringRef what) const;
  uint32_t integer(Node n, llvm::StringRef what) const;
  double time(Node n, llvm::StringRef what) const;
  double bandwidth(Node n, llvm::StringRef what) const;

  std::string file_;
};

Reader::Fields Reader::keys(Node map, llvm::ArrayRef<llvm::StringRef> allowed,
                            llvm::StringRef where) const {
  if (!map.isMap())
    syntax(map, llvm::formatv("expected a mapping for {0}", where));
  Fields out;
  if (std::optional<ir::yaml::NodeProblem> bad = ir::yaml::readFields(map, allowed, where, out))
    syntax(bad->at, bad->message);
  return out;
}

llvm::StringRef Reader::scalar(Node n, llvm::StringRef what) const {
  if (!n.isScalar())
    syntax(n, llvm::formatv("expected a string for '{0}'", what));
  return n.scalar();
}

uint32_t Reader::integer(Node n, llvm::StringRef what) const {
  llvm::StringRef s = n.isScalar() ? n.scalar() : llvm::StringRef();
  uint64_t v = 0;
  if (!n.isScalar() || !n.plain() || s.empty() || s.size() > 10 ||
      !llvm::all_of(s, [](char c) { return c >= '0' && c <= '9'; }) || s.getAsInteger(10, v) ||
      v > UINT32_MAX)
    syntax(n, llvm::formatv("expected a non-negative integer for '{0}', got '{1}'", what, s));
  return static_cast<uint32_t>(v);
}

double Reader::time(Node n, llvm::StringRef what) const {
  llvm::StringRef s = scalar(n, what);
  std::optional<double> v = parseTime(s);
  if (!v)
    syntax(n, llvm::formatv("expected a time with its unit for '{0}' (such as 1.5us, 800ns, "
                            "2ms), got '{1}'",
                            what, s));
  return *v;
}

double Reader::bandwidth(Node n, llvm::StringRef what) const {
  llvm::StringRef s = scalar(n, what);
  std::optional<double> v = parseBandwidth(s);
  if (!v)
    syntax(n, llvm::formatv("expected a bandwidth for '{0}' (such as 12.5GB/s, 100Gb/s, "
                            "800MiB/s, inf), got '{1}'",
                            what, s));
  return *v;
}

Topology Reader::read(Node root) {
  if (!root || root.isNull())
    syntax(root, "empty document: expected a topology (format: collc-topology/1)");
  static const llvm::StringRef topKeys[] = {"format", "name",    "description", "levels",
                                            "reduce", "copy",    "mapping",     "by",
                                            "map"};
  Fields f = keys(root, topKeys, "the topology");
  Topology t;
  Node format = require(root, f, "format", "the topology");
  if (scalar(format, "format") != topologyFormatTag)
    syntax(format, llvm::formatv("unsupported format '{0}' (this build reads {1})",
                                 format.scalar(), topologyFormatTag));
  if (Node n = f.value("name"))
    t.name = scalar(n, "name").str();
  else
    t.name = llvm::sys::path::stem(file_).str();
  if (Node n = f.value("description"))
    t.description = scalar(n, "description").str();

  // Levels, innermost first.
  Node levels = require(root, f, "levels", "the topology");
  if (!levels.isSequence() || levels.size() == 0)
    syntax(levels, "expected a non-empty list of levels (innermost first)");
  uint64_t below = 1; // ranks per level-(j-1) group
  for (uint32_t j = 0; j < levels.size(); ++j) {
    Node ln = levels.element(j);
    static const llvm::StringRef levelKeys[] = {"name", "size", "latency", "bandwidth", "share"};
    const std::string where = llvm::formatv("level {0}", j).str();
    Fields lf = keys(ln, levelKeys, where);
    Level l;
    Node name = require(ln, lf, "name", where);
    l.name = scalar(name, "name").str();
    if (l.name.empty())
      invalid(name, "a level needs a non-empty name");
    if (t.levelIndex(l.name))
      invalid(name, llvm::formatv("a second level named '{0}'", l.name));
    Node size = require(ln, lf, "size", where);
    l.size = integer(size, "size");
    if (l.size < 1)
      invalid(size, llvm::formatv("level '{0}': size must be at least 1", l.name));
    l.alpha = time(require(ln, lf, "latency", where), "latency");
    l.beta = bandwidth(require(ln, lf, "bandwidth", where), "bandwidth");
    if (Node share = lf.value("share")) {
      l.share = integer(share, "share");
      if (l.share < 1 || l.share > below)
        invalid(share, llvm::formatv("level '{0}': share must be 1..{1}, the ranks of one {2}",
                                     l.name, below,
                                     j == 0 ? llvm::StringRef("slot (level 0 links are "
                                                              "per rank)")
                                            : llvm::StringRef(t.levels[j - 1].name)));
    }
    below *= l.size;
    if (below > (uint64_t(1) << 32))
      invalid(size, "the topology would have more than 2^32 slots");
    t.levels.push_back(std::move(l));
  }

  // Costs of local work.
  Node reduce = require(root, f, "reduce", "the topology");
  if (reduce.isScalar()) {
    t.gamma = bandwidth(reduce, "reduce");
  } else {
    Fields rf = keys(reduce, {}, "'reduce'");
    t.gamma = bandwidth(require(reduce, rf, "default", "'reduce'"), "default");
    for (const Fields::Field &x : rf.list) {
      if (x.name == "default")
        continue;
      if (!llvm::is_contained(dtypeNames, x.name))
        syntax(x.key, llvm::formatv("unknown datatype '{0}' in 'reduce' (expected default or "
                                    "one of: {1})",
                                    x.name, ir::yaml::joined(dtypeNames)));
      t.gammaByType.push_back({x.name.str(), bandwidth(x.value, x.name)});
    }
  }
  if (Node copy = f.value("copy"))
    t.copyBeta = bandwidth(copy, "copy");

  // Mapping.
  Node by = f.value("by"), map = f.value("map");
  Node mapping = f.value("mapping");
  llvm::StringRef m = mapping ? scalar(mapping, "mapping") : "block";
  if (m == "block")
    t.mapping = Mapping::Block;
  else if (m == "round-robin")
    t.mapping = Mapping::RoundRobin;
  else if (m == "explicit")
    t.mapping = Mapping::Explicit;
  else
    syntax(mapping, llvm::formatv("unknown mapping '{0}' (expected block, round-robin or "
                                  "explicit)",
                                  m));
  if (by && t.mapping != Mapping::RoundRobin)
    syntax(by, "'by' belongs to 'mapping: round-robin'");
  if (map && t.mapping != Mapping::Explicit)
    syntax(map, "'map' belongs to 'mapping: explicit'");
  const uint32_t k = static_cast<uint32_t>(t.levels.size());
  if (t.mapping == Mapping::RoundRobin) {
    t.mapBy = k >= 2 ? k - 2 : 0;
    if (by) {
      std::optional<uint32_t> j = t.levelIndex(scalar(by, "by"));
      if (!j)
        invalid(by, llvm::formatv("'by' names no level: '{0}'", by.scalar()));
      t.mapBy = *j;
    }
  }
  if (t.mapping == Mapping::Explicit) {
    if (!map)
      syntax(mapping, "'mapping: explicit' needs 'map', one location per rank");
    if (!map.isSequence() || map.size() == 0)
      syntax(map, "expected a non-empty list of locations for 'map'");
    for (uint32_t r = 0; r < map.size(); ++r) {
      Node loc = map.element(r);
      if (!loc.isSequence() || loc.size() != k)
        syntax(loc, llvm::formatv("rank {0}: expected a location of {1} coordinates, outermost "
                                  "level first",
                                  r, k));
      std::vector<uint32_t> coords(k);
      for (uint32_t i = 0; i < k; ++i) {
        const uint32_t j = k - 1 - i; // the text is outermost first
        Node c = loc.element(i);
        coords[j] = integer(c, "map");
        if (coords[j] >= t.levels[j].size)
          invalid(c, llvm::formatv("rank {0}: coordinate {1} of level '{2}' is not below its "
                                   "size {3}",
                                   r, coords[j], t.levels[j].name, t.levels[j].size));
      }
      t.map.push_back(std::move(coords));
    }
  }
  assert(!checkTopology(t) && "the reader checks every invariant");
  return t;
}

} // namespace

llvm::Expected<Topology> parseTopology(llvm::StringRef text, llvm::StringRef fileName) {
  ir::yaml::SyntaxError bad;
  std::unique_ptr<ir::yaml::Doc> doc = ir::yaml::Doc::parse(text, bad);
  if (!doc)
    return llvm::make_error<TopologyReadError>(
        llvm::formatv("{0}:{1}:{2}: syntax: {3}", fileName, bad.line + 1, bad.column + 1,
                      bad.message)
            .str());
  try {
    return Reader(fileName).read(doc->root());
  } catch (const Failure &f) {
    return llvm::make_error<TopologyReadError>(f.message);
  }
}

llvm::Expected<Topology> readTopologyFile(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buf)
    return llvm::make_error<TopologyReadError>(
        llvm::formatv("cannot read '{0}': {1}", path, buf.getError().message()).str());
  return parseTopology((*buf)->getBuffer(), path == "-" ? "<stdin>" : path);
}

// --- printer ----------------------------------------------------------------------

namespace {
/// A scalar quoted when YAML would read it as something else.
std::string quoted(llvm::StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += llvm::formatv("\\x{0:X-2}", unsigned(static_cast<unsigned char>(c))).str();
    } else {
      out += c;
    }
  }
  return out + "\"";
}
} // namespace

void printTopology(const Topology &t, llvm::raw_ostream &os) {
  os << "format: " << topologyFormatTag << '\n';
  os << "name: " << quoted(t.name) << '\n';
  if (!t.description.empty())
    os << "description: " << quoted(t.description) << '\n';
  os << "levels:                # innermost first\n";
  for (const Level &l : t.levels) {
    os << "  - {name: " << quoted(l.name) << ", size: " << l.size
       << ", latency: " << formatTime(l.alpha) << ", bandwidth: " << formatBandwidth(l.beta);
    if (l.share != 1)
      os << ", share: " << l.share;
    os << "}\n";
  }
  if (t.gammaByType.empty()) {
    os << "reduce: " << formatBandwidth(t.gamma) << '\n';
  } else {
    os << "reduce:\n  default: " << formatBandwidth(t.gamma) << '\n';
    for (const ReduceCost &c : t.gammaByType)
      os << "  " << c.dtype << ": " << formatBandwidth(c.gamma) << '\n';
  }
  if (t.copyBeta != 0)
    os << "copy: " << formatBandwidth(t.copyBeta) << '\n';
  switch (t.mapping) {
  case Mapping::Block:
    os << "mapping: block\n";
    break;
  case Mapping::RoundRobin:
    os << "mapping: round-robin\nby: " << quoted(t.levels[t.mapBy].name) << '\n';
    break;
  case Mapping::Explicit:
    os << "mapping: explicit\nmap:                  # one location per rank, outermost first\n";
    for (const std::vector<uint32_t> &loc : t.map) {
      os << "  - [";
      for (size_t i = loc.size(); i-- > 0;)
        os << loc[i] << (i ? ", " : "");
      os << "]\n";
    }
    break;
  }
}

std::string printTopology(const Topology &t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  printTopology(t, os);
  return os.str();
}

} // namespace collc::model
