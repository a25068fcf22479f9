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

namespace {

void addStats(Stats &into, const Stats &from) {
  for (unsigned k = 0; k < numKinds; ++k) {
    into.handled[k] += from.handled[k];
    for (unsigned r = 0; r < numReasons; ++r)
      into.fallback[k][r] += from.fallback[k][r];
    for (unsigned u = 0; u < numSubstitutions; ++u)
      into.substituted[k][u] += from.substituted[k][u];
  }
  if (into.fileUses.size() < from.fileUses.size())
    into.fileUses.resize(from.fileUses.size(), 0);
  for (size_t f = 0; f < from.fileUses.size(); ++f)
    into.fileUses[f] += from.fileUses[f];
  into.rankPlans += from.rankPlans;
  into.wholePlans += from.wholePlans;
  for (unsigned u = 0; u < numGuarantees; ++u)
    into.built[u] += from.built[u];
  into.ownOps += from.ownOps;
  into.contextOps += from.contextOps;
  into.buildSeconds += from.buildSeconds;
}

/// A thread's counters, folded into Global::exited when the thread ends: a
/// program that starts threads without end must not grow.
struct StatsOwner {
  Global *g = nullptr;
  ~StatsOwner() {
    if (!g || !tlStats || g->finalized.load())
      return;
    std::lock_guard<std::mutex> lock(g->statsMu);
    for (auto it = g->stats.begin(); it != g->stats.end(); ++it)
      if (it->get() == tlStats) {
        addStats(g->exited, **it);
        g->stats.erase(it);
        break;
      }
    tlStats = nullptr;
  }
};
thread_local StatsOwner tlStatsOwner;

} // namespace

Stats &stats(Global &g) {
  if (!tlStats) {
    auto s = std::make_unique<Stats>();
    s->fileUses.assign(g.library.files().size(), 0);
    tlStats = s.get();
    tlStatsOwner.g = &g;
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
