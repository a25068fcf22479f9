// tools/draw/Contents.cpp: the symbolic run behind the labels.
#include "tools/draw/Contents.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <map>

namespace collc::draw {

namespace {

/// A slot's value: nothing, data (chunk of one owner) or a reduction.
struct Value {
  enum class Kind : uint8_t { None, Data, Reduction } kind = Kind::None;
  uint32_t chunk = 0;
  uint64_t ranks = 0; ///< contributors (bit q = rank q), or the owner for Data
};

Value combine(const Value &a, const Value &b) {
  if (a.kind == Value::Kind::None)
    return b;
  if (b.kind == Value::Kind::None)
    return a;
  return {Value::Kind::Reduction, a.chunk, a.ranks | b.ranks};
}

std::string text(const Value &v) {
  switch (v.kind) {
  case Value::Kind::None: return "undefined";
  case Value::Kind::Data:
    return "c" + std::to_string(v.chunk) + " of rank " +
           std::to_string(llvm::countTrailingZeros(v.ranks));
  case Value::Kind::Reduction: break;
  }
  const unsigned lo = llvm::countTrailingZeros(v.ranks), hi = 63 - llvm::countLeadingZeros(v.ranks);
  const uint64_t interval =
      (hi == 63 ? ~uint64_t(0) : (uint64_t(1) << (hi + 1)) - 1) & ~((uint64_t(1) << lo) - 1);
  if (v.ranks == interval)
    return "x[" + std::to_string(lo) + ".." + std::to_string(hi) + "]";
  std::string s = "x{";
  for (unsigned q = lo; q <= hi; ++q)
    if (v.ranks >> q & 1)
      s += (s.size() > 2 ? "," : "") + std::to_string(q);
  return s + "}";
}

std::string chunkRange(uint32_t first, uint32_t last) {
  return first == last ? "c" + std::to_string(first)
                       : "c" + std::to_string(first) + "-" + std::to_string(last);
}

} // namespace

std::vector<std::vector<OpContents>> computeContents(const ir::Plan &plan, const Timeline &t,
                                                     const compiler::Messages &messages) {
  const ir::Shape &s = plan.shape;
  const uint32_t p = static_cast<uint32_t>(plan.programs.size());
  std::vector<std::vector<OpContents>> out(p);
  for (uint32_t r = 0; r < p; ++r)
    out[r].resize(plan.programs[r].ops.size());
  if (p > 64)
    return out;

  // Memory per rank and buffer; a slot of `tmp` holds whatever was put there.
  std::vector<std::array<std::vector<Value>, 3>> mem(p);
  const bool reducing = ir::reduces(s.collective);
  for (uint32_t r = 0; r < p; ++r)
    for (ir::Buffer b : {ir::Buffer::In, ir::Buffer::Out, ir::Buffer::Tmp}) {
      std::vector<Value> &slots = mem[r][static_cast<int>(b)];
      slots.resize(ir::bufferSlots(s, r, b).value_or(0));
      for (uint32_t i = 0; i < slots.size(); ++i) {
        if (b == ir::Buffer::In)
          slots[i] = {reducing ? Value::Kind::Reduction : Value::Kind::Data, ir::inChunk(s, r, i),
                      uint64_t(1) << r};
        else if (b == ir::Buffer::Out && s.collective == ir::Collective::Bcast && r == s.root)
          slots[i] = {Value::Kind::Data, i, uint64_t(1) << r};
      }
    }
  auto slotsOf = [&](uint32_t r, const ir::Slots &sl) -> std::vector<Value> * {
    std::vector<Value> &v = mem[r][static_cast<int>(sl.buf)];
    return sl.end() <= v.size() ? &v : nullptr;
  };

  // Timeline order is an order in which every op follows what it waits for.
  std::vector<OpRef> order;
  for (uint32_t r = 0; r < p; ++r)
    for (uint32_t i = 0; i < t.times[r].size(); ++i)
      order.push_back({r, i});
  std::stable_sort(order.begin(), order.end(),
                   [&](OpRef a, OpRef b) { return t.at(a).start < t.at(b).start; });
  std::map<std::pair<uint32_t, uint32_t>, std::vector<Value>> inFlight; // (rank, send op)
  for (OpRef o : order) {
    const ir::Op &op = plan.programs[o.rank].ops[o.op];
    OpContents &c = out[o.rank][o.op];
    c.reduction = ir::hasOrder(op.kind);
    std::vector<Value> *buf = slotsOf(o.rank, op.slots());
    std::vector<Value> *dst = slotsOf(o.rank, op.dstSlots());
    if (!buf || !dst)
      continue;
    const ir::Slots ds = op.dstSlots();
    std::vector<Value> result(op.count);
    switch (op.kind) {
    case ir::OpKind::Send:
      inFlight[{o.rank, o.op}] =
          std::vector<Value>(buf->begin() + op.chunk, buf->begin() + op.chunk + op.count);
      result = inFlight[{o.rank, o.op}];
      break;
    case ir::OpKind::Recv:
    case ir::OpKind::RecvReduce: {
      std::optional<compiler::MsgEnd> m = messages.partner(o.rank, o.op);
      auto it = m ? inFlight.find({m->rank, m->op}) : inFlight.end();
      for (uint32_t k = 0; k < op.count; ++k) {
        const Value got = it != inFlight.end() && k < it->second.size() ? it->second[k] : Value{};
        result[k] = op.kind == ir::OpKind::Recv ? got : combine((*buf)[op.chunk + k], got);
      }
      break;
    }
    case ir::OpKind::Reduce:
    case ir::OpKind::Copy: {
      std::vector<Value> *src = slotsOf(o.rank, op.srcSlots());
      if (!src)
        continue;
      for (uint32_t k = 0; k < op.count; ++k)
        result[k] = op.kind == ir::OpKind::Copy
                        ? (*src)[op.srcChunk + k]
                        : combine((*buf)[op.chunk + k], (*src)[op.srcChunk + k]);
      break;
    }
    }
    if (ir::isMessage(op.kind)) {
      // The vector chunks carried: from the values, else the slot numbers.
      uint32_t first = result.front().kind == Value::Kind::None ? op.chunk : result.front().chunk;
      uint32_t last =
          result.back().kind == Value::Kind::None ? op.chunk + op.count - 1 : result.back().chunk;
      c.chunks = chunkRange(first, std::max(first, last));
    }
    c.value = text(result.front());
    if (op.count > 1 && text(result.back()) != c.value)
      c.value += " .. " + text(result.back());
    if (ir::writesBuf(op.kind))
      std::copy(result.begin(), result.end(), dst->begin() + ds.chunk);
  }
  return out;
}

} // namespace collc::draw
