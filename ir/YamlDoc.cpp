// ir/YamlDoc.cpp: building a YamlDoc from yaml-cpp's parser events.
#include "ir/YamlDoc.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include "llvm/Support/ConvertUTF.h"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <unordered_map>

namespace collc::ir::yaml {

bool Node::isNull() const { return doc_ && doc_->nodes_[index_].kind == Doc::Kind::Null; }
bool Node::isScalar() const { return doc_ && doc_->nodes_[index_].kind == Doc::Kind::Scalar; }
bool Node::isSequence() const {
  return doc_ && doc_->nodes_[index_].kind == Doc::Kind::Sequence;
}
bool Node::isMap() const { return doc_ && doc_->nodes_[index_].kind == Doc::Kind::Map; }

llvm::StringRef Node::scalar() const {
  if (!isScalar())
    return {};
  const Doc::Entry &e = doc_->nodes_[index_];
  return llvm::StringRef(doc_->text_).substr(e.begin, e.count);
}

bool Node::plain() const { return isScalar() && doc_->nodes_[index_].plain; }
bool Node::hasMark() const { return doc_ && doc_->nodes_[index_].marked; }
int Node::line() const { return doc_ ? doc_->nodes_[index_].line : 0; }
int Node::column() const { return doc_ ? doc_->nodes_[index_].column : 0; }

uint32_t Node::size() const {
  if (!doc_)
    return 0;
  const Doc::Entry &e = doc_->nodes_[index_];
  switch (e.kind) {
  case Doc::Kind::Sequence:
    return e.count;
  case Doc::Kind::Map:
    return e.count / 2;
  default:
    return 0;
  }
}

Node Node::element(uint32_t i) const {
  return Node(doc_, doc_->kids_[doc_->nodes_[index_].begin + i]);
}
Node Node::key(uint32_t i) const {
  return Node(doc_, doc_->kids_[doc_->nodes_[index_].begin + 2 * i]);
}
Node Node::value(uint32_t i) const {
  return Node(doc_, doc_->kids_[doc_->nodes_[index_].begin + 2 * i + 1]);
}

Node Node::lookup(llvm::StringRef k) const {
  if (!isMap())
    return {};
  for (uint32_t i = 0, n = size(); i < n; ++i)
    if (Node key = this->key(i); key.isScalar() && key.scalar() == k)
      return value(i);
  return {};
}

/// The event handler: appends nodes as they start; a collection's children
/// collect on a stack and move to `kids_` in one piece when it ends.
class Builder final : public YAML::EventHandler {
public:
  explicit Builder(Doc &doc) : doc_(doc) {}

  void OnDocumentStart(const YAML::Mark &) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark &m, YAML::anchor_t a) override {
    attach(add(m, Doc::Kind::Null, false), a);
  }
  void OnAlias(const YAML::Mark &m, YAML::anchor_t a) override {
    auto it = anchors_.find(a);
    if (it == anchors_.end()) // the parser refuses unknown anchors first
      throw YAML::ParserException(m, "alias to an unknown anchor");
    child(it->second);
  }
  void OnScalar(const YAML::Mark &m, const std::string &tag, YAML::anchor_t a,
                const std::string &value) override {
    uint32_t i = add(m, Doc::Kind::Scalar, tag == "?");
    Doc::Entry &e = doc_.nodes_[i];
    e.begin = checked(doc_.text_.size(), m);
    e.count = checked(value.size(), m);
    doc_.text_ += value;
    checked(doc_.text_.size(), m);
    attach(i, a);
  }
  void OnSequenceStart(const YAML::Mark &m, const std::string &, YAML::anchor_t a,
                       YAML::EmitterStyle::value) override {
    open(m, Doc::Kind::Sequence, a);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark &m, const std::string &, YAML::anchor_t a,
                  YAML::EmitterStyle::value) override {
    open(m, Doc::Kind::Map, a);
  }
  void OnMapEnd() override { close(); }

private:
  static uint32_t checked(size_t v, const YAML::Mark &m) {
    if (v > UINT32_MAX)
      throw YAML::ParserException(m, "document too large (more than 4 GiB of text, "
                                     "4 billion nodes or 4 billion children)");
    return static_cast<uint32_t>(v);
  }
  uint32_t add(const YAML::Mark &m, Doc::Kind kind, bool plain) {
    Doc::Entry e;
    e.kind = kind;
    e.plain = plain;
    e.marked = !m.is_null();
    e.line = m.line;
    e.column = m.column;
    uint32_t i = checked(doc_.nodes_.size(), m);
    doc_.nodes_.push_back(e);
    return i;
  }
  void child(uint32_t i) {
    if (frames_.empty()) {
      doc_.root_ = i;
    } else {
      pending_.push_back(i);
    }
  }
  void attach(uint32_t i, YAML::anchor_t a) {
    if (a != YAML::NullAnchor)
      anchors_[a] = i;
    child(i);
  }
  void open(const YAML::Mark &m, Doc::Kind kind, YAML::anchor_t a) {
    uint32_t i = add(m, kind, false);
    attach(i, a); // before its children: an alias inside may name it
    frames_.push_back({i, pending_.size(), m});
  }
  void close() {
    Frame f = frames_.back();
    frames_.pop_back();
    const size_t count = pending_.size() - f.firstPending;
    checked(doc_.kids_.size() + count, f.mark); // aliases add children, not nodes
    Doc::Entry &e = doc_.nodes_[f.node];
    e.begin = static_cast<uint32_t>(doc_.kids_.size());
    e.count = static_cast<uint32_t>(count);
    doc_.kids_.insert(doc_.kids_.end(), pending_.begin() + ptrdiff_t(f.firstPending),
                      pending_.end());
    pending_.resize(f.firstPending);
  }

  struct Frame {
    uint32_t node;
    size_t firstPending;
    YAML::Mark mark;
  };
  Doc &doc_;
  std::vector<Frame> frames_;
  std::vector<uint32_t> pending_;
  std::unordered_map<YAML::anchor_t, uint32_t> anchors_;
};

namespace {

/// Thrown by FastReader for text outside its subset: the document is then
/// read by yaml-cpp's parser instead.
struct Outside {};

/// A reader for the subset of YAML that collc and most people write for
/// plans and topologies: block mappings and sequences, one-line flow
/// collections, plain scalars of letters, digits and `_-./+` (with inner
/// spaces in block context), and comments. It sends the events yaml-cpp's
/// parser would send, with the same marks, about ten times faster; for
/// anything else (quotes, anchors, tags, multi-line flow, empty values,
/// tabs, directives, errors of every kind) it throws Outside before the
/// document is used. The tests and the plan fuzzer compare the two readers'
/// documents on every input the subset accepts.
class FastReader {
public:
  FastReader(llvm::StringRef text, YAML::EventHandler &out) : text_(text), out_(out) {}

  void read() {
    bool ascii = true;
    for (unsigned char c : text_) { // no tab, CR or other control byte anywhere
      if ((c < 0x20 && c != '\n') || c == 0x7f)
        throw Outside{};
      ascii &= c < 0x80;
    }
    if (!ascii && !legalUtf8()) // UTF-8 (in comments only: scalars are ASCII)
      throw Outside{};
    next_ = 0;
    advance();
    if (!have_)
      throw Outside{}; // empty or comments only: yaml-cpp's null document
    out_.OnDocumentStart(mark(content_));
    block(indent_, 0);
    if (have_)
      throw Outside{};
    out_.OnDocumentEnd();
  }

private:
  static constexpr int maxDepth = 64;
  static constexpr size_t maxKey = 1000; // yaml-cpp's simple keys end at 1024 characters

  static bool safe(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.' || c == '/' || c == '+';
  }
  bool legalUtf8() const {
    const auto *b = reinterpret_cast<const llvm::UTF8 *>(text_.data());
    return !text_.startswith("\xEF\xBB\xBF") && // a byte-order mark
           llvm::isLegalUTF8String(&b, b + text_.size());
  }
  YAML::Mark mark(size_t at) const {
    YAML::Mark m;
    m.pos = int(at);
    m.line = line_;
    m.column = int(at - lineStart_);
    return m;
  }

  /// Moves to the next line with content (not blank, not only a comment).
  void advance() {
    have_ = false;
    while (next_ < text_.size()) {
      lineStart_ = next_;
      ++line_;
      size_t nl = text_.find('\n', next_);
      end_ = nl == llvm::StringRef::npos ? text_.size() : nl;
      next_ = end_ + 1;
      size_t p = lineStart_;
      while (p < end_ && text_[p] == ' ')
        ++p;
      if (p == end_ || text_[p] == '#')
        continue;
      const llvm::StringRef rest = text_.substr(lineStart_, end_ - lineStart_);
      if (rest.startswith("---") || rest.startswith("...") || rest.startswith("%"))
        throw Outside{}; // document markers and directives
      if (int(p - lineStart_) > 100000 || lineStart_ > size_t(INT32_MAX))
        throw Outside{};
      indent_ = int(p - lineStart_);
      content_ = p;
      have_ = true;
      return;
    }
    end_ = next_ = text_.size();
  }

  bool seqEntry(size_t p) const { return text_[p] == '-' && p + 1 < end_ && text_[p + 1] == ' '; }
  size_t spaces(size_t p) const {
    while (p < end_ && text_[p] == ' ')
      ++p;
    return p;
  }
  /// Only spaces and a comment from `p` to the line's end.
  void trailing(size_t p) const {
    const size_t q = spaces(p);
    if (q < end_ && !(text_[q] == '#' && q > p))
      throw Outside{};
  }

  void scalar(size_t begin, size_t end) {
    const llvm::StringRef v = text_.substr(begin, end - begin);
    if (v.size() > 100000)
      throw Outside{};
    if (v == "null" || v == "Null" || v == "NULL") {
      out_.OnNull(mark(begin), YAML::NullAnchor);
      return;
    }
    static const std::string plainTag = "?";
    value_.assign(v.data(), v.size());
    out_.OnScalar(mark(begin), plainTag, YAML::NullAnchor, value_);
  }
  /// A plain scalar of safe characters at `p` (flow context, or a key);
  /// returns its end.
  size_t word(size_t p) const {
    const size_t begin = p;
    while (p < end_ && safe(text_[p]))
      ++p;
    if (p == begin || p - begin > maxKey || (text_[begin] == '-' && p - begin == 1))
      throw Outside{};
    return p;
  }

  void block(int indent, int depth) {
    if (depth > maxDepth)
      throw Outside{};
    if (seqEntry(content_))
      blockSequence(indent, depth);
    else
      blockMap(indent, depth);
  }

  void blockSequence(int indent, int depth) {
    static const std::string noTag = "?";
    out_.OnSequenceStart(mark(content_), noTag, YAML::NullAnchor, YAML::EmitterStyle::Block);
    while (have_ && indent_ == indent && seqEntry(content_)) {
      const size_t p = spaces(content_ + 1);
      if (p == end_ || text_[p] == '#')
        throw Outside{}; // an empty entry, or one on the lines below
      inlineValue(p, depth + 1);
      advance();
    }
    if (have_ && indent_ >= indent)
      throw Outside{};
    out_.OnSequenceEnd();
  }

  void blockMap(int indent, int depth) {
    static const std::string noTag = "?";
    out_.OnMapStart(mark(content_), noTag, YAML::NullAnchor, YAML::EmitterStyle::Block);
    while (have_ && indent_ == indent) {
      if (seqEntry(content_))
        throw Outside{};
      const size_t keyEnd = word(content_);
      if (keyEnd >= end_ || text_[keyEnd] != ':')
        throw Outside{};
      scalar(content_, keyEnd);
      size_t p = keyEnd + 1;
      if (p < end_ && text_[p] != ' ')
        throw Outside{};
      p = spaces(p);
      if (p < end_ && text_[p] != '#') {
        inlineValue(p, depth + 1);
        advance();
        continue;
      }
      if (p < end_ && p == keyEnd + 1)
        throw Outside{}; // "key:#"
      advance(); // the value is the block on the lines below
      if (!have_ || indent_ <= indent)
        throw Outside{}; // an empty value, or a sequence at the key's indentation
      block(indent_, depth + 1);
    }
    if (have_ && indent_ > indent)
      throw Outside{};
    out_.OnMapEnd();
  }

  /// A value that ends with its line: a flow collection or a plain scalar.
  void inlineValue(size_t p, int depth) {
    if (text_[p] == '{' || text_[p] == '[') {
      trailing(flow(p, depth));
      return;
    }
    if (text_[p] == '-' && (p + 1 >= end_ || !safe(text_[p + 1])))
      throw Outside{};
    const size_t begin = p;
    size_t last = p;
    while (p < end_) {
      if (safe(text_[p])) {
        last = ++p;
      } else if (text_[p] == ' ') {
        p = spaces(p);
        if (p < end_ && text_[p] == '#')
          break;
      } else {
        throw Outside{};
      }
    }
    if (last == begin)
      throw Outside{};
    scalar(begin, last);
  }

  /// A flow collection at `p` that closes on this line; returns the
  /// position after it.
  size_t flow(size_t p, int depth) {
    if (depth > maxDepth)
      throw Outside{};
    static const std::string noTag = "?";
    const bool map = text_[p] == '{';
    const char close = map ? '}' : ']';
    if (map)
      out_.OnMapStart(mark(p), noTag, YAML::NullAnchor, YAML::EmitterStyle::Flow);
    else
      out_.OnSequenceStart(mark(p), noTag, YAML::NullAnchor, YAML::EmitterStyle::Flow);
    p = spaces(p + 1);
    if (p < end_ && text_[p] == close) {
      map ? out_.OnMapEnd() : out_.OnSequenceEnd();
      return p + 1;
    }
    for (;;) {
      if (p >= end_)
        throw Outside{};
      if (map) {
        const size_t keyEnd = word(p);
        if (keyEnd + 1 >= end_ || text_[keyEnd] != ':' || text_[keyEnd + 1] != ' ')
          throw Outside{};
        scalar(p, keyEnd);
        p = spaces(keyEnd + 1);
        if (p >= end_)
          throw Outside{};
      }
      if (text_[p] == '{' || text_[p] == '[') {
        p = flow(p, depth + 1);
      } else {
        const size_t e = word(p);
        scalar(p, e);
        p = e;
      }
      p = spaces(p);
      if (p < end_ && text_[p] == ',') {
        p = spaces(p + 1);
        if (p < end_ && text_[p] == close)
          throw Outside{}; // a trailing comma
        continue;
      }
      if (p < end_ && text_[p] == close) {
        map ? out_.OnMapEnd() : out_.OnSequenceEnd();
        return p + 1;
      }
      throw Outside{};
    }
  }

  llvm::StringRef text_;
  YAML::EventHandler &out_;
  std::string value_;
  size_t next_ = 0, lineStart_ = 0, end_ = 0, content_ = 0;
  int line_ = -1, indent_ = 0;
  bool have_ = false;
};

/// The first line up to `lastLine` (0-based) whose indentation holds a tab,
/// and the tab's column, if any. YAML indents with spaces only.
bool tabInIndentation(llvm::StringRef text, int lastLine, SyntaxError &where) {
  for (int line = 0; line <= lastLine && !text.empty(); ++line) {
    auto [raw, rest] = text.split('\n');
    for (size_t i = 0; i < raw.size() && (raw[i] == ' ' || raw[i] == '\t'); ++i)
      if (raw[i] == '\t') {
        where.line = line;
        where.column = int(i);
        return true;
      }
    text = rest;
  }
  return false;
}

} // namespace

bool sameTree(Node a, Node b, int depth) {
  if (a.isNull() != b.isNull() || a.isScalar() != b.isScalar() ||
      a.isSequence() != b.isSequence() || a.isMap() != b.isMap() ||
      a.hasMark() != b.hasMark() || a.line() != b.line() || a.column() != b.column() ||
      a.scalar() != b.scalar() || a.plain() != b.plain() || a.size() != b.size())
    return false;
  for (uint32_t i = 0, n = depth > 0 ? a.size() : 0; i < n; ++i)
    if (a.isSequence() ? !sameTree(a.element(i), b.element(i), depth - 1)
                       : !sameTree(a.key(i), b.key(i), depth - 1) ||
                             !sameTree(a.value(i), b.value(i), depth - 1))
      return false;
  return true;
}

std::string joined(llvm::ArrayRef<llvm::StringRef> names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    s += (i ? ", " : "") + names[i].str();
  return s;
}

std::optional<NodeProblem> readFields(Node map, llvm::ArrayRef<llvm::StringRef> allowed,
                                      llvm::StringRef where, Fields &out) {
  for (uint32_t i = 0, n = map.size(); i < n; ++i) {
    Node k = map.key(i);
    if (!k.isScalar())
      return NodeProblem{k, "expected a key name in " + where.str()};
    const llvm::StringRef key = k.scalar();
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      return NodeProblem{k, "unknown key '" + key.str() + "' in " + where.str() +
                                " (expected one of: " + joined(allowed) + ")"};
    if (out.has(key))
      return NodeProblem{k, "duplicate key '" + key.str() + "' in " + where.str()};
    out.list.push_back({key, k, map.value(i)});
  }
  return std::nullopt;
}

std::unique_ptr<Doc> Doc::parse(llvm::StringRef text, SyntaxError &error) {
  if (std::unique_ptr<Doc> doc = parseSubset(text))
    return doc;
  return parseEvents(text, error);
}

std::unique_ptr<Doc> Doc::parseSubset(llvm::StringRef text) {
  std::unique_ptr<Doc> doc(new Doc);
  if (!doc->readSubset(text))
    return nullptr;
  return doc;
}

bool Doc::readSubset(llvm::StringRef text) {
  nodes_.assign(1, Entry{}); // index 0: the empty document's null root
  try {
    Builder builder(*this);
    FastReader(text, builder).read();
    return true;
  } catch (const Outside &) {
  } catch (const YAML::Exception &) { // too large: yaml-cpp's reader says so
  }
  nodes_.clear();
  kids_.clear();
  text_.clear();
  root_ = 0;
  return false;
}

std::unique_ptr<Doc> Doc::parseEvents(llvm::StringRef text, SyntaxError &error) {
  try {
    std::unique_ptr<Doc> doc(new Doc);
    doc->readEvents(text);
    return doc;
  } catch (const YAML::DeepRecursion &e) {
    error = {e.mark.line, e.mark.column,
             "collections nested too deeply (more than " + std::to_string(e.depth()) +
                 " levels)"};
  } catch (const YAML::Exception &e) {
    if (tabInIndentation(text, e.mark.line, error))
      error.message = "a tab in the indentation (YAML indents with spaces only)";
    else
      error = {e.mark.line, e.mark.column, e.msg};
  }
  return nullptr;
}

Doc::Doc(llvm::StringRef text) {
  if (!readSubset(text))
    readEvents(text);
}

void Doc::readEvents(llvm::StringRef text) {
  nodes_.assign(1, Entry{}); // index 0: the empty document's null root
  kids_.clear();
  text_.clear();
  root_ = 0;
  std::istringstream in{std::string(text)};
  YAML::Parser parser(in);
  Builder builder(*this);
  parser.HandleNextDocument(builder); // no document: root_ stays the null node 0
}

} // namespace collc::ir::yaml
