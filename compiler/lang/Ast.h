// compiler/lang/Ast.h: the syntax tree of an algorithm file, names resolved.
//
// The parser resolves every name while it reads (docs/language.md "Names"):
// a variable becomes a slot of the global frame (p, root, parameters and the
// main program's `let` and loop variables) or of the current function's
// frame (its arguments); a call becomes a builtin or a function index. The
// instantiator then walks the tree without looking anything up by name.
#ifndef COLLC_COMPILER_LANG_AST_H
#define COLLC_COMPILER_LANG_AST_H

#include "compiler/lang/Source.h"
#include "ir/Plan.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace collc::lang {

/// A builtin function (compiler/lang/Builtins.def).
enum class Builtin : uint8_t {
#define COLLC_BUILTIN(Enum, Text, MinArgs, MaxArgs, Meaning) Enum,
#include "compiler/lang/Builtins.def"
};

enum class ExprKind : uint8_t {
  Int,     ///< value
  Global,  ///< global frame slot `value`
  Local,   ///< current function frame slot `value`
  Rank,    ///< r (not in the header)
  Nops,    ///< number of ops this rank has emitted so far (not in the header)
  Unary,   ///< op a
  Binary,  ///< a op b
  And,     ///< a and b (short-circuit)
  Or,      ///< a or b (short-circuit)
  Cond,    ///< a ? b : c
  Call,    ///< function `value`(args)
  Builtin, ///< builtin `op`(args)
};

enum class UnOp : uint8_t { Neg, Not, BitNot };
enum class BinOp : uint8_t {
  Add, Sub, Mul, Div, Mod, Pow, Xor, BitAnd, BitOr, Shl, Shr, Eq, Ne, Lt, Le, Gt, Ge
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  ExprKind kind = ExprKind::Int;
  uint8_t op = 0; ///< UnOp, BinOp or Builtin
  Loc loc;   ///< the operator, name or literal (where evaluating it can fail)
  Loc start; ///< the expression's first token (where its value is reported)
  int64_t value = 0;
  ExprPtr a, b, c;
  std::vector<ExprPtr> args;
};

/// `buf[first]` or `buf[first..end]` (half-open). The buffer is `in`, `out`
/// or `tmp`, or a variable holding one of them (bufValue).
struct SlotsExpr {
  Loc loc;
  ir::Buffer buf = ir::Buffer::Out;
  ExprPtr bufValue; ///< null: `buf`
  ExprPtr first;
  ExprPtr end; ///< null: one slot
};

enum class StmtKind : uint8_t { Let, Require, For, While, If, Step, Op };

struct Stmt;
using Block = std::vector<Stmt>;

struct Stmt {
  StmtKind kind = StmtKind::Let;
  Loc loc;
  // Let (also assignment): slot = value. For: the loop variable's slot.
  // Require: cond, and the condition as written in `var`.
  uint32_t slot = 0;
  ExprPtr value;
  // For: var in [reverse] from..to [by [*]stride].
  std::string var;
  ExprPtr from, to, stride;
  bool geometric = false, reverse = false;
  // While/If: cond; body; If: orElse.
  ExprPtr cond;
  Block body, orElse;
  // Step: value (null: the next step).
  // Op: kind, slots (buf), src (reduce: `with`, copy: the source), dst
  // (`into`), peer, order, after.
  ir::OpKind op = ir::OpKind::Send;
  std::optional<SlotsExpr> slots, src, dst;
  ExprPtr peer;
  std::optional<ir::Order> order;
  ExprPtr orderCond; ///< `buf_first(c)`: the named order if c, else the other
  bool hasAfter = false;
  std::vector<ExprPtr> after;
};

struct Param {
  std::string name;
  Loc loc;
  int64_t defaultValue = 0;
  uint32_t slot = 0;
};

struct Function {
  std::string name;
  Loc loc;
  uint32_t arity = 0;
  ExprPtr body;
};

/// The global frame's fixed slots.
enum GlobalSlot : uint32_t {
  SlotP = 0,
  SlotRoot = 1,
  SlotNnodes = 2,  ///< nodes (level-0 groups) holding ranks (docs/language.md, Topology)
  SlotPpn = 3,     ///< most ranks on one node
  SlotNlevels = 4, ///< levels of the topology (1 when flat)
  FirstFreeSlot = 5
};

/// A parsed algorithm file.
struct Module {
  Source source;
  std::string name;
  Loc nameLoc;
  ir::Collective collective = ir::Collective::Allreduce;
  ExprPtr chunks;
  ExprPtr scratch; ///< null: 0
  bool commutative = false;
  bool inPlace = false;
  std::string summary;
  std::vector<Param> params;
  /// The header's `const` (as Let) and `require` lines in file order.
  Block prelude;
  std::vector<Function> functions;
  Block body;
  uint32_t globalSlots = FirstFreeSlot;
};

} // namespace collc::lang

#endif // COLLC_COMPILER_LANG_AST_H
