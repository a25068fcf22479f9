// ir/PlanReader.cpp: the reader of plan text format v1 (yaml-cpp).
//
// Guarantees (see ir/PlanIO.h): a returned plan is well-formed; every error
// names file:line:column (1-based) and a class, `syntax` or `invalid`.
// Internally a failure throws ReadFailure, caught at the entry point; nothing
// else escapes.
#include "ir/PlanIO.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <map>

namespace collc::ir {

namespace {

struct ReadFailure {
  std::string message;
};

class Reader {
public:
  explicit Reader(llvm::StringRef file) : file_(file) {}

  Plan read(const YAML::Node &root);

private:
  [[noreturn]] void fail(const YAML::Mark &at, llvm::StringRef cls,
                         const llvm::Twine &msg) const {
    std::string text;
    if (at.is_null())
      text = llvm::formatv("{0}:1:1: {1}: ", file_, cls).str();
    else
      text = llvm::formatv("{0}:{1}:{2}: {3}: ", file_, at.line + 1, at.column + 1, cls).str();
    throw ReadFailure{text + msg.str()};
  }
  [[noreturn]] void syntax(const YAML::Node &n, const llvm::Twine &msg) const {
    fail(n.Mark(), "syntax", msg);
  }
  [[noreturn]] void invalid(const YAML::Node &n, const llvm::Twine &msg) const {
    fail(n.Mark(), "invalid", msg);
  }

  /// The keys of mapping `map` with their key nodes; rejects non-scalar,
  /// duplicate and unknown keys.
  std::map<std::string, std::pair<YAML::Node, YAML::Node>>
  keys(const YAML::Node &map, llvm::ArrayRef<llvm::StringRef> allowed,
       llvm::StringRef where) const;

  std::string scalar(const YAML::Node &n, llvm::StringRef what) const;
  uint32_t integer(const YAML::Node &n, llvm::StringRef what) const;
  bool boolean(const YAML::Node &n, llvm::StringRef what) const;
  Op readOp(const YAML::Node &n, const Shape &shape, uint32_t rank,
            llvm::SmallVectorImpl<Op> &ops) const;

  std::string file_;
};

std::string quoteList(llvm::ArrayRef<llvm::StringRef> names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    s += (i ? ", " : "") + names[i].str();
  return s;
}

std::map<std::string, std::pair<YAML::Node, YAML::Node>>
Reader::keys(const YAML::Node &map, llvm::ArrayRef<llvm::StringRef> allowed,
             llvm::StringRef where) const {
  std::map<std::string, std::pair<YAML::Node, YAML::Node>> out;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const YAML::Node &k = it->first;
    if (!k.IsScalar())
      syntax(k, llvm::Twine("expected a key name in ") + where);
    std::string key = k.Scalar();
    if (llvm::find(allowed, key) == allowed.end())
      syntax(k, llvm::formatv("unknown key '{0}' in {1} (expected one of: {2})", key, where,
                              quoteList(allowed)));
    if (out.count(key))
      syntax(k, llvm::formatv("duplicate key '{0}' in {1}", key, where));
    out.emplace(key, std::make_pair(k, it->second));
  }
  return out;
}

std::string Reader::scalar(const YAML::Node &n, llvm::StringRef what) const {
  if (!n.IsScalar())
    syntax(n, llvm::formatv("expected a string for '{0}'", what));
  return n.Scalar();
}

uint32_t Reader::integer(const YAML::Node &n, llvm::StringRef what) const {
  if (!n.IsScalar())
    syntax(n, llvm::formatv("expected a non-negative integer for '{0}'", what));
  llvm::StringRef s = n.Scalar();
  uint64_t v = 0;
  bool ok = n.Tag() == "?" && !s.empty() && s.size() <= 10 &&
            llvm::all_of(s, [](char c) { return c >= '0' && c <= '9'; });
  if (ok)
    ok = !s.getAsInteger(10, v) && v <= UINT32_MAX;
  if (!ok)
    syntax(n, llvm::formatv("expected a non-negative integer for '{0}', got '{1}'", what, s));
  return static_cast<uint32_t>(v);
}

bool Reader::boolean(const YAML::Node &n, llvm::StringRef what) const {
  if (n.IsScalar() && n.Tag() == "?") {
    if (n.Scalar() == "true")
      return true;
    if (n.Scalar() == "false")
      return false;
  }
  syntax(n, llvm::formatv("expected true or false for '{0}', got '{1}'", what,
                          n.IsScalar() ? n.Scalar() : std::string("a collection")));
}

Op Reader::readOp(const YAML::Node &n, const Shape &shape, uint32_t rank,
                  llvm::SmallVectorImpl<Op> &ops) const {
  if (!n.IsMap())
    syntax(n, "expected an op mapping like {op: send, to: 1, buf: out, chunk: 0}");
  const YAML::Node kindNode = n["op"];
  if (!kindNode)
    syntax(n, "op is missing its 'op' key");
  std::string kindText = scalar(kindNode, "op");
  std::optional<OpKind> kind = parseOpKind(kindText);
  if (!kind)
    syntax(kindNode, llvm::formatv("unknown op '{0}' (expected send, recv, recv_reduce, "
                                   "reduce or copy)",
                                   kindText));
  llvm::SmallVector<llvm::StringRef, 10> allowed = {"op", "step", "after", "buf", "chunk",
                                                    "count"};
  switch (*kind) {
  case OpKind::Send:
    allowed.push_back("to");
    break;
  case OpKind::Recv:
    allowed.push_back("from");
    break;
  case OpKind::RecvReduce:
    allowed.append({"from", "dst", "dst_chunk", "order"});
    break;
  case OpKind::Reduce:
    allowed.append({"src", "src_chunk", "dst", "dst_chunk", "order"});
    break;
  case OpKind::Copy:
    allowed.append({"src", "src_chunk"});
    break;
  }
  auto fields = keys(n, allowed, (kindText + " op").c_str());
  auto need = [&](llvm::StringRef key) -> const YAML::Node & {
    auto it = fields.find(key.str());
    if (it == fields.end())
      syntax(n, llvm::formatv("{0} op is missing '{1}'", kindText, key));
    return it->second.second;
  };
  auto has = [&](llvm::StringRef key) { return fields.count(key.str()) != 0; };
  auto buffer = [&](const YAML::Node &v, llvm::StringRef what) {
    std::string b = scalar(v, what);
    std::optional<Buffer> buf = parseBuffer(b);
    if (!buf)
      syntax(v, llvm::formatv("unknown buffer '{0}' for '{1}' (expected in, out or tmp)", b,
                              what));
    return *buf;
  };

  Op op;
  op.kind = *kind;
  if (has("step") && has("after"))
    syntax(fields["after"].first, "an op takes at most one of 'step' and 'after'");
  if (has("step")) {
    op.deps = DepKind::Step;
    op.step = integer(fields["step"].second, "step");
  } else if (has("after")) {
    const YAML::Node &a = fields["after"].second;
    if (!a.IsSequence())
      syntax(a, "expected a list of op indices for 'after', like [0, 2]");
    op.deps = DepKind::After;
    for (const YAML::Node &e : a)
      op.after.push_back(integer(e, "after"));
    if (op.after.empty())
      op.deps = DepKind::None;
  }
  if (op.kind == OpKind::Send)
    op.peer = integer(need("to"), "to");
  else if (isMessage(op.kind))
    op.peer = integer(need("from"), "from");
  op.buf = buffer(need("buf"), "buf");
  op.chunk = integer(need("chunk"), "chunk");
  if (has("count"))
    op.count = integer(fields["count"].second, "count");
  if (hasSrc(op.kind)) {
    op.src = buffer(need("src"), "src");
    op.srcChunk = has("src_chunk") ? integer(fields["src_chunk"].second, "src_chunk") : op.chunk;
  }
  if (has("dst")) {
    op.hasDst = true;
    op.dst = buffer(fields["dst"].second, "dst");
    op.dstChunk = has("dst_chunk") ? integer(fields["dst_chunk"].second, "dst_chunk") : op.chunk;
  } else if (has("dst_chunk")) {
    syntax(fields["dst_chunk"].first, "'dst_chunk' needs 'dst'");
  }
  if (has("order")) {
    const YAML::Node &o = fields["order"].second;
    std::string text = scalar(o, "order");
    std::optional<Order> order = parseOrder(op.kind, text);
    if (!order)
      syntax(o, llvm::formatv("unknown order '{0}' for {1} (expected {2} or buf_first)", text,
                              kindText, orderName(op.kind, Order::OtherFirst)));
    op.order = *order;
  }
  ops.push_back(op);
  if (std::optional<std::string> e = checkOp(shape, rank, ops, ops.size() - 1))
    invalid(n, llvm::formatv("rank {0}, op {1} ({2}): {3}", rank, ops.size() - 1,
                             describe(op), *e));
  return op;
}

Plan Reader::read(const YAML::Node &root) {
  if (!root.IsMap())
    syntax(root, "expected a plan: a mapping that starts with 'format: collc-plan/1'");
  static const llvm::StringRef topKeys[] = {"format",  "collective",  "algorithm",
                                            "ranks",   "root",        "chunks",
                                            "scratch", "commutative", "in_place",
                                            "programs"};
  auto fields = keys(root, topKeys, "plan");
  auto need = [&](llvm::StringRef key) -> const YAML::Node & {
    auto it = fields.find(key.str());
    if (it == fields.end())
      syntax(root, llvm::formatv("plan is missing '{0}'", key));
    return it->second.second;
  };
  auto has = [&](llvm::StringRef key) { return fields.count(key.str()) != 0; };

  const YAML::Node &fmt = need("format");
  std::string tag = scalar(fmt, "format");
  if (tag != formatTag) {
    llvm::StringRef version = llvm::StringRef(tag);
    if (version.consume_front("collc-plan/") && !version.empty() &&
        llvm::all_of(version, [](char c) { return c >= '0' && c <= '9'; }))
      invalid(fmt, llvm::formatv("unsupported format '{0}': this collc reads {1}", tag,
                                 formatTag));
    syntax(fmt, llvm::formatv("unknown format '{0}' (expected {1})", tag, formatTag));
  }

  Plan plan;
  Shape &shape = plan.shape;
  const YAML::Node &coll = need("collective");
  std::string collText = scalar(coll, "collective");
  std::optional<Collective> c = parseCollective(collText);
  if (!c)
    syntax(coll, llvm::formatv("unknown collective '{0}' (expected allreduce, reduce, "
                               "reduce_scatter_block, allgather, bcast, scan or exscan)",
                               collText));
  shape.collective = *c;
  plan.algorithm = has("algorithm") ? scalar(fields["algorithm"].second, "algorithm")
                                    : std::string("custom");
  shape.ranks = integer(need("ranks"), "ranks");
  if (hasRoot(shape.collective))
    shape.root = integer(need("root"), "root");
  else if (has("root"))
    syntax(fields["root"].first,
           llvm::formatv("'root' is only allowed for reduce and bcast, not {0}", collText));
  shape.chunks = integer(need("chunks"), "chunks");
  if (has("scratch"))
    shape.scratch = integer(fields["scratch"].second, "scratch");
  if (has("commutative"))
    shape.commutative = boolean(fields["commutative"].second, "commutative");
  if (has("in_place"))
    shape.inPlace = boolean(fields["in_place"].second, "in_place");
  if (std::optional<ShapeError> e = checkShape(shape)) {
    auto it = fields.find(e->field.str());
    invalid(it != fields.end() ? it->second.second : coll, e->message);
  }

  plan.programs.resize(shape.ranks);
  const YAML::Node &progs = need("programs");
  if (!progs.IsMap() && !progs.IsNull())
    syntax(progs, "expected 'programs' to map each rank to its list of ops");
  std::vector<bool> seen(shape.ranks, false);
  for (auto it = progs.begin(); progs.IsMap() && it != progs.end(); ++it) {
    uint32_t rank = integer(it->first, "rank");
    if (rank >= shape.ranks)
      invalid(it->first,
              llvm::formatv("rank {0} out of range (ranks = {1})", rank, shape.ranks));
    if (seen[rank])
      syntax(it->first, llvm::formatv("rank {0} listed twice in 'programs'", rank));
    seen[rank] = true;
    const YAML::Node &list = it->second;
    if (list.IsNull())
      continue;
    if (!list.IsSequence())
      syntax(list, llvm::formatv("expected a list of ops for rank {0}", rank));
    auto &ops = plan.programs[rank].ops;
    ops.reserve(list.size());
    for (const YAML::Node &opNode : list)
      readOp(opNode, shape, rank, ops);
  }
  return plan;
}

} // namespace

llvm::Expected<Plan> parsePlan(llvm::StringRef text, llvm::StringRef fileName) {
  try {
    YAML::Node root = YAML::Load(text.str());
    return Reader(fileName).read(root);
  } catch (const ReadFailure &f) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), f.message);
  } catch (const YAML::DeepRecursion &e) {
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("{0}:{1}:{2}: syntax: collections nested too deeply (more than {3} "
                      "levels)",
                      fileName, e.mark.line + 1, e.mark.column + 1, e.depth())
            .str());
  } catch (const YAML::Exception &e) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   llvm::formatv("{0}:{1}:{2}: syntax: {3}", fileName,
                                                 e.mark.line + 1, e.mark.column + 1, e.msg)
                                       .str());
  }
}

llvm::Expected<Plan> readPlanFile(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buf)
    return llvm::createStringError(buf.getError(), "cannot read '%s': %s",
                                   path.str().c_str(), buf.getError().message().c_str());
  return parsePlan((*buf)->getBuffer(), path == "-" ? "<stdin>" : path);
}

} // namespace collc::ir
