// tools/draw/Timeline.cpp: the logical timeline and the critical path.
#include "tools/draw/Timeline.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <deque>

namespace collc::draw {

std::string unitLabel(llvm::StringRef unit) { return unit == "us" ? "µs" : unit.str(); }

std::vector<OpRef> Timeline::criticalPath() const {
  if (!path.empty())
    return path;
  std::optional<OpRef> last;
  for (uint32_t r = 0; r < times.size(); ++r)
    for (uint32_t i = 0; i < times[r].size(); ++i)
      if (!times[r][i].stuck && (!last || times[r][i].end > at(*last).end))
        last = OpRef{r, i};
  size_t ops = 0;
  for (const auto &rank : times)
    ops += rank.size();
  std::vector<OpRef> path;
  // A binding ends before its op starts, so a chain longer than `ops` links
  // can only be a cycle in a timeline given from outside: stop there.
  for (std::optional<OpRef> cur = last; cur && path.size() <= ops; cur = at(*cur).binding)
    path.push_back(*cur);
  std::reverse(path.begin(), path.end());
  return path;
}

Timeline logicalTimeline(const ir::Plan &plan, const compiler::Messages &messages) {
  const uint32_t p = static_cast<uint32_t>(plan.programs.size());
  Timeline t;
  std::vector<ir::DepGraph> deps;
  deps.reserve(p);
  // Kahn's algorithm over local dependencies plus send -> receive edges.
  std::vector<std::vector<uint32_t>> pending(p);
  std::vector<std::vector<llvm::SmallVector<uint32_t, 2>>> succs(p);
  t.times.resize(p);
  std::deque<OpRef> ready;
  for (uint32_t r = 0; r < p; ++r) {
    const auto &ops = plan.programs[r].ops;
    deps.emplace_back(ops);
    t.times[r].resize(ops.size());
    pending[r].assign(ops.size(), 0);
    succs[r].resize(ops.size());
  }
  for (uint32_t r = 0; r < p; ++r) {
    const auto &ops = plan.programs[r].ops;
    for (uint32_t i = 0; i < ops.size(); ++i) {
      pending[r][i] += static_cast<uint32_t>(deps[r].preds(i).size());
      for (uint32_t d : deps[r].preds(i))
        succs[r][d].push_back(i);
      if (ops[i].kind != ir::OpKind::Send && ir::isMessage(ops[i].kind) && messages.partner(r, i))
        ++pending[r][i];
    }
  }
  for (uint32_t r = 0; r < p; ++r)
    for (uint32_t i = 0; i < pending[r].size(); ++i)
      if (pending[r][i] == 0)
        ready.push_back({r, i});

  // An op's start: one step after the latest of its placed predecessors.
  auto place = [&](OpRef o) {
    OpTime &ot = t.times[o.rank][o.op];
    double start = 0;
    std::optional<OpRef> binding;
    for (uint32_t d : deps[o.rank].preds(o.op)) {
      const OpTime &pt = t.times[o.rank][d];
      if (!binding || pt.end > start) {
        start = pt.end;
        binding = OpRef{o.rank, d};
      }
    }
    const ir::Op &op = plan.programs[o.rank].ops[o.op];
    if (op.kind != ir::OpKind::Send && ir::isMessage(op.kind))
      if (std::optional<compiler::MsgEnd> s = messages.partner(o.rank, o.op)) {
        const OpTime &st = t.times[s->rank][s->op];
        if (!st.stuck && st.start + 1 > start) {
          start = st.start + 1;
          binding = OpRef{s->rank, s->op};
        }
      }
    ot.start = start;
    ot.end = start + 1;
    ot.wire = op.kind == ir::OpKind::Send ? ot.end : ot.start;
    ot.binding = binding;
    t.span = std::max(t.span, ot.end);
  };

  std::vector<std::vector<uint8_t>> done(p);
  for (uint32_t r = 0; r < p; ++r)
    done[r].assign(pending[r].size(), 0);
  while (!ready.empty()) {
    const OpRef o = ready.front();
    ready.pop_front();
    place(o);
    done[o.rank][o.op] = 1;
    auto release = [&](OpRef s) {
      if (--pending[s.rank][s.op] == 0)
        ready.push_back(s);
    };
    for (uint32_t s : succs[o.rank][o.op])
      release({o.rank, s});
    const ir::Op &op = plan.programs[o.rank].ops[o.op];
    if (op.kind == ir::OpKind::Send)
      if (std::optional<compiler::MsgEnd> m = messages.partner(o.rank, o.op))
        release({m->rank, m->op});
  }
  // What is left waits on a cycle: place it after its local predecessors, in
  // listing order (predecessors always come first in a rank's list).
  for (uint32_t r = 0; r < p; ++r)
    for (uint32_t i = 0; i < done[r].size(); ++i)
      if (!done[r][i]) {
        t.times[r][i].stuck = true;
        place({r, i});
      }
  return t;
}

Timeline simulatedTimeline(const ir::Plan &plan, const compiler::Messages &messages,
                           const model::Topology &topo, const model::SimResult &r,
                           std::string description) {
  Timeline t;
  t.logical = false;
  t.description = std::move(description);
  // The largest unit in which the span is at least 1.
  static const std::pair<const char *, double> units[] = {
      {"s", 1}, {"ms", 1e3}, {"us", 1e6}, {"ns", 1e9}};
  double scale = 1e9;
  t.unit = "ns";
  for (const auto &[name, perSecond] : units)
    if (r.time * perSecond >= 1) {
      t.unit = name;
      scale = perSecond;
      break;
    }
  t.span = r.time * scale;
  const std::string unit = unitLabel(t.unit);
  auto at = [&](double seconds) {
    std::string s;
    llvm::raw_string_ostream(s) << llvm::format("%.3f", seconds * scale);
    return s;
  };
  auto opName = [](uint32_t rank, uint32_t op) {
    return "rank " + std::to_string(rank) + " op " + std::to_string(op);
  };
  const uint32_t p = static_cast<uint32_t>(plan.programs.size());
  t.times.resize(p);
  for (uint32_t rank = 0; rank < p; ++rank) {
    const auto &ops = plan.programs[rank].ops;
    t.times[rank].resize(ops.size());
    for (uint32_t i = 0; i < ops.size(); ++i) {
      const model::OpTiming &s = r.ops[rank][i];
      const ir::OpKind kind = ops[i].kind;
      OpTime &ot = t.times[rank][i];
      ot.start = s.start * scale;
      ot.end = s.end * scale;
      ot.wire = ot.start;
      std::optional<compiler::MsgEnd> partner = messages.partner(rank, i);
      double arrives = s.end;
      if (kind == ir::OpKind::Send)
        ot.wire = s.leaves * scale;
      else if (partner && ir::isMessage(kind))
        ot.wire = (arrives = r.ops[partner->rank][partner->op].end) * scale;
      if (s.pred)
        ot.binding = OpRef{s.pred->first, s.pred->second};

      std::string d;
      llvm::raw_string_ostream os(d);
      const std::string pred = s.pred ? opName(s.pred->first, s.pred->second) : "";
      switch (s.cause) {
      case model::Cause::Start: os << "starts at once"; break;
      case model::Cause::Dependency: os << "starts when " << pred << " is done"; break;
      case model::Cause::Message: os << "starts when its message arrives"; break;
      case model::Cause::SendPort: os << "waits for the send port (" << pred << ")"; break;
      case model::Cause::RecvPort:
        os << "waits for the receiver's receive port (" << pred << ")";
        break;
      case model::Cause::Link: os << "waits for a shared link (" << pred << ")"; break;
      case model::Cause::Core: os << "waits for the core (" << pred << ")"; break;
      }
      if (ir::isMessage(kind)) {
        os << "\n" << s.bytes << " bytes across " << topo.levels[s.level].name;
        if (kind == ir::OpKind::Send && s.leaves > s.start)
          os << ", leaves at " << at(s.leaves) << ' ' << unit;
        else if (kind != ir::OpKind::Send && arrives < s.start)
          os << ", arrived at " << at(arrives) << ' ' << unit;
        if (kind == ir::OpKind::RecvReduce)
          os << "\ncombines " << s.bytes << " bytes";
      } else {
        os << "\n" << (kind == ir::OpKind::Copy ? "copies " : "combines ") << s.bytes
           << " bytes";
      }
      ot.detail = std::move(d);
    }
  }
  for (const model::PathStep &s : r.criticalPath)
    t.path.push_back({s.rank, s.op});
  return t;
}

} // namespace collc::draw
