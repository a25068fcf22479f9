// ir/Plan.cpp: table-driven properties, buffer layout and well-formedness checks.
#include "ir/Plan.h"
#include "ir/Wording.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"

#include <string>
#include <vector>

namespace collc::ir {

size_t Plan::numOps() const {
  size_t n = 0;
  for (const Program &p : programs)
    n += p.ops.size();
  return n;
}

llvm::StringRef name(Collective c) {
  switch (c) {
#define COLLC_COLLECTIVE(Enum, Text, HasRoot, Reduces)                                   \
  case Collective::Enum:                                                                 \
    return Text;
#include "ir/Collectives.def"
  }
  llvm_unreachable("bad collective");
}

llvm::StringRef name(OpKind k) {
  switch (k) {
#define COLLC_OP(Enum, Text, IsMessage, HasSrc, HasOrder, Writes)                        \
  case OpKind::Enum:                                                                     \
    return Text;
#include "ir/Ops.def"
  }
  llvm_unreachable("bad op kind");
}

llvm::StringRef name(Buffer b) {
  switch (b) {
  case Buffer::In:
    return "in";
  case Buffer::Out:
    return "out";
  case Buffer::Tmp:
    return "tmp";
  }
  llvm_unreachable("bad buffer");
}

llvm::StringRef orderName(OpKind kind, Order o) {
  if (o == Order::BufFirst)
    return "buf_first";
  return kind == OpKind::RecvReduce ? "recv_first" : "src_first";
}

std::optional<Collective> parseCollective(llvm::StringRef s) {
#define COLLC_COLLECTIVE(Enum, Text, HasRoot, Reduces)                                   \
  if (s == Text)                                                                         \
    return Collective::Enum;
#include "ir/Collectives.def"
  return std::nullopt;
}

std::optional<OpKind> parseOpKind(llvm::StringRef s) {
#define COLLC_OP(Enum, Text, IsMessage, HasSrc, HasOrder, Writes)                        \
  if (s == Text)                                                                         \
    return OpKind::Enum;
#include "ir/Ops.def"
  return std::nullopt;
}

std::optional<Buffer> parseBuffer(llvm::StringRef s) {
  return llvm::StringSwitch<std::optional<Buffer>>(s)
      .Case("in", Buffer::In)
      .Case("out", Buffer::Out)
      .Case("tmp", Buffer::Tmp)
      .Default(std::nullopt);
}

std::optional<Order> parseOrder(OpKind kind, llvm::StringRef s) {
  if (s == "buf_first")
    return Order::BufFirst;
  if (s == orderName(kind, Order::OtherFirst))
    return Order::OtherFirst;
  return std::nullopt;
}

llvm::StringRef collectiveNames() {
  static const std::string names = [] {
    std::vector<std::string> all;
#define COLLC_COLLECTIVE(Enum, Text, HasRoot, Reduces) all.push_back(Text);
#include "ir/Collectives.def"
    std::string s;
    for (size_t i = 0; i < all.size(); ++i)
      s += (i == 0 ? "" : i + 1 == all.size() ? " or " : ", ") + all[i];
    return s;
  }();
  return names;
}

bool hasRoot(Collective c) {
  switch (c) {
#define COLLC_COLLECTIVE(Enum, Text, HasRoot, Reduces)                                   \
  case Collective::Enum:                                                                 \
    return HasRoot;
#include "ir/Collectives.def"
  }
  llvm_unreachable("bad collective");
}

bool allowsInPlace(Collective c) {
  return c != Collective::Bcast && c != Collective::ReduceScatterBlock &&
         c != Collective::Scatter && c != Collective::Barrier;
}

bool blockCollective(Collective c) {
  switch (c) {
  case Collective::ReduceScatterBlock:
  case Collective::Allgather:
  case Collective::Alltoall:
  case Collective::Gather:
  case Collective::Scatter:
    return true;
  default:
    return false;
  }
}

bool reduces(Collective c) {
  switch (c) {
#define COLLC_COLLECTIVE(Enum, Text, HasRoot, Reduces)                                   \
  case Collective::Enum:                                                                 \
    return Reduces;
#include "ir/Collectives.def"
  }
  llvm_unreachable("bad collective");
}


namespace {
struct OpInfo {
  bool isMessage, hasSrc, hasOrder, writes;
};
constexpr OpInfo opInfo[] = {
#define COLLC_OP(Enum, Text, IsMessage, HasSrc, HasOrder, Writes)                        \
  {IsMessage, HasSrc, HasOrder, Writes},
#include "ir/Ops.def"
};
const OpInfo &info(OpKind k) { return opInfo[static_cast<unsigned>(k)]; }
} // namespace

bool isMessage(OpKind k) { return info(k).isMessage; }
bool hasSrc(OpKind k) { return info(k).hasSrc; }
bool hasOrder(OpKind k) { return info(k).hasOrder; }
bool writesBuf(OpKind k) { return info(k).writes; }

std::optional<uint32_t> bufferSlots(const Shape &shape, uint32_t rank, Buffer buf) {
  const uint32_t C = shape.chunks;
  const Collective c = shape.collective;
  switch (buf) {
  case Buffer::In:
    if (c == Collective::Bcast || (c == Collective::Scatter && rank != shape.root))
      return std::nullopt;
    if (c == Collective::Allgather || c == Collective::Gather)
      return C / shape.ranks;
    return C;
  case Buffer::Out:
    if ((c == Collective::Reduce || c == Collective::Gather) && rank != shape.root)
      return std::nullopt;
    if (c == Collective::ReduceScatterBlock || c == Collective::Scatter)
      return C / shape.ranks;
    return C;
  case Buffer::Tmp:
    return shape.scratch;
  }
  llvm_unreachable("bad buffer");
}

uint32_t inChunk(const Shape &shape, uint32_t rank, uint32_t slot) {
  if (shape.collective == Collective::Allgather || shape.collective == Collective::Gather)
    return rank * (shape.chunks / shape.ranks) + slot;
  return slot;
}

uint32_t outChunk(const Shape &shape, uint32_t rank, uint32_t slot) {
  const uint32_t k = shape.chunks / shape.ranks;
  switch (shape.collective) {
  case Collective::ReduceScatterBlock:
  case Collective::Scatter:
    return rank * k + slot;
  case Collective::Alltoall:
    return rank * k + slot % k;
  default:
    return slot;
  }
}

uint32_t outOwner(const Shape &shape, uint32_t rank, uint32_t slot) {
  const uint32_t k = shape.chunks / shape.ranks;
  switch (shape.collective) {
  case Collective::Allgather:
  case Collective::Gather:
  case Collective::Alltoall:
    return slot / k;
  case Collective::Bcast:
  case Collective::Scatter:
    return shape.root;
  default:
    (void)rank;
    return 0;
  }
}

uint32_t inPlaceOffset(const Shape &shape, uint32_t rank) {
  return shape.collective == Collective::Allgather || shape.collective == Collective::Gather
             ? rank * (shape.chunks / shape.ranks)
             : 0;
}

bool outRequired(const Shape &shape, uint32_t rank) {
  switch (shape.collective) {
  case Collective::Reduce:
  case Collective::Gather:
    return rank == shape.root;
  case Collective::Exscan:
    return rank >= 1;
  case Collective::Barrier:
    return false; // its tokens carry nothing; what it proves is an order
  default:
    return true;
  }
}

std::optional<ShapeError> checkShape(const Shape &s) {
  auto fail = [](llvm::StringRef field, std::string msg) {
    return std::optional<ShapeError>(ShapeError{field, std::move(msg)});
  };
  if (s.ranks < 1 || s.ranks > maxRanks)
    return fail("ranks", llvm::formatv("ranks {0} out of range (1..{1})", s.ranks, maxRanks));
  if (s.chunks < 1 || s.chunks > maxChunks)
    return fail("chunks",
                llvm::formatv("chunks {0} out of range (1..{1})", s.chunks, maxChunks));
  if (s.scratch > maxScratch)
    return fail("scratch",
                llvm::formatv("scratch {0} out of range (0..{1})", s.scratch, maxScratch));
  if (hasRoot(s.collective) && s.root >= s.ranks)
    return fail("root",
                llvm::formatv("root {0} out of range (ranks = {1})", s.root, s.ranks));
  if (!hasRoot(s.collective) && s.root != 0)
    return fail("root", llvm::formatv("{0} has no root", name(s.collective)));
  if (blockCollective(s.collective) && s.chunks % s.ranks != 0)
    return fail("chunks",
                llvm::formatv("{0} needs chunks to be a multiple of ranks (chunks = {1}, "
                              "ranks = {2})",
                              name(s.collective), s.chunks, s.ranks));
  if (s.inPlace && !allowsInPlace(s.collective))
    return fail("in_place",
                llvm::formatv("in_place is not supported for {0}", name(s.collective)));
  return std::nullopt;
}

namespace {
std::optional<std::string> checkRange(const Shape &shape, uint32_t rank, const Slots &s,
                                      llvm::StringRef what) {
  std::optional<uint32_t> n = bufferSlots(shape, rank, s.buf);
  if (!n) {
    if (s.buf == Buffer::Out || (s.buf == Buffer::In && shape.collective == Collective::Scatter))
      return llvm::formatv("rank {0} has no {1} buffer (in {2} only the root has one)",
                           rank, name(s.buf), name(shape.collective))
          .str();
    return llvm::formatv("{0} has no {1} buffer", name(shape.collective), name(s.buf)).str();
  }
  if (s.count == 0)
    return llvm::formatv("{0} count must be at least 1", what).str();
  if (uint64_t(s.chunk) + s.count > *n) {
    return llvm::formatv("{0} {1} out of range ({2} has {3})", what, describe(s),
                         name(s.buf), counted(*n, "slot"))
        .str();
  }
  return std::nullopt;
}
} // namespace

std::optional<std::string> checkOp(const Shape &shape, uint32_t rank,
                                   llvm::ArrayRef<Op> ops, uint32_t index) {
  const Op &op = ops[index];
  if (hasOrder(op.kind) && !reduces(shape.collective))
    return llvm::formatv("{0} is not allowed in {1} {2} plan (it does not reduce)",
                         name(op.kind), article(name(shape.collective)), name(shape.collective))
        .str();
  if (auto e = checkRange(shape, rank, op.slots(), "slot"))
    return e;
  if (hasSrc(op.kind)) {
    if (auto e = checkRange(shape, rank, op.srcSlots(), "source"))
      return e;
    if (op.srcSlots().overlaps(op.slots()))
      return llvm::formatv("source {0} overlaps {1} {2}", describe(op.srcSlots()),
                           op.hasDst ? "operand" : "destination", describe(op.slots()))
          .str();
  }
  if (op.hasDst) {
    if (!allowsDst(op.kind))
      return llvm::formatv("{0} takes no dst", name(op.kind)).str();
    if (auto e = checkRange(shape, rank, op.dstSlots(), "destination"))
      return e;
    auto overlap = [&](const Slots &other) {
      return llvm::formatv("destination {0} overlaps {1} (omit dst to combine in place)",
                           describe(op.dstSlots()), describe(other))
          .str();
    };
    if (op.dstSlots().overlaps(op.slots()))
      return overlap(op.slots());
    if (hasSrc(op.kind) && op.dstSlots().overlaps(op.srcSlots()))
      return overlap(op.srcSlots());
  }
  switch (op.deps) {
  case DepKind::None:
    break;
  case DepKind::After:
    for (size_t k = 0; k < op.after.size(); ++k) {
      if (op.after[k] >= index)
        return llvm::formatv("after: op {0} is not earlier than this op ({1})",
                             op.after[k], index)
            .str();
      for (size_t j = 0; j < k; ++j)
        if (op.after[j] == op.after[k])
          return llvm::formatv("after: op {0} is listed twice", op.after[k]).str();
    }
    break;
  case DepKind::Step:
    for (uint32_t j = index; j-- > 0;) {
      if (ops[j].deps != DepKind::Step)
        continue;
      if (ops[j].step > op.step)
        return llvm::formatv("step {0} after step {1} (op {2}): steps must not decrease",
                             op.step, ops[j].step, j)
            .str();
      break;
    }
    break;
  }
  return std::nullopt;
}

std::string describe(const Slots &s) {
  if (s.count == 0)
    return llvm::formatv("{0}[{1}, no slots]", name(s.buf), s.chunk).str();
  if (s.count == 1)
    return llvm::formatv("{0}[{1}]", name(s.buf), s.chunk).str();
  return llvm::formatv("{0}[{1}..{2}]", name(s.buf), s.chunk, s.end() - 1).str();
}

std::string describe(const Op &op) {
  std::string text = (name(op.kind) + " " + describe(op.slots())).str();
  switch (op.kind) {
  case OpKind::Send:
    text += llvm::formatv(" to {0}", peerValue(op.peer)).str();
    break;
  case OpKind::Recv:
  case OpKind::RecvReduce:
    text += llvm::formatv(" from {0}", peerValue(op.peer)).str();
    break;
  case OpKind::Reduce:
  case OpKind::Copy:
    text += " from " + describe(op.srcSlots());
    break;
  }
  if (op.hasDst)
    text += " into " + describe(op.dstSlots());
  return text;
}

DepGraph::DepGraph(llvm::ArrayRef<Op> ops) {
  begin_.reserve(ops.size() + 1);
  begin_.push_back(0);
  // Step groups: `prev` holds the ops of the nearest lower step of `cur`.
  std::vector<uint32_t> prev, cur;
  bool haveCur = false;
  uint32_t curStep = 0;
  for (uint32_t i = 0; i < ops.size(); ++i) {
    const Op &op = ops[i];
    switch (op.deps) {
    case DepKind::None:
      break;
    case DepKind::After:
      edges_.insert(edges_.end(), op.after.begin(), op.after.end());
      break;
    case DepKind::Step:
      if (!haveCur || op.step != curStep) {
        prev.swap(cur);
        cur.clear();
        if (!haveCur)
          prev.clear();
        haveCur = true;
        curStep = op.step;
      }
      edges_.insert(edges_.end(), prev.begin(), prev.end());
      cur.push_back(i);
      break;
    }
    begin_.push_back(static_cast<uint32_t>(edges_.size()));
  }
}

} // namespace collc::ir
