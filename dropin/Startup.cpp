// dropin/Startup.cpp: settings, their comparison across ranks, and the
// COLLC_STATS report (Startup.h).
#include "dropin/Startup.h"

#include "dropin/Requests.h"
#include "runtime/api/Execution.h"
#include "runtime/mpi/Flavour.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace collc::dropin {

namespace {

std::once_flag gOnce;
std::atomic<bool> gComponent{false};

/// A drop-in built for one MPI family preloaded into a program of the other
/// (Open MPI's handles are pointers, MPICH's ints) cannot make a single MPI
/// call on the program's behalf, not even to hand it on: it stops the
/// process before main, naming the library to preload instead
/// (docs/mpi.md). Checked at load, where MPI_Get_library_version may be
/// called; a process that is not an MPI program finds this library's own MPI.
__attribute__((constructor)) void checkFlavour() {
  std::string found;
  if (rt::libraryMatches(&found))
    return;
  std::fprintf(stderr,
               "collc: error: this libcollc_mpi.so was built for %s, but the program runs "
               "'%s'; preload the drop-in built for that MPI (lib/%slibcollc_mpi.so of a "
               "collc build, docs/mpi.md). Stopping before main: no MPI call was made.\n",
               rt::builtFor(), found.c_str(),
               rt::builtFor() == std::string("Open MPI") ? "mpich/" : "");
  std::fflush(stderr);
  _exit(1);
}

uint64_t fnv(uint64_t h, const void *data, size_t n) {
  const auto *p = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < n; ++i)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}
uint64_t fnv(uint64_t h, const std::string &s) { return fnv(fnv(h, s.data(), s.size()), "", 1); }
template <class T> uint64_t fnvValue(uint64_t h, T v) { return fnv(h, &v, sizeof v); }

/// One group of settings that every rank must have alike, hashed (not paths:
/// the same files may be mounted elsewhere on another node).
struct Fingerprint {
  const char *what;
  uint64_t hash;
};

/// The settings that change a decision or what crosses between the ranks.
/// Not compared, because ranks may differ in them harmlessly: COLLC_DEBUG and
/// COLLC_STATS (what a rank prints; the counters are summed either way),
/// COLLC_PROOF_CACHE (what is known about a plan, never which plan runs),
/// COLLC_SHM_SEGMENT (every rank of a node uses its first rank's value, from
/// the region's header), COLLC_SHM_FAST (the direct path moves the same
/// messages as requests do), COLLC_SHM_FAIL (a failure on any rank of a
/// node sends the whole node to MPI) and COLLC_FAULT (the ranks agree on the
/// failures it makes); COLLC_TRANSPORT=shm and auto differ
/// only in warnings.
std::vector<Fingerprint> fingerprints(const Global &g) {
  const uint64_t seed = fnv(0xcbf29ce484222325ull, std::string("collc-dropin/2"));
  std::vector<Fingerprint> f;
  uint64_t h = seed;
  for (const std::string &a : g.config.forced)
    h = fnv(h, a);
  f.push_back({"COLLC_ALGORITHM", h});
  h = seed;
  for (const Rule &r : g.config.rules) {
    h = fnvValue(h, unsigned(r.collective));
    h = fnvValue(h, r.minRanks);
    h = fnvValue(h, r.maxRanks);
    h = fnvValue(h, r.minBytes);
    h = fnvValue(h, r.maxBytes);
    h = fnv(h, r.algorithm);
  }
  f.push_back({"COLLC_RULES", h});
  f.push_back({"COLLC_VERIFY", fnvValue(seed, g.config.verify)});
  f.push_back({"COLLC_ACCEPT_UNPROVEN", fnvValue(seed, g.config.acceptUnproven)});
  h = seed;
  for (const PlanFile &p : g.library.files()) {
    h = fnvValue(h, unsigned(p.collective));
    h = fnvValue(h, p.ranks);
    h = fnvValue(h, p.root);
    h = fnvValue(h, p.minBytes);
    h = fnvValue(h, p.maxBytes);
    h = fnvValue(h, p.crc);
  }
  f.push_back({"the plans in COLLC_PLAN_PATH", h});
  // A rank on MPI alone never joins its peers' shared-memory set-up.
  f.push_back({"COLLC_TRANSPORT",
               fnvValue(seed, g.config.transport.transport == rt::TransportKind::Mpi)});
  // Every rank of a communicator sets up its shared memory at the same call.
  f.push_back({"COLLC_SHM_AFTER", fnvValue(seed, g.config.transport.shmAfter)});
  h = fnvValue(seed, g.config.transport.nodeMap.size());
  for (int n : g.config.transport.nodeMap)
    h = fnvValue(h, n);
  f.push_back({"COLLC_NODE_MAP", h});
  f.push_back({"the libcollc_mpi.so build (its algorithm library)", PlanLibrary::libraryHash()});
  f.push_back({"the algorithms of COLLC_LIBRARY", PlanLibrary::libraryHash(/*user=*/true)});
  return f;
}

/// Compares the settings across MPI_COMM_WORLD (collective) and disables collc
/// if any group differs; says on rank 0 which. Also tells rank 0 whether
/// COLLC_PROOF_CACHE names a folder on every rank.
void compareSettings(Global &g) {
  const std::vector<Fingerprint> f = fingerprints(g);
  const size_t n = f.size();
  const bool cacheMissing = !proofCacheProblem(g.config.proofCache).empty();
  // Each hash and its complement: after MPI_MAX, both are the rank's own
  // only if every rank has the same.
  std::vector<uint64_t> v(2 * n + 1);
  for (size_t i = 0; i < n; ++i) {
    v[i] = f[i].hash;
    v[n + i] = ~f[i].hash;
  }
  v[2 * n] = cacheMissing ? 1 : 0;
  PMPI_Allreduce(MPI_IN_PLACE, v.data(), int(v.size()), MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  g.compared = true;
  std::string differ;
  for (size_t i = 0; i < n; ++i)
    if (v[i] != f[i].hash || v[n + i] != ~f[i].hash)
      differ += (differ.empty() ? "" : ", ") + std::string(f[i].what);
  if (!differ.empty()) {
    g.disabled = true;
    warn(g, "the ranks' collc settings differ (" + differ +
                "); collc is disabled and every collective uses native MPI");
  }
  if (v[2 * n] && !cacheMissing)
    warn(g, "COLLC_PROOF_CACHE='" + g.config.proofCache +
                "' is not a folder on some ranks, which read no proof records");
}

/// The file that defines `fn`, or "" if none does.
std::string objectOf(void *fn) {
  Dl_info info{};
  return fn && dladdr(fn, &info) && info.dli_fname ? info.dli_fname : "";
}

/// PMPI tools (libraries that define MPI_* and call PMPI_*, as profilers and
/// tracers do) preloaded beside collc: the first definition of an MPI
/// function in the process wins. A tool in front of collc calls PMPI_* past
/// it, so collc serves none of those calls; a tool behind collc is passed
/// over by the calls collc intercepts. Either way collc says so, once, with
/// the functions and the tool's file (docs/dropin.md, "PMPI tools").
void checkToolOrder(Global &g) {
  if (gComponent.load(std::memory_order_relaxed))
    return;
  static const char *const names[] = {
      "MPI_Allreduce", "MPI_Reduce", "MPI_Reduce_scatter_block", "MPI_Reduce_scatter",
      "MPI_Scan", "MPI_Exscan", "MPI_Allgather", "MPI_Bcast", "MPI_Iallreduce", "MPI_Ireduce",
      "MPI_Ireduce_scatter_block", "MPI_Ireduce_scatter", "MPI_Iscan", "MPI_Iexscan",
      "MPI_Iallgather", "MPI_Ibcast", "MPI_Alltoall", "MPI_Gather", "MPI_Scatter",
      "MPI_Allgatherv", "MPI_Iallgatherv", "MPI_Ialltoall", "MPI_Igather", "MPI_Iscatter",
      "MPI_Gatherv", "MPI_Scatterv", "MPI_Alltoallv", "MPI_Alltoallw", "MPI_Igatherv", "MPI_Iscatterv",
      "MPI_Ialltoallv", "MPI_Barrier", "MPI_Ibarrier", "MPI_Finalize"};
  // Passed on to the next definition (EntryPoints.cpp): a tool behind collc
  // still sees these.
  auto chained = [](const char *n) { return std::string(n) == "MPI_Finalize"; };
  const std::string self = objectOf(reinterpret_cast<void *>(&checkToolOrder));
  void *own = self.empty() ? nullptr : dlopen(self.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (!own)
    return;
  std::map<std::string, std::string> front, behind; // tool file -> its functions
  for (const char *name : names) {
    void *mine = dlsym(own, name);
    void *first = dlsym(RTLD_DEFAULT, name);
    if (mine && first && first != mine) {
      std::string &list = front[objectOf(first)];
      list += (list.empty() ? "" : ", ") + std::string(name);
      continue;
    }
    const std::string next = objectOf(dlsym(RTLD_NEXT, name));
    const std::string mpi = objectOf(dlsym(RTLD_NEXT, ("P" + std::string(name)).c_str()));
    if (!next.empty() && !mpi.empty() && next != mpi && !chained(name)) {
      std::string &list = behind[next];
      list += (list.empty() ? "" : ", ") + std::string(name);
    }
  }
  dlclose(own);
  for (const auto &[file, fns] : front)
    warn(g, file + " is loaded before libcollc_mpi.so and defines " + fns +
                ": the program's calls reach it, and it passes them to MPI past collc, "
                "which serves none of them (preload libcollc_mpi.so first to have collc "
                "serve them; docs/dropin.md, \"PMPI tools\")");
  for (const auto &[file, fns] : behind)
    warn(g, file + " is loaded after libcollc_mpi.so and defines " + fns +
                ": collc intercepts those calls first and it does not see them "
                "(docs/dropin.md, \"PMPI tools\")");
}

void initialize(bool atInit) {
  auto gp = std::make_unique<Global>();
  Global &g = *gp;
  InternalScope internal;
  PMPI_Comm_rank(MPI_COMM_WORLD, &g.worldRank);
  PMPI_Comm_size(MPI_COMM_WORLD, &g.worldSize);
  PMPI_Query_thread(&g.threadLevel);

  parseBasics([](const char *v) -> const char * { return std::getenv(v); }, g.config);
  if (std::string why = proofCacheProblem(g.config.proofCache); !why.empty())
    g.config.warnings.push_back("COLLC_PROOF_CACHE='" + g.config.proofCache + "': " + why +
                                "; no proof records are read");
  PlanLibrary::addUserAlgorithms(g.config.library, g.config.trusted, g.config.warnings);
  g.library.scan(g.config.planPath, g.config, g.config.warnings);
  const KnownAlgorithms known = g.library.knownAlgorithms();
  parseAlgorithm(std::getenv("COLLC_ALGORITHM"), known, g.config);
  loadRules(std::getenv("COLLC_RULES"), known, g.config);
  for (const std::string &w : g.config.warnings)
    warn(g, w);
  checkToolOrder(g);
  // Checked here, warned about on rank 0: the runtime must not read them again.
  rt::setTransportSettings(g.config.transport);

  if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, collcDeleteState, &g.keyval, nullptr) !=
      MPI_SUCCESS) {
    warn(g, "cannot create an attribute key; collc is disabled");
    g.disabled = true;
    g.keyval = MPI_KEYVAL_INVALID;
  }
  PMPI_Comm_group(MPI_COMM_WORLD, &g.worldGroup);

  using Register = int (*)(int (*)());
  auto reg = reinterpret_cast<Register>(dlsym(RTLD_DEFAULT, "opal_progress_register"));
  auto unreg = reinterpret_cast<Register>(dlsym(RTLD_DEFAULT, "opal_progress_unregister"));
  if (reg && unreg && reg(collcProgress) == 0) {
    g.hook = true;
    g.progressUnregister = unreg;
  }

  // Every rank must decide every call alike, so their settings must agree.
  // (Every rank takes part, also one whose key creation failed above.)
  if (atInit && g.worldSize > 1)
    compareSettings(g);
  if (g.config.debug && g.worldRank == 0) {
    std::string s = "collc " + std::string(g.hook ? "with" : "without") +
                    " a progress hook; thread level " + std::to_string(g.threadLevel) + "; " +
                    std::to_string(g.library.files().size()) + " plan files; " +
                    std::to_string(g.config.rules.size()) + " rules";
    for (unsigned c = 0; c < numColls; ++c)
      if (!g.config.forced[c].empty())
        s += "; " + std::string(name(Coll(c))) + " forced to " + g.config.forced[c];
    if (!g.compared)
      s += "; settings not compared across ranks (MPI_Init was not intercepted)";
    debugLine(g, s);
  }
  gGlobal.store(gp.release(), std::memory_order_release);
  if (atInit) {
    created(MPI_COMM_WORLD);
    created(MPI_COMM_SELF);
  }
}


/// Sums the counters over threads and ranks (collective over MPI_COMM_WORLD)
/// and prints them on rank 0 with COLLC_STATS. Calls are counted once each,
/// by their communicator's rank 0; library plans built, by every rank.
void reportStats(Global &g) {
  const size_t nfiles = g.library.files().size();
  const size_t planCounters = 4 + numGuarantees;
  std::vector<uint64_t> v(numKinds * (1 + numReasons + numSubstitutions) + planCounters, 0);
  std::vector<uint64_t> uses(nfiles, 0);
  double seconds[2] = {0, 0}; // this rank's plan building: summed, then the most of a rank
  {
    std::lock_guard<std::mutex> lock(g.statsMu);
    std::vector<const Stats *> all{&g.exited};
    for (const auto &s : g.stats)
      all.push_back(s.get());
    for (const Stats *s : all) {
      uint64_t *plans = &v[v.size() - planCounters];
      plans[0] += s->rankPlans;
      plans[1] += s->wholePlans;
      plans[2] += s->ownOps;
      plans[3] += s->contextOps;
      for (unsigned u = 0; u < numGuarantees; ++u)
        plans[4 + u] += s->built[u];
      seconds[0] += s->buildSeconds;
      size_t i = 0;
      for (unsigned k = 0; k < numKinds; ++k) {
        v[i++] += s->handled[k];
        for (unsigned r = 0; r < numReasons; ++r)
          v[i++] += s->fallback[k][r];
        for (unsigned u = 0; u < numSubstitutions; ++u)
          v[i++] += s->substituted[k][u];
      }
      for (size_t f = 0; f < nfiles && f < s->fileUses.size(); ++f)
        uses[f] += s->fileUses[f];
    }
  }
  const bool root = g.worldRank == 0;
  PMPI_Reduce(root ? MPI_IN_PLACE : v.data(), v.data(), int(v.size()), MPI_UINT64_T, MPI_SUM,
              0, MPI_COMM_WORLD);
  seconds[1] = seconds[0];
  double sum = 0, most = 0;
  PMPI_Reduce(&seconds[0], &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  PMPI_Reduce(&seconds[1], &most, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  int n[2] = {int(nfiles), -int(nfiles)};
  PMPI_Allreduce(MPI_IN_PLACE, n, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  const bool sameFiles = n[0] == -n[1];
  if (sameFiles && nfiles)
    PMPI_Reduce(root ? MPI_IN_PLACE : uses.data(), uses.data(), int(nfiles), MPI_UINT64_T,
                MPI_SUM, 0, MPI_COMM_WORLD);
  if (!root || !g.config.stats)
    return;
  size_t i = 0;
  for (unsigned k = 0; k < numKinds; ++k) {
    const uint64_t handled = v[i++];
    const uint64_t *fb = &v[i];
    i += numReasons;
    const uint64_t *sub = &v[i];
    i += numSubstitutions;
    uint64_t total = 0;
    for (unsigned r = 0; r < numReasons; ++r)
      total += fb[r];
    // MPI_Allreduce and MPI_Reduce always (as before the other calls were
    // intercepted); every other call once it has been made.
    if (handled + total == 0 && Kind(k) != Kind::Allreduce && Kind(k) != Kind::Reduce)
      continue;
    std::fprintf(stderr, "collc: %s handled=%" PRIu64 " fallback=%" PRIu64 "\n",
                 kindName(Kind(k)), handled, total);
    for (unsigned r = 0; r < numReasons; ++r)
      if (fb[r])
        std::fprintf(stderr, "collc:   fallback %s: %" PRIu64 "\n", text(Reason(r)), fb[r]);
    for (unsigned u = 0; u < numSubstitutions; ++u)
      if (sub[u])
        std::fprintf(stderr, "collc:   substituted %s: %" PRIu64 "\n",
                     text(Substitution(u + 1)), sub[u]);
  }
  // Library plans: how many of each kind, what they cost, which proof covers them.
  const uint64_t *plans = &v[v.size() - planCounters];
  if (plans[0] + plans[1] > 0) {
    std::fprintf(stderr,
                 "collc: library plans built: rank programs=%" PRIu64 " whole plans=%" PRIu64
                 " (own ops %" PRIu64 ", context ops %" PRIu64
                 "; %.3f ms CPU in all, at most %.3f ms on one rank)\n",
                 plans[0], plans[1], plans[2], plans[3], sum * 1e3, most * 1e3);
    for (unsigned u = 0; u < numGuarantees; ++u)
      if (plans[4 + u])
        std::fprintf(stderr, "collc:   %s: %" PRIu64 "\n", text(Guarantee(u)), plans[4 + u]);
  }
  if (sameFiles)
    for (size_t f = 0; f < nfiles; ++f) {
      const PlanFile &pf = g.library.files()[f];
      std::fprintf(stderr, "collc: plan %s (%s %s, %u ranks) used=%" PRIu64 "\n",
                   pf.origin.c_str(), rt::name(pf.collective), pf.algorithm.c_str(),
                   pf.ranks, uses[f]);
    }
  std::fflush(stderr);
}

} // namespace

void setComponentMode() { gComponent.store(true, std::memory_order_relaxed); }

void startAtInit() {
  std::call_once(gOnce, [] { initialize(true); });
}

Global *activeGlobal() {
  Global *g = gGlobal.load(std::memory_order_acquire);
  if (!g) {
    int init = 0, fin = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    if (!init || fin)
      return nullptr;
    std::call_once(gOnce, [] { initialize(false); });
    g = gGlobal.load(std::memory_order_acquire);
  }
  if (!g || g->finalized.load(std::memory_order_relaxed))
    return nullptr;
  return g;
}

void finish(Global &g) {
  // Agreements still in flight (a persistent request made in turn and never
  // started) are finished: MPI_Finalize is collective, every rank is here.
  std::vector<CommState *> live;
  {
    std::lock_guard<std::mutex> lock(g.statsMu);
    live = g.comms;
  }
  for (CommState *cs : live)
    if (cs->window)
      finishTurns(g, *cs);
  reportStats(g);
  reportServed(g);
  // Only where collc's state is attached: a disabled collc attaches none,
  // nor does one that MPI_Init did not start on MPI_COMM_SELF, and deleting
  // an attribute that is not set is an error (MPI_ERR_OTHER, fatal under
  // MPI_COMM_SELF's default MPI_ERRORS_ARE_FATAL).
  if (g.keyval != MPI_KEYVAL_INVALID)
    for (MPI_Comm c : {MPI_COMM_SELF, MPI_COMM_WORLD})
      if (findState(g, c))
        PMPI_Comm_delete_attr(c, g.keyval);
  if (g.hook)
    g.progressUnregister(collcProgress);
  if (g.worldGroup != MPI_GROUP_NULL)
    PMPI_Group_free(&g.worldGroup);
  g.finalized = true;
}

} // namespace collc::dropin
