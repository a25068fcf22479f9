// fuzz/EnvFuzzer.cpp: libFuzzer target for the drop-in's environment
// settings (dropin/Config.cpp; scripts/fuzz env).
//
// Each input is an environment: lines `NAME=VALUE` (a name given twice: the
// last line counts; other names are ignored), read for COLLC_DEBUG,
// COLLC_STATS, COLLC_VERIFY, COLLC_ACCEPT_UNPROVEN, COLLC_PLAN_PATH and
// COLLC_ALGORITHM. Properties: parsing never crashes or hits undefined
// behaviour (ASan/UBSan) and never fails — a bad value is one warning naming
// its variable and leaves the default: a flag set only when its value says so
// (1/true/yes/on in any case); COLLC_PLAN_PATH's folders non-empty, without
// ':' or surrounding blanks, in the order written; COLLC_ALGORITHM either
// ignored whole with one warning or every forced algorithm known for its
// collective, and the accepted setting written back parses to the same.
#include "dropin/Config.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strings.h>
#include <map>
#include <string>

using namespace collc::dropin;

namespace {

[[noreturn]] void fail(const char *what, const std::string &detail) {
  std::fprintf(stderr, "env fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

const KnownAlgorithms &known() {
  static const KnownAlgorithms k = [] {
    KnownAlgorithms k;
    k.names[unsigned(Coll::Allreduce)] = {"binary_tree", "rabenseifner", "recursive_doubling",
                                          "ring", "ring-4.cplan"};
    k.names[unsigned(Coll::Reduce)] = {"binary_tree", "binomial"};
    return k;
  }();
  return k;
}

const char *const flagNames[] = {"COLLC_DEBUG", "COLLC_STATS", "COLLC_VERIFY",
                                 "COLLC_ACCEPT_UNPROVEN"};

bool says(const std::string &value, const char *word) {
  size_t a = 0, b = value.size();
  while (a < b && (value[a] == ' ' || value[a] == '\t'))
    ++a;
  while (b > a && (value[b - 1] == ' ' || value[b - 1] == '\t' || value[b - 1] == '\r'))
    --b;
  return b - a == std::strlen(word) && strncasecmp(value.c_str() + a, word, b - a) == 0;
}

bool saysTrue(const std::string &v) {
  return says(v, "1") || says(v, "true") || says(v, "yes") || says(v, "on");
}

bool saysFalse(const std::string &v) {
  return says(v, "") || says(v, "0") || says(v, "false") || says(v, "no") || says(v, "off");
}

void checkBasics(const std::map<std::string, std::string> &env) {
  Config c;
  parseBasics(
      [&](const char *var) -> const char * {
        auto it = env.find(var);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      c);
  const bool flags[] = {c.debug, c.stats, c.verify, c.acceptUnproven};
  size_t warnings = 0;
  for (int i = 0; i < 4; ++i) {
    auto it = env.find(flagNames[i]);
    const bool set = it != env.end() && saysTrue(it->second);
    if (flags[i] != set)
      fail("a flag does not follow its value", flagNames[i]);
    if (it == env.end() || set || saysFalse(it->second))
      continue;
    if (warnings >= c.warnings.size() ||
        c.warnings[warnings].rfind(std::string(flagNames[i]) + "='", 0) != 0)
      fail("a bad value without its warning", flagNames[i]);
    ++warnings;
  }
  // The transport's settings (runtime/shm/TransportSettings) warn after the
  // flags, each naming a variable that is set.
  for (size_t i = warnings; i < c.warnings.size(); ++i) {
    bool named = false;
    for (const char *var : {"COLLC_TRANSPORT", "COLLC_SHM_SEGMENT", "COLLC_SHM_FAST",
                            "COLLC_SHM_AFTER", "COLLC_NODE_MAP", "COLLC_FAULT"})
      named = named || (env.count(var) && c.warnings[i].find(var) != std::string::npos);
    if (!named)
      fail("a warning for no bad value", c.warnings[i]);
  }
  // COLLC_FAULT: a warning exactly when the value does not parse, and then
  // no failure is injected.
  size_t faults = 0;
  for (const std::vector<int> &f : c.faults)
    faults += f.size();
  auto fault = env.find("COLLC_FAULT");
  bool faultWarned = false;
  for (const std::string &w : c.warnings)
    faultWarned = faultWarned || w.rfind("COLLC_FAULT='", 0) == 0;
  if (fault == env.end() ? faults != 0 || faultWarned : faultWarned && faults != 0)
    fail("COLLC_FAULT injects and warns at once, or injects unset", "");
  if (fault != env.end() && !faultWarned && faults == 0 && !says(fault->second, ""))
    fail("COLLC_FAULT neither injects nor warns", fault->second);
  auto path = env.find("COLLC_PLAN_PATH");
  if (path == env.end() && !c.planPath.empty())
    fail("plan folders from nowhere", c.planPath.front());
  size_t from = 0;
  for (const std::string &dir : c.planPath) {
    if (dir.empty() || dir.find(':') != std::string::npos || dir.front() == ' ' ||
        dir.back() == ' ' || dir.front() == '\t' || dir.back() == '\t')
      fail("a malformed plan folder", dir);
    const size_t at = path->second.find(dir, from);
    if (at == std::string::npos)
      fail("a plan folder not in COLLC_PLAN_PATH, or out of order", dir);
    from = at + dir.size();
  }
}

void checkAlgorithm(const char *value) {
  Config c;
  c.forced[0] = "stale";
  parseAlgorithm(value, known(), c);
  if (!c.warnings.empty()) {
    if (c.warnings.size() != 1 || c.warnings[0].rfind("COLLC_ALGORITHM='", 0) != 0)
      fail("COLLC_ALGORITHM refused without one warning naming it", c.warnings.back());
    for (const std::string &f : c.forced)
      if (!f.empty())
        fail("a forced algorithm left by a refused COLLC_ALGORITHM", f);
    return;
  }
  std::string again;
  for (unsigned i = 0; i < numColls; ++i) {
    if (c.forced[i].empty())
      continue;
    if (!known().contains(Coll(i), c.forced[i]))
      fail("an unknown algorithm forced", c.forced[i]);
    again += (again.empty() ? "" : ",") + std::string(name(Coll(i))) + ":" + c.forced[i];
  }
  Config c2;
  parseAlgorithm(again.c_str(), known(), c2);
  if (!c2.warnings.empty())
    fail("an accepted COLLC_ALGORITHM written back is refused", again + ": " + c2.warnings[0]);
  for (unsigned i = 0; i < numColls; ++i)
    if (c2.forced[i] != c.forced[i])
      fail("an accepted COLLC_ALGORITHM written back reads differently", again);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // NUL cannot be part of an environment value: it ends the line's value.
  std::map<std::string, std::string> env;
  const std::string text(reinterpret_cast<const char *>(data), size);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos)
      end = text.size();
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    const size_t eq = line.find('=');
    if (eq == std::string::npos)
      continue;
    env[line.substr(0, eq)] = line.substr(eq + 1).c_str();
  }
  checkBasics(env);
  auto alg = env.find("COLLC_ALGORITHM");
  checkAlgorithm(alg == env.end() ? nullptr : alg->second.c_str());
  return 0;
}
