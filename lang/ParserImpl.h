// lang/ParserImpl.h: the parser's class, shared by its sources.
//
// Private to lang/: Parser.cpp reads the file, the header and the statements,
// ParseExpr.cpp the expressions.
#ifndef COLLC_LANG_PARSERIMPL_H
#define COLLC_LANG_PARSERIMPL_H

#include "lang/Ast.h"
#include "lang/Lexer.h"
#include "ir/Wording.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

namespace collc::lang::detail {

/// Thrown to unwind to parse() with the first error; never escapes it.
struct ParseFailure {
  std::string message;
};

/// What a name in scope denotes.
struct Binding {
  enum Kind : uint8_t { Global, Local, Rank, Nops, Algorithm } kind = Global;
  uint32_t slot = 0; ///< Algorithm: the index in Module::params
  bool assignable = false; ///< a `let` variable
};

constexpr unsigned maxNesting = 200; // expression and block depth

class Parser {
public:
  Parser(Module &m, std::vector<Token> toks) : m_(m), toks_(std::move(toks)) {}

  void parseFile();

private:
  // --- tokens -------------------------------------------------------------
  const Token &tok() const { return toks_[pos_]; }
  const Token &peekTok(size_t ahead = 1) const {
    return toks_[std::min(pos_ + ahead, toks_.size() - 1)];
  }
  bool at(Tok k) const { return tok().kind == k; }
  bool atIdent(llvm::StringRef word) const { return at(Tok::Ident) && tok().text == word; }
  const Token &take() {
    const Token &t = toks_[pos_];
    if (pos_ + 1 < toks_.size())
      ++pos_;
    return t;
  }
  bool accept(Tok k) {
    if (!at(k))
      return false;
    take();
    return true;
  }
  [[noreturn]] void fail(Loc at, const llvm::Twine &message) const {
    throw ParseFailure{m_.source.format(at, message.str())};
  }
  std::string found() const {
    const Token &t = tok();
    switch (t.kind) {
    case Tok::Ident:
      return "identifier '" + t.text.str() + "'";
    case Tok::Int:
      return "integer " + t.text.str();
    case Tok::String:
      return "a string";
    default:
      return describe(t.kind);
    }
  }
  [[noreturn]] void expected(const llvm::Twine &what) const {
    fail(tok().loc, "expected " + what + ", found " + found());
  }
  const Token &expect(Tok k, const llvm::Twine &context) {
    if (!at(k))
      expected(describe(k) + " " + context);
    return take();
  }
  void expectWord(llvm::StringRef word, const llvm::Twine &context) {
    if (!atIdent(word))
      expected("'" + word + "' " + context);
    take();
  }
  /// The end of a statement: a newline, ';', or (not consumed) '}' / end.
  void endStatement(llvm::StringRef what) {
    if (accept(Tok::Newline) || accept(Tok::Semi)) {
      accept(Tok::Newline);
      return;
    }
    if (at(Tok::RBrace) || at(Tok::End))
      return;
    expected(llvm::Twine("end of line after ") + what);
  }
  void skipNewlines() {
    while (accept(Tok::Newline) || accept(Tok::Semi)) {
    }
  }

  // --- names ---------------------------------------------------------------
  std::optional<Binding> lookup(llvm::StringRef name) const {
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s)
      if (auto it = s->find(name); it != s->end())
        return it->second;
    return std::nullopt;
  }
  void checkNewName(const Token &t, llvm::StringRef what) {
    if (isBuiltinName(t.text))
      fail(t.loc, llvm::formatv("'{0}' is a builtin and cannot name {1} {2}", t.text,
                                ir::article(what), what));
    if (scopes_.back().count(t.text))
      fail(t.loc, llvm::formatv("'{0}' is already defined in this block", t.text));
  }
  static bool isBuiltinName(llvm::StringRef n) {
    return n == "p" || n == "r" || n == "root" || n == "nops" || n == "nnodes" || n == "ppn" ||
           n == "nlevels" || builtinOf(n).has_value() || n == "chunks_of" || n == "accepts" ||
           n == "out" || n == "tmp";
  }
  static std::optional<Builtin> builtinOf(llvm::StringRef n) {
#define COLLC_BUILTIN(Enum, Text, MinArgs, MaxArgs, Meaning)                               \
  if (n == Text)                                                                           \
    return Builtin::Enum;
#include "lang/Builtins.def"
    return std::nullopt;
  }
  uint32_t newGlobal(const Token &t, bool assignable, llvm::StringRef what) {
    checkNewName(t, what);
    const uint32_t slot = m_.globalSlots++;
    scopes_.back()[t.text] = Binding{Binding::Global, slot, assignable};
    return slot;
  }

  // --- rules -----------------------------------------------------------------
  void parseHeader();
  void parseTopLevel();
  void parseFunction();
  Block parseBlock(llvm::StringRef what);
  Stmt parseStatement();
  /// `['reverse'] a '..' b ['by' ['*'] k]` of a loop or a group.
  void parseRange(ExprPtr &from, ExprPtr &to, ExprPtr &stride, bool &geometric, bool &reverse);
  Stmt parseFor();
  Stmt parseIf();
  Stmt parseOp();
  Stmt parseRun();
  void parseAlgRef(AlgRef &ref, llvm::StringRef context);
  /// `(name = value, ...)` after an algorithm, if there; a choice's own
  /// arguments nest (depth counts the levels).
  void parseAlgArgs(std::vector<AlgRef::Arg> &args, unsigned depth);
  AlgName parseAlgName(llvm::StringRef context);
  GroupExpr parseGroup();
  BufferExpr parseBuffer(llvm::StringRef role);
  ExprPtr parseAlgQuery(const Token &name);
  void finishAlgorithmParams();
  SlotsExpr parseSlots(llvm::StringRef role);
  ExprPtr parseExpr();
  ExprPtr parseCond();
  ExprPtr parseOr();
  ExprPtr parseAnd();
  ExprPtr parseNot();
  ExprPtr parseComparison();
  ExprPtr parseBinary(int level);
  ExprPtr parseUnary();
  ExprPtr parsePower();
  ExprPtr parsePrimary();
  ExprPtr parseCall(const Token &name);
  std::string textFrom(Loc start) const;

  struct Depth {
    Parser &p;
    explicit Depth(Parser &parser, Loc at) : p(parser) {
      if (++p.depth_ > maxNesting)
        p.fail(at, llvm::formatv("nested too deeply (more than {0} levels)", maxNesting));
    }
    ~Depth() { --p.depth_; }
  };

  Module &m_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  unsigned depth_ = 0;
  std::vector<llvm::StringMap<Binding>> scopes_;
  llvm::StringMap<uint32_t> functions_; ///< name -> index in m_.functions
  struct PendingCall {
    Expr *call;
    std::string name;
  };
  std::vector<PendingCall> pendingCalls_;
  std::vector<bool> algParamUsed_; ///< per Module::params entry
};

} // namespace collc::lang::detail

#endif // COLLC_LANG_PARSERIMPL_H
