// tools/draw/TunedChoice.cpp: a small JSON reader (RFC 8259: objects,
// arrays, strings with their escapes, numbers, true/false/null; at most 64
// levels deep) and the collc-tune/1 keys a picture needs. It does not use
// llvm/Support/JSON.h, whose containers do not compile with clang 14 and
// libstdc++ 12 in C++20 (the sanitizer builds use clang).
#include "tools/draw/TunedChoice.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>

namespace collc::draw {

namespace {

struct Member;

struct Value {
  enum class Kind { Null, Bool, Number, String, Array, Object } kind = Kind::Null;
  bool boolean = false;
  std::string text; ///< a string's value, or a number as written
  std::vector<Value> items;
  std::vector<Member> members; ///< an object's members, in file order
  unsigned line = 0, column = 0;

  const Value *member(llvm::StringRef key) const;
};

// A separate struct, not std::pair<std::string, Value>: clang 14 with
// libstdc++ 12 rejects a pair of the type being defined.
struct Member {
  std::string key;
  Value value;
};

const Value *Value::member(llvm::StringRef key) const {
  for (const Member &m : members)
    if (m.key == key)
      return &m.value;
  return nullptr;
}

const char *kindName(Value::Kind k) {
  switch (k) {
  case Value::Kind::Null: return "null";
  case Value::Kind::Bool: return "a boolean";
  case Value::Kind::Number: return "a number";
  case Value::Kind::String: return "a string";
  case Value::Kind::Array: return "an array";
  case Value::Kind::Object: return "an object";
  }
  return "?";
}

/// Recursive descent over the text, one function per kind of value.
class Parser {
public:
  Parser(llvm::StringRef text, llvm::StringRef file) : text_(text), file_(file) {}

  llvm::Expected<Value> document() {
    Value v;
    if (!value(v, 0))
      return takeError();
    skipSpace();
    if (pos_ < text_.size())
      return error("syntax", "unexpected text after the JSON value"), takeError();
    return v;
  }

  void error(llvm::StringRef cls, const llvm::Twine &message) {
    error(cls, message, line_, column_);
  }
  void error(llvm::StringRef cls, const llvm::Twine &message, unsigned line, unsigned column) {
    if (message_.empty())
      message_ = llvm::formatv("{0}:{1}:{2}: {3}: {4}", file_, line, column, cls, message.str());
  }
  llvm::Error takeError() {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message_);
  }

private:
  bool atEnd() const { return pos_ >= text_.size(); }
  char peek() const { return atEnd() ? '\0' : text_[pos_]; }
  void advance() {
    if (text_[pos_++] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
  }
  void skipSpace() {
    while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r'))
      advance();
  }
  bool expect(char c, const char *what) {
    skipSpace();
    if (peek() != c) {
      error("syntax", llvm::Twine("expected ") + what + near());
      return false;
    }
    advance();
    return true;
  }
  std::string near() const {
    if (atEnd())
      return ", got the end of the file";
    return llvm::formatv(" near '{0}'", text_.substr(pos_, 12).split('\n').first).str();
  }

  bool value(Value &v, unsigned depth) {
    skipSpace();
    v.line = line_;
    v.column = column_;
    if (depth > 64) {
      error("syntax", "nested more than 64 levels deep");
      return false;
    }
    switch (peek()) {
    case '{': return object(v, depth);
    case '[': return array(v, depth);
    case '"': v.kind = Value::Kind::String; return string(v.text);
    case 't': return word("true", v, Value::Kind::Bool, true);
    case 'f': return word("false", v, Value::Kind::Bool, false);
    case 'n': return word("null", v, Value::Kind::Null, false);
    default: return number(v);
    }
  }

  bool word(llvm::StringRef w, Value &v, Value::Kind k, bool b) {
    if (!text_.substr(pos_).startswith(w)) {
      error("syntax", "expected a JSON value" + near());
      return false;
    }
    for (size_t i = 0; i < w.size(); ++i)
      advance();
    v.kind = k;
    v.boolean = b;
    return true;
  }

  bool number(Value &v) {
    const size_t start = pos_;
    auto digits = [&] {
      const size_t from = pos_;
      while (!atEnd() && peek() >= '0' && peek() <= '9')
        advance();
      return pos_ > from;
    };
    if (peek() == '-')
      advance();
    if (peek() == '0' && pos_ + 1 < text_.size() && text_[pos_ + 1] >= '0' &&
        text_[pos_ + 1] <= '9')
      return error("syntax", "a number with a leading zero"), false;
    if (!digits()) {
      pos_ = start;
      error("syntax", "expected a JSON value" + near(), v.line, v.column);
      return false;
    }
    if (peek() == '.') {
      advance();
      if (!digits())
        return error("syntax", "expected digits after '.'"), false;
    }
    if (peek() == 'e' || peek() == 'E') {
      advance();
      if (peek() == '+' || peek() == '-')
        advance();
      if (!digits())
        return error("syntax", "expected digits in the exponent"), false;
    }
    v.kind = Value::Kind::Number;
    v.text = text_.substr(start, pos_ - start).str();
    return true;
  }

  bool string(std::string &out) {
    advance(); // the opening quote
    while (true) {
      if (atEnd())
        return error("syntax", "unterminated string"), false;
      const char c = peek();
      if (c == '"') {
        advance();
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20)
        return error("syntax", "a control character in a string"), false;
      advance();
      if (c != '\\') {
        out += c;
        continue;
      }
      const char e = peek();
      if (atEnd())
        return error("syntax", "unterminated string"), false;
      advance();
      switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        unsigned cp = 0;
        for (int i = 0; i < 4; ++i) {
          const char h = peek();
          const int d = h >= '0' && h <= '9'   ? h - '0'
                        : h >= 'a' && h <= 'f' ? h - 'a' + 10
                        : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                               : -1;
          if (d < 0)
            return error("syntax", "expected 4 hex digits after \\u"), false;
          cp = cp * 16 + unsigned(d);
          advance();
        }
        // UTF-8; a surrogate half stands for itself (labels only).
        if (cp < 0x80) {
          out += char(cp);
        } else if (cp < 0x800) {
          out += char(0xc0 | (cp >> 6));
          out += char(0x80 | (cp & 0x3f));
        } else {
          out += char(0xe0 | (cp >> 12));
          out += char(0x80 | ((cp >> 6) & 0x3f));
          out += char(0x80 | (cp & 0x3f));
        }
        break;
      }
      default: return error("syntax", "unknown escape '\\" + std::string(1, e) + "'"), false;
      }
    }
  }

  bool array(Value &v, unsigned depth) {
    v.kind = Value::Kind::Array;
    advance();
    skipSpace();
    if (peek() == ']')
      return advance(), true;
    while (true) {
      v.items.emplace_back();
      if (!value(v.items.back(), depth + 1))
        return false;
      skipSpace();
      if (peek() == ']')
        return advance(), true;
      if (!expect(',', "',' or ']' in an array"))
        return false;
    }
  }

  bool object(Value &v, unsigned depth) {
    v.kind = Value::Kind::Object;
    advance();
    skipSpace();
    if (peek() == '}')
      return advance(), true;
    while (true) {
      skipSpace();
      if (peek() != '"')
        return error("syntax", "expected a key (a string)" + near()), false;
      const unsigned line = line_, column = column_;
      std::string key;
      if (!string(key))
        return false;
      if (v.member(key))
        return error("syntax", "duplicate key '" + key + "'", line, column), false;
      if (!expect(':', "':' after a key"))
        return false;
      v.members.push_back(Member{std::move(key), Value()});
      if (!value(v.members.back().value, depth + 1))
        return false;
      skipSpace();
      if (peek() == '}')
        return advance(), true;
      if (!expect(',', "',' or '}' in an object"))
        return false;
    }
  }

  llvm::StringRef text_, file_;
  size_t pos_ = 0;
  unsigned line_ = 1, column_ = 1;
  std::string message_;
};

/// Reads the keys of collc-tune/1 from the parsed document, reporting the
/// first problem at its position.
class Reader {
public:
  explicit Reader(Parser &p) : p_(p) {}

  const Value *get(const Value &obj, llvm::StringRef key, Value::Kind kind) {
    const Value *v = obj.member(key);
    if (!v) {
      fail("syntax", "missing key '" + key + "'", obj);
      return nullptr;
    }
    if (v->kind != kind) {
      fail("syntax",
           llvm::Twine("'") + key + "' must be " + kindName(kind) + ", not " + kindName(v->kind),
           *v);
      return nullptr;
    }
    return v;
  }
  bool text(const Value &obj, llvm::StringRef key, std::string &out) {
    const Value *v = get(obj, key, Value::Kind::String);
    return v && (out = v->text, true);
  }
  bool flag(const Value &obj, llvm::StringRef key, bool &out) {
    const Value *v = get(obj, key, Value::Kind::Bool);
    return v && (out = v->boolean, true);
  }
  bool wholeNumber(const Value &v, const std::string &what, uint64_t &out) {
    if (v.kind != Value::Kind::Number || llvm::StringRef(v.text).getAsInteger(10, out)) {
      fail("syntax", what + " must be a whole number of 0 or more", v);
      return false;
    }
    return true;
  }
  bool count(const Value &obj, llvm::StringRef key, uint64_t &out) {
    const Value *v = get(obj, key, Value::Kind::Number);
    return v && wholeNumber(*v, "'" + key.str() + "'", out);
  }
  bool seconds(const Value &obj, llvm::StringRef key, double &out) {
    const Value *v = get(obj, key, Value::Kind::Number);
    if (!v)
      return false;
    out = std::strtod(v->text.c_str(), nullptr);
    if (!std::isfinite(out) || out < 0) {
      fail("invalid", "'" + key + "' must be a time of 0 seconds or more", *v);
      return false;
    }
    return true;
  }
  void fail(llvm::StringRef cls, const llvm::Twine &message, const Value &at) {
    p_.error(cls, message, at.line, at.column);
  }

private:
  Parser &p_;
};

} // namespace

const TunedRange &TunedChoice::rangeOf(uint64_t bytes) const {
  for (const TunedRange &r : ranges)
    if (!r.maxBytes || bytes < *r.maxBytes)
      return r;
  return ranges.back(); // the last range has no end (parseTunedChoice checks)
}

const TunedSize *TunedChoice::sizeAt(uint64_t bytes) const {
  for (const TunedSize &s : sizes)
    if (s.bytes == bytes)
      return &s;
  return nullptr;
}

llvm::Expected<TunedChoice> parseTunedChoice(llvm::StringRef text, llvm::StringRef fileName) {
  Parser parser(text, fileName);
  llvm::Expected<Value> doc = parser.document();
  if (!doc)
    return doc.takeError();
  Reader rd(parser);
  TunedChoice t;
  const Value &root = *doc;
  if (root.kind != Value::Kind::Object) {
    rd.fail("syntax", "a collc-tune/1 report is a JSON object", root);
    return parser.takeError();
  }
  std::string format;
  if (!rd.text(root, "format", format))
    return parser.takeError();
  if (format != "collc-tune/1") {
    rd.fail("syntax", "format '" + format + "' is not collc-tune/1 (collc tune --json writes it)",
            *root.member("format"));
    return parser.takeError();
  }
  uint64_t ranks = 0, elemBytes = 0;
  if (!rd.text(root, "collective", t.collective) || !rd.count(root, "ranks", ranks) ||
      !rd.text(root, "topology", t.topology) || !rd.text(root, "dtype", t.dtype) ||
      !rd.count(root, "elem_bytes", elemBytes) ||
      !rd.flag(root, "noncommutative", t.noncommutative))
    return parser.takeError();
  if (ranks < 1 || ranks > (uint64_t(1) << 20)) {
    rd.fail("invalid", "'ranks' must be 1..1048576", *root.member("ranks"));
    return parser.takeError();
  }
  t.ranks = static_cast<uint32_t>(ranks);
  t.elemBytes = static_cast<uint32_t>(std::min<uint64_t>(elemBytes, UINT32_MAX));

  const Value *choices = rd.get(root, "choices", Value::Kind::Array);
  if (!choices)
    return parser.takeError();
  for (const Value &c : choices->items) {
    if (c.kind != Value::Kind::Object) {
      rd.fail("syntax", "a choice must be an object", c);
      return parser.takeError();
    }
    TunedSize s;
    if (!rd.count(c, "bytes", s.bytes) || !rd.text(c, "winner", s.winner) ||
        !rd.seconds(c, "time", s.time))
      return parser.takeError();
    if (!t.sizes.empty() && s.bytes <= t.sizes.back().bytes) {
      rd.fail("invalid", "the choices' sizes must ascend", c);
      return parser.takeError();
    }
    t.sizes.push_back(std::move(s));
  }

  const Value *ranges = rd.get(root, "ranges", Value::Kind::Array);
  if (!ranges)
    return parser.takeError();
  for (const Value &r : ranges->items) {
    if (r.kind != Value::Kind::Object) {
      rd.fail("syntax", "a range must be an object", r);
      return parser.takeError();
    }
    TunedRange g;
    if (!rd.count(r, "min_bytes", g.minBytes) || !rd.text(r, "plan", g.plan))
      return parser.takeError();
    const Value *max = r.member("max_bytes");
    if (!max) {
      rd.fail("syntax", "missing key 'max_bytes'", r);
      return parser.takeError();
    }
    if (max->kind != Value::Kind::Null) {
      uint64_t m = 0;
      if (!rd.wholeNumber(*max, "'max_bytes' (or null)", m))
        return parser.takeError();
      g.maxBytes = m;
    }
    // The ranges tile [0, unbounded): each starts where the last ended.
    const uint64_t expected = t.ranges.empty() ? 0 : t.ranges.back().maxBytes.value_or(0);
    if ((!t.ranges.empty() && !t.ranges.back().maxBytes) || g.minBytes != expected ||
        (g.maxBytes && *g.maxBytes <= g.minBytes)) {
      rd.fail("invalid",
              llvm::formatv("range {0}..{1} does not continue the ranges before it (from {2})",
                            g.minBytes, g.maxBytes ? std::to_string(*g.maxBytes) : "null",
                            expected),
              r);
      return parser.takeError();
    }
    t.ranges.push_back(std::move(g));
  }
  if (t.ranges.empty() || t.ranges.back().maxBytes) {
    rd.fail("invalid", "the last range must have no end (max_bytes: null)", *ranges);
    return parser.takeError();
  }
  return t;
}

llvm::Expected<TunedChoice> readTunedChoice(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "cannot read '%s': %s",
                                   path.str().c_str(), buf.getError().message().c_str());
  return parseTunedChoice((*buf)->getBuffer(), path);
}

} // namespace collc::draw
