// lang/ParamValue.cpp: parameter values as text — `--set`'s syntax
// (Instantiator.h, formatParamValue and parseParamValue).
#include "lang/Instantiator.h"

#include "llvm/Support/FormatVariadic.h"

#include <cctype>

namespace collc::lang {

std::string formatParamValue(const ParamValue &v) {
  if (!v.isAlgorithm())
    return std::to_string(v.number);
  std::string s = v.algorithm;
  if (v.args.empty())
    return s;
  s += "(";
  for (size_t i = 0; i < v.args.size(); ++i)
    s += (i ? "," : "") + v.args[i].first + "=" + formatParamValue(v.args[i].second);
  return s + ")";
}

namespace {

/// A recursive-descent reader of `value := INT | NAME ['(' NAME '=' value
/// {',' NAME '=' value} ')']`.
class ValueReader {
public:
  explicit ValueReader(llvm::StringRef text) : text_(text) {}

  llvm::Expected<ParamValue> read() {
    ParamValue v = value(0);
    skipSpace();
    if (error_.empty() && at_ < text_.size())
      fail(llvm::formatv("unexpected '{0}'", text_.substr(at_)).str());
    if (!error_.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", error_.c_str());
    return v;
  }

private:
  static constexpr unsigned maxDepth = 32;

  void skipSpace() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_])))
      ++at_;
  }
  bool accept(char c) {
    skipSpace();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  void fail(std::string what) {
    if (error_.empty())
      error_ = std::move(what);
  }
  /// Letters, digits, `_`, and for a file the characters of a path.
  llvm::StringRef word() {
    skipSpace();
    const size_t from = at_;
    while (at_ < text_.size() && !llvm::StringRef("(),= \t").contains(text_[at_]))
      ++at_;
    return text_.slice(from, at_);
  }
  static bool isName(llvm::StringRef w) {
    if (w.endswith(".calgo"))
      return true;
    if (w.empty() || std::isdigit(static_cast<unsigned char>(w[0])))
      return false;
    return llvm::all_of(w, [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  }

  ParamValue value(unsigned depth) {
    const llvm::StringRef w = word();
    int64_t n = 0;
    if (w.empty()) {
      fail(at_ < text_.size() ? llvm::formatv("expected a value before '{0}'", text_[at_]).str()
                              : "expected a value (an integer or an algorithm's name)");
      return ParamValue(0);
    }
    if (!w.getAsInteger(10, n))
      return ParamValue(n);
    if (!isName(w)) {
      fail(llvm::formatv("'{0}' is neither an integer nor an algorithm's name (a library "
                         "name or a file ending in .calgo)",
                         w)
               .str());
      return ParamValue(0);
    }
    ParamValue v(w.str());
    if (!accept('('))
      return v;
    if (depth >= maxDepth) {
      fail(llvm::formatv("arguments nested deeper than {0} levels", maxDepth).str());
      return v;
    }
    do {
      const llvm::StringRef name = word();
      if (!isName(name) || name.endswith(".calgo")) {
        fail(llvm::formatv("expected a parameter's name in the arguments of '{0}'",
                           v.algorithm)
                 .str());
        return v;
      }
      for (const auto &[k, _] : v.args)
        if (k == name)
          fail(llvm::formatv("parameter '{0}' of '{1}' given twice", name, v.algorithm).str());
      if (!accept('=')) {
        fail(llvm::formatv("expected '=' after '{0}' (NAME=VALUE)", name).str());
        return v;
      }
      ParamValue inner = value(depth + 1);
      v.args.emplace_back(name.str(), std::move(inner));
    } while (error_.empty() && accept(','));
    if (error_.empty() && !accept(')'))
      fail(llvm::formatv("expected ')' to close the arguments of '{0}'", v.algorithm).str());
    return v;
  }

  llvm::StringRef text_;
  size_t at_ = 0;
  std::string error_;
};

} // namespace

llvm::Expected<ParamValue> parseParamValue(llvm::StringRef text) {
  return ValueReader(text).read();
}

} // namespace collc::lang
