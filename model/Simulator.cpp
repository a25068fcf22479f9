// model/Simulator.cpp: the discrete-event plan simulator (Simulator.h
// states the model).
//
// Every op has a global id (its rank's base plus its index). The simulation
// has two passes. The first orders the ops: each op's depth is the longest
// chain of dependencies and messages that leads to it (Kahn's algorithm over
// the plan's graph, messages included; an op it never reaches is in a
// cycle: the plan cannot finish). The second walks the ops by (depth, turn,
// rank, index) — a topological order; an op's turn is its place among its
// rank's ops of the same depth — and gives each its start and end: its
// dependencies and its message are done by then, and every port, link and
// core it needs goes to the ops that use it in this order, each taking the
// earliest gap where it fits (ports and links are Timelines, which backfill).
// The order does not depend on the costs. Memory is linear in ops: a few
// words per op, one successor list and the busy intervals.
#include "model/Simulator.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace collc::model {

llvm::StringRef name(Cause c) {
  switch (c) {
  case Cause::Start:
    return "start";
  case Cause::Dependency:
    return "dependency";
  case Cause::Message:
    return "message";
  case Cause::SendPort:
    return "send-port";
  case Cause::RecvPort:
    return "recv-port";
  case Cause::Link:
    return "link";
  case Cause::Core:
    return "core";
  }
  return "?";
}

namespace {
__extension__ typedef unsigned __int128 U128;

/// Elements of vector chunks [c, c+count) of an n-element vector in C chunks.
uint64_t chunkElements(uint64_t n, uint64_t chunks, uint64_t c, uint64_t count) {
  const U128 hi = U128(c + count) * n / chunks, lo = U128(c) * n / chunks;
  return static_cast<uint64_t>(hi - lo);
}
} // namespace

uint64_t slotBytes(const ir::Shape &shape, uint32_t rank, ir::Slots s, uint64_t elements,
                   uint32_t elemBytes) {
  if (shape.collective == ir::Collective::Barrier)
    return 0; // tokens: a barrier runs with n = 0 whatever size is asked
  const uint64_t chunks = shape.chunks;
  switch (s.buf) {
  case ir::Buffer::In:
    return chunkElements(elements, chunks, ir::inChunk(shape, rank, s.chunk), s.count) *
           elemBytes;
  case ir::Buffer::Out:
    return chunkElements(elements, chunks, ir::outChunk(shape, rank, s.chunk), s.count) *
           elemBytes;
  case ir::Buffer::Tmp:
    return uint64_t(s.count) * ((elements + chunks - 1) / chunks) * elemBytes;
  }
  return 0;
}

std::string describeLink(const Topology &topo, const Placement &pl, const LinkUse &l) {
  const uint64_t lpg = pl.linksPerGroup(l.level);
  uint64_t group = l.link / lpg;
  const uint64_t index = l.link % lpg;
  // The group's coordinates at levels l.level.. (innermost fastest), printed outermost first.
  std::vector<uint64_t> coords;
  for (uint32_t j = l.level; j < topo.levels.size(); ++j) {
    coords.push_back(group % topo.levels[j].size);
    group /= topo.levels[j].size;
  }
  std::string where;
  for (size_t i = coords.size(); i-- > 0;)
    where += std::to_string(coords[i]) + (i ? "." : "");
  const llvm::StringRef child =
      l.level == 0 ? llvm::StringRef("slot") : llvm::StringRef(topo.levels[l.level - 1].name);
  return llvm::formatv("{0} {1}-link {2} of {3} {4}", topo.levels[l.level].name,
                       l.up ? "up" : "down", index, child, where)
      .str();
}

namespace {

constexpr uint32_t none = UINT32_MAX;

/// When a port or link is busy: intervals [start, end) in start order, each
/// with the op that holds it. An op placed later in the walk may take a gap
/// before the intervals placed so far (backfill): a message that cannot
/// start yet does not hold up the rank's later messages that can, as a
/// rank's posted messages progress side by side in the runtime.
class Timeline {
public:
  /// The earliest t >= from with [t, t + length) free; `holder` gets the op
  /// whose interval pushed t past `from` (unchanged when none did).
  double fit(double from, double length, uint32_t &holder) const {
    auto it = std::upper_bound(busy_.begin(), busy_.end(), from,
                               [](double t, const Interval &i) { return t < i.end; });
    double t = from;
    for (; it != busy_.end(); ++it) {
      if (it->start >= t + length)
        break;
      if (it->end > t) {
        t = it->end;
        holder = it->holder;
      }
    }
    return t;
  }
  /// Marks [start, end) busy; precondition: free (fit said so).
  void take(double start, double end, uint32_t holder) {
    if (end <= start)
      return;
    Interval iv{start, end, holder};
    if (busy_.empty() || busy_.back().start <= start) {
      busy_.push_back(iv);
      return;
    }
    busy_.insert(std::upper_bound(busy_.begin(), busy_.end(), start,
                                  [](double t, const Interval &i) { return t < i.start; }),
                 iv);
  }
  void clear() { busy_.clear(); }

private:
  struct Interval {
    double start, end;
    uint32_t holder;
  };
  std::vector<Interval> busy_; ///< ends ascend too: the intervals do not overlap
};

struct LinkState {
  Timeline timeline;
  double busy = 0;
  uint64_t bytes = 0, messages = 0;
};

class Simulation {
public:
  Simulation(const ir::Plan &plan, const Topology &topo, const Placement &pl)
      : plan_(plan), topo_(topo), pl_(pl) {}

  /// What does not depend on the costs: message matching, the op order.
  llvm::Error prepare();
  /// One simulation; prepare() succeeded before.
  SimResult run(const SimOptions &opts);

private:
  const ir::Op &op(uint32_t id) const {
    return plan_.programs[rankOf_[id]].ops[id - base_[rankOf_[id]]];
  }
  llvm::Error matchMessages();
  void buildSuccessors();
  llvm::Error order();
  void simulateSend(uint32_t id, double ready, uint32_t why);
  void simulateLocal(uint32_t id, double ready, uint32_t why, Cause cause, uint64_t bytes,
                     double perByte);
  void setPath(uint32_t id, double start, uint32_t pred, Cause c) {
    if (!opts_.criticalPath && !opts_.opTimes)
      return;
    start_[id] = start;
    pred_[id] = pred;
    cause_[id] = c;
  }
  uint64_t messageBytes(uint32_t send) const;
  uint64_t localBytes(uint32_t id) const;

  const ir::Plan &plan_;
  const Topology &topo_;
  const Placement &pl_;
  SimOptions opts_;
  uint64_t elements_ = 0;

  std::vector<uint32_t> base_;    ///< per rank: global id of op 0 (and base_[p] = total)
  std::vector<uint32_t> rankOf_;  ///< per op
  std::vector<uint32_t> match_;   ///< per message op: the other end
  std::vector<uint32_t> succBegin_, succ_; ///< dependency successors (same rank)
  std::vector<uint32_t> order_;   ///< ops by (depth, turn, rank, index)
  std::vector<double> done_;      ///< per op: its end
  std::vector<double> start_;
  std::vector<uint32_t> pred_;
  std::vector<Cause> cause_;
  std::vector<uint8_t> msgLevel_;
  std::vector<uint64_t> bytes_;
  std::vector<double> leaves_; ///< per send, when opTimes: its data enters the link

  // Resources: per rank ports and core (free time and the op that holds them).
  std::vector<Timeline> sendPort_, recvPort_;
  std::vector<double> coreFree_;
  std::vector<uint32_t> coreHolder_;
  std::vector<llvm::DenseMap<uint64_t, LinkState>> up_, down_; ///< per level

  SimResult result_;
};

llvm::Error Simulation::matchMessages() {
  // (from, to, op) of every send and every receive, sorted by channel: the
  // k-th send of a channel matches its k-th receive.
  struct End {
    uint32_t from, to, id;
    bool operator<(const End &o) const {
      return from != o.from ? from < o.from : to != o.to ? to < o.to : id < o.id;
    }
  };
  std::vector<End> sends, recvs;
  const uint32_t p = plan_.shape.ranks;
  for (uint32_t r = 0; r < p; ++r) {
    const auto &ops = plan_.programs[r].ops;
    for (uint32_t i = 0; i < ops.size(); ++i) {
      if (!ir::isMessage(ops[i].kind))
        continue;
      const int64_t peer = ir::peerValue(ops[i].peer);
      if (peer < 0 || peer >= p || peer == r)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            llvm::formatv("rank {0}, op {1} ({2}): peer {3} is not another rank of 0..{4}", r,
                          i, ir::describe(ops[i]), peer, p - 1)
                .str());
      if (ops[i].kind == ir::OpKind::Send)
        sends.push_back({r, uint32_t(peer), base_[r] + i});
      else
        recvs.push_back({uint32_t(peer), r, base_[r] + i});
    }
  }
  std::sort(sends.begin(), sends.end());
  std::sort(recvs.begin(), recvs.end());
  size_t i = 0, j = 0;
  while (i < sends.size() || j < recvs.size()) {
    const bool same = i < sends.size() && j < recvs.size() && sends[i].from == recvs[j].from &&
                      sends[i].to == recvs[j].to;
    if (same) {
      match_[sends[i].id] = recvs[j].id;
      match_[recvs[j].id] = sends[i].id;
      ++i, ++j;
      continue;
    }
    // The lower channel of the two has an end without a partner.
    const bool takeSend = j == recvs.size() ||
                          (i < sends.size() && std::make_pair(sends[i].from, sends[i].to) <
                                                   std::make_pair(recvs[j].from, recvs[j].to));
    const End &e = takeSend ? sends[i] : recvs[j];
    size_t ns = 0, nr = 0;
    for (const End &s : sends)
      ns += s.from == e.from && s.to == e.to;
    for (const End &s : recvs)
      nr += s.from == e.from && s.to == e.to;
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("rank {0} sends {1} message(s) to rank {2}, which receives {3} from it",
                      e.from, ns, e.to, nr)
            .str());
  }
  return llvm::Error::success();
}

void Simulation::buildSuccessors() {
  const uint32_t total = base_.back();
  succBegin_.assign(total + 1, 0);
  for (uint32_t r = 0; r < plan_.shape.ranks; ++r) {
    ir::DepGraph g(plan_.programs[r].ops);
    for (uint32_t i = 0; i < g.size(); ++i)
      for (uint32_t d : g.preds(i))
        ++succBegin_[base_[r] + d + 1];
  }
  for (uint32_t id = 0; id < total; ++id)
    succBegin_[id + 1] += succBegin_[id];
  succ_.resize(succBegin_[total]);
  std::vector<uint32_t> fill(succBegin_.begin(), succBegin_.end() - 1);
  for (uint32_t r = 0; r < plan_.shape.ranks; ++r) {
    ir::DepGraph g(plan_.programs[r].ops);
    for (uint32_t i = 0; i < g.size(); ++i)
      for (uint32_t d : g.preds(i))
        succ_[fill[base_[r] + d]++] = base_[r] + i;
  }
}

llvm::Error Simulation::order() {
  const uint32_t total = base_.back();
  // In-degree: dependencies; a receive also waits for its message, and a
  // send for its receive to be posted (all the receive's dependencies done).
  std::vector<uint32_t> pending(total, 0), depsLeft(total, 0), depth(total, 0),
      postDepth(total, 0), queue;
  for (uint32_t id = 0; id < total; ++id)
    for (uint32_t k = succBegin_[id]; k < succBegin_[id + 1]; ++k)
      ++pending[succ_[k]];
  for (uint32_t id = 0; id < total; ++id) {
    depsLeft[id] = pending[id];
    if (ir::isMessage(op(id).kind))
      ++pending[id];
  }
  queue.reserve(total);
  auto push = [&](uint32_t to) {
    if (--pending[to] == 0)
      queue.push_back(to);
  };
  // A receive is posted: its send may go (at the depth of the posting at least).
  auto post = [&](uint32_t recv) {
    const uint32_t send = match_[recv];
    depth[send] = std::max(depth[send], postDepth[recv]);
    push(send);
  };
  for (uint32_t id = 0; id < total; ++id)
    if (pending[id] == 0)
      queue.push_back(id);
  for (uint32_t id = 0; id < total; ++id)
    if (ir::isMessage(op(id).kind) && op(id).kind != ir::OpKind::Send && depsLeft[id] == 0)
      post(id);
  uint32_t maxDepth = 0;
  for (size_t head = 0; head < queue.size(); ++head) {
    const uint32_t id = queue[head];
    maxDepth = std::max(maxDepth, depth[id]);
    for (uint32_t k = succBegin_[id]; k < succBegin_[id + 1]; ++k) {
      const uint32_t s = succ_[k];
      depth[s] = std::max(depth[s], depth[id] + 1);
      if (ir::isMessage(op(s).kind) && op(s).kind != ir::OpKind::Send) {
        postDepth[s] = std::max(postDepth[s], depth[id] + 1);
        if (--depsLeft[s] == 0)
          post(s);
      }
      push(s);
    }
    if (op(id).kind == ir::OpKind::Send) {
      const uint32_t recv = match_[id];
      depth[recv] = std::max(depth[recv], depth[id] + 1);
      push(recv);
    }
  }
  if (queue.size() != total) {
    for (uint32_t id = 0; id < total; ++id)
      if (pending[id] != 0) {
        const uint32_t r = rankOf_[id];
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            llvm::formatv("rank {0}, op {1} ({2}) never completes: the plan deadlocks even "
                          "with eager sends",
                          r, id - base_[r], ir::describe(op(id)))
                .str());
      }
  }
  // Within a depth, an op's turn is its place among its rank's ops of that
  // depth: every rank's first op of the depth, then every rank's second, ...
  // (then rank, then index). Ranks that post several messages at one depth
  // (a plan whose steps relax-deps removed) then take ports round by round,
  // as their listing orders them, instead of rank 0's all first: a receiver's
  // port would otherwise wait for the sender listed first while the others'
  // messages were ready (pairwise exchange: 3x slower than posted in steps).
  std::vector<uint32_t> turn(total, 0), seen(maxDepth + 1, 0), touched;
  uint32_t maxTurn = 0;
  for (uint32_t r = 0; r + 1 < base_.size(); ++r) {
    for (uint32_t id = base_[r]; id < base_[r + 1]; ++id) {
      if (seen[depth[id]] == 0)
        touched.push_back(depth[id]);
      turn[id] = seen[depth[id]]++;
      maxTurn = std::max(maxTurn, turn[id]);
    }
    for (uint32_t d : touched)
      seen[d] = 0;
    touched.clear();
  }
  // Two stable counting sorts: by turn (ids ascend: rank, index), then by depth.
  auto countingSort = [total](const std::vector<uint32_t> &in, const std::vector<uint32_t> &key,
                              uint32_t maxKey, std::vector<uint32_t> &out) {
    std::vector<uint32_t> start(maxKey + 2, 0);
    for (uint32_t id : in)
      ++start[key[id] + 1];
    for (uint32_t k = 0; k <= maxKey; ++k)
      start[k + 1] += start[k];
    out.resize(total);
    for (uint32_t id : in)
      out[start[key[id]]++] = id;
  };
  std::vector<uint32_t> ids(total), byTurn;
  for (uint32_t id = 0; id < total; ++id)
    ids[id] = id;
  countingSort(ids, turn, maxTurn, byTurn);
  countingSort(byTurn, depth, maxDepth, order_);
  return llvm::Error::success();
}

uint64_t Simulation::messageBytes(uint32_t send) const {
  const uint32_t recv = match_[send];
  const ir::Op &s = op(send), &r = op(recv);
  // The end that names in/out slots knows which chunks travel.
  if (s.buf != ir::Buffer::Tmp || r.buf == ir::Buffer::Tmp)
    return slotBytes(plan_.shape, rankOf_[send], s.slots(), elements_, opts_.elemBytes);
  return slotBytes(plan_.shape, rankOf_[recv], r.slots(), elements_, opts_.elemBytes);
}

uint64_t Simulation::localBytes(uint32_t id) const {
  const ir::Op &o = op(id);
  const uint32_t r = rankOf_[id];
  ir::Slots s = o.dstSlots();
  if (s.buf == ir::Buffer::Tmp && ir::hasSrc(o.kind) && o.src != ir::Buffer::Tmp)
    s = o.srcSlots();
  if (s.buf == ir::Buffer::Tmp && o.buf != ir::Buffer::Tmp)
    s = o.slots();
  return slotBytes(plan_.shape, r, s, elements_, opts_.elemBytes);
}

void Simulation::simulateLocal(uint32_t id, double ready, uint32_t why, Cause cause,
                               uint64_t bytes, double perByte) {
  const uint32_t r = rankOf_[id];
  double start = ready;
  if (coreFree_[r] > start) {
    start = coreFree_[r];
    why = coreHolder_[r];
    cause = Cause::Core;
  }
  done_[id] = start + double(bytes) * perByte;
  coreFree_[r] = done_[id];
  coreHolder_[r] = id;
  bytes_[id] = bytes;
  setPath(id, start, why, cause);
}

void Simulation::simulateSend(uint32_t id, double ready, uint32_t why) {
  const uint32_t a = rankOf_[id], recv = match_[id], b = rankOf_[recv];
  const uint32_t level = pl_.levelOf(a, b);
  const Level &lv = topo_.levels[level];
  const uint64_t bytes = messageBytes(id);
  bytes_[id] = bytes_[recv] = bytes;
  msgLevel_[id] = msgLevel_[recv] = static_cast<uint8_t>(level);

  // The earliest start at which both ports are free until the message
  // arrives and, on a shared level, both links while its data crosses them.
  LinkState &up = up_[level][pl_.linkOf(a, level)];
  LinkState &down = down_[level][pl_.linkOf(b, level)];
  const bool shared = lv.share > 1; // a private link is never busier than its rank's ports
  const double transfer = double(bytes) * lv.beta;
  const double hold = transfer + lv.alpha;
  Cause cause = why == none ? Cause::Start : Cause::Dependency;
  double t = ready;
  // The op starts once its ports can take it; its data leaves (t) once the
  // links can too.
  double t0 = -1;
  for (bool moved = true; moved;) {
    moved = false;
    auto need = [&](const Timeline &tl, double length, Cause c) {
      uint32_t holder = why;
      const double at = tl.fit(t, length, holder);
      if (at > t) {
        t = at, why = holder, cause = c, moved = true;
      }
    };
    need(sendPort_[a], hold, Cause::SendPort);
    need(recvPort_[b], hold, Cause::RecvPort);
    if (moved)
      continue;
    if (t0 < 0)
      t0 = t;
    if (shared) {
      need(up.timeline, transfer, Cause::Link);
      need(down.timeline, transfer, Cause::Link);
    }
  }
  const double end = t + hold;
  sendPort_[a].take(t, end, id);
  recvPort_[b].take(t, end, id);
  for (LinkState *l : {&up, &down}) {
    if (shared)
      l->timeline.take(t, t + transfer, id);
    l->busy += transfer;
    l->bytes += bytes;
    ++l->messages;
  }
  const double tb = t;
  result_.levels[level].bytes += bytes;
  ++result_.levels[level].messages;
  done_[id] = end;
  if (opts_.opTimes)
    leaves_[id] = tb;
  setPath(id, t0, why, cause);
}

llvm::Error Simulation::prepare() {
  const uint32_t p = plan_.shape.ranks;
  assert(pl_.ranks() == p && "placement for another rank count");
  base_.assign(p + 1, 0);
  for (uint32_t r = 0; r < p; ++r)
    base_[r + 1] = base_[r] + static_cast<uint32_t>(plan_.programs[r].ops.size());
  const uint32_t total = base_[p];
  rankOf_.resize(total);
  for (uint32_t r = 0; r < p; ++r)
    std::fill(rankOf_.begin() + base_[r], rankOf_.begin() + base_[r + 1], r);
  match_.assign(total, none);
  if (llvm::Error e = matchMessages())
    return e;
  buildSuccessors();
  return order();
}

SimResult Simulation::run(const SimOptions &opts) {
  assert(opts.elemBytes >= 1 && "an element has at least one byte");
  opts_ = opts;
  result_ = SimResult();
  const uint32_t p = plan_.shape.ranks;
  const uint32_t total = base_[p];
  elements_ = opts_.bytes / opts_.elemBytes;
  done_.assign(total, 0);
  bytes_.assign(total, 0);
  msgLevel_.assign(total, 0);
  if (opts_.opTimes)
    leaves_.assign(total, 0);
  if (opts_.criticalPath || opts_.opTimes) {
    start_.assign(total, 0);
    pred_.assign(total, none);
    cause_.assign(total, Cause::Start);
  }
  sendPort_.assign(p, Timeline());
  recvPort_.assign(p, Timeline());
  coreFree_.assign(p, 0);
  coreHolder_.assign(p, none);
  up_.clear();
  up_.resize(topo_.levels.size());
  down_.clear();
  down_.resize(topo_.levels.size());
  result_.rankFinish.assign(p, 0);
  result_.levels.assign(topo_.levels.size(), {});

  // The latest-finishing dependency of each op, found through the successor
  // lists as the ops are done (in order, so before the op itself).
  std::vector<double> ready(total, 0);
  std::vector<uint32_t> lastDep(total, none);
  for (uint32_t id : order_) {
    const ir::Op &o = op(id);
    const double t = ready[id];
    const uint32_t why = lastDep[id];
    const Cause cause = why == none ? Cause::Start : Cause::Dependency;
    switch (o.kind) {
    case ir::OpKind::Send: {
      // The message goes once the receive is posted too (its dependencies
      // are earlier in the order, so ready[] of the receive is final).
      const uint32_t recv = match_[id];
      if (ready[recv] > t)
        simulateSend(id, ready[recv], lastDep[recv]);
      else
        simulateSend(id, t, why);
      break;
    }
    case ir::OpKind::Recv:
    case ir::OpKind::RecvReduce: {
      const uint32_t send = match_[id];
      double at = t;
      uint32_t w = why;
      Cause c = cause;
      if (done_[send] >= at) { // the message decides (always: it starts after the posting)
        at = done_[send];
        w = send;
        c = Cause::Message;
      }
      if (o.kind == ir::OpKind::Recv) {
        done_[id] = at;
        setPath(id, at, w, c);
      } else {
        simulateLocal(id, at, w, c, bytes_[id], opts_.gamma);
      }
      break;
    }
    case ir::OpKind::Reduce:
      simulateLocal(id, t, why, cause, localBytes(id), opts_.gamma);
      break;
    case ir::OpKind::Copy:
      simulateLocal(id, t, why, cause, localBytes(id), topo_.copyBeta);
      break;
    }
    const uint32_t r = rankOf_[id];
    result_.rankFinish[r] = std::max(result_.rankFinish[r], done_[id]);
    for (uint32_t k = succBegin_[id]; k < succBegin_[id + 1]; ++k) {
      const uint32_t s = succ_[k];
      if (lastDep[s] == none || done_[id] >= ready[s]) {
        ready[s] = done_[id];
        lastDep[s] = id;
      }
    }
  }

  // The op that ends last; of several, the latest in the order (a receive
  // rather than the send that ends with it).
  uint32_t last = none;
  for (uint32_t id : order_)
    if (last == none || done_[id] >= done_[last])
      last = id;
  result_.time = last == none ? 0 : done_[last];
  // Busiest link over all levels and both directions.
  for (uint32_t j = 0; j < topo_.levels.size(); ++j)
    for (int dir = 0; dir < 2; ++dir)
      for (const auto &[link, st] : dir == 0 ? up_[j] : down_[j]) {
        LinkUse u{j, link, dir == 0, st.busy, st.bytes, st.messages};
        const LinkUse *b = result_.busiestLink ? &*result_.busiestLink : nullptr;
        if (!b || u.busy > b->busy ||
            (u.busy == b->busy && std::make_tuple(u.level, !u.up, u.link) <
                                      std::make_tuple(b->level, !b->up, b->link)))
          result_.busiestLink = u;
      }
  if (opts_.criticalPath && last != none) {
    for (uint32_t id = last; id != none; id = pred_[id]) {
      const uint32_t r = rankOf_[id];
      PathStep s;
      s.rank = r;
      s.op = id - base_[r];
      s.start = start_[id];
      s.end = done_[id];
      s.cause = cause_[id];
      s.level = msgLevel_[id];
      s.bytes = bytes_[id];
      result_.criticalPath.push_back(s);
    }
    std::reverse(result_.criticalPath.begin(), result_.criticalPath.end());
  }
  if (opts_.opTimes) {
    result_.ops.resize(p);
    for (uint32_t r = 0; r < p; ++r) {
      result_.ops[r].resize(base_[r + 1] - base_[r]);
      for (uint32_t id = base_[r]; id < base_[r + 1]; ++id) {
        OpTiming &t = result_.ops[r][id - base_[r]];
        t.start = start_[id];
        t.end = done_[id];
        t.leaves = op(id).kind == ir::OpKind::Send ? leaves_[id] : start_[id];
        t.cause = cause_[id];
        if (pred_[id] != none)
          t.pred = std::make_pair(rankOf_[pred_[id]], pred_[id] - base_[rankOf_[pred_[id]]]);
        t.level = msgLevel_[id];
        t.bytes = bytes_[id];
      }
    }
  }
  return std::move(result_);
}

} // namespace

llvm::Expected<SimResult> simulate(const ir::Plan &plan, const Topology &topo,
                                   const Placement &placement, const SimOptions &opts) {
  if (plan.numOps() >= none)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the plan has 2^32 ops or more");
  Simulation sim(plan, topo, placement);
  if (llvm::Error e = sim.prepare())
    return e;
  return sim.run(opts);
}

std::vector<double> predictTimes(const ir::Plan &plan, const Topology &topo,
                                 llvm::ArrayRef<uint64_t> sizes, uint32_t elemBytes,
                                 double gamma) {
  std::vector<double> out(sizes.size(), std::numeric_limits<double>::infinity());
  llvm::Expected<Placement> placed = place(topo, plan.shape.ranks);
  if (!placed) {
    llvm::consumeError(placed.takeError());
    return out;
  }
  llvm::Expected<PreparedSimulation> prep = PreparedSimulation::prepare(plan, topo, *placed);
  if (!prep) {
    llvm::consumeError(prep.takeError());
    return out;
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    SimOptions o;
    o.bytes = sizes[i];
    o.elemBytes = elemBytes;
    o.gamma = gamma;
    o.criticalPath = false;
    out[i] = prep->run(o).time;
  }
  return out;
}

struct PreparedSimulation::Impl {
  Simulation sim;
};

PreparedSimulation::PreparedSimulation(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PreparedSimulation::PreparedSimulation(PreparedSimulation &&) noexcept = default;
PreparedSimulation &PreparedSimulation::operator=(PreparedSimulation &&) noexcept = default;
PreparedSimulation::~PreparedSimulation() = default;

llvm::Expected<PreparedSimulation> PreparedSimulation::prepare(const ir::Plan &plan,
                                                               const Topology &topo,
                                                               const Placement &placement) {
  if (plan.numOps() >= none)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the plan has 2^32 ops or more");
  auto impl = std::make_unique<Impl>(Impl{Simulation(plan, topo, placement)});
  if (llvm::Error e = impl->sim.prepare())
    return e;
  return PreparedSimulation(std::move(impl));
}

SimResult PreparedSimulation::run(const SimOptions &opts) { return impl_->sim.run(opts); }

} // namespace collc::model
