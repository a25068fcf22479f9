// ir/PlanPrinter.cpp: the canonical printer of plan text format v1.
//
// Canonical form: header keys in a fixed order (root only for collectives
// that have one), every rank 0..p-1 listed, one flow mapping per op with its
// keys in a fixed order; `count` omitted when 1, `src_chunk` when equal to
// `chunk` (and `dst_chunk`); `order` always printed for combining ops.
#include "ir/PlanIO.h"

#include "llvm/ADT/StringExtras.h"

namespace collc::ir {

namespace {

bool isPlainScalar(llvm::StringRef s) {
  if (s.empty() || !(llvm::isAlpha(s[0]) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(llvm::isAlnum(c) || c == '_' || c == '-' || c == '.' || c == '+'))
      return false;
  static const char *const reserved[] = {"true", "false", "null", "yes", "no", "on",
                                         "off",  "y",     "n",    "Null", "NULL", "True",
                                         "False", "TRUE", "FALSE", "Yes", "No", "On", "Off"};
  for (const char *r : reserved)
    if (s == r)
      return false;
  return true;
}

void printScalar(llvm::StringRef s, llvm::raw_ostream &os) {
  if (isPlainScalar(s)) {
    os << s;
    return;
  }
  os << '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      os << '\\' << c;
    else if (c < 0x20 || c == 0x7f)
      os << "\\x" << llvm::hexdigit(c >> 4, true) << llvm::hexdigit(c & 15, true);
    else
      os << c;
  }
  os << '"';
}

} // namespace

void printOp(const Op &op, llvm::raw_ostream &os) {
  os << '{';
  switch (op.deps) {
  case DepKind::None:
    break;
  case DepKind::Step:
    os << "step: " << op.step << ", ";
    break;
  case DepKind::After:
    os << "after: [";
    llvm::interleave(op.after, os, ", ");
    os << "], ";
    break;
  }
  os << "op: " << name(op.kind);
  if (op.kind == OpKind::Send)
    os << ", to: " << peerValue(op.peer);
  else if (isMessage(op.kind))
    os << ", from: " << peerValue(op.peer);
  os << ", buf: " << name(op.buf) << ", chunk: " << op.chunk;
  if (op.count != 1)
    os << ", count: " << op.count;
  if (hasSrc(op.kind)) {
    os << ", src: " << name(op.src);
    if (op.srcChunk != op.chunk)
      os << ", src_chunk: " << op.srcChunk;
  }
  if (op.hasDst) {
    os << ", dst: " << name(op.dst);
    if (op.dstChunk != op.chunk)
      os << ", dst_chunk: " << op.dstChunk;
  }
  if (hasOrder(op.kind))
    os << ", order: " << orderName(op.kind, op.order);
  os << '}';
}


void printPlan(const Plan &plan, llvm::raw_ostream &os) {
  const Shape &s = plan.shape;
  os << "format: " << formatTag << '\n';
  os << "collective: " << name(s.collective) << '\n';
  os << "algorithm: ";
  printScalar(plan.algorithm, os);
  os << '\n';
  os << "ranks: " << s.ranks << '\n';
  if (hasRoot(s.collective))
    os << "root: " << s.root << '\n';
  os << "chunks: " << s.chunks << '\n';
  os << "scratch: " << s.scratch << '\n';
  os << "commutative: " << (s.commutative ? "true" : "false") << '\n';
  os << "in_place: " << (s.inPlace ? "true" : "false") << '\n';
  os << "programs:\n";
  for (uint32_t r = 0; r < plan.programs.size(); ++r) {
    const auto &ops = plan.programs[r].ops;
    os << "  " << r << ':';
    if (ops.empty()) {
      os << " []\n";
      continue;
    }
    os << '\n';
    for (const Op &op : ops) {
      os << "    - ";
      printOp(op, os);
      os << '\n';
    }
  }
}

std::string printPlan(const Plan &plan) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printPlan(plan, os);
  os.flush();
  return text;
}

} // namespace collc::ir
