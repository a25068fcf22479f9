// dropin/State.cpp: the drop-in's process-wide state, counters and messages.
#include "dropin/State.h"

#include <cstdio>

namespace collc::dropin {

std::atomic<Global *> gGlobal{nullptr};
thread_local constinit bool tlInternal = false;

namespace {
thread_local Stats *tlStats = nullptr;
} // namespace

const char *kindName(Kind k) {
  static const char *const names[] = {
#define COLLC_X(E, N, C, M) N,
      COLLC_KINDS(COLLC_X)
#undef COLLC_X
  };
  return names[unsigned(k)];
}

Coll collOf(Kind k) {
  static const Coll colls[] = {
#define COLLC_X(E, N, C, M) Coll::C,
      COLLC_KINDS(COLLC_X)
#undef COLLC_X
  };
  return colls[unsigned(k)];
}

Mode modeOf(Kind k) {
  static const Mode modes[] = {
#define COLLC_X(E, N, C, M) Mode::M,
      COLLC_KINDS(COLLC_X)
#undef COLLC_X
  };
  return modes[unsigned(k)];
}

const char *text(Reason r) {
  static const char *const texts[] = {
#define COLLC_X(E, T) T,
      COLLC_REASONS(COLLC_X)
#undef COLLC_X
  };
  return texts[unsigned(r)];
}

const char *text(Substitution s) {
  switch (s) {
  case Substitution::NeedsCommutative:
    return "order-preserving plan for a non-commutative operation";
  case Substitution::NoSuchPlan:
    return "default plan: the named algorithm has no plan here";
  case Substitution::Unverified:
    return "default plan: the chosen plan did not verify";
  case Substitution::DoesNotFit:
    return "default plan: the named algorithm does not fit the communicator";
  case Substitution::None:
    break;
  }
  return "";
}

Stats &stats(Global &g) {
  if (!tlStats) {
    auto s = std::make_unique<Stats>();
    s->fileUses.assign(g.library.files().size(), 0);
    tlStats = s.get();
    std::lock_guard<std::mutex> lock(g.statsMu);
    g.stats.push_back(std::move(s));
  }
  return *tlStats;
}

// --- messages ----------------------------------------------------------------------

void warn(Global &g, const std::string &t, bool rank0) {
  if (rank0 && g.worldRank != 0)
    return;
  std::lock_guard<std::mutex> lock(g.logMu);
  if (!g.warned.insert(t).second)
    return;
  std::fprintf(stderr, "collc: warning: %s\n", t.c_str());
  std::fflush(stderr);
}

void debugLine(Global &g, const std::string &t) {
  std::fprintf(stderr, "collc: [rank %d] %s\n", g.worldRank, t.c_str());
}

} // namespace collc::dropin
