// ir/YamlDoc.cpp: building a YamlDoc from yaml-cpp's parser events.
#include "ir/YamlDoc.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

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
  try {
    return std::make_unique<Doc>(text);
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
  nodes_.push_back(Entry{}); // index 0: the empty document's null root
  std::istringstream in{std::string(text)};
  YAML::Parser parser(in);
  Builder builder(*this);
  parser.HandleNextDocument(builder); // no document: root_ stays the null node 0
}

} // namespace collc::ir::yaml
