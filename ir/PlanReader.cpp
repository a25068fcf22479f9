// ir/PlanReader.cpp: the reader of plan text format v1 (yaml-cpp events, ir/YamlDoc.h).
//
// Guarantees (see ir/PlanIO.h): a returned plan is well-formed; every error
// names file:line:column (1-based) and a class, `syntax` or `invalid`.
// Internally a failure throws ReadFailure, caught at the entry point; nothing
// else escapes.
#include "ir/PlanIO.h"
#include "ir/YamlDoc.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <optional>
#include <set>

namespace collc::ir {

namespace {

struct ReadFailure {
  ReadErrorKind kind;
  std::string message;
};

class Reader {
public:
  explicit Reader(llvm::StringRef file) : file_(file) {}

  Plan read(yaml::Node root);

private:
  using Node = yaml::Node;
  [[noreturn]] void fail(Node at, ReadErrorKind kind, const llvm::Twine &msg) const {
    const llvm::StringRef cls = kind == ReadErrorKind::Invalid ? "invalid" : "syntax";
    std::string text;
    if (!at.hasMark())
      text = llvm::formatv("{0}:1:1: {1}: ", file_, cls).str();
    else
      text = llvm::formatv("{0}:{1}:{2}: {3}: ", file_, at.line() + 1, at.column() + 1, cls)
                 .str();
    throw ReadFailure{kind, text + msg.str()};
  }
  [[noreturn]] void syntax(Node n, const llvm::Twine &msg) const {
    fail(n, ReadErrorKind::Syntax, msg);
  }
  /// Records the first `invalid` and reads on: a `syntax` error anywhere in
  /// the file wins over it (the file is not a plan), whatever their order;
  /// read() reports it at the end.
  void invalid(Node n, const llvm::Twine &msg) const {
    if (firstInvalid_)
      return;
    try {
      fail(n, ReadErrorKind::Invalid, msg);
    } catch (const ReadFailure &f) {
      firstInvalid_ = f;
    }
  }

  using Fields = yaml::Fields;
  /// The keys of mapping `map` with their key nodes; rejects non-scalar,
  /// duplicate and unknown keys.
  Fields keys(Node map, llvm::ArrayRef<llvm::StringRef> allowed, llvm::StringRef where) const;

  llvm::StringRef scalar(Node n, llvm::StringRef what) const;
  uint32_t integer(Node n, llvm::StringRef what) const;
  uint32_t peer(Node n, llvm::StringRef what) const;
  bool boolean(Node n, llvm::StringRef what) const;
  /// Reads one op; `check`: also check it against the shape (checkOp),
  /// which needs a valid shape and rank.
  void readOp(Node n, const Shape &shape, uint32_t rank, llvm::SmallVectorImpl<Op> &ops,
              bool check) const;

  std::string file_;
  mutable std::optional<ReadFailure> firstInvalid_;
};

Reader::Fields Reader::keys(Node map, llvm::ArrayRef<llvm::StringRef> allowed,
                            llvm::StringRef where) const {
  Fields out;
  if (std::optional<yaml::NodeProblem> bad = yaml::readFields(map, allowed, where, out))
    syntax(bad->at, bad->message);
  return out;
}

llvm::StringRef Reader::scalar(Node n, llvm::StringRef what) const {
  if (!n.isScalar())
    syntax(n, llvm::formatv("expected a string for '{0}'", what));
  return n.scalar();
}

uint32_t Reader::integer(Node n, llvm::StringRef what) const {
  if (!n.isScalar())
    syntax(n, llvm::formatv("expected a non-negative integer for '{0}'", what));
  llvm::StringRef s = n.scalar();
  uint64_t v = 0;
  bool ok = n.plain() && !s.empty() && s.size() <= 10 &&
            llvm::all_of(s, [](char c) { return c >= '0' && c <= '9'; });
  if (ok)
    ok = !s.getAsInteger(10, v) && v <= UINT32_MAX;
  if (!ok)
    syntax(n, llvm::formatv("expected a non-negative integer for '{0}', got '{1}'", what, s));
  return static_cast<uint32_t>(v);
}

// A rank number that may be out of range, negative included: the verifier
// reports it as `mismatch` (docs/plan-format.md). Kept as int32 bits.
uint32_t Reader::peer(Node n, llvm::StringRef what) const {
  llvm::StringRef s = n.isScalar() ? n.scalar() : llvm::StringRef();
  llvm::StringRef digits = s;
  digits.consume_front("-");
  int64_t v = 0;
  bool ok = n.isScalar() && n.plain() && !digits.empty() && digits.size() <= 10 &&
            llvm::all_of(digits, [](char c) { return c >= '0' && c <= '9'; }) &&
            !s.getAsInteger(10, v) && v >= INT32_MIN && v <= INT32_MAX;
  if (!ok)
    syntax(n, llvm::formatv("expected an integer rank for '{0}', got '{1}'", what, s));
  return static_cast<uint32_t>(static_cast<int32_t>(v));
}

bool Reader::boolean(Node n, llvm::StringRef what) const {
  if (n.plain()) {
    if (n.scalar() == "true")
      return true;
    if (n.scalar() == "false")
      return false;
  }
  syntax(n, llvm::formatv("expected true or false for '{0}', got '{1}'", what,
                          n.isScalar() ? n.scalar() : llvm::StringRef("a collection")));
}

void Reader::readOp(Node n, const Shape &shape, uint32_t rank,
                    llvm::SmallVectorImpl<Op> &ops, bool check) const {
  if (!n.isMap())
    syntax(n, "expected an op mapping like {op: send, to: 1, buf: out, chunk: 0}");
  const Node kindNode = n.lookup("op");
  if (!kindNode)
    syntax(n, "op is missing its 'op' key");
  llvm::StringRef kindText = scalar(kindNode, "op");
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
  auto fields = keys(n, allowed, (kindText + " op").str());
  auto need = [&](llvm::StringRef key) {
    const Fields::Field *f = fields.find(key);
    if (!f)
      syntax(n, llvm::formatv("{0} op is missing '{1}'", kindText, key));
    return f->value;
  };
  auto has = [&](llvm::StringRef key) { return fields.has(key); };
  auto buffer = [&](Node v, llvm::StringRef what) {
    llvm::StringRef b = scalar(v, what);
    std::optional<Buffer> buf = parseBuffer(b);
    if (!buf)
      syntax(v, llvm::formatv("unknown buffer '{0}' for '{1}' (expected in, out or tmp)", b,
                              what));
    return *buf;
  };

  Op op;
  op.kind = *kind;
  op.loc.line = n.hasMark() ? uint32_t(n.line() + 1) : 0;
  if (has("step") && has("after"))
    syntax(fields.key("after"), "an op takes at most one of 'step' and 'after'");
  if (has("step")) {
    op.deps = DepKind::Step;
    op.step = integer(fields.value("step"), "step");
  } else if (has("after")) {
    const Node a = fields.value("after");
    if (!a.isSequence())
      syntax(a, "expected a list of op indices for 'after', like [0, 2]");
    op.deps = DepKind::After;
    for (uint32_t i = 0, e = a.size(); i < e; ++i)
      op.after.push_back(integer(a.element(i), "after"));
    if (op.after.empty())
      op.deps = DepKind::None;
  }
  if (op.kind == OpKind::Send)
    op.peer = peer(need("to"), "to");
  else if (isMessage(op.kind))
    op.peer = peer(need("from"), "from");
  op.buf = buffer(need("buf"), "buf");
  op.chunk = integer(need("chunk"), "chunk");
  if (has("count"))
    op.count = integer(fields.value("count"), "count");
  if (hasSrc(op.kind)) {
    op.src = buffer(need("src"), "src");
    op.srcChunk = has("src_chunk") ? integer(fields.value("src_chunk"), "src_chunk") : op.chunk;
  }
  if (has("dst")) {
    op.hasDst = true;
    op.dst = buffer(fields.value("dst"), "dst");
    op.dstChunk = has("dst_chunk") ? integer(fields.value("dst_chunk"), "dst_chunk") : op.chunk;
  } else if (has("dst_chunk")) {
    syntax(fields.key("dst_chunk"), "'dst_chunk' needs 'dst'");
  }
  if (has("order")) {
    const Node o = fields.value("order");
    llvm::StringRef text = scalar(o, "order");
    std::optional<Order> order = parseOrder(op.kind, text);
    if (!order)
      syntax(o, llvm::formatv("unknown order '{0}' for {1} (expected {2} or buf_first)", text,
                              kindText, orderName(op.kind, Order::OtherFirst)));
    op.order = *order;
  }
  ops.push_back(op);
  if (!check)
    return;
  if (std::optional<std::string> e = checkOp(shape, rank, ops, ops.size() - 1))
    invalid(n, llvm::formatv("rank {0}, op {1} ({2}): {3}", rank, ops.size() - 1,
                             describe(op), *e));
}

Plan Reader::read(Node root) {
  if (!root.isMap())
    syntax(root, "expected a plan: a mapping that starts with 'format: collc-plan/1'");
  static const llvm::StringRef topKeys[] = {"format",  "collective",  "algorithm",
                                            "ranks",   "root",        "chunks",
                                            "scratch", "commutative", "in_place",
                                            "programs"};
  // Another version's plan is read no further — not even its key names,
  // which are that version's: its `format` is looked at first.
  if (Fields any; !yaml::readFields(root, {}, "plan", any))
    if (const Fields::Field *f = any.find("format"); f && f->value.isScalar()) {
      llvm::StringRef version = f->value.scalar();
      if (version != formatTag && version.consume_front("collc-plan/") && !version.empty() &&
          llvm::all_of(version, [](char c) { return c >= '0' && c <= '9'; }))
        fail(f->value, ReadErrorKind::Invalid,
             llvm::formatv("unsupported format '{0}': this collc reads {1}",
                           f->value.scalar(), formatTag));
    }
  auto fields = keys(root, topKeys, "plan");
  auto need = [&](llvm::StringRef key) {
    const Fields::Field *f = fields.find(key);
    if (!f)
      syntax(root, llvm::formatv("plan is missing '{0}'", key));
    return f->value;
  };
  auto has = [&](llvm::StringRef key) { return fields.has(key); };

  const Node fmt = need("format");
  llvm::StringRef tag = scalar(fmt, "format");
  if (tag != formatTag) // (another collc-plan/N was refused above)
    syntax(fmt, llvm::formatv("unknown format '{0}' (expected {1})", tag, formatTag));

  Plan plan;
  plan.source = file_;
  Shape &shape = plan.shape;
  const Node coll = need("collective");
  llvm::StringRef collText = scalar(coll, "collective");
  std::optional<Collective> c = parseCollective(collText);
  if (!c)
    syntax(coll, llvm::formatv("unknown collective '{0}' (expected {1})", collText,
                               collectiveNames()));
  shape.collective = *c;
  plan.algorithm = "custom";
  if (has("algorithm")) {
    // The one free-form string of a plan; the bytecode carries it as UTF-8.
    llvm::StringRef name = scalar(fields.value("algorithm"), "algorithm");
    const auto *begin = reinterpret_cast<const llvm::UTF8 *>(name.begin());
    if (!llvm::isLegalUTF8String(&begin, reinterpret_cast<const llvm::UTF8 *>(name.end())))
      syntax(fields.value("algorithm"), "the algorithm name is not valid UTF-8");
    plan.algorithm = name.str();
  }
  shape.ranks = integer(need("ranks"), "ranks");
  if (hasRoot(shape.collective))
    shape.root = integer(need("root"), "root");
  else if (has("root")) // a known key with a well-typed value: the shape breaks a rule
    (void)integer(fields.value("root"), "root");
  shape.chunks = integer(need("chunks"), "chunks");
  if (has("scratch"))
    shape.scratch = integer(fields.value("scratch"), "scratch");
  if (has("commutative"))
    shape.commutative = boolean(fields.value("commutative"), "commutative");
  if (has("in_place"))
    shape.inPlace = boolean(fields.value("in_place"), "in_place");
  if (!hasRoot(shape.collective) && has("root"))
    invalid(fields.key("root"),
            llvm::formatv("'root' is only allowed for reduce and bcast, not {0}", collText));
  bool shapeOk = true;
  if (std::optional<ShapeError> e = checkShape(shape)) {
    const Fields::Field *f = fields.find(e->field);
    invalid(f ? f->value : coll, e->message);
    shapeOk = false; // the programs are still read, for syntax only
  }

  if (shapeOk)
    plan.programs.resize(shape.ranks);
  const Node progs = need("programs");
  if (!progs.isMap() && !progs.isNull())
    syntax(progs, "expected 'programs' to map each rank to its list of ops");
  std::set<uint32_t> seen;
  for (uint32_t r = 0, e = progs.size(); r < e; ++r) {
    const Node rankNode = progs.key(r);
    uint32_t rank = integer(rankNode, "rank");
    const bool inRange = shapeOk && rank < shape.ranks;
    if (shapeOk && !inRange)
      invalid(rankNode,
              llvm::formatv("rank {0} out of range (ranks = {1})", rank, shape.ranks));
    if (!seen.insert(rank).second)
      syntax(rankNode, llvm::formatv("rank {0} listed twice in 'programs'", rank));
    const Node list = progs.value(r);
    if (list.isNull())
      continue;
    if (!list.isSequence())
      syntax(list, llvm::formatv("expected a list of ops for rank {0}", rank));
    llvm::SmallVector<Op, 0> unchecked;
    auto &ops = inRange ? plan.programs[rank].ops : unchecked;
    ops.reserve(list.size());
    for (uint32_t i = 0, n = list.size(); i < n; ++i)
      readOp(list.element(i), shape, rank, ops, /*check=*/inRange);
  }
  // Every rank has a program, even an empty one: a rank left out is far more
  // often a mistake (ranks: 5 with four programs) than a rank without ops.
  for (uint32_t r = 0; shapeOk && r < shape.ranks; ++r)
    if (!seen.count(r))
      invalid(progs.hasMark() ? progs : root,
              llvm::formatv("rank {0} has no program (ranks: {1}, and 'programs' lists {2}); "
                            "write '{0}: []' for a rank without ops",
                            r, shape.ranks,
                            llvm::count_if(seen, [&](uint32_t x) { return x < shape.ranks; })));
  if (firstInvalid_)
    throw *firstInvalid_;
  return plan;
}

} // namespace

namespace {

llvm::Error syntaxError(llvm::StringRef fileName, int line, int column, const llvm::Twine &msg) {
  return llvm::make_error<PlanReadError>(
      ReadErrorKind::Syntax,
      llvm::formatv("{0}:{1}:{2}: syntax: {3}", fileName, line + 1, column + 1, msg.str()).str());
}

} // namespace

char PlanReadError::ID = 0;

llvm::Expected<Plan> parsePlan(llvm::StringRef text, llvm::StringRef fileName) {
  yaml::SyntaxError bad;
  std::unique_ptr<yaml::Doc> doc = yaml::Doc::parse(text, bad);
  if (!doc)
    return syntaxError(fileName, bad.line, bad.column, bad.message);
  try {
    return Reader(fileName).read(doc->root());
  } catch (const ReadFailure &f) {
    return llvm::make_error<PlanReadError>(f.kind, f.message);
  }
}

llvm::Expected<Plan> readPlanFile(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buf)
    return llvm::make_error<PlanReadError>(
        ReadErrorKind::Io,
        llvm::formatv("cannot read '{0}': {1}", path, buf.getError().message()).str());
  return parsePlan((*buf)->getBuffer(), path == "-" ? "<stdin>" : path);
}


} // namespace collc::ir
