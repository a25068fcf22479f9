// lang/Compose.cpp: runs of other algorithms inside a plan, and their queries.
//
// A run's machine sends its ops to its caller, which maps them
// (acceptRunOp); chunks_of and accepts ask another algorithm's header; after
// a composed plan is built, checkRunMessages refuses runs whose messages the
// k-th send / k-th receive rule would confuse.
#include "lang/InstantiatorImpl.h"

#include "ir/Wording.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Path.h"

namespace collc::lang::detail {

namespace {
/// "[0, 4, 8]", the first eight ranks of a longer group then "... (N ranks)".
std::string groupText(llvm::ArrayRef<uint32_t> g) {
  std::string s = "[";
  for (size_t i = 0; i < g.size() && i < 8; ++i)
    s += (i ? ", " : "") + std::to_string(g[i]);
  if (g.size() > 8)
    s += ", ... (" + std::to_string(g.size()) + " ranks)";
  return s + "]";
}
} // namespace

void Machine::acceptRunOp(ir::Op op, const Machine &child) {
  RunMap &m = *child.map_;
  const Loc at = m.stmt->loc;
  const ir::Op inner = op;
  auto refuse = [&](const std::string &why) {
    EvalFailure f{at, llvm::formatv("run: {0} of {1} becomes {2}: {3} ({4})", ir::describe(inner),
                                    child.m_.name, ir::describe(op), why, context(true))
                          .str()};
    f.source = &m_.source;
    f.notes = "\n" + child.m_.source.format(child.loc_,
                                            "the op is here (" + child.context(true) + ")",
                                            "note");
    throw f;
  };
  // In and out slots hold vector chunks: each of the algorithm's chunks is
  // k of the caller's, from chunk `first`; tmp slots go to the run's region.
  auto place = [&](ir::Buffer b, uint32_t slot, ir::Buffer &outBuf, uint32_t &outSlot) {
    uint64_t pos = 0;
    ir::Buffer target = ir::Buffer::Tmp;
    if (b == ir::Buffer::Tmp) {
      pos = m.tmpBase + uint64_t(slot) * m.k;
    } else {
      const uint32_t chunk = b == ir::Buffer::In ? ir::inChunk(m.subShape, m.subRank, slot)
                                                 : ir::outChunk(m.subShape, m.subRank, slot);
      target = b == ir::Buffer::In ? m.from : m.to;
      pos = m.first + uint64_t(chunk) * m.k;
      // The caller's in (allgather) or out (reduce_scatter_block) may hold
      // only its own block: its slot 0 is that block's first chunk.
      const uint32_t base = target == ir::Buffer::In    ? ir::inChunk(sh, rank_, 0)
                            : target == ir::Buffer::Out ? ir::outChunk(sh, rank_, 0)
                                                        : 0;
      if (pos < base)
        refuse(llvm::formatv("chunk {0} is not in this rank's {1}", pos, ir::name(target)));
      pos -= base;
    }
    if (pos + uint64_t(op.count) * m.k > UINT32_MAX)
      refuse("its slots are out of range");
    outBuf = target;
    outSlot = uint32_t(pos);
  };
  place(inner.buf, inner.chunk, op.buf, op.chunk);
  if (ir::hasSrc(inner.kind))
    place(inner.src, inner.srcChunk, op.src, op.srcChunk);
  if (inner.hasDst)
    place(inner.dst, inner.dstChunk, op.dst, op.dstChunk);
  op.count = inner.count * m.k;
  if (ir::isMessage(inner.kind))
    op.peer = m.group[inner.peer];
  op.loc.line = at.line;
  // The algorithm's first copy `in -> out` is no op when the run maps both
  // to the same slots (from out to out); a three-address op into its own
  // slots is the two-address one.
  if (op.kind == ir::OpKind::Copy && op.srcSlots() == op.slots())
    return;
  if (op.hasDst && op.dstSlots() == op.slots()) {
    op.hasDst = false;
    op.dst = ir::Buffer::Out;
    op.dstChunk = 0;
  }
  // The caller's own tmp slots (from tmp / to tmp) are those it declared.
  auto declared = [&](ir::Buffer inBuf, ir::Buffer b, uint32_t slot) {
    if (inBuf != ir::Buffer::Tmp && b == ir::Buffer::Tmp && slot + op.count > sh.scratch)
      refuse(llvm::formatv("past the {0} tmp slots the caller declares", sh.scratch));
  };
  declared(inner.buf, op.buf, op.chunk);
  if (ir::hasSrc(inner.kind))
    declared(inner.src, op.src, op.srcChunk);
  if (inner.hasDst)
    declared(inner.dst, op.dst, op.dstChunk);
  // Steps, densely from the caller's current step.
  if (!m.any) {
    m.any = true;
    m.mappedStep = m.s0;
  } else if (inner.step != m.lastSubStep) {
    ++m.mappedStep;
  }
  m.lastSubStep = inner.step;
  op.step = m.mappedStep;
  if (lastStep_ && op.step < *lastStep_)
    refuse(llvm::formatv("its step {0} is lower than step {1} of this rank's previous op",
                         op.step, *lastStep_));
  lastStep_ = op.step;
  ir::Shape wide = sh; // the runs' tmp regions lie above the declared slots
  wide.scratch = ir::maxScratch;
  if (std::optional<std::string> e = ir::checkOp(wide, rank_, llvm::ArrayRef(&op, 1), 0))
    refuse(*e);
  if (parent_) {
    ++emitted_;
    parent_->acceptRunOp(std::move(op), *this);
    return;
  }
  deliver(std::move(op));
}

std::string Machine::qualify(const AlgName &n) const {
  if (n.param >= 0)
    return algValues_[size_t(n.param)].algorithm;
  if (!llvm::StringRef(n.name).endswith(".calgo") || llvm::sys::path::is_absolute(n.name))
    return n.name;
  llvm::StringRef dir = llvm::sys::path::parent_path(m_.source.name);
  if (dir.empty())
    return n.name;
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, n.name);
  return path.str().str();
}

std::string Machine::describe(const AlgRef &ref) const {
  std::string s = ir::name(ref.collective).str() + " ";
  if (ref.alg.param >= 0)
    return s + m_.params[size_t(ref.alg.param)].name + " = " +
           formatParamValue(algValues_[size_t(ref.alg.param)]);
  return s + ref.alg.name;
}

const Module &Machine::resolve(const AlgRef &ref) {
  const std::string name = qualify(ref.alg);
  const Loc at = ref.alg.loc;
  const auto key = std::make_pair(int(ref.collective), name);
  const Module *sub = nullptr;
  if (auto it = runs_->resolved.find(key); it != runs_->resolved.end()) {
    sub = it->second;
  } else {
    if (!resolver_)
      fail(at, llvm::formatv("'{0}' needs an algorithm library to find it in, and this "
                             "instantiation has none",
                             describe(ref)));
    llvm::Expected<const Module *> found = resolver_->resolve(ref.collective, name, m_);
    if (!found)
      fail(at, llvm::toString(found.takeError()));
    sub = *found;
    runs_->resolved.emplace(key, sub);
  }
  if (sub->collective != ref.collective)
    fail(at, llvm::formatv("collective mismatch: '{0}' is {1} {2} algorithm, named as {3}", name,
                           ir::article(ir::name(sub->collective)), ir::name(sub->collective),
                           ir::name(ref.collective)));
  // The same file read twice (by a tool, then by a run) is one algorithm.
  auto same = [&](const Module *c) {
    return c == sub || (c->name == sub->name && c->source.text == sub->source.text);
  };
  if (std::any_of(chain_.begin(), chain_.end(), same)) {
    std::string path;
    for (const Module *c : chain_)
      path += "'" + c->name + "' runs ";
    fail(at, llvm::formatv("recursion: {0}'{1}' (an algorithm cannot run itself)", path,
                           sub->name));
  }
  return *sub;
}

const ParamValues &Machine::boundArgs(const AlgName &n) const {
  static const ParamValues none;
  return n.param >= 0 ? algValues_[size_t(n.param)].args : none;
}

ParamValue Machine::choiceValue(const AlgName &n, const std::vector<AlgRef::Arg> &args,
                                bool numbers) {
  ParamValue v(qualify(n), boundArgs(n));
  for (const AlgRef::Arg &a : args) {
    if (a.choice)
      v.args.emplace_back(a.name, choiceValue(*a.choice, a.choiceArgs, numbers));
    else if (numbers)
      v.args.emplace_back(a.name, ParamValue(eval(*a.value)));
  }
  return v;
}

ParamValues Machine::evalArgs(const AlgRef &ref, const Module &sub) {
  ParamValues out = boundArgs(ref.alg);
  for (const AlgRef::Arg &a : ref.args) {
    const Param *prm = nullptr;
    for (const Param &q : sub.params)
      if (q.name == a.name)
        prm = &q;
    if (!prm) {
      std::string known;
      for (const Param &q : sub.params)
        known += (known.empty() ? "" : ", ") + q.name;
      fail(a.loc, llvm::formatv("'{0}' has no parameter '{1}' ({2})", sub.name, a.name,
                                known.empty() ? "it has none" : "parameters: " + known));
    }
    if (prm->isAlgorithm != a.choice.has_value())
      fail(a.loc, prm->isAlgorithm
                      ? llvm::formatv("'{0}' of '{1}' is an algorithm parameter: give it an "
                                      "algorithm's name",
                                      a.name, sub.name)
                            .str()
                      : llvm::formatv("'{0}' of '{1}' is an integer parameter, not an algorithm",
                                      a.name, sub.name)
                            .str());
    if (a.choice)
      out.emplace_back(a.name, choiceValue(*a.choice, a.choiceArgs, true));
    else
      out.emplace_back(a.name, ParamValue(eval(*a.value)));
  }
  return out;
}

void Machine::adopt(Machine &child, const Module &sub) {
  child.runs_ = runs_;
  child.chain_ = chain_;
  child.chain_.push_back(&sub);
  child.fuel_ = fuel_;
}

std::vector<uint32_t> Machine::evalGroup(const GroupExpr &g) {
  std::vector<uint32_t> ranks;
  auto add = [&](int64_t v, Loc at) {
    if (v < 0 || v >= int64_t(p()))
      fail(at, llvm::formatv("run: rank {0} of the group is out of range 0..{1}", v, p() - 1));
    ranks.push_back(uint32_t(v));
  };
  if (!g.comprehension) {
    for (const ExprPtr &e : g.items)
      add(eval(*e), e->start);
  } else {
    eachInRange(*g.from, *g.to, g.stride.get(), g.geometric, g.reverse, {&g.var, g.slot},
                [&](int64_t v) {
                  burn(g.loc);
                  globals_[g.slot] = v;
                  if (!g.filter || eval(*g.filter))
                    add(eval(*g.item), g.item->start);
                });
  }
  if (ranks.empty())
    fail(g.loc, "run: the group is empty");
  std::vector<uint32_t> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i] == sorted[i - 1])
      fail(g.loc, llvm::formatv("run: rank {0} appears twice in the group {1}", sorted[i],
                                groupText(ranks)));
  return ranks;
}

ir::Buffer Machine::evalBuffer(const BufferExpr &b) {
  if (!b.value)
    return b.buf;
  const int64_t v = eval(*b.value);
  if (v < 0 || v > int64_t(ir::Buffer::Tmp))
    fail(b.loc, llvm::formatv("run: {0} is not a buffer (in, out or tmp)", v));
  return ir::Buffer(v);
}

void Machine::execRun(const Stmt &s) {
  const RunSpec &run = *s.run;
  loc_ = s.loc;
  const Module &sub = resolve(run.alg);
  const std::string what = describe(run.alg);
  if (ir::reduces(sub.collective) && !ir::reduces(m_.collective))
    fail(run.alg.loc, llvm::formatv("collective mismatch: {0} combines values, which {1} "
                                    "plans do not",
                                    what, ir::name(m_.collective)));
  RunMap map;
  map.stmt = &s;
  map.group = evalGroup(run.group);
  const auto me = std::find(map.group.begin(), map.group.end(), rank_);
  if (me == map.group.end())
    fail(run.group.loc, llvm::formatv("run: rank {0} is not in the group {1} (a rank runs "
                                      "only the runs it takes part in)",
                                      rank_, groupText(map.group)));
  map.subRank = uint32_t(me - map.group.begin());
  int64_t first = 0, end = sh.chunks;
  if (run.first) {
    first = eval(*run.first);
    end = run.end ? eval(*run.end) : first + 1;
    if (first < 0 || end > int64_t(sh.chunks) || first >= end)
      fail(run.chunksLoc, llvm::formatv("run: chunks {0}..{1} are {2} (the plan has chunks "
                                        "0..{3})",
                                        first, end, first >= end ? "empty" : "out of range",
                                        sh.chunks));
  }
  uint32_t subRoot = 0;
  if (ir::hasRoot(sub.collective)) {
    if (!run.root)
      fail(s.loc, llvm::formatv("run: {0} has a root: say which rank with 'root R'", what));
    const int64_t root = eval(*run.root);
    const auto at = std::find(map.group.begin(), map.group.end(), root);
    if (at == map.group.end())
      fail(run.root->start, llvm::formatv("run: root {0} is not in the group {1}", root,
                                          groupText(map.group)));
    subRoot = uint32_t(at - map.group.begin());
  } else if (run.root) {
    fail(run.root->start, llvm::formatv("run: {0} has no root", what));
  }
  if (run.from && sub.collective == ir::Collective::Bcast)
    fail(run.from->loc, llvm::formatv("run: {0} reads no input buffer (its data starts in the "
                                      "root's 'to'): 'from' does not apply",
                                      what));
  map.from = run.from ? evalBuffer(*run.from) : ir::Buffer::In;
  map.to = run.to ? evalBuffer(*run.to) : ir::Buffer::Out;
  InstantiateOptions o;
  o.ranks = uint32_t(map.group.size());
  o.root = subRoot;
  o.params = evalArgs(run.alg, sub);
  o.resolver = resolver_;
  o.maxOps = UINT64_MAX; // counted where the ops land
  // The run's algorithm sees its group as a machine of its own, flat, as
  // chunks_of and accepts count it (o.layout stays null).
  Machine child(sub, o);
  adopt(child, sub);
  child.parent_ = this;
  child.map_ = &map;
  const uint32_t savedRun = runs_->current;
  try {
    if (!child.header()) {
      EvalFailure f{s.loc, llvm::formatv("run: {0} refuses its group: require {1} does not "
                                         "hold there ({2}) ({3})",
                                         what, child.failed->var, child.context(true),
                                         context(true))
                               .str()};
      f.source = &m_.source;
      f.notes = "\n" + sub.source.format(child.failed->loc, "the require is here", "note");
      throw f;
    }
    child.shape();
    const uint32_t subChunks = child.sh.chunks;
    if ((end - first) % subChunks != 0)
      fail(run.chunksLoc.line ? run.chunksLoc : s.loc,
           llvm::formatv("run: chunks {0}..{1} ({2}) are not a multiple of the {3} of {4} "
                         "for {5}",
                         first, end, ir::counted(uint64_t(end - first), "chunk"),
                         ir::counted(subChunks, "chunk"), what, ir::counted(o.ranks, "rank")));
    map.subShape = child.sh;
    map.first = uint32_t(first);
    map.k = uint32_t((end - first) / subChunks);
    map.tmpBase = sh.scratch + scratchTop_;
    map.s0 = uint32_t(step_);
    if (runs_->track) {
      // A run instance: the same key on every rank that takes part (the
      // buffers it maps are each rank's own business).
      std::vector<int64_t> key = {int64_t(runs_->current), int64_t(intptr_t(&s)),
                                  int64_t(intptr_t(&sub)), first, end, subRoot};
      key.insert(key.end(), map.group.begin(), map.group.end());
      for (const auto &[name, v] : o.params)
        key.push_back(v.isAlgorithm() ? int64_t(std::hash<std::string>()(formatParamValue(v)))
                                      : v.number);
      key.push_back(runs_->seen[key]++);
      const bool top = runs_->current == 0 && !parent_;
      auto [it, fresh] = runs_->ids.try_emplace(std::move(key), runs_->instances.size());
      if (fresh)
        runs_->instances.push_back(
            {&m_.source, s.loc,
             llvm::formatv("run {0} on {1} chunks {2}..{3}", what, groupText(map.group), first,
                           end)
                 .str(),
             top, top ? map.group : std::vector<uint32_t>{}, {}});
      if (top)
        runs_->instances[it->second].ranAt.push_back(runs_->planRank);
      runs_->current = it->second;
    }
    child_ = &child;
    child.run(map.subRank, nullptr);
    child_ = nullptr;
  } catch (EvalFailure &f) {
    child_ = nullptr;
    if (f.source != &m_.source)
      f.notes += "\n" + m_.source.format(s.loc,
                                         "in this run of " + what + " (" + context(true) + ")",
                                         "note");
    throw;
  }
  runs_->current = savedRun;
  const uint64_t top =
      uint64_t(scratchTop_) + (uint64_t(child.sh.scratch) + child.scratchTop_) * map.k;
  if (top + sh.scratch > ir::maxScratch)
    fail(s.loc, llvm::formatv("run: the runs' tmp slots pass {0}", ir::maxScratch));
  scratchTop_ = uint32_t(top);
  step_ = map.any ? map.mappedStep : map.s0;
}

bool Machine::composedCommutative() {
  if (m_.commutative)
    return true;
  for (const RunSpec *run : m_.runs) {
    const Module &sub = resolve(run->alg);
    // Only the choices of algorithm parameters matter here, which are known
    // before the body runs.
    InstantiateOptions o;
    for (const auto &[name, v] : boundArgs(run->alg.alg))
      if (v.isAlgorithm())
        o.params.emplace_back(name, v);
    for (const AlgRef::Arg &a : run->alg.args)
      for (const Param &prm : sub.params)
        if (a.choice && prm.isAlgorithm && prm.name == a.name) // else the run refuses it
          o.params.emplace_back(a.name, choiceValue(*a.choice, a.choiceArgs, false));
    o.resolver = resolver_;
    Machine q(sub, o);
    adopt(q, sub);
    q.planless = true;
    try {
      q.params();
      if (q.composedCommutative())
        return true;
    } catch (EvalFailure &f) {
      if (f.source != &m_.source)
        f.notes += "\n" + m_.source.format(run->alg.loc, "in this run of " + describe(run->alg),
                                           "note");
      throw;
    }
  }
  return false;
}

int64_t Machine::evalQuery(const Expr &e) {
  const Module &sub = resolve(*e.alg);
  const bool chunksOf = e.kind == ExprKind::ChunksOf;
  const char *fn = chunksOf ? "chunks_of" : "accepts";
  const int64_t n = eval(*e.args[0]);
  if (n < 1 || n > int64_t(ir::maxRanks))
    fail(e.args[0]->start, llvm::formatv("{0}: {1} ranks are out of range (1..{2})", fn, n,
                                         ir::maxRanks));
  InstantiateOptions o;
  o.ranks = uint32_t(n);
  o.params = evalArgs(*e.alg, sub);
  o.resolver = resolver_;
  o.maxOps = UINT64_MAX;
  Machine q(sub, o);
  adopt(q, sub);
  try {
    const bool ok = q.header();
    if (ok && chunksOf)
      q.shape();
    if (!chunksOf)
      return ok;
    if (!ok) {
      EvalFailure f{e.loc, llvm::formatv("chunks_of: {0} refuses {1}: require {2} does "
                                         "not hold ({3})",
                                         describe(*e.alg), ir::counted(uint64_t(n), "rank"),
                                         q.failed->var, context(true))
                               .str()};
      f.source = &m_.source;
      f.notes = "\n" + sub.source.format(q.failed->loc, "the require is here", "note");
      throw f;
    }
    return q.sh.chunks;
  } catch (EvalFailure &f) {
    if (f.source != &m_.source)
      f.notes += "\n" + m_.source.format(e.loc, llvm::formatv("in this {0} of {1}", fn,
                                                              describe(*e.alg))
                                                    .str(),
                                         "note");
    throw;
  }
}

void Machine::checkRunMembers() {
  const RunState &rs = *runs_;
  for (const RunState::Instance &in : rs.instances) {
    if (!in.top)
      continue;
    std::vector<uint32_t> missing;
    for (uint32_t q : in.group)
      if (std::find(in.ranAt.begin(), in.ranAt.end(), q) == in.ranAt.end())
        missing.push_back(q);
    if (missing.empty())
      continue;
    auto list = [](llvm::ArrayRef<uint32_t> v) {
      std::string s;
      for (size_t i = 0; i < v.size() && i < 8; ++i)
        s += (i ? (i + 1 == v.size() ? " and " : ", ") : "") + std::to_string(v[i]);
      if (v.size() > 8)
        s += ", ... (" + std::to_string(v.size()) + " ranks)";
      return s;
    };
    const bool one = missing.size() == 1, oneRan = in.ranAt.size() == 1;
    const std::string text =
        std::string("run: ") + (one ? "rank " : "ranks ") + list(missing) +
        (one ? " is" : " are") + " in the group of '" + in.text + "', which " +
        (oneRan ? "rank " : "ranks ") + list(in.ranAt) + (oneRan ? " runs" : " run") +
        ", but " + (one ? "does" : "do") + " not run it (or " + (one ? "runs" : "run") +
        " it with other chunks, root or arguments): every rank of a run's group runs it, alike";
    EvalFailure f{in.loc, text};
    f.source = in.source;
    throw f;
  }
}

void Machine::checkRunMessages(const ir::Plan &plan) {
  const RunState &rs = *runs_;
  // Per channel a -> b: the run instance of each send, in a's order.
  llvm::DenseMap<uint64_t, std::vector<uint32_t>> sends;
  for (uint32_t a = 0; a < plan.programs.size(); ++a) {
    const auto &ops = plan.programs[a].ops;
    for (uint32_t i = 0; i < ops.size(); ++i)
      if (ops[i].kind == ir::OpKind::Send)
        sends[(uint64_t(a) << 32) | ops[i].peer].push_back(rs.ctx[a][i]);
  }
  auto where = [&](uint32_t ctx, uint32_t line) {
    if (ctx == 0)
      return llvm::formatv("by the caller's own op (line {0})", line).str();
    const RunState::Instance &in = rs.instances[ctx];
    return llvm::formatv("in '{0}' ({1}:{2})", in.text, in.source->name, in.loc.line).str();
  };
  for (uint32_t b = 0; b < plan.programs.size(); ++b) {
    llvm::DenseMap<uint32_t, uint32_t> seen; // per sender: receives so far
    const auto &ops = plan.programs[b].ops;
    for (uint32_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind != ir::OpKind::Recv && ops[i].kind != ir::OpKind::RecvReduce)
        continue;
      const uint32_t a = ops[i].peer;
      const uint32_t k = seen[a]++;
      auto it = sends.find((uint64_t(a) << 32) | b);
      if (it == sends.end() || k >= it->second.size() || it->second[k] == rs.ctx[b][i])
        continue; // unmatched messages are the verifier's to report
      const uint32_t sent = it->second[k], got = rs.ctx[b][i];
      uint32_t sendLine = 0;
      for (uint32_t j = 0, n = 0; j < plan.programs[a].ops.size(); ++j)
        if (plan.programs[a].ops[j].kind == ir::OpKind::Send && plan.programs[a].ops[j].peer == b &&
            n++ == k)
          sendLine = plan.programs[a].ops[j].loc.line;
      const uint32_t at = sent ? sent : got;
      EvalFailure f{rs.instances[at].loc,
                    llvm::formatv("run: message {0} from rank {1} to rank {2} is sent {3} but "
                                  "received {4}: the k-th send from one rank to another matches "
                                  "the k-th receive, so ranks must run what they share, and "
                                  "their own messages around it, in the same order",
                                  k + 1, a, b, where(sent, sendLine), where(got, ops[i].loc.line))
                        .str()};
      f.source = rs.instances[at].source;
      if (sent && got)
        f.notes = "\n" + rs.instances[got].source->format(rs.instances[got].loc,
                                                          "the receiving run is here", "note");
      throw f;
    }
  }
}

} // namespace collc::lang::detail
