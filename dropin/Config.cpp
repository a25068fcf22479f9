// dropin/Config.cpp: environment variables and rules files.
//
// The rules file is a small, fixed subset of YAML (docs/dropin.md): top-level
// `format:` and `rules:`, the rules a block sequence whose items are block
// mappings (`- key: value` then indented `key: value` lines) or one-line flow
// mappings (`- {key: value, ...}`), `#` comments. The runtime links no YAML
// library, so it is read here line by line; anything outside the subset is an
// error naming file:line, never a guess.
#include "dropin/Config.h"

#include "dropin/Trust.h"

#include "runtime/bytecode/ReadFile.h"
#include "runtime/bytecode/Bundle.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

namespace collc::dropin {

const char *name(Coll c) {
  static const char *const names[numColls] = {
      "allreduce", "reduce", "reduce_scatter", "scan",   "exscan",
      "allgather", "bcast",  "alltoall",       "gather", "scatter", "barrier"};
  return names[unsigned(c)];
}

const char *collNames() {
  return "allreduce, reduce, reduce_scatter, scan, exscan, allgather, bcast, alltoall, gather, "
         "scatter or barrier";
}

rt::Collective toRt(Coll c) {
  static const rt::Collective colls[numColls] = {
      rt::Collective::Allreduce, rt::Collective::Reduce,    rt::Collective::ReduceScatterBlock,
      rt::Collective::Scan,      rt::Collective::Exscan,    rt::Collective::Allgather,
      rt::Collective::Bcast,     rt::Collective::Alltoall,  rt::Collective::Gather,
      rt::Collective::Scatter,   rt::Collective::Barrier};
  return colls[unsigned(c)];
}

bool KnownAlgorithms::contains(Coll c, std::string_view n) const {
  const auto &v = names[unsigned(c)];
  return n == nativeAlgorithm || std::find(v.begin(), v.end(), n) != v.end();
}

std::string KnownAlgorithms::list(Coll c) const {
  std::string s;
  for (const std::string &n : names[unsigned(c)])
    s += (s.empty() ? "" : ", ") + n;
  return s + (s.empty() ? "" : ", ") + std::string(nativeAlgorithm);
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char &c : r)
    if (c >= 'A' && c <= 'Z')
      c = char(c - 'A' + 'a');
  return r;
}

/// A collective's name; "reduce_scatter_block" (the plans' name) is
/// reduce_scatter too.
std::optional<Coll> collOf(std::string_view s) {
  if (s == "reduce_scatter_block")
    return Coll::ReduceScatter;
  for (unsigned c = 0; c < numColls; ++c)
    if (s == name(Coll(c)))
      return Coll(c);
  return std::nullopt;
}

void parseFlag(const GetEnv &env, const char *var, bool &flag, Config &config) {
  const char *v = env(var);
  if (!v)
    return;
  const std::string s = lower(trim(v));
  if (s == "1" || s == "true" || s == "yes" || s == "on")
    flag = true;
  else if (s.empty() || s == "0" || s == "false" || s == "no" || s == "off")
    flag = false;
  else
    config.warnings.push_back(std::string(var) + "='" + v +
                              "' is not 0 or 1 (or true/false, yes/no, on/off); using 0");
}

bool parseUint32(std::string_view s, uint32_t &v) {
  uint64_t x = 0;
  if (!parseDecimal(s, UINT32_MAX, x))
    return false;
  v = uint32_t(x);
  return true;
}

/// "8", "2-8", "9-": inclusive rank counts.
bool parseRanks(std::string_view s, uint32_t &lo, uint32_t &hi) {
  const size_t dash = s.find('-');
  if (dash == std::string_view::npos) {
    if (!parseUint32(s, lo) || lo == 0)
      return false;
    hi = lo;
    return true;
  }
  std::string_view a = s.substr(0, dash), b = s.substr(dash + 1);
  lo = 1;
  hi = UINT32_MAX;
  if (!a.empty() && !parseUint32(a, lo))
    return false;
  if (!b.empty() && !parseUint32(b, hi))
    return false;
  return lo >= 1 && lo <= hi;
}

// --- the rules reader ----------------------------------------------------------

struct Pair {
  std::string key, value;
  unsigned line;
};

class RulesReader {
public:
  RulesReader(const std::string &file, const KnownAlgorithms &known,
              std::vector<std::string> &errors)
      : file_(file), known_(known), errors_(errors) {}

  void read(std::string_view text, std::vector<Rule> &rules) {
    unsigned lineNo = 0;
    size_t pos = 0;
    while (pos <= text.size()) {
      size_t end = text.find('\n', pos);
      if (end == std::string_view::npos)
        end = text.size();
      line(++lineNo, text.substr(pos, end - pos), rules);
      pos = end + 1;
    }
    finishItem(rules);
    if (!sawFormat_)
      error(1, "missing 'format: collc-rules/1'");
    if (!sawRules_)
      error(1, "missing 'rules:' (a list of rules, or [] for none)");
  }

private:
  void error(unsigned line, const std::string &m) {
    if (errors_.size() < 20)
      errors_.push_back(file_ + ":" + std::to_string(line) + ": " + m);
    else if (errors_.size() == 20)
      errors_.push_back(file_ + ": (more errors not shown)");
  }

  /// "key: value" or "key:"; false (after an error) otherwise.
  bool splitPair(unsigned lineNo, std::string_view s, Pair &p) {
    size_t colon = s.find(':');
    while (colon != std::string_view::npos && colon + 1 < s.size() && s[colon + 1] != ' ' &&
           s[colon + 1] != '\t')
      colon = s.find(':', colon + 1);
    if (colon == std::string_view::npos) {
      error(lineNo, "expected 'key: value', got '" + std::string(s) + "'");
      return false;
    }
    p.key = std::string(trim(s.substr(0, colon)));
    std::string_view v = trim(s.substr(colon + 1));
    if (v.size() >= 2 && ((v.front() == '"' && v.back() == '"') ||
                          (v.front() == '\'' && v.back() == '\'')))
      v = v.substr(1, v.size() - 2);
    p.value = std::string(v);
    p.line = lineNo;
    if (p.key.empty()) {
      error(lineNo, "expected 'key: value', got '" + std::string(s) + "'");
      return false;
    }
    return true;
  }

  void line(unsigned lineNo, std::string_view raw, std::vector<Rule> &rules) {
    // Comments: '#' at the start or after blanks.
    for (size_t i = 0; i < raw.size(); ++i)
      if (raw[i] == '#' && (i == 0 || raw[i - 1] == ' ' || raw[i - 1] == '\t')) {
        raw = raw.substr(0, i);
        break;
      }
    size_t indent = 0;
    while (indent < raw.size() && (raw[indent] == ' ' || raw[indent] == '\t')) {
      if (raw[indent] == '\t') {
        error(lineNo, "a tab in the indentation (YAML allows spaces only)");
        return;
      }
      ++indent;
    }
    std::string_view s = trim(raw.substr(indent));
    if (s.empty())
      return;
    if (s == "---" && indent == 0)
      return;
    const bool item = s[0] == '-' && (s.size() == 1 || s[1] == ' ');
    if (indent == 0 && !item) {
      finishItem(rules);
      inRules_ = false;
      Pair p;
      if (!splitPair(lineNo, s, p))
        return;
      if (p.key == "format") {
        sawFormat_ = true;
        if (p.value != "collc-rules/1")
          error(lineNo, "format '" + p.value + "' is not supported (expected collc-rules/1)");
      } else if (p.key == "rules") {
        sawRules_ = true;
        if (p.value == "[]")
          return;
        if (!p.value.empty()) {
          error(lineNo, "'rules:' takes a list of rules on the lines below it");
          return;
        }
        inRules_ = true;
      } else {
        error(lineNo, "unknown key '" + p.key + "' (expected format, rules)");
      }
      return;
    }
    if (!inRules_) {
      error(lineNo, "this line is not inside 'rules:'");
      return;
    }
    if (item) {
      finishItem(rules);
      inItem_ = true;
      itemLine_ = lineNo;
      itemIndent_ = indent;
      pairs_.clear();
      std::string_view rest = trim(s.substr(1));
      if (rest.empty())
        return;
      if (rest.front() == '{') {
        if (rest.back() != '}') {
          error(lineNo, "a flow mapping '{...}' must end on the same line");
          inItem_ = false;
          return;
        }
        rest = rest.substr(1, rest.size() - 2);
        size_t p = 0;
        while (p <= rest.size()) {
          size_t comma = rest.find(',', p);
          if (comma == std::string_view::npos)
            comma = rest.size();
          std::string_view field = trim(rest.substr(p, comma - p));
          if (!field.empty()) {
            Pair pair;
            if (splitPair(lineNo, field, pair))
              pairs_.push_back(pair);
          } else if (comma < rest.size()) {
            error(lineNo, "an empty field in '{...}'");
          }
          p = comma + 1;
        }
        finishItem(rules);
        return;
      }
      Pair pair;
      if (splitPair(lineNo, rest, pair))
        pairs_.push_back(pair);
      return;
    }
    if (!inItem_ || indent <= itemIndent_) {
      error(lineNo, "expected a rule ('- collective: ...')");
      return;
    }
    Pair pair;
    if (splitPair(lineNo, s, pair))
      pairs_.push_back(pair);
  }

  void finishItem(std::vector<Rule> &rules) {
    if (!inItem_)
      return;
    inItem_ = false;
    Rule r;
    r.where = file_ + ":" + std::to_string(itemLine_);
    const Pair *coll = nullptr, *alg = nullptr;
    bool ok = true;
    std::vector<std::string> seen;
    for (const Pair &p : pairs_) {
      if (std::find(seen.begin(), seen.end(), p.key) != seen.end()) {
        error(p.line, "'" + p.key + "' given twice in one rule");
        ok = false;
        continue;
      }
      seen.push_back(p.key);
      if (p.key == "collective") {
        coll = &p;
      } else if (p.key == "algorithm") {
        alg = &p;
      } else if (p.key == "ranks") {
        if (!parseRanks(p.value, r.minRanks, r.maxRanks)) {
          error(p.line, "ranks '" + p.value + "': expected N, A-B or A- (rank counts, A <= B)");
          ok = false;
        }
      } else if (p.key == "bytes") {
        if (!rt::parseByteRange(p.value, r.minBytes, r.maxBytes)) {
          error(p.line, "bytes '" + p.value +
                            "': expected MIN-MAX, MIN- or -MAX in bytes with optional K/M/G "
                            "(KiB/MiB/GiB) suffixes, MIN < MAX, MAX excluded (e.g. 0-2K, 2K-)");
          ok = false;
        }
      } else {
        error(p.line, "unknown key '" + p.key + "' (expected collective, ranks, bytes, algorithm)");
        ok = false;
      }
    }
    if (!coll) {
      error(itemLine_, std::string("the rule has no 'collective:' (") + collNames() + ")");
      ok = false;
    } else if (auto c = collOf(coll->value)) {
      r.collective = *c;
    } else {
      error(coll->line, "unknown collective '" + coll->value + "' (expected " + collNames() +
                            "; each covers its non-blocking and persistent forms too)");
      coll = nullptr;
      ok = false;
    }
    if (!alg) {
      error(itemLine_, "the rule has no 'algorithm:'");
      ok = false;
    } else if (coll && !known_.contains(r.collective, alg->value)) {
      error(alg->line, "unknown " + std::string(name(r.collective)) + " algorithm '" +
                           alg->value + "' (known: " + known_.list(r.collective) + ")");
      ok = false;
    }
    if (ok) {
      r.algorithm = alg->value;
      rules.push_back(std::move(r));
    }
  }

  const std::string &file_;
  const KnownAlgorithms &known_;
  std::vector<std::string> &errors_;
  bool sawFormat_ = false, sawRules_ = false, inRules_ = false, inItem_ = false;
  unsigned itemLine_ = 0;
  size_t itemIndent_ = 0;
  std::vector<Pair> pairs_;
};


/// The folders of a ':'-separated list (COLLC_PLAN_PATH, COLLC_LIBRARY), blanks
/// trimmed, empty entries dropped; none for null.
std::vector<std::string> pathList(const char *value) {
  std::vector<std::string> out;
  if (!value)
    return out;
  std::string_view s = value;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t colon = s.find(':', pos);
    if (colon == std::string_view::npos)
      colon = s.size();
    std::string_view dir = trim(s.substr(pos, colon - pos));
    if (!dir.empty())
      out.emplace_back(dir);
    pos = colon + 1;
  }
  return out;
}
} // namespace

const char *name(Fault f) {
  static const char *const names[numFaults] = {"setup", "build", "load", "tags", "memory"};
  return names[unsigned(f)];
}

bool parseFaults(std::string_view value, std::vector<int> (&faults)[numFaults],
                 std::string &problem) {
  std::vector<int> out[numFaults];
  size_t pos = 0;
  while (pos <= value.size()) {
    size_t end = value.find(',', pos);
    if (end == std::string_view::npos)
      end = value.size();
    const std::string_view item = trim(value.substr(pos, end - pos));
    const size_t at = item.find('@');
    const std::string_view what = at == std::string_view::npos ? item : item.substr(0, at);
    unsigned kind = numFaults;
    for (unsigned k = 0; k < numFaults; ++k)
      if (what == name(Fault(k)))
        kind = k;
    uint64_t rank = 0;
    if (kind == numFaults) {
      problem = "'" + std::string(item) +
                "' does not start with setup, build, load, tags or memory";
      return false;
    }
    if (at == std::string_view::npos || !parseDecimal(item.substr(at + 1), INT32_MAX, rank)) {
      problem = "'" + std::string(item) + "' is not WHAT@RANK (a world rank)";
      return false;
    }
    out[kind].push_back(int(rank));
    pos = end + 1;
  }
  for (unsigned k = 0; k < numFaults; ++k)
    faults[k] = std::move(out[k]);
  return true;
}

bool parseDecimal(std::string_view s, uint64_t maxValue, uint64_t &v) {
  if (s.empty() || s.size() > 19)
    return false;
  uint64_t x = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return false;
    x = x * 10 + uint64_t(c - '0');
  }
  if (x > maxValue)
    return false;
  v = x;
  return true;
}

void parseBasics(const GetEnv &env, Config &config) {
  parseFlag(env, "COLLC_DEBUG", config.debug, config);
  parseFlag(env, "COLLC_STATS", config.stats, config);
  parseFlag(env, "COLLC_VERIFY", config.verify, config);
  parseFlag(env, "COLLC_ACCEPT_UNPROVEN", config.acceptUnproven, config);
  config.proofCache.clear();
  if (const char *c = env("COLLC_PROOF_CACHE"))
    config.proofCache = std::string(trim(c));
  config.transport = rt::readTransportSettings(env, config.warnings);
  for (std::vector<int> &f : config.faults)
    f.clear();
  if (const char *f = env("COLLC_FAULT"); f && !trim(f).empty()) {
    std::string problem;
    if (!parseFaults(trim(f), config.faults, problem))
      config.warnings.push_back("COLLC_FAULT='" + std::string(f) + "': " + problem +
                                "; no failure is injected");
  }
  config.planPath = pathList(env("COLLC_PLAN_PATH"));
  config.library = pathList(env("COLLC_LIBRARY"));
  config.trusted = pathList(env("COLLC_TRUSTED"));
}

std::string proofCacheProblem(const std::string &dir) {
  if (dir.empty())
    return "";
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0)
    return std::strerror(errno);
  return S_ISDIR(st.st_mode) ? "" : "not a folder";
}

void parseAlgorithm(const char *value, const KnownAlgorithms &known, Config &config) {
  for (std::string &f : config.forced)
    f.clear();
  if (!value || trim(value).empty())
    return;
  const std::string_view s = value;
  std::string forced[numColls];
  std::string problem;
  size_t pos = 0;
  while (pos <= s.size() && problem.empty()) {
    size_t comma = s.find(',', pos);
    if (comma == std::string_view::npos)
      comma = s.size();
    std::string_view entry = trim(s.substr(pos, comma - pos));
    pos = comma + 1;
    if (entry.empty())
      continue;
    const size_t colon = entry.find(':');
    if (colon == std::string_view::npos) {
      problem = "'" + std::string(entry) + "' is not COLLECTIVE:ALGORITHM";
      break;
    }
    std::string_view cs = trim(entry.substr(0, colon)), as = trim(entry.substr(colon + 1));
    std::optional<Coll> c = collOf(cs);
    if (!c) {
      problem = "unknown collective '" + std::string(cs) + "' (expected " + collNames() + ")";
    } else if (as.empty()) {
      problem = "no algorithm after '" + std::string(cs) + ":'";
    } else if (!known.contains(*c, as)) {
      problem = "unknown " + std::string(name(*c)) + " algorithm '" + std::string(as) +
                "' (known: " + known.list(*c) + ")";
    } else if (!forced[unsigned(*c)].empty()) {
      problem = std::string(name(*c)) + " is given twice";
    } else {
      forced[unsigned(*c)] = std::string(as);
    }
  }
  if (!problem.empty()) {
    config.warnings.push_back("COLLC_ALGORITHM='" + std::string(s) + "': " + problem +
                              "; COLLC_ALGORITHM is ignored");
    return;
  }
  for (unsigned i = 0; i < numColls; ++i)
    config.forced[i] = std::move(forced[i]);
}

bool parseRules(std::string_view text, const std::string &file, const KnownAlgorithms &known,
                std::vector<Rule> &rules, std::vector<std::string> &errors) {
  rules.clear();
  const size_t before = errors.size();
  std::vector<Rule> parsed;
  RulesReader(file, known, errors).read(text, parsed);
  if (errors.size() != before)
    return false;
  rules = std::move(parsed);
  return true;
}

void loadRules(const char *value, const KnownAlgorithms &known, Config &config) {
  config.rules.clear();
  config.rulesFile.clear();
  if (!value || trim(value).empty())
    return;
  const std::string path(trim(value));
  if (const std::string why = untrustedBecause(path, config.trusted); !why.empty()) {
    config.warnings.push_back(untrustedWarning("COLLC_RULES", path, why) + "; no rules apply");
    return;
  }
  std::vector<uint8_t> bytes;
  if (rt::Status s = rt::readRegularFile(path, bytes); !s.ok()) {
    config.warnings.push_back("COLLC_RULES='" + path + "': cannot read the file (" +
                              s.message() + "); no rules apply");
    return;
  }
  const std::string text(bytes.begin(), bytes.end());
  std::vector<std::string> errors;
  std::vector<Rule> rules;
  if (!parseRules(text, path, known, rules, errors)) {
    std::string w = "COLLC_RULES='" + path + "' is not a valid rules file; no rules apply:";
    for (const std::string &e : errors)
      w += "\n  " + e;
    config.warnings.push_back(w);
    return;
  }
  config.rules = std::move(rules);
  config.rulesFile = path;
}

} // namespace collc::dropin
