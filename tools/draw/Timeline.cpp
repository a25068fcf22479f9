// tools/draw/Timeline.cpp: the logical timeline and the critical path.
#include "tools/draw/Timeline.h"

#include <algorithm>
#include <deque>

namespace collc::draw {

std::vector<OpRef> Timeline::criticalPath() const {
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

} // namespace collc::draw
