// tune/Report.cpp: the bundle, rules, report, JSON and summary of a search.
#include "tune/Report.h"

#include "compiler/Disasm.h"
#include "compiler/Lower.h"
#include "runtime/bytecode/Bundle.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace collc::tune {

namespace {

std::string rangeText(const Range &g) {
  return rt::formatByteRange(g.minBytes, g.maxBytes);
}

/// "0 B .. 2 KiB", "2 KiB and up".
std::string rangeForPeople(const Range &g) {
  if (g.maxBytes == rt::bundle::unbounded)
    return formatBytes(g.minBytes) + " and up";
  return formatBytes(g.minBytes) + " .. " + formatBytes(g.maxBytes);
}

const char *operations(bool commutative) { return commutative ? "commutative" : "any"; }

/// The plan a range names in the rules: a candidate's name, or "native".
std::string planOf(const TuneResult &r, const Range &g) {
  return g.candidate == nativeRange ? std::string("native") : r.candidates[g.candidate].name;
}

/// "12.3 us at 8 B .. 45.6 us at 1 KiB": what --measure timed for the range's
/// plan (or native MPI) at the first and last size in it.
std::string measuredIn(const TuneResult &r, const Range &g);

size_t countStatus(const TuneResult &r, Status s) {
  return size_t(std::count_if(r.candidates.begin(), r.candidates.end(),
                              [&](const CandidateResult &c) { return c.status == s; }));
}

/// The sizes (indices) a range's winner was chosen at.
std::vector<size_t> sizesIn(const TuneResult &r, const Range &g) {
  std::vector<size_t> out;
  for (size_t s = 0; s < r.options.sizes.size(); ++s)
    if (r.options.sizes[s] >= g.minBytes && r.options.sizes[s] < g.maxBytes)
      out.push_back(s);
  return out;
}

/// "1.20 us at 8 B .. 3.10 us at 1 KiB": the range's winner at the first and
/// last size it was chosen at.
std::string predictedIn(const TuneResult &r, const Range &g) {
  const std::vector<size_t> in = sizesIn(r, g);
  if (in.empty() || g.candidate == nativeRange)
    return "-";
  const CandidateResult &c = r.candidates[g.candidate];
  auto at = [&](size_t s) {
    return formatSeconds(c.times[s].time) + " at " + formatBytes(r.options.sizes[s]);
  };
  return in.size() == 1 ? at(in.front()) : at(in.front()) + " .. " + at(in.back());
}

/// What --measure timed for candidate `c` (or native: nativeRange) at size
/// index s; negative when it was not timed there.
double measuredAt(const TuneResult &r, size_t c, size_t s) {
  const Measurement &m = r.measured[s];
  if (c == nativeRange)
    return m.native;
  for (size_t j = 0; j < m.timed.size(); ++j)
    if (m.timed[j] == c)
      return m.times[j];
  return -1;
}

std::string measuredIn(const TuneResult &r, const Range &g) {
  const std::vector<size_t> in = sizesIn(r, g);
  if (in.empty() || r.measured.empty())
    return "-";
  auto at = [&](size_t s) {
    const double t = measuredAt(r, g.candidate, s);
    return (t < 0 ? std::string("-") : formatSeconds(t)) + " at " + formatBytes(r.options.sizes[s]);
  };
  return in.size() == 1 ? at(in.front()) : at(in.front()) + " .. " + at(in.back());
}

std::string headline(const TuneResult &r) {
  std::string s = llvm::formatv("{0}, {1} ranks", ir::name(r.options.collective),
                                r.options.ranks)
                      .str();
  if (ir::hasRoot(r.options.collective))
    s += llvm::formatv(", root {0}", r.options.root).str();
  return s + " on " + r.topologyName;
}

std::string percent(double part, double whole) {
  return llvm::formatv("{0}%", whole > 0 ? unsigned(std::lround(100 * part / whole)) : 0u)
      .str();
}

} // namespace

std::string whyAt(const TuneResult &r, size_t s) {
  const Choice &c = r.choices[s];
  const CandidateResult &w = r.candidates[c.winner];
  const std::vector<Term> wt = terms(w.times[s].terms, r.levelNames);
  const double total = w.times[s].time;
  const Term *top = &wt.front();
  for (const Term &t : wt)
    if (t.seconds > top->seconds)
      top = &t;
  std::string why = top->name + " " + percent(top->seconds, total);
  if (!c.runnerUp)
    return why;
  const CandidateResult &o = r.candidates[*c.runnerUp];
  const std::vector<Term> ot = terms(o.times[s].terms, r.levelNames);
  size_t most = 0;
  for (size_t i = 0; i < wt.size(); ++i)
    if (ot[i].seconds - wt[i].seconds > ot[most].seconds - wt[most].seconds)
      most = i;
  const double saved = ot[most].seconds - wt[most].seconds;
  if (o.times[s].time == w.times[s].time)
    return why + "; ties with " + o.name + " (the earlier candidate is kept)";
  if (saved <= 0)
    return why;
  why += "; vs " + o.name + ": " + formatSeconds(saved) + " less " + wt[most].name;
  if (wt[most].key.rfind("alpha.", 0) == 0)
    why += llvm::formatv(" ({0} vs {1} messages)", wt[most].messages, ot[most].messages).str();
  else if (wt[most].key.rfind("beta.", 0) == 0)
    why += " (" + formatBytes(wt[most].bytes) + " vs " + formatBytes(ot[most].bytes) + ")";
  return why;
}

bool hasPlans(const TuneResult &r) {
  return llvm::any_of(r.ranges, [](const Range &g) { return g.candidate != nativeRange; });
}

llvm::Expected<std::vector<uint8_t>> bundleOf(const TuneResult &r) {
  std::vector<rt::BundleEntry> entries;
  for (const Range &g : r.ranges) {
    if (g.candidate == nativeRange) // a rule says native
      continue;
    const CandidateResult &c = r.candidates[g.candidate];
    rt::Proof proof;
    llvm::Expected<ir::Plan> plan = compiler::disassemble(c.plan, &proof);
    if (!plan)
      return plan.takeError();
    plan->algorithm = c.name;
    entries.push_back({g.minBytes, g.maxBytes, compiler::lower(*plan, proof)});
  }
  std::vector<uint8_t> bytes;
  if (rt::Status s = rt::writeBundle(entries, bytes); !s.ok())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot bundle the plans: " + s.message());
  rt::Bundle check; // never hand out a bundle the drop-in would refuse
  if (rt::Status s = rt::readBundle(bytes, check); !s.ok())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the bundle does not read back: " + s.message());
  return bytes;
}

std::string rulesOf(const TuneResult &r, const OutputNames &names) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "# " << names.rules << ": written by collc tune (" << headline(r) << ").\n";
  if (hasPlans(r))
    os << "# Each rule names a plan of " << names.bundle
       << (llvm::any_of(r.ranges, [](const Range &g) { return g.candidate == nativeRange; })
               ? " or native MPI"
               : "")
       << "; load both (docs/tune.md):\n"
       << "#   COLLC_PLAN_PATH=" << names.bundle << " COLLC_RULES=" << names.rules << '\n';
  else
    os << "# Native MPI was measured fastest at every size (no bundle); load the rules "
       << "(docs/tune.md):\n"
       << "#   COLLC_RULES=" << names.rules << '\n';
  os << "format: collc-rules/1\nrules:\n";
  for (const Range &g : r.ranges)
    os << llvm::formatv("  - {collective: {0}, ranks: {1}, bytes: {2}, algorithm: {3}}\n",
                        ir::name(r.options.collective) == "reduce_scatter_block"
                            ? llvm::StringRef("reduce_scatter")
                            : ir::name(r.options.collective),
                        r.options.ranks, rangeText(g), planOf(r, g));
  return os.str();
}

std::string summaryOf(const TuneResult &r) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "tuned " << headline(r) << ": " << countStatus(r, Status::Compiled) << " of "
     << r.candidates.size() << " candidates compiled and proven\n";
  const char *row = "  {0,-16} {1,-34} {2}\n";
  if (r.measured.empty()) {
    os << llvm::formatv(row, "bytes", "plan", "predicted");
    for (const Range &g : r.ranges)
      os << llvm::formatv(row, rangeText(g), planOf(r, g), predictedIn(r, g));
  } else {
    os << llvm::formatv(row, "bytes", "plan", "measured");
    for (const Range &g : r.ranges)
      os << llvm::formatv(row, rangeText(g), planOf(r, g), measuredIn(r, g));
  }
  if (!r.budgetNote.empty())
    os << "budget: " << r.budgetNote << '\n';
  return os.str();
}

std::string reportOf(const TuneResult &r, const OutputNames &names) {
  std::string s;
  llvm::raw_string_ostream os(s);
  const TuneOptions &o = r.options;
  os << "# collc tune: " << headline(r) << "\n\n";
  if (!names.command.empty())
    os << "`" << names.command << "`\n\n";
  os << "- topology: " << r.topologyName << " (`" << names.topologyFile << "`), levels ";
  for (size_t j = 0; j < r.levelNames.size(); ++j)
    os << (j ? ", " : "") << r.levelNames[j];
  os << "\n- sizes: " << o.sizes.size() << " from " << formatBytes(o.sizes.front()) << " to "
     << formatBytes(o.sizes.back()) << " of " << o.dtype << " (" << o.elemBytes
     << "-byte elements)\n";
  os << "- operations: "
     << (o.noncommutative ? "only plans proven for non-commutative operations"
                          : "commutative-only plans allowed (the drop-in serves a "
                            "non-commutative call with an order-preserving plan instead)")
     << '\n';
  os << llvm::formatv("- candidates: {0} enumerated ({1} ruled out by the shape); {2} "
                      "compiled and proven at -O2, {3} duplicates, {4} refused, {5} failed, "
                      "{6} stopped or not tried\n",
                      r.candidates.size(), r.notFitting.size(),
                      countStatus(r, Status::Compiled), countStatus(r, Status::Duplicate),
                      countStatus(r, Status::Refused), countStatus(r, Status::Failed),
                      countStatus(r, Status::Stopped) + countStatus(r, Status::NotTried));
  os << "- budget: "
     << (std::isfinite(o.budget) ? llvm::formatv("{0:f1} s", o.budget).str()
                                 : std::string("none"))
     << "; " << (r.budgetNote.empty() ? "the search finished within it" : r.budgetNote)
     << "\n\n";

  const bool measured = !r.measured.empty();
  os << "## Summary\n\n| bytes | plan | operations | predicted |"
     << (measured ? " measured |\n|---|---|---|---|---|\n" : "\n|---|---|---|---|\n");
  for (const Range &g : r.ranges) {
    const bool native = g.candidate == nativeRange;
    os << "| " << rangeForPeople(g) << " | " << planOf(r, g) << " | "
       << (native ? "any (native MPI)" : operations(r.candidates[g.candidate].commutative))
       << " | " << predictedIn(r, g) << " |";
    if (measured)
      os << " " << measuredIn(r, g) << " |";
    os << '\n';
  }
  if (!r.measured.empty()) {
    os << "\n## Measured\n\nPer size, the candidates the model predicted fastest and "
          "native MPI, timed in the same job, interleaved: the median over rounds of the "
          "slowest rank's time per call. The fastest wins, native included.\n\n"
          "| size | plan | predicted | measured | measured / predicted | winner |\n"
          "|---:|---|---:|---:|---:|---|\n";
    for (size_t i = 0; i < o.sizes.size(); ++i) {
      const Measurement &m = r.measured[i];
      if (m.native < 0) { // the budget ended first: the model's choice stays
        os << "| " << formatBytes(o.sizes[i]) << " | not measured (the model's choice: "
           << r.candidates[r.choices[i].winner].name << ") | | | | |\n";
        continue;
      }
      for (size_t j = 0; j < m.timed.size(); ++j) {
        const CandidateResult &c = r.candidates[m.timed[j]];
        const double p = c.times[i].time, t = m.times[j];
        os << "| " << formatBytes(o.sizes[i]) << " | " << c.name << " | " << formatSeconds(p)
           << " | " << (t < 0 ? std::string("failed") : formatSeconds(t)) << " | "
           << (t < 0 ? std::string("-") : llvm::formatv("{0:f2}", t / p).str()) << " | "
           << (m.winner == m.timed[j] ? "yes" : "") << " |\n";
      }
      os << "| " << formatBytes(o.sizes[i]) << " | native | - | " << formatSeconds(m.native)
         << " | - | " << (m.winner ? "" : "yes") << " |\n";
    }
  }

  os << "\n## Per size\n\nThe winner, the fastest candidate of another algorithm and why: "
        "the winner's largest term of the cost model on its critical path, and the term "
        "the runner-up spends most on beyond it.\n\n"
        "| size | winner | predicted | runner-up | predicted | ratio | why |\n"
        "|---:|---|---:|---|---:|---:|---|\n";
  for (size_t i = 0; i < o.sizes.size(); ++i) {
    const Choice &c = r.choices[i];
    const CandidateResult &w = r.candidates[c.winner];
    os << "| " << formatBytes(o.sizes[i]) << " | " << w.name << " | "
       << formatSeconds(w.times[i].time) << " | ";
    if (c.runnerUp) {
      const CandidateResult &u = r.candidates[*c.runnerUp];
      os << u.name << " | " << formatSeconds(u.times[i].time) << " | "
         << llvm::format("%.2f", u.times[i].time / w.times[i].time);
    } else {
      os << "- | - | -";
    }
    os << " | " << whyAt(r, i) << " |\n";
  }

  os << "\n## Candidates\n\n| candidate | plan | status | ops | messages | operations | "
        "wins at |\n|---|---|---|---:|---:|---|---:|\n";
  for (size_t i = 0; i < r.candidates.size(); ++i) {
    const CandidateResult &c = r.candidates[i];
    const size_t wins = size_t(std::count_if(r.choices.begin(), r.choices.end(),
                                             [&](const Choice &ch) { return ch.winner == i; }));
    os << "| " << c.candidate.name << " | " << c.name << " | " << name(c.status);
    if (!c.why.empty())
      os << ": " << c.why;
    if (c.status == Status::Compiled)
      os << " | " << c.ops << " | " << c.messages << " | " << operations(c.commutative) << " | "
         << wins << " |\n";
    else
      os << " | | | | |\n";
  }
  if (llvm::any_of(r.candidates, [](const CandidateResult &c) { return !c.undone.empty(); })) {
    os << "\n## Passes undone\n\nAn -O2 pass whose proven result the simulator predicted "
          "slower at one of the sizes was undone; the plan kept its input.\n\n| plan | pass "
          "undone |\n|---|---|\n";
    for (const CandidateResult &c : r.candidates)
      for (const std::string &u : c.undone)
        os << "| " << c.name << " | " << u << " |\n";
  }
  if (!r.notFitting.empty()) {
    os << "\n## Ruled out by the shape\n\n| candidate | why |\n|---|---|\n";
    for (const NotFitting &n : r.notFitting)
      os << "| " << n.name << " | " << n.why << " |\n";
  }
  os << "\n## Using it\n\n```sh\nmpirun -n " << o.ranks
     << " -x LD_PRELOAD=$PREFIX/lib/libcollc_mpi.so -x COLLC_PLAN_PATH=" << names.bundle;
  if (!names.rules.empty())
    os << " -x COLLC_RULES=" << names.rules;
  os << " ./app\n```\n";
  return os.str();
}

namespace {

/// A JSON writer with two-space indents; keys in the order written.
class Json {
public:
  explicit Json(llvm::raw_ostream &os) : os_(os) {}
  void open(char bracket) {
    item();
    os_ << bracket;
    firsts_.push_back(true);
  }
  void close(char bracket) {
    const bool empty = firsts_.back();
    firsts_.pop_back();
    if (!empty)
      os_ << '\n' << std::string(2 * firsts_.size(), ' ');
    os_ << bracket;
  }
  void key(llvm::StringRef k) {
    item();
    str(k);
    os_ << ": ";
    keyed_ = true;
  }
  void string(llvm::StringRef v) { item(), str(v); }
  void number(double v) { item(), scalar(v); }
  void integer(uint64_t v) { item(), os_ << v; }
  /// [a, b, c] on one line.
  template <typename T> void row(const std::vector<T> &values) {
    item();
    os_ << '[';
    for (size_t i = 0; i < values.size(); ++i) {
      os_ << (i ? ", " : "");
      scalar(values[i]);
    }
    os_ << ']';
  }
  void boolean(bool v) { item(), os_ << (v ? "true" : "false"); }
  void null() { item(), os_ << "null"; }

private:
  void scalar(uint64_t v) { os_ << v; }
  void scalar(double v) {
    if (!std::isfinite(v)) {
      os_ << "null";
      return;
    }
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", v);
    os_ << text;
  }
  void item() {
    if (keyed_) {
      keyed_ = false;
      return;
    }
    if (firsts_.empty())
      return;
    if (!firsts_.back())
      os_ << ',';
    firsts_.back() = false;
    os_ << '\n' << std::string(2 * firsts_.size(), ' ');
  }
  void str(llvm::StringRef v) {
    os_ << '"';
    for (unsigned char c : v) {
      if (c == '"' || c == '\\')
        os_ << '\\' << c;
      else if (c < 0x20)
        os_ << llvm::format("\\u%04x", c);
      else
        os_ << c;
    }
    os_ << '"';
  }
  llvm::raw_ostream &os_;
  std::vector<bool> firsts_;
  bool keyed_ = false;
};

} // namespace

std::string jsonOf(const TuneResult &r) {
  std::string s;
  llvm::raw_string_ostream os(s);
  const TuneOptions &o = r.options;
  Json j(os);
  j.open('{');
  j.key("format"), j.string("collc-tune/1");
  j.key("collective"), j.string(ir::name(o.collective));
  j.key("ranks"), j.integer(o.ranks);
  if (ir::hasRoot(o.collective))
    j.key("root"), j.integer(o.root);
  j.key("topology"), j.string(r.topologyName);
  j.key("levels"), j.open('[');
  for (const std::string &l : r.levelNames)
    j.string(l);
  j.close(']');
  j.key("dtype"), j.string(o.dtype);
  j.key("elem_bytes"), j.integer(o.elemBytes);
  j.key("noncommutative"), j.boolean(o.noncommutative);
  j.key("budget"), j.open('{');
  j.key("seconds");
  if (std::isfinite(o.budget))
    j.number(o.budget);
  else
    j.null();
  j.key("exhausted"), j.boolean(r.budgetExhausted);
  j.key("note"), j.string(r.budgetNote);
  j.close('}');
  j.key("sizes"), j.row(o.sizes);
  j.key("candidates"), j.open('[');
  for (const CandidateResult &c : r.candidates) {
    j.open('{');
    j.key("name"), j.string(c.candidate.name);
    j.key("plan"), j.string(c.name);
    j.key("algorithm"), j.string(c.candidate.algorithm->name);
    j.key("params"), j.open('{');
    for (const auto &[k, v] : c.candidate.params)
      if (v.isAlgorithm())
        j.key(k), j.string(lang::formatParamValue(v));
      else
        j.key(k), j.integer(uint64_t(v.number));
    j.close('}');
    j.key("segments"), j.integer(c.candidate.segments);
    j.key("status"), j.string(name(c.status));
    j.key("why"), j.string(c.why);
    if (c.status == Status::Compiled) {
      j.key("ops"), j.integer(c.ops);
      j.key("messages"), j.integer(c.messages);
      j.key("commutative"), j.boolean(c.commutative);
      std::vector<double> times;
      for (const SizeTime &t : c.times)
        times.push_back(t.time);
      j.key("times"), j.row(times);
      j.key("undone"), j.open('[');
      for (const std::string &u : c.undone)
        j.string(u);
      j.close(']');
    }
    j.close('}');
  }
  j.close(']');
  j.key("choices"), j.open('[');
  for (size_t i = 0; i < r.choices.size(); ++i) {
    const Choice &c = r.choices[i];
    const CandidateResult &w = r.candidates[c.winner];
    j.open('{');
    j.key("bytes"), j.integer(o.sizes[i]);
    j.key("winner"), j.string(w.name);
    j.key("time"), j.number(w.times[i].time);
    if (c.runnerUp) {
      j.key("runner_up"), j.string(r.candidates[*c.runnerUp].name);
      j.key("runner_up_time"), j.number(r.candidates[*c.runnerUp].times[i].time);
    }
    j.key("terms"), j.open('{');
    for (const Term &t : terms(w.times[i].terms, r.levelNames))
      j.key(t.key), j.number(t.seconds);
    j.close('}');
    j.key("why"), j.string(whyAt(r, i));
    j.close('}');
  }
  j.close(']');
  j.key("ranges"), j.open('[');
  for (const Range &g : r.ranges) {
    j.open('{');
    j.key("min_bytes"), j.integer(g.minBytes);
    j.key("max_bytes");
    if (g.maxBytes == rt::bundle::unbounded)
      j.null();
    else
      j.integer(g.maxBytes);
    j.key("plan"), j.string(planOf(r, g));
    j.close('}');
  }
  j.close(']');
  if (!r.measured.empty()) {
    j.key("measured"), j.open('[');
    for (size_t i = 0; i < r.measured.size(); ++i) {
      const Measurement &m = r.measured[i];
      j.open('{');
      j.key("bytes"), j.integer(o.sizes[i]);
      j.key("native"), j.number(m.native);
      j.key("plans"), j.open('[');
      for (size_t k = 0; k < m.timed.size(); ++k) {
        j.open('{');
        j.key("plan"), j.string(r.candidates[m.timed[k]].name);
        j.key("predicted"), j.number(r.candidates[m.timed[k]].times[i].time);
        j.key("measured");
        if (m.times[k] < 0)
          j.null();
        else
          j.number(m.times[k]);
        j.close('}');
      }
      j.close(']');
      j.key("winner"), j.string(m.winner ? r.candidates[*m.winner].name : std::string("native"));
      j.close('}');
    }
    j.close(']');
  }
  j.key("not_fitting"), j.open('[');
  for (const NotFitting &n : r.notFitting) {
    j.open('{');
    j.key("name"), j.string(n.name);
    j.key("why"), j.string(n.why);
    j.close('}');
  }
  j.close(']');
  j.close('}');
  os << '\n';
  return os.str();
}

} // namespace collc::tune
