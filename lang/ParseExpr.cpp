// lang/ParseExpr.cpp: the parser's expressions, one function per precedence level.
//
// Loosest first: 'c ? a : b'; 'or'; 'and'; 'not'; a comparison (== != < <=
// > >=, which do not chain); | ; ^ and xor; &; << >>; + -; * / %; unary -
// and ~; ** (right-associative); then a primary: an integer, '(' expr ')',
// a buffer, a name, a call of a function or builtin, chunks_of or accepts.
#include "lang/ParserImpl.h"

namespace collc::lang::detail {

namespace {

ExprPtr makeExpr(ExprKind k, Loc loc) {
  auto e = std::make_unique<Expr>();
  e->kind = k;
  e->loc = loc;
  return e;
}

ExprPtr bufferValue(ir::Buffer b, Loc loc) {
  ExprPtr e = makeExpr(ExprKind::Int, loc);
  e->value = int64_t(b);
  return e;
}

std::optional<BinOp> comparison(Tok t) {
  switch (t) {
  case Tok::EqEq: return BinOp::Eq;
  case Tok::NotEq: return BinOp::Ne;
  case Tok::Less: return BinOp::Lt;
  case Tok::LessEq: return BinOp::Le;
  case Tok::Greater: return BinOp::Gt;
  case Tok::GreaterEq: return BinOp::Ge;
  default: return std::nullopt;
  }
}

/// Binary operator levels, loosest first: | ; ^ xor ; & ; << >> ; + - ; * / %.
std::optional<BinOp> binaryAt(int level, Tok t) {
  switch (level) {
  case 0: if (t == Tok::Pipe) return BinOp::BitOr; break;
  case 1: if (t == Tok::Caret || t == Tok::KwXor) return BinOp::Xor; break;
  case 2: if (t == Tok::Amp) return BinOp::BitAnd; break;
  case 3:
    if (t == Tok::Shl) return BinOp::Shl;
    if (t == Tok::Shr) return BinOp::Shr;
    break;
  case 4:
    if (t == Tok::Plus) return BinOp::Add;
    if (t == Tok::Minus) return BinOp::Sub;
    break;
  case 5:
    if (t == Tok::Star) return BinOp::Mul;
    if (t == Tok::Slash) return BinOp::Div;
    if (t == Tok::Percent) return BinOp::Mod;
    break;
  }
  return std::nullopt;
}

} // namespace

ExprPtr Parser::parseExpr() {
  const Loc start = tok().loc;
  Depth depth(*this, start);
  ExprPtr e = parseCond();
  e->start = start;
  return e;
}

ExprPtr Parser::parseCond() {
  ExprPtr c = parseOr();
  if (!at(Tok::Question))
    return c;
  const Loc loc = take().loc;
  ExprPtr e = makeExpr(ExprKind::Cond, loc);
  e->a = std::move(c);
  e->b = parseExpr();
  expect(Tok::Colon, "between the branches of '?'");
  e->c = parseExpr();
  return e;
}

ExprPtr Parser::parseOr() {
  ExprPtr l = parseAnd();
  while (at(Tok::KwOr)) {
    ExprPtr e = makeExpr(ExprKind::Or, take().loc);
    e->a = std::move(l);
    e->b = parseAnd();
    l = std::move(e);
  }
  return l;
}

ExprPtr Parser::parseAnd() {
  ExprPtr l = parseNot();
  while (at(Tok::KwAnd)) {
    ExprPtr e = makeExpr(ExprKind::And, take().loc);
    e->a = std::move(l);
    e->b = parseNot();
    l = std::move(e);
  }
  return l;
}

ExprPtr Parser::parseNot() {
  if (!at(Tok::KwNot))
    return parseComparison();
  Depth depth(*this, tok().loc);
  ExprPtr e = makeExpr(ExprKind::Unary, take().loc);
  e->op = uint8_t(UnOp::Not);
  e->a = parseNot();
  return e;
}

ExprPtr Parser::parseComparison() {
  ExprPtr l = parseBinary(0);
  std::optional<BinOp> op = comparison(tok().kind);
  if (!op)
    return l;
  ExprPtr e = makeExpr(ExprKind::Binary, take().loc);
  e->op = uint8_t(*op);
  e->a = std::move(l);
  e->b = parseBinary(0);
  if (comparison(tok().kind))
    fail(tok().loc, "comparisons do not chain (write 'a < b and b < c')");
  return e;
}

ExprPtr Parser::parseBinary(int level) {
  if (level > 5)
    return parseUnary();
  ExprPtr l = parseBinary(level + 1);
  while (std::optional<BinOp> op = binaryAt(level, tok().kind)) {
    ExprPtr e = makeExpr(ExprKind::Binary, take().loc);
    e->op = uint8_t(*op);
    e->a = std::move(l);
    e->b = parseBinary(level + 1);
    l = std::move(e);
  }
  return l;
}

ExprPtr Parser::parseUnary() {
  if (!at(Tok::Minus) && !at(Tok::Tilde))
    return parsePower();
  Depth depth(*this, tok().loc);
  const bool neg = at(Tok::Minus);
  ExprPtr e = makeExpr(ExprKind::Unary, take().loc);
  e->op = uint8_t(neg ? UnOp::Neg : UnOp::BitNot);
  e->a = parseUnary();
  return e;
}

ExprPtr Parser::parsePower() {
  ExprPtr base = parsePrimary();
  if (!at(Tok::StarStar))
    return base;
  ExprPtr e = makeExpr(ExprKind::Binary, take().loc);
  e->op = uint8_t(BinOp::Pow);
  e->a = std::move(base);
  Depth depth(*this, tok().loc);
  e->b = parseUnary(); // right-associative: 2 ** 3 ** 2 = 2 ** 9; 2 ** -1 is refused later
  return e;
}

ExprPtr Parser::parsePrimary() {
  const Token &t = tok();
  switch (t.kind) {
  case Tok::Int: {
    ExprPtr e = makeExpr(ExprKind::Int, t.loc);
    e->value = t.value;
    take();
    return e;
  }
  case Tok::LParen: {
    take();
    ExprPtr e = parseExpr();
    expect(Tok::RParen, "to close '('");
    return e;
  }
  case Tok::KwIn: // the buffers are values: in = 0, out = 1, tmp = 2
    take();
    return bufferValue(ir::Buffer::In, t.loc);
  case Tok::Ident: {
    const Token &name = take();
    if (at(Tok::LParen) && (name.text == "chunks_of" || name.text == "accepts"))
      return parseAlgQuery(name);
    if (at(Tok::LParen))
      return parseCall(name);
    if (name.text == "out" || name.text == "tmp")
      return bufferValue(name.text == "out" ? ir::Buffer::Out : ir::Buffer::Tmp, name.loc);
    std::optional<Binding> b = lookup(name.text);
    if (!b) {
      if (functions_.count(name.text) || builtinOf(name.text))
        fail(name.loc, llvm::formatv("'{0}' is a function; call it as {0}(...)", name.text));
      fail(name.loc, llvm::formatv("unknown name '{0}'", name.text));
    }
    switch (b->kind) {
    case Binding::Rank:
      return makeExpr(ExprKind::Rank, name.loc);
    case Binding::Nops:
      return makeExpr(ExprKind::Nops, name.loc);
    case Binding::Algorithm:
      fail(name.loc, llvm::formatv("'{0}' is an algorithm parameter, not a number (use it in "
                                   "a 'run', chunks_of or accepts)",
                                   name.text));
    case Binding::Local: {
      ExprPtr e = makeExpr(ExprKind::Local, name.loc);
      e->value = b->slot;
      return e;
    }
    case Binding::Global: {
      ExprPtr e = makeExpr(ExprKind::Global, name.loc);
      e->value = b->slot;
      return e;
    }
    }
    break;
  }
  default:
    break;
  }
  expected("an expression");
}

ExprPtr Parser::parseAlgQuery(const Token &name) {
  // chunks_of(COLLECTIVE NAME[(args)], P) and accepts(...): the first
  // argument is an algorithm.
  ExprPtr e = makeExpr(name.text == "chunks_of" ? ExprKind::ChunksOf : ExprKind::Accepts,
                       name.loc);
  take(); // (
  e->alg = std::make_unique<AlgRef>();
  parseAlgRef(*e->alg, llvm::formatv("as the first argument of {0}", name.text).str());
  m_.algRefs.push_back(e->alg.get());
  expect(Tok::Comma, llvm::formatv("and the number of ranks after the algorithm ({0}(ALG, P))",
                                   name.text));
  e->args.push_back(parseExpr());
  expect(Tok::RParen, "to close the arguments");
  return e;
}

ExprPtr Parser::parseCall(const Token &name) {
  take(); // (
  std::vector<ExprPtr> args;
  if (!at(Tok::RParen)) {
    do
      args.push_back(parseExpr());
    while (accept(Tok::Comma));
  }
  expect(Tok::RParen, "to close the arguments");
  if (std::optional<Builtin> b = builtinOf(name.text)) {
    unsigned minArgs = 0, maxArgs = 0;
    switch (*b) {
#define COLLC_BUILTIN(Enum, Text, MinArgs, MaxArgs, Meaning)                               \
  case Builtin::Enum:                                                                      \
    minArgs = MinArgs;                                                                     \
    maxArgs = MaxArgs;                                                                     \
    break;
#include "lang/Builtins.def"
    }
    if (args.size() < minArgs || (maxArgs && args.size() > maxArgs))
      fail(name.loc,
           minArgs == maxArgs
               ? llvm::formatv("'{0}' takes {1} argument{2}, given {3}", name.text, minArgs,
                               minArgs == 1 ? "" : "s", args.size())
                     .str()
               : llvm::formatv("'{0}' takes at least {1} arguments, given {2}", name.text,
                               minArgs, args.size())
                     .str());
    ExprPtr e = makeExpr(ExprKind::Builtin, name.loc);
    e->op = uint8_t(*b);
    e->args = std::move(args);
    return e;
  }
  if (lookup(name.text))
    fail(name.loc, llvm::formatv("'{0}' is a variable, not a function", name.text));
  ExprPtr e = makeExpr(ExprKind::Call, name.loc);
  e->args = std::move(args);
  pendingCalls_.push_back({e.get(), name.text.str()});
  return e;
}

} // namespace collc::lang::detail
