// tune/Tuner.cpp: the search (Tuner.h states it).
//
// A candidate is compiled and simulated by compileCandidate, in a child
// process when TuneOptions::isolate holds; its result comes back through
// the Wire encoding below (the child's memory is gone by then).
#include "tune/Tuner.h"

#include "compiler/Disasm.h"
#include "compiler/Lower.h"
#include "compiler/Prove.h"
#include "compiler/Verifier.h"
#include "model/Simulator.h"
#include "compiler/passes/Pipeline.h"
#include "tune/Isolate.h"
#include "runtime/bytecode/Bundle.h"
#include "runtime/bytecode/Loader.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>

namespace collc::tune {

llvm::StringRef name(Status s) {
  switch (s) {
  case Status::Compiled:
    return "compiled";
  case Status::Refused:
    return "refused";
  case Status::Duplicate:
    return "duplicate";
  case Status::Failed:
    return "failed";
  case Status::Stopped:
    return "stopped by the budget";
  case Status::NotTried:
    return "not tried (budget)";
  }
  return "?";
}

std::string formatBytes(uint64_t bytes) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  unsigned u = 0;
  double v = double(bytes);
  while (v >= 1024 && u < 4)
    v /= 1024, ++u;
  if (u == 0)
    return std::to_string(bytes) + " B";
  if (std::fmod(v, 1.0) == 0)
    return llvm::formatv("{0} {1}", uint64_t(v), units[u]).str();
  return llvm::formatv("{0:g} {1}", llvm::format("%.3g", v), units[u]).str();
}

std::string formatSeconds(double s) {
  const char *unit = "s";
  double v = s;
  if (s < 1e-3)
    v = s * 1e6, unit = "us";
  else if (s < 1)
    v = s * 1e3, unit = "ms";
  return llvm::formatv("{0} {1}", llvm::format(v < 10 ? "%.2f" : v < 100 ? "%.1f" : "%.0f", v),
                       unit)
      .str();
}

llvm::Expected<std::vector<uint64_t>> parseSizes(llvm::StringRef text, uint32_t elemBytes) {
  auto bad = [&](const llvm::Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   ("--sizes '" + text + "': " + why).str());
  };
  auto count = [&](llvm::StringRef s, uint64_t &v) {
    return !s.empty() && rt::parseByteCount(std::string_view(s.data(), s.size()), v);
  };
  std::vector<uint64_t> raw;
  if (text.contains("..")) {
    auto [a, b] = text.split("..");
    uint64_t lo = 0, hi = 0;
    if (!count(a, lo) || !count(b, hi))
      return bad("expected MIN..MAX or A,B,C (bytes, with K, M or G)");
    if (hi < lo)
      return bad("MAX is below MIN");
    raw.push_back(lo);
    for (uint64_t s = 1; s < hi && s <= (uint64_t(1) << 62); s <<= 1)
      if (s > lo)
        raw.push_back(s);
    raw.push_back(hi);
  } else {
    llvm::SmallVector<llvm::StringRef, 16> items;
    text.split(items, ',');
    for (llvm::StringRef it : items) {
      uint64_t v = 0;
      if (!count(it.trim(), v))
        return bad("expected MIN..MAX or A,B,C (bytes, with K, M or G)");
      raw.push_back(v);
    }
  }
  std::vector<uint64_t> out;
  for (uint64_t s : raw)
    out.push_back(std::max<uint64_t>(s / elemBytes, 1) * elemBytes);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out.size() > 4096)
    return bad("more than 4096 sizes");
  return out;
}

llvm::Expected<std::shared_ptr<const lang::Layout>> layoutOf(const model::Topology &topo,
                                                             const model::Placement &pl) {
  std::vector<uint32_t> sizes, coords;
  for (const model::Level &l : topo.levels)
    sizes.push_back(l.size);
  coords.reserve(size_t(pl.ranks()) * sizes.size());
  for (uint32_t r = 0; r < pl.ranks(); ++r)
    for (uint32_t j = 0; j < sizes.size(); ++j)
      coords.push_back(pl.coord(r, j));
  return lang::makeLayout(std::move(sizes), std::move(coords), pl.ranks());
}

namespace {

using Clock = std::chrono::steady_clock;

// --- the wire between a compiling child and the search ----------------------

class WireWriter {
public:
  void u64(uint64_t v) { s_.append(reinterpret_cast<const char *>(&v), sizeof v); }
  void f64(double v) { s_.append(reinterpret_cast<const char *>(&v), sizeof v); }
  void bytes(llvm::StringRef b) {
    u64(b.size());
    s_.append(b.data(), b.size());
  }
  std::string take() { return std::move(s_); }

private:
  std::string s_;
};

class WireReader {
public:
  explicit WireReader(llvm::StringRef s) : s_(s) {}
  uint64_t u64() {
    uint64_t v = 0;
    get(&v, sizeof v);
    return v;
  }
  double f64() {
    double v = 0;
    get(&v, sizeof v);
    return v;
  }
  std::string bytes() {
    const uint64_t n = u64();
    if (!ok_ || n > s_.size() - pos_) {
      ok_ = false;
      return {};
    }
    std::string v = s_.substr(pos_, n).str();
    pos_ += n;
    return v;
  }
  bool good() const { return ok_; }
  bool ok() const { return ok_ && pos_ == s_.size(); }

private:
  void get(void *out, size_t n) {
    if (!ok_ || n > s_.size() - pos_) {
      ok_ = false;
      return;
    }
    std::memcpy(out, s_.data() + pos_, n);
    pos_ += n;
  }
  llvm::StringRef s_;
  size_t pos_ = 0;
  bool ok_ = true;
};

/// What compiling one candidate gives.
struct Compiled {
  std::string refusal; ///< nonempty: refused, and why
  std::vector<uint8_t> plan;
  uint64_t ops = 0, messages = 0;
  bool commutative = true, usesTopology = false;
  std::vector<SizeTime> times;
  std::vector<std::string> undone; ///< passes undone as predicted slower
};

std::string encode(const Compiled &c) {
  WireWriter w;
  w.bytes(c.refusal);
  w.bytes(llvm::StringRef(reinterpret_cast<const char *>(c.plan.data()), c.plan.size()));
  w.u64(c.ops);
  w.u64(c.messages);
  w.u64(c.commutative);
  w.u64(c.usesTopology);
  w.u64(c.times.size());
  for (const SizeTime &t : c.times) {
    w.f64(t.time);
    const Breakdown &b = t.terms;
    w.u64(b.alpha.size());
    for (size_t j = 0; j < b.alpha.size(); ++j) {
      w.f64(b.alpha[j]);
      w.f64(b.beta[j]);
      w.u64(b.messages[j]);
      w.u64(b.bytes[j]);
    }
    w.f64(b.gamma);
    w.f64(b.copy);
    w.f64(b.contention);
  }
  w.u64(c.undone.size());
  for (const std::string &u : c.undone)
    w.bytes(u);
  return w.take();
}

std::optional<Compiled> decode(llvm::StringRef bytes) {
  WireReader r(bytes);
  Compiled c;
  c.refusal = r.bytes();
  const std::string plan = r.bytes();
  c.plan.assign(plan.begin(), plan.end());
  c.ops = r.u64();
  c.messages = r.u64();
  c.commutative = r.u64() != 0;
  c.usesTopology = r.u64() != 0;
  const uint64_t n = r.u64();
  for (uint64_t i = 0; i < n && r.good(); ++i) {
    SizeTime t;
    t.time = r.f64();
    const uint64_t levels = r.u64();
    if (levels > 64)
      return std::nullopt;
    Breakdown &b = t.terms;
    for (uint64_t j = 0; j < levels; ++j) {
      b.alpha.push_back(r.f64());
      b.beta.push_back(r.f64());
      b.messages.push_back(uint32_t(r.u64()));
      b.bytes.push_back(r.u64());
    }
    b.gamma = r.f64();
    b.copy = r.f64();
    b.contention = r.f64();
    c.times.push_back(std::move(t));
  }
  const uint64_t undone = r.u64();
  for (uint64_t i = 0; i < undone && r.good(); ++i)
    c.undone.push_back(r.bytes());
  if (!r.ok() || c.times.size() != n || c.undone.size() != undone)
    return std::nullopt;
  return c;
}

// --- one candidate -----------------------------------------------------------

/// What every candidate is compiled and simulated against.
struct Context {
  const model::Topology &topo;
  const model::Placement &placement;
  const TuneOptions &opts;
  lang::InstantiateOptions shape; ///< ranks, root, layout
  double gamma = 0;
};

std::string firstDiagnostic(const compiler::VerifyResult &r) {
  if (r.diagnostics.empty())
    return "it does not verify";
  std::string s = compiler::toString(r.diagnostics.front());
  const size_t more = r.diagnostics.size() + r.dropped - 1;
  if (more)
    s += llvm::formatv(" (and {0} more)", more).str();
  return s;
}

/// Whether every problem found is an operand-order one (class `order`).
bool onlyOrder(const compiler::VerifyResult &r) {
  return !r.diagnostics.empty() &&
         llvm::all_of(r.diagnostics, [](const compiler::Diagnostic &d) {
           return d.cls == compiler::DiagClass::Order;
         });
}

std::string firstLine(std::string s) { return s.substr(0, s.find('\n')); }

Compiled compileCandidate(const Candidate &cand, const Context &cx) {
  Compiled out;
  const bool allreduce = cx.opts.collective == ir::Collective::Allreduce;
  lang::InstantiateOptions io = cx.shape;
  io.params = cand.params;
  llvm::Expected<ir::Plan> plan = lang::instantiate(*cand.algorithm->module, io);
  if (!plan) {
    out.refusal = firstLine(llvm::toString(plan.takeError()));
    return out;
  }
  if (io.layout && io.layout->nnodes > 1) {
    lang::InstantiateOptions flat = io;
    flat.layout = nullptr;
    llvm::Expected<ir::Plan> f = lang::instantiate(*cand.algorithm->module, flat);
    out.usesTopology = !f || f->programs != plan->programs;
    if (!f)
      llvm::consumeError(f.takeError());
  }
  compiler::VerifyResult proof = compiler::verify(*plan);
  if (!proof.proven() && !plan->shape.commutative && onlyOrder(proof) &&
      !cx.opts.noncommutative) {
    // An order-preserving algorithm on a placement that breaks rank order
    // (round-robin, say) may still be right for commutative operations.
    plan->shape.commutative = true;
    proof = compiler::verify(*plan);
  }
  if (!proof.proven()) {
    out.refusal = "does not verify: " + firstDiagnostic(proof);
    return out;
  }
  if (allreduce && !proof.stats.identical) {
    out.refusal = "its ranks may compute different results (not identical), which the "
                  "drop-in refuses for allreduce";
    return out;
  }
  if (cx.opts.noncommutative && plan->shape.commutative) {
    compiler::VerifyOptions nc;
    nc.noncommutative = true;
    compiler::VerifyResult r = compiler::verify(*plan, nc);
    if (!r.proven()) {
      out.refusal = "not proven for non-commutative operations: " + firstDiagnostic(r);
      return out;
    }
  }
  compiler::PipelineOptions o2;
  o2.level = 2;
  o2.pipelineSegments = cand.segments;
  std::optional<compiler::VerifyResult> last;
  o2.inputProof = &proof;
  o2.resultProof = &last;
  // A pass predicted slower on this machine at any size tuned for is undone.
  o2.cost = [&cx](const ir::Plan &p) {
    return model::predictTimes(p, cx.topo, cx.opts.sizes, cx.opts.elemBytes, cx.gamma);
  };
  o2.costPoint = [&cx](size_t i) { return "at " + formatBytes(cx.opts.sizes[i]); };
  o2.undone = &out.undone;
  llvm::Expected<ir::Plan> optimized = compiler::optimize(std::move(*plan), o2);
  if (!optimized) {
    out.refusal = "-O2: " + firstLine(llvm::toString(optimized.takeError()));
    return out;
  }
  compiler::VerifyOptions strongest;
  strongest.requireIdentical = allreduce;
  compiler::Proven proven =
      compiler::proveStrongest(*optimized, strongest, last ? &*last : nullptr);
  if (!proven.result.proven()) {
    out.refusal = "the optimized plan does not verify: " + firstDiagnostic(proven.result);
    return out;
  }
  if (cx.opts.noncommutative && optimized->shape.commutative) {
    out.refusal = "the optimized plan is not proven for non-commutative operations";
    return out;
  }
  out.commutative = optimized->shape.commutative;
  out.ops = proven.result.stats.ops;
  out.messages = proven.result.stats.messages;
  optimized->algorithm.clear();
  out.plan = compiler::lower(*optimized, proven.proof);
  rt::LoadedPlan check;
  if (rt::Status s = rt::load(out.plan, check); !s.ok()) {
    out.refusal = "the loader refuses it: " + s.message();
    out.plan.clear();
    return out;
  }
  for (uint64_t bytes : cx.opts.sizes) {
    model::SimOptions so;
    so.bytes = bytes;
    so.elemBytes = cx.opts.elemBytes;
    so.gamma = cx.gamma;
    llvm::Expected<model::SimResult> r = model::simulate(*optimized, cx.topo, cx.placement, so);
    if (!r) {
      out.refusal = "the simulator refuses it: " + firstLine(llvm::toString(r.takeError()));
      out.plan.clear();
      return out;
    }
    out.times.push_back({r->time, breakdown(*optimized, cx.topo, *r, cx.gamma)});
  }
  return out;
}

std::string sanitized(llvm::StringRef s) {
  std::string out;
  for (char c : s)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')
               ? c
               : '_';
  return out;
}

std::string seconds(double s) { return llvm::formatv("{0:f1} s", s).str(); }

std::string opsText(uint64_t ops) {
  if (ops < 10000)
    return std::to_string(ops);
  return llvm::formatv("{0}", llvm::format("%.2g", double(ops))).str();
}

/// The multiple of `e` in (lo, hi] with the most trailing zero bits (the
/// smallest of those). Precondition: hi is a multiple of e above lo.
uint64_t roundest(uint64_t lo, uint64_t hi, uint64_t e) {
  uint64_t best = hi;
  for (uint64_t unit = e; unit <= hi; unit *= 2) {
    const uint64_t v = (lo / unit + 1) * unit; // the first multiple of unit above lo
    if (v <= hi)
      best = v;
    else
      break;
  }
  return best;
}

/// Whether candidate a beats b at a time each (ties: the earlier candidate).
bool beats(double ta, size_t a, double tb, size_t b) { return ta < tb || (ta == tb && a < b); }

class Search {
public:
  Search(const model::Topology &topo, const TuneOptions &opts) : topo_(topo), opts_(opts) {}
  llvm::Expected<TuneResult> run();

private:
  void say(const llvm::Twine &line) {
    if (opts_.progress) {
      *opts_.progress << "collc tune: " << line << '\n';
      opts_.progress->flush();
    }
  }
  double elapsed() const {
    return std::chrono::duration<double>(opts_.now() - start_).count();
  }
  bool pastDeadline() const { return elapsed() >= opts_.budget; }
  /// Compiling may use 90% of the budget; the rest is for placing the
  /// boundaries between size ranges and writing the outputs.
  double compileBudget() const { return opts_.budget * 0.9; }
  void compileAll(const Context &cx);
  void choose();
  void refineBoundaries(const Context &cx);
  const ir::Plan &planOf(size_t i);
  double timeAt(size_t i, uint64_t bytes, const Context &cx);

  const model::Topology &topo_;
  const TuneOptions &opts_;
  Clock::time_point start_;
  TuneResult result_;
  std::map<size_t, ir::Plan> plans_; ///< disassembled on demand (boundaries)
  bool refineCut_ = false;
};

/// A candidate of the same algorithm and parameters with fewer segments that
/// was stopped for taking more than its share of the budget, if any: a
/// pipelined variant only has more ops to prove.
const CandidateResult *slowerVariantOf(const Candidate &c,
                                       const std::vector<CandidateResult> &cands) {
  for (const CandidateResult &o : cands)
    if (o.status == Status::Stopped && o.candidate.algorithm == c.algorithm &&
        o.candidate.params == c.params && o.candidate.segments < c.segments)
      return &o;
  return nullptr;
}

void Search::compileAll(const Context &cx) {
  std::vector<CandidateResult> &cands = result_.candidates;
  // Every algorithm with its default choices at each level first, then the
  // other choices; cheapest first within each, so that a budget cut leaves
  // the expensive variants out, not a whole algorithm.
  std::vector<size_t> order(cands.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Candidate &x = cands[a].candidate, &y = cands[b].candidate;
    const bool xv = x.choosesAlgorithms(), yv = y.choosesAlgorithms();
    if (xv != yv)
      return yv;
    return x.estimatedOps * x.segments < y.estimatedOps * y.segments;
  });
  size_t done = 0;
  std::vector<std::string> stopped;
  for (size_t n = 0; n < order.size(); ++n) {
    CandidateResult &cr = cands[order[n]];
    if (const CandidateResult *slow = slowerVariantOf(cr.candidate, cands)) {
      cr.why = slow->candidate.name +
               " took more than a quarter of the budget, and this variant is larger";
      say(cr.candidate.name + ": " + cr.why);
      continue;
    }
    if (elapsed() >= compileBudget()) {
      result_.budgetExhausted = true;
      break;
    }
    const Clock::time_point t0 = opts_.now();
    const std::string label = llvm::formatv("[{0}/{1}] {2} (about {3} ops)", n + 1,
                                            order.size(), cr.candidate.name,
                                            opsText(cr.candidate.estimatedOps *
                                                    cr.candidate.segments))
                                  .str();
    auto work = [&] { return encode(compileCandidate(cr.candidate, cx)); };
    Isolated iso;
    // A candidate may take a quarter of the budget, so that one slow
    // compilation cannot starve the rest.
    const double left = compileBudget() - elapsed();
    const bool capped = opts_.budget / 4 < left;
    if (opts_.isolate) {
      const double allowed = std::max(0.0, capped ? opts_.budget / 4 : left);
      const auto deadline =
          std::isfinite(allowed)
              ? Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(allowed))
              : Clock::time_point::max();
      iso = runIsolated(work, deadline);
    } else {
      iso.outcome = Outcome::Done;
      iso.bytes = work();
    }
    const std::string took = seconds(std::chrono::duration<double>(opts_.now() - t0).count());
    if (iso.outcome == Outcome::Deadline) {
      cr.status = Status::Stopped;
      result_.budgetExhausted = true;
      stopped.push_back(cr.candidate.name);
      if (capped) {
        cr.why = "it took more than a quarter of the budget (" + formatSeconds(opts_.budget / 4) +
                 ")";
        say(label + ": stopped after " + took + ": " + cr.why);
        continue;
      }
      cr.why = "the budget ran out while it compiled";
      say(label + ": stopped by the budget after " + took);
      break;
    }
    ++done;
    std::optional<Compiled> c;
    if (iso.outcome == Outcome::Done)
      c = decode(iso.bytes);
    if (!c) {
      cr.status = Status::Failed;
      cr.why = iso.outcome == Outcome::Failed ? "its compilation failed: " + iso.why
                                              : "its compilation returned a malformed result";
      say(label + ": " + cr.why);
      continue;
    }
    if (!c->refusal.empty()) {
      cr.status = Status::Refused;
      cr.why = c->refusal;
      say(label + ": refused: " + cr.why);
      continue;
    }
    cr.name = cr.candidate.name + (c->usesTopology ? "@" + sanitized(result_.topologyName) : "");
    cr.plan = std::move(c->plan);
    cr.ops = c->ops;
    cr.messages = c->messages;
    cr.commutative = c->commutative;
    cr.times = std::move(c->times);
    cr.undone = std::move(c->undone);
    cr.status = Status::Compiled;
    for (size_t k = 0; k < cands.size(); ++k)
      if (k != order[n] && cands[k].status == Status::Compiled && cands[k].plan == cr.plan) {
        cr.status = Status::Duplicate;
        cr.duplicateOf = k;
        cr.why = "the same plan as " + cands[k].name;
        cr.plan.clear();
        cr.times.clear();
        break;
      }
    say(label + ": " +
        (cr.status == Status::Duplicate
             ? cr.why
             : llvm::formatv("proven at -O2, {0} ops, simulated at {1} sizes", cr.ops,
                             cr.times.size())
                   .str()) +
        " (" + took + ")");
  }
  if (result_.budgetExhausted) {
    std::vector<std::string> untried;
    for (CandidateResult &cr : cands)
      if (cr.status == Status::NotTried)
        untried.push_back(cr.candidate.name);
    std::string note = llvm::formatv("the budget of {0} ran out after {1} of {2} candidates",
                                     seconds(opts_.budget), done, cands.size())
                           .str();
    for (size_t i = 0; i < stopped.size(); ++i)
      note += (i ? ", " : "; stopped while it compiled: ") + stopped[i];
    if (!untried.empty()) {
      note += "; not tried: ";
      for (size_t i = 0; i < untried.size(); ++i)
        note += (i ? ", " : "") + untried[i];
    }
    result_.budgetNote = note + "; the choice is the best of the candidates compiled";
    say(result_.budgetNote);
  }
}

void Search::choose() {
  const std::vector<CandidateResult> &cands = result_.candidates;
  for (size_t s = 0; s < opts_.sizes.size(); ++s) {
    std::optional<size_t> best, other, otherAlgorithm;
    for (size_t i = 0; i < cands.size(); ++i)
      if (cands[i].status == Status::Compiled &&
          (!best || beats(cands[i].times[s].time, i, cands[*best].times[s].time, *best)))
        best = i;
    for (size_t i = 0; i < cands.size(); ++i) {
      if (cands[i].status != Status::Compiled || i == *best)
        continue;
      if (!other || beats(cands[i].times[s].time, i, cands[*other].times[s].time, *other))
        other = i;
      if (cands[i].candidate.algorithm != cands[*best].candidate.algorithm &&
          (!otherAlgorithm || beats(cands[i].times[s].time, i,
                                    cands[*otherAlgorithm].times[s].time, *otherAlgorithm)))
        otherAlgorithm = i;
    }
    result_.choices.push_back({*best, otherAlgorithm ? otherAlgorithm : other});
  }
}

const ir::Plan &Search::planOf(size_t i) {
  auto it = plans_.find(i);
  if (it == plans_.end()) {
    llvm::Expected<ir::Plan> p = compiler::disassemble(result_.candidates[i].plan);
    assert(p && "the child's plan passed the loader");
    it = plans_.emplace(i, std::move(*p)).first;
  }
  return it->second;
}

double Search::timeAt(size_t i, uint64_t bytes, const Context &cx) {
  model::SimOptions so;
  so.bytes = bytes;
  so.elemBytes = opts_.elemBytes;
  so.gamma = cx.gamma;
  so.criticalPath = false;
  llvm::Expected<model::SimResult> r = model::simulate(planOf(i), topo_, cx.placement, so);
  assert(r && "simulated at every size before");
  return r->time;
}

void Search::refineBoundaries(const Context &cx) {
  const std::vector<uint64_t> &sizes = opts_.sizes;
  const uint64_t e = opts_.elemBytes;
  Range cur{0, 0, result_.choices[0].winner};
  for (size_t s = 1; s < sizes.size(); ++s) {
    const size_t a = result_.choices[s - 1].winner, b = result_.choices[s].winner;
    if (a == b)
      continue;
    // a wins at lo, b at hi: halve the gap (geometrically) where they cross,
    // down to 1/64 of the size or one element.
    uint64_t lo = sizes[s - 1], hi = sizes[s];
    while (hi - lo > std::max(e, lo / 64)) {
      if (pastDeadline()) {
        refineCut_ = true;
        break;
      }
      uint64_t m = uint64_t(std::sqrt(double(lo)) * std::sqrt(double(hi))) / e * e;
      m = std::clamp(m, lo + e, hi - e);
      if (beats(timeAt(a, m, cx), a, timeAt(b, m, cx), b))
        lo = m;
      else
        hi = m;
    }
    // Any size in (lo, hi] is as good a boundary: take the roundest.
    const uint64_t edge = roundest(lo, hi, e);
    cur.maxBytes = edge;
    result_.ranges.push_back(cur);
    cur = Range{edge, 0, b};
  }
  cur.maxBytes = rt::bundle::unbounded;
  result_.ranges.push_back(cur);
}

llvm::Expected<TuneResult> Search::run() {
  start_ = opts_.now();
  result_.options = opts_;
  result_.options.progress = nullptr;
  result_.topologyName = topo_.name;
  for (const model::Level &l : topo_.levels)
    result_.levelNames.push_back(l.name);
  if (opts_.sizes.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "no sizes to tune for");
  llvm::Expected<model::Placement> pl = model::place(topo_, opts_.ranks);
  if (!pl)
    return pl.takeError();
  llvm::Expected<std::shared_ptr<const lang::Layout>> layout = layoutOf(topo_, *pl);
  if (!layout)
    return layout.takeError();
  Context cx{topo_, *pl, opts_, {}, topo_.gammaOf(opts_.dtype)};
  cx.shape.ranks = opts_.ranks;
  cx.shape.root = opts_.root;
  cx.shape.layout = *layout;
  cx.shape.maxOps = opts_.candidates.maxOps;

  llvm::Expected<Enumeration> en = enumerate(opts_.collective, cx.shape, opts_.candidates);
  if (!en)
    return en.takeError();
  result_.notFitting = std::move(en->notFitting);
  for (Candidate &c : en->candidates) {
    CandidateResult cr;
    cr.name = c.name;
    cr.candidate = std::move(c);
    result_.candidates.push_back(std::move(cr));
  }
  say(llvm::formatv("{0}, {1} ranks on {2}: {3} candidates ({4} ruled out by the shape), {5} "
                    "sizes from {6} to {7}, budget {8}",
                    ir::name(opts_.collective), opts_.ranks, topo_.name,
                    result_.candidates.size(), result_.notFitting.size(), opts_.sizes.size(),
                    formatBytes(opts_.sizes.front()), formatBytes(opts_.sizes.back()),
                    std::isfinite(opts_.budget) ? seconds(opts_.budget) : std::string("none")));
  if (result_.candidates.empty()) {
    std::string why;
    for (const NotFitting &n : result_.notFitting)
      why += "\n  " + n.name + ": " + n.why;
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("no {0} algorithm fits {1} ranks on {2}{3}", ir::name(opts_.collective),
                      opts_.ranks, topo_.name, why)
            .str());
  }
  compileAll(cx);
  if (llvm::none_of(result_.candidates,
                    [](const CandidateResult &c) { return c.status == Status::Compiled; })) {
    std::string why;
    for (const CandidateResult &c : result_.candidates)
      if (c.status != Status::NotTried)
        why += "\n  " + c.candidate.name + ": " + c.why;
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("no candidate compiled{0}{1}",
                      result_.budgetExhausted ? " within the budget" : "", why)
            .str());
  }
  choose();
  refineBoundaries(cx);
  if (refineCut_) {
    const std::string cut = "the boundaries between size ranges were not all refined "
                            "(the budget ran out)";
    result_.budgetExhausted = true;
    result_.budgetNote += (result_.budgetNote.empty() ? "" : "; ") + cut;
    say(cut);
  }
  say(llvm::formatv("{0} size ranges from {1} compiled candidates",
                    result_.ranges.size(),
                    llvm::count_if(result_.candidates, [](const CandidateResult &c) {
                      return c.status == Status::Compiled;
                    })));
  return std::move(result_);
}

} // namespace

std::vector<size_t> measureCandidates(const TuneResult &r, size_t s, size_t k) {
  std::vector<size_t> order;
  for (size_t i = 0; i < r.candidates.size(); ++i)
    if (r.candidates[i].status == Status::Compiled)
      order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return beats(r.candidates[a].times[s].time, a, r.candidates[b].times[s].time, b);
  });
  if (order.size() > k)
    order.resize(k);
  return order;
}

uint64_t boundaryBetween(uint64_t lo, uint64_t hi, uint64_t e) {
  const uint64_t mid = std::clamp<uint64_t>(
      uint64_t(std::sqrt(double(lo)) * std::sqrt(double(hi))) / e * e, lo + e, hi);
  return roundest(mid - e, std::min(hi, mid + mid / 8 / e * e), e);
}

void applyMeasurements(TuneResult &r, std::vector<Measurement> measured) {
  const std::vector<uint64_t> &sizes = r.options.sizes;
  assert(measured.size() == sizes.size());
  std::vector<size_t> winners;
  for (size_t s = 0; s < measured.size(); ++s) {
    Measurement &m = measured[s];
    m.winner.reset();
    if (m.native < 0) { // not measured (the budget), or native failed: the model's choice
      m.winner = r.choices[s].winner;
      winners.push_back(*m.winner);
      continue;
    }
    double best = m.native;
    for (size_t j = 0; j < m.timed.size(); ++j)
      if (m.times[j] >= 0 && m.times[j] < best) {
        best = m.times[j];
        m.winner = m.timed[j];
      }
    winners.push_back(m.winner ? *m.winner : nativeRange);
  }
  r.measured = std::move(measured);
  r.ranges.clear();
  Range cur{0, 0, winners[0]};
  for (size_t s = 1; s < sizes.size(); ++s) {
    if (winners[s] == winners[s - 1])
      continue;
    const uint64_t edge = boundaryBetween(sizes[s - 1], sizes[s], r.options.elemBytes);
    cur.maxBytes = edge;
    r.ranges.push_back(cur);
    cur = Range{edge, 0, winners[s]};
  }
  cur.maxBytes = rt::bundle::unbounded;
  r.ranges.push_back(cur);
}

llvm::Expected<TuneResult> tune(const model::Topology &topo, const TuneOptions &opts) {
  return Search(topo, opts).run();
}

} // namespace collc::tune
