// lang/Ast.h: the syntax tree of an algorithm file, names resolved.
//
// The parser resolves every name while it reads (docs/language.md "Names"):
// a variable becomes a slot of the global frame (p, root, parameters and the
// main program's `let` and loop variables) or of the current function's
// frame (its arguments); a call becomes a builtin or a function index. The
// instantiator then walks the tree without looking anything up by name.
//
// A `run` statement (docs/language.md, "Composition") names another
// algorithm: a library name, a file, or an algorithm parameter; which module
// that is is decided when instantiating, by the Resolver of the options or
// of the module (Instantiator.h), since a parameter may be set on the command
// line.
#ifndef COLLC_LANG_AST_H
#define COLLC_LANG_AST_H

#include "lang/Source.h"
#include "ir/Plan.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace collc::lang {

/// A builtin function (lang/Builtins.def).
enum class Builtin : uint8_t {
#define COLLC_BUILTIN(Enum, Text, MinArgs, MaxArgs, Meaning) Enum,
#include "lang/Builtins.def"
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
  ChunksOf, ///< chunks_of(alg, args[0]): the chunk count of `alg` for that many ranks
  Accepts,  ///< accepts(alg, args[0]): whether `alg`'s `require` lines accept that many ranks
};

enum class UnOp : uint8_t { Neg, Not, BitNot };
enum class BinOp : uint8_t {
  Add, Sub, Mul, Div, Mod, Pow, Xor, BitAnd, BitOr, Shl, Shr, Eq, Ne, Lt, Le, Gt, Ge
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;
struct AlgRef;

struct Expr {
  ExprKind kind = ExprKind::Int;
  uint8_t op = 0; ///< UnOp, BinOp or Builtin
  Loc loc;   ///< the operator, name or literal (where evaluating it can fail)
  Loc start; ///< the expression's first token (where its value is reported)
  int64_t value = 0;
  ExprPtr a, b, c;
  std::vector<ExprPtr> args;
  std::unique_ptr<AlgRef> alg; ///< ChunksOf, Accepts
};

/// An algorithm as a `run` or chunks_of/accepts names it: a name of the
/// library or a file ("x.calgo"), or an algorithm parameter.
struct AlgName {
  Loc loc;
  std::string name; ///< when param < 0
  int32_t param = -1; ///< index in Module::params of an algorithm parameter
};

/// `COLLECTIVE NAME [(arg = value, ...)]`.
struct AlgRef {
  Loc loc; ///< the collective
  ir::Collective collective = ir::Collective::Allreduce;
  AlgName alg;
  struct Arg {
    std::string name;
    Loc loc;
    ExprPtr value;                 ///< an integer parameter's value
    std::optional<AlgName> choice; ///< an algorithm parameter's value
    std::vector<Arg> choiceArgs;   ///< the arguments the choice carries
  };
  std::vector<Arg> args;
};

/// A buffer of a `run`'s `from` / `to`: in, out, tmp or a variable holding one.
struct BufferExpr {
  Loc loc;
  ir::Buffer buf = ir::Buffer::Out;
  ExprPtr value; ///< null: `buf`
};

/// The ranks of a `run`, in order: `[e, ...]` or `[e for v in a..b [by k] [if c]]`.
struct GroupExpr {
  Loc loc;
  std::vector<ExprPtr> items; ///< a list; empty for a comprehension
  bool comprehension = false;
  ExprPtr item;               ///< comprehension: the rank for each value of v
  std::string var;
  uint32_t slot = 0;          ///< v's global slot
  ExprPtr from, to, stride, filter;
  bool geometric = false, reverse = false;
};

/// `run COLLECTIVE NAME[(args)] on GROUP [chunks A..B] [root R] [from BUF] [to BUF]`.
struct RunSpec {
  AlgRef alg;
  GroupExpr group;
  Loc chunksLoc;
  ExprPtr first, end; ///< null: every chunk
  ExprPtr root;       ///< a rank of the caller's numbering
  std::optional<BufferExpr> from, to;
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

enum class StmtKind : uint8_t { Let, Require, For, While, If, Step, Op, Run };

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
  std::unique_ptr<RunSpec> run; ///< Run
};

struct Param {
  std::string name;
  Loc loc;
  int64_t defaultValue = 0;
  uint32_t slot = 0;
  /// An algorithm parameter (`param inner = ring`): its default names an
  /// algorithm, and `collectives` are those of the runs and chunks_of /
  /// accepts that use it (at least one; docs/language.md, "Composition").
  bool isAlgorithm = false;
  AlgName defaultAlgorithm;
  std::vector<ir::Collective> collectives;
};

class Resolver;

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
  /// Every algorithm the file's runs and chunks_of / accepts name, in file
  /// order (pointers into this module's tree).
  std::vector<const AlgRef *> algRefs;
  /// The file's `run` statements, in file order.
  std::vector<const RunSpec *> runs;
  /// Finds the algorithms its runs name when the instantiation's options
  /// give none (set by whoever loads the module, e.g. the library); may be
  /// null.
  const Resolver *resolver = nullptr;
};

} // namespace collc::lang

#endif // COLLC_LANG_AST_H
