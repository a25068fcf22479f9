// lang/Parser.cpp: a recursive-descent parser: the file, its header and its statements.
//
// The grammar (docs/language.md "Grammar"), newline-terminated statements:
//   file     := header { fnDef | stmt }
//   header   := 'algorithm' NAME { headerItem | fnDef }
//   headerItem := 'collective' NAME | 'chunks' expr | 'scratch' expr
//             | 'param' NAME '=' (['-'] INT | NAME | STRING)
//             | 'require' expr | 'const' NAME '=' expr
//             | 'commutative' | 'in_place' | 'summary' STRING
//   fnDef    := 'fn' NAME '(' [NAME {',' NAME}] ')' '=' expr
//   stmt     := 'let' NAME '=' expr | NAME '=' expr | forStmt | whileStmt
//             | ifStmt | 'step' [expr] | opStmt | runStmt
//   forStmt  := 'for' NAME 'in' ['reverse'] expr '..' expr ['by' ['*'] expr] block
//   ifStmt   := 'if' expr block ['else' (ifStmt | block)]
//   runStmt  := 'run' algRef 'on' group { 'chunks' expr ['..' expr] | 'root' expr
//             | 'from' buffer | 'to' buffer }
//   algRef   := COLLECTIVE (NAME | STRING) ['(' [NAME '=' value {',' ...}] ')']
//   group    := '[' expr {',' expr} ']'
//             | '[' expr 'for' NAME 'in' ['reverse'] expr '..' expr ['by' ['*'] expr]
//               ['if' expr] ']'
//   opStmt   := 'send' slots 'to' expr | 'recv' slots 'from' expr
//             | 'recv_reduce' slots 'from' expr [order] ['into' slots]
//             | 'reduce' slots 'with' slots [order] ['into' slots]
//             | 'copy' slots 'to' slots          -- each optionally 'after' '[' exprs ']'
//   order    := ('recv_first' | 'src_first' | 'buf_first') ['(' expr ')']
//   slots    := ('in' | 'out' | 'tmp' | NAME) '[' expr ['..' expr] ']'
// Names are resolved as they are read (Ast.h); a use before the definition
// is an error, except for function calls, which are resolved at the end.
// Errors are raised at the offending token, "expected X, found Y".
//
// The expressions are ParseExpr.cpp; the class is ParserImpl.h.
#include "lang/Parser.h"

#include "lang/ParserImpl.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

namespace collc::lang {

namespace detail {

void Parser::parseFile() {
  scopes_.emplace_back();
  auto &global = scopes_.back();
  global["p"] = Binding{Binding::Global, SlotP, false};
  global["root"] = Binding{Binding::Global, SlotRoot, false};
  global["r"] = Binding{Binding::Rank, 0, false};
  global["nops"] = Binding{Binding::Nops, 0, false};
  global["nnodes"] = Binding{Binding::Global, SlotNnodes, false};
  global["ppn"] = Binding{Binding::Global, SlotPpn, false};
  global["nlevels"] = Binding{Binding::Global, SlotNlevels, false};
  skipNewlines();
  parseHeader();
  while (!at(Tok::End))
    parseTopLevel();
  for (const PendingCall &c : pendingCalls_) {
    auto it = functions_.find(c.name);
    if (it == functions_.end())
      fail(c.call->loc, llvm::formatv("unknown function '{0}'", c.name));
    const Function &f = m_.functions[it->second];
    if (c.call->args.size() != f.arity)
      fail(c.call->loc, llvm::formatv("'{0}' takes {1} argument{2}, given {3}", c.name,
                                      f.arity, f.arity == 1 ? "" : "s", c.call->args.size()));
    c.call->value = it->second;
  }
  finishAlgorithmParams();
}

void Parser::finishAlgorithmParams() {
  for (const AlgRef *ref : m_.algRefs)
    if (ref->alg.param >= 0) {
      std::vector<ir::Collective> &cs = m_.params[size_t(ref->alg.param)].collectives;
      if (std::find(cs.begin(), cs.end(), ref->collective) == cs.end())
        cs.push_back(ref->collective);
    }
  for (size_t i = 0; i < m_.params.size(); ++i)
    if (m_.params[i].isAlgorithm && !algParamUsed_[i])
      fail(m_.params[i].loc,
           llvm::formatv("algorithm parameter '{0}' is never used (name it in a 'run', "
                         "chunks_of or accepts)",
                         m_.params[i].name));
}

void Parser::parseHeader() {
  if (!at(Tok::KwAlgorithm))
    expected("'algorithm NAME' to begin the file");
  const Loc start = take().loc;
  const Token &name = expect(Tok::Ident, "naming the algorithm");
  m_.name = name.text.str();
  m_.nameLoc = start;
  endStatement("the algorithm's name");
  bool haveCollective = false;
  llvm::StringMap<Loc> seen;
  for (;;) {
    const Token &t = tok();
    auto once = [&] {
      auto [it, fresh] = seen.try_emplace(t.text, t.loc);
      if (!fresh)
        fail(t.loc, llvm::formatv("'{0}' given twice (first at line {1})", t.text,
                                  it->second.line));
    };
    switch (t.kind) {
    case Tok::KwCollective: {
      once();
      take();
      if (at(Tok::KwReduce)) // a keyword, and a collective's name
        toks_[pos_].kind = Tok::Ident;
      const Token &c = expect(Tok::Ident, "naming the collective");
      std::optional<ir::Collective> coll = ir::parseCollective(c.text);
      if (!coll)
        fail(c.loc, llvm::formatv("unknown collective '{0}' (expected {1})", c.text,
                                  ir::collectiveNames()));
      m_.collective = *coll;
      haveCollective = true;
      break;
    }
    case Tok::KwChunks:
      once();
      take();
      m_.chunks = parseExpr();
      break;
    case Tok::KwScratch:
      once();
      take();
      m_.scratch = parseExpr();
      break;
    case Tok::KwCommutative:
      once();
      take();
      m_.commutative = true;
      break;
    case Tok::KwInPlace:
      once();
      take();
      m_.inPlace = true;
      break;
    case Tok::KwSummary:
      once();
      take();
      m_.summary = expect(Tok::String, "after 'summary'").text.str();
      break;
    case Tok::KwParam: {
      take();
      const Token &n = expect(Tok::Ident, "naming the parameter");
      Param prm;
      prm.name = n.text.str();
      prm.loc = n.loc;
      checkNewName(n, "parameter");
      expect(Tok::Assign, "and a default value after the parameter's name");
      if (at(Tok::Ident) || at(Tok::String)) {
        // An algorithm parameter: its default names an algorithm.
        prm.isAlgorithm = true;
        prm.defaultAlgorithm.loc = tok().loc;
        prm.defaultAlgorithm.name = take().text.str();
        scopes_.back()[n.text] =
            Binding{Binding::Algorithm, uint32_t(m_.params.size()), false};
      } else {
        prm.slot = newGlobal(n, /*assignable=*/false, "parameter");
        const bool negative = accept(Tok::Minus);
        if (!at(Tok::Int))
          expected("an integer or an algorithm's name as the parameter's default");
        prm.defaultValue = take().value;
        if (negative)
          prm.defaultValue = -prm.defaultValue;
      }
      m_.params.push_back(std::move(prm));
      algParamUsed_.push_back(false);
      break;
    }
    case Tok::KwRequire: {
      take();
      Stmt req;
      req.kind = StmtKind::Require;
      req.loc = tok().loc;
      req.cond = parseExpr();
      req.var = textFrom(req.loc);
      m_.prelude.push_back(std::move(req));
      break;
    }
    case Tok::KwFn:
      parseFunction(); // ends its line
      continue;
    case Tok::KwConst: {
      take();
      const Token &n = expect(Tok::Ident, "naming the constant after 'const'");
      expect(Tok::Assign, "after the constant's name");
      Stmt c;
      c.kind = StmtKind::Let;
      c.loc = t.loc;
      c.value = parseExpr();
      c.slot = newGlobal(n, /*assignable=*/false, "constant");
      m_.prelude.push_back(std::move(c));
      break;
    }
    default:
      if (!haveCollective)
        fail(t.loc, "the header needs 'collective NAME' (before the first statement)");
      if (!m_.chunks)
        fail(t.loc, "the header needs 'chunks EXPR' (before the first statement)");
      scopes_.emplace_back(); // the main program's top level
      return;
    }
    endStatement(t.text);
  }
}

std::string Parser::textFrom(Loc start) const {
  // The text between `start` and the current token, on start's line.
  llvm::StringRef line = m_.source.lineText(start.line);
  const Loc end = tok().loc;
  size_t e = end.line == start.line ? end.col - 1 : line.size();
  return line.slice(start.col - 1, e).rtrim().str();
}

void Parser::parseTopLevel() {
  switch (tok().kind) {
  case Tok::KwFn:
    parseFunction();
    break;
  case Tok::KwCollective:
  case Tok::KwChunks:
  case Tok::KwScratch:
  case Tok::KwParam:
  case Tok::KwRequire:
  case Tok::KwConst:
  case Tok::KwCommutative:
  case Tok::KwInPlace:
  case Tok::KwSummary:
  case Tok::KwAlgorithm:
    fail(tok().loc, llvm::formatv("'{0}' belongs in the header, before the first statement",
                                  tok().text));
  default:
    m_.body.push_back(parseStatement());
  }
}

void Parser::parseFunction() {
  const Loc start = take().loc;
  const Token &name = expect(Tok::Ident, "naming the function");
  if (isBuiltinName(name.text))
    fail(name.loc, llvm::formatv("'{0}' is a builtin and cannot name a function", name.text));
  if (functions_.count(name.text))
    fail(name.loc, llvm::formatv("function '{0}' is already defined", name.text));
  Function f;
  f.name = name.text.str();
  f.loc = start;
  expect(Tok::LParen, "after the function's name");
  scopes_.emplace_back();
  llvm::StringMap<Binding> &args = scopes_.back();
  if (!at(Tok::RParen)) {
    do {
      const Token &a = expect(Tok::Ident, "naming an argument");
      checkNewName(a, "argument");
      args[a.text] = Binding{Binding::Local, f.arity++, false};
    } while (accept(Tok::Comma));
  }
  expect(Tok::RParen, "after the arguments");
  expect(Tok::Assign, "before the function's body (fn name(args) = expr)");
  functions_[f.name] = uint32_t(m_.functions.size());
  m_.functions.push_back(std::move(f));
  const size_t index = m_.functions.size() - 1;
  // The body sees its arguments and the header's names (p, r, root, the
  // parameters and the header's constants), not the main program's
  // variables: a function's value depends on nothing that changes.
  std::vector<llvm::StringMap<Binding>> hidden(scopes_.begin() + 1, scopes_.end() - 1);
  scopes_.erase(scopes_.begin() + 1, scopes_.end() - 1);
  ExprPtr body = parseExpr();
  scopes_.insert(scopes_.begin() + 1, hidden.begin(), hidden.end());
  scopes_.pop_back();
  m_.functions[index].body = std::move(body);
  endStatement("the function");
}

Block Parser::parseBlock(llvm::StringRef what) {
  Depth depth(*this, tok().loc);
  expect(Tok::LBrace, llvm::Twine("to open the body of ") + what);
  scopes_.emplace_back();
  Block block;
  skipNewlines();
  while (!at(Tok::RBrace)) {
    if (at(Tok::End))
      expected(llvm::Twine("'}' to close the body of ") + what);
    if (at(Tok::KwFn))
      fail(tok().loc, "functions are defined at the top level only");
    block.push_back(parseStatement());
  }
  take();
  scopes_.pop_back();
  return block;
}

Stmt Parser::parseStatement() {
  Stmt s;
  s.loc = tok().loc;
  switch (tok().kind) {
  case Tok::KwLet: {
    take();
    const Token &n = expect(Tok::Ident, "naming the variable after 'let'");
    expect(Tok::Assign, "after the variable's name");
    s.value = parseExpr(); // the new name is not visible in its own initializer
    s.slot = newGlobal(n, /*assignable=*/true, "variable");
    endStatement("'let'");
    return s;
  }
  case Tok::Ident: {
    const Token &n = take();
    if (!at(Tok::Assign))
      fail(n.loc, llvm::formatv("expected a statement, found identifier '{0}' (an assignment "
                                "is 'name = expr')",
                                n.text));
    std::optional<Binding> b = lookup(n.text);
    if (!b)
      fail(n.loc, llvm::formatv("unknown variable '{0}' (declare it with 'let')", n.text));
    if (!b->assignable)
      fail(n.loc, llvm::formatv("cannot assign to '{0}' (only 'let' variables can change)",
                                n.text));
    take();
    s.slot = b->slot;
    s.value = parseExpr();
    endStatement("the assignment");
    return s;
  }
  case Tok::KwFor:
    s = parseFor();
    break;
  case Tok::KwWhile:
    take();
    s.kind = StmtKind::While;
    s.cond = parseExpr();
    s.body = parseBlock("'while'");
    break;
  case Tok::KwIf:
    s = parseIf();
    break;
  case Tok::KwStep:
    take();
    s.kind = StmtKind::Step;
    if (!at(Tok::Newline) && !at(Tok::Semi) && !at(Tok::RBrace) && !at(Tok::End))
      s.value = parseExpr();
    endStatement("'step'");
    return s;
  case Tok::KwSend:
  case Tok::KwRecv:
  case Tok::KwRecvReduce:
  case Tok::KwReduce:
  case Tok::KwCopy:
    s = parseOp();
    endStatement(ir::name(s.op));
    return s;
  case Tok::KwRun:
    s = parseRun();
    endStatement("the run");
    return s;
  default:
    expected("a statement");
  }
  endStatement("'}'");
  return s;
}

void Parser::parseRange(ExprPtr &from, ExprPtr &to, ExprPtr &stride, bool &geometric,
                        bool &reverse) {
  if (atIdent("reverse") && peekTok().kind != Tok::DotDot) {
    take();
    reverse = true;
  }
  from = parseExpr();
  expect(Tok::DotDot, "between the bounds of the range (a..b)");
  to = parseExpr();
  if (atIdent("by")) {
    take();
    geometric = accept(Tok::Star);
    stride = parseExpr();
  }
}

Stmt Parser::parseFor() {
  Stmt s;
  s.kind = StmtKind::For;
  s.loc = take().loc;
  const Token &v = expect(Tok::Ident, "naming the loop variable after 'for'");
  expect(Tok::KwIn, "after the loop variable");
  parseRange(s.from, s.to, s.stride, s.geometric, s.reverse);
  s.var = v.text.str();
  scopes_.emplace_back();
  s.slot = newGlobal(v, /*assignable=*/false, "loop variable");
  s.body = parseBlock("'for'");
  scopes_.pop_back();
  return s;
}

Stmt Parser::parseIf() {
  Stmt s;
  s.kind = StmtKind::If;
  s.loc = take().loc;
  s.cond = parseExpr();
  s.body = parseBlock("'if'");
  if (accept(Tok::KwElse)) {
    if (at(Tok::KwIf)) {
      Depth depth(*this, tok().loc);
      s.orElse.push_back(parseIf());
    } else {
      s.orElse = parseBlock("'else'");
    }
  }
  return s;
}

Stmt Parser::parseOp() {
  Stmt s;
  s.kind = StmtKind::Op;
  s.loc = tok().loc;
  const Tok kw = take().kind;
  switch (kw) {
  case Tok::KwSend:
    s.op = ir::OpKind::Send;
    s.slots = parseSlots("send");
    expectWord("to", "and the receiving rank after the slots of send");
    s.peer = parseExpr();
    break;
  case Tok::KwRecv:
  case Tok::KwRecvReduce:
    s.op = kw == Tok::KwRecv ? ir::OpKind::Recv : ir::OpKind::RecvReduce;
    s.slots = parseSlots(ir::name(s.op));
    expectWord("from", llvm::Twine("and the sending rank after the slots of ") +
                           ir::name(s.op));
    s.peer = parseExpr();
    break;
  case Tok::KwReduce:
    s.op = ir::OpKind::Reduce;
    s.slots = parseSlots("reduce");
    expectWord("with", "and the source slots after the slots of reduce");
    s.src = parseSlots("reduce's source");
    break;
  default:
    s.op = ir::OpKind::Copy;
    s.src = parseSlots("copy");
    expectWord("to", "and the destination slots after the source of copy");
    s.slots = parseSlots("copy's destination");
    break;
  }
  if (ir::hasOrder(s.op)) {
    if (at(Tok::Ident) && (tok().text.endswith("_first"))) {
      const Token &o = take();
      s.order = ir::parseOrder(s.op, o.text);
      if (!s.order)
        fail(o.loc, llvm::formatv("unknown order '{0}' for {1} (expected {2} or buf_first)",
                                  o.text, ir::name(s.op),
                                  ir::orderName(s.op, ir::Order::OtherFirst)));
      if (accept(Tok::LParen)) {
        s.orderCond = parseExpr();
        expect(Tok::RParen, "to close the order's condition");
      }
    }
    if (atIdent("into")) {
      take();
      s.dst = parseSlots("the destination");
    }
  }
  if (atIdent("after")) {
    take();
    s.hasAfter = true;
    expect(Tok::LBracket, "to open the list of ops after 'after'");
    if (!at(Tok::RBracket)) {
      do
        s.after.push_back(parseExpr());
      while (accept(Tok::Comma));
    }
    expect(Tok::RBracket, "to close the list of ops after 'after'");
  }
  return s;
}

Stmt Parser::parseRun() {
  Stmt s;
  s.kind = StmtKind::Run;
  s.loc = take().loc;
  s.run = std::make_unique<RunSpec>();
  RunSpec &run = *s.run;
  parseAlgRef(run.alg, "after 'run'");
  m_.algRefs.push_back(&run.alg);
  m_.runs.push_back(&run);
  expectWord("on", "and the group of ranks after the algorithm (run ALG on [ranks])");
  run.group = parseGroup();
  bool haveChunks = false, haveRoot = false;
  for (;;) {
    const Token &t = tok();
    auto once = [&](bool &seen) {
      if (seen)
        fail(t.loc, llvm::formatv("'{0}' given twice in one run", t.text));
      seen = true;
      take();
    };
    if (at(Tok::KwChunks)) {
      once(haveChunks);
      run.chunksLoc = tok().loc;
      run.first = parseExpr();
      if (accept(Tok::DotDot))
        run.end = parseExpr();
    } else if (atIdent("root")) {
      once(haveRoot);
      run.root = parseExpr();
    } else if (atIdent("from")) {
      if (run.from)
        fail(t.loc, "'from' given twice in one run");
      take();
      run.from = parseBuffer("from");
    } else if (atIdent("to")) {
      if (run.to)
        fail(t.loc, "'to' given twice in one run");
      take();
      run.to = parseBuffer("to");
    } else {
      break;
    }
  }
  return s;
}

AlgName Parser::parseAlgName(llvm::StringRef context) {
  AlgName n;
  n.loc = tok().loc;
  if (at(Tok::String)) {
    n.name = take().text.str();
    return n;
  }
  if (!at(Tok::Ident))
    expected(llvm::Twine("an algorithm's name (of the library, a \"file.calgo\" or an "
                         "algorithm parameter) ") +
             context);
  const Token &t = take();
  if (std::optional<Binding> b = lookup(t.text)) {
    if (b->kind != Binding::Algorithm)
      fail(t.loc, llvm::formatv("'{0}' is a variable, not an algorithm", t.text));
    n.param = int32_t(b->slot);
    algParamUsed_[b->slot] = true;
    return n;
  }
  if (isBuiltinName(t.text))
    fail(t.loc, llvm::formatv("'{0}' is a builtin, not an algorithm", t.text));
  n.name = t.text.str();
  return n;
}

void Parser::parseAlgRef(AlgRef &ref, llvm::StringRef context) {
  ref.loc = tok().loc;
  if (at(Tok::KwReduce)) // a keyword, and a collective's name
    toks_[pos_].kind = Tok::Ident;
  if (!at(Tok::Ident))
    expected(llvm::Twine("the collective of the algorithm (allreduce, reduce, ...) ") + context);
  const Token &c = take();
  std::optional<ir::Collective> coll = ir::parseCollective(c.text);
  if (!coll)
    fail(c.loc, llvm::formatv("unknown collective '{0}' (expected {1}, then the algorithm's "
                              "name)",
                              c.text, ir::collectiveNames()));
  ref.collective = *coll;
  ref.alg = parseAlgName("after the collective");
  parseAlgArgs(ref.args, 0);
}

void Parser::parseAlgArgs(std::vector<AlgRef::Arg> &args, unsigned depth) {
  if (!at(Tok::LParen))
    return;
  if (depth >= 32)
    fail(tok().loc, "algorithm arguments nested deeper than 32 levels");
  take();
  if (!at(Tok::RParen)) {
    do {
      AlgRef::Arg arg;
      arg.loc = tok().loc;
      arg.name = expect(Tok::Ident, "naming a parameter of the algorithm").text.str();
      for (const AlgRef::Arg &a : args)
        if (a.name == arg.name)
          fail(arg.loc, llvm::formatv("parameter '{0}' given twice", arg.name));
      expect(Tok::Assign, "after the parameter's name (name = value)");
      // An algorithm (a string, an algorithm parameter, or a name that is no
      // variable or function) standing alone, or with its own arguments, is
      // a choice for an algorithm parameter.
      const Tok next = peekTok().kind;
      const bool alone = next == Tok::Comma || next == Tok::RParen;
      std::optional<Binding> b = at(Tok::Ident) ? lookup(tok().text) : std::nullopt;
      const bool algName =
          at(Tok::Ident) && (b ? b->kind == Binding::Algorithm : !isBuiltinName(tok().text));
      // `NAME(x = ...)` gives an algorithm arguments; `NAME(...)` otherwise
      // calls a function.
      auto kindAt = [&](size_t k) {
        return pos_ + k < toks_.size() ? toks_[pos_ + k].kind : Tok::End;
      };
      const bool withArgs = next == Tok::LParen && kindAt(2) == Tok::Ident &&
                            kindAt(3) == Tok::Assign;
      if (at(Tok::String) || (algName && (alone || withArgs))) {
        arg.choice = parseAlgName("as the parameter's value");
        parseAlgArgs(arg.choiceArgs, depth + 1);
      } else {
        arg.value = parseExpr();
      }
      args.push_back(std::move(arg));
    } while (accept(Tok::Comma));
  }
  expect(Tok::RParen, "to close the algorithm's parameters");
}

GroupExpr Parser::parseGroup() {
  GroupExpr g;
  g.loc = tok().loc;
  expect(Tok::LBracket, "to open the group of ranks ([r0, r1, ...] or [e for v in a..b])");
  if (at(Tok::RBracket))
    fail(tok().loc, "a group needs at least one rank");
  // A comprehension binds its variable in the item, which comes first: find
  // `for` at this bracket's level before reading the item.
  size_t forAt = 0;
  for (size_t i = pos_, depth = 0; i < toks_.size(); ++i) {
    const Tok k = toks_[i].kind;
    if (k == Tok::LParen || k == Tok::LBracket)
      ++depth;
    else if ((k == Tok::RParen || k == Tok::RBracket) && depth-- == 0)
      break;
    else if (k == Tok::KwFor && depth == 0) {
      forAt = i;
      break;
    } else if (k == Tok::End || k == Tok::Newline)
      break;
  }
  if (!forAt) {
    do
      g.items.push_back(parseExpr());
    while (accept(Tok::Comma));
    expect(Tok::RBracket, "to close the group");
    return g;
  }
  g.comprehension = true;
  if (forAt + 1 >= toks_.size() || toks_[forAt + 1].kind != Tok::Ident) {
    pos_ = forAt + 1;
    expected("the variable of the group after 'for'");
  }
  const Token &v = toks_[forAt + 1];
  g.var = v.text.str();
  scopes_.emplace_back();
  g.slot = newGlobal(v, /*assignable=*/false, "group variable");
  Binding var = scopes_.back()[v.text];
  g.item = parseExpr();
  scopes_.pop_back();
  expect(Tok::KwFor, "after the group's rank expression");
  take(); // the variable
  expect(Tok::KwIn, "after the group's variable");
  parseRange(g.from, g.to, g.stride, g.geometric, g.reverse);
  if (accept(Tok::KwIf)) {
    scopes_.emplace_back();
    scopes_.back()[g.var] = var;
    g.filter = parseExpr();
    scopes_.pop_back();
  }
  expect(Tok::RBracket, "to close the group");
  return g;
}

BufferExpr Parser::parseBuffer(llvm::StringRef role) {
  BufferExpr b;
  b.loc = tok().loc;
  if (accept(Tok::KwIn)) {
    b.buf = ir::Buffer::In;
  } else if (atIdent("out") || atIdent("tmp")) {
    b.buf = take().text == "out" ? ir::Buffer::Out : ir::Buffer::Tmp;
  } else if (at(Tok::Ident) && lookup(tok().text)) {
    b.value = parsePrimary();
  } else {
    expected(llvm::Twine("a buffer (in, out, tmp or a variable holding one) after '") + role +
             "'");
  }
  return b;
}

SlotsExpr Parser::parseSlots(llvm::StringRef role) {
  SlotsExpr s;
  s.loc = tok().loc;
  const bool named = at(Tok::KwIn) || atIdent("out") || atIdent("tmp");
  if (!named && !(at(Tok::Ident) && lookup(tok().text) && peekTok().kind == Tok::LBracket))
    expected(llvm::Twine("slots (in[...], out[...], tmp[...] or a buffer variable) for ") +
             role);
  BufferExpr b = parseBuffer(role);
  s.buf = b.buf;
  s.bufValue = std::move(b.value); // a variable holding a buffer
  expect(Tok::LBracket, named ? "after the buffer name" : "after the buffer");
  s.first = parseExpr();
  if (accept(Tok::DotDot))
    s.end = parseExpr();
  expect(Tok::RBracket, "to close the slots");
  return s;
}

} // namespace detail

using detail::ParseFailure;
using detail::Parser;

llvm::Expected<Module> parse(llvm::StringRef text, llvm::StringRef fileName) {
  Module m;
  m.source.name = fileName.str();
  m.source.text = text.str();
  llvm::Expected<std::vector<Token>> toks = lex(m.source);
  if (!toks)
    return toks.takeError();
  try {
    Parser(m, std::move(*toks)).parseFile();
  } catch (const ParseFailure &f) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), f.message);
  }
  return m;
}

llvm::Expected<Module> parseFile(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf)
    return llvm::createStringError(buf.getError(), "cannot read '%s': %s", path.str().c_str(),
                                   buf.getError().message().c_str());
  return parse((*buf)->getBuffer(), path);
}

} // namespace collc::lang
