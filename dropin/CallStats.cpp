// dropin/CallStats.cpp: COLLC_STATS's calls per communicator — which
// algorithm served how many calls of each kind at which sizes, counted once
// per call by the communicator's rank 0, and gathered to rank 0 of
// MPI_COMM_WORLD at MPI_Finalize (State.h, Served).
#include "dropin/State.h"

#include "ir/Wording.h"

#include <algorithm>
#include <cstdio>

namespace collc::dropin {

namespace {

/// "0-3,8,10-11": a sorted list of ranks as ranges.
std::string rankRanges(const std::vector<int> &ranks) {
  std::string s;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
      ++j;
    if (!s.empty())
      s += ",";
    if (s.size() > 60) {
      s += "...";
      break;
    }
    s += std::to_string(ranks[i]);
    if (j > i)
      s += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return s;
}

/// What the report calls `cs`: its MPI name (MPI_COMM_WORLD, MPI_COMM_SELF
/// or one the program set) and its members. `cs.comm` is still valid.
std::string label(const CommState &cs) {
  char name[MPI_MAX_OBJECT_NAME] = {};
  int len = 0;
  std::string n;
  if (PMPI_Comm_get_name(cs.comm, name, &len) == MPI_SUCCESS && len > 0)
    n = std::string(name, size_t(len));
  if (n == "MPI_COMM_WORLD")
    return n;
  if (n.empty())
    return cs.members.starts_with("world") ? "the communicator of " + cs.members : cs.members;
  return cs.members.starts_with("world") ? n + " of " + cs.members : n + " (" + cs.members + ")";
}

/// The communicator's lines of the report (empty if it served no call).
std::string servedText(const CommState &cs) {
  if (cs.served.empty())
    return {};
  std::string s = "collc: " + label(cs) + ", " + ir::counted(uint64_t(cs.size), "rank") + "\n";
  for (const Served &l : cs.served) {
    s += "collc:   " + std::string(kindName(l.kind)) + " by " + l.by + ": " +
         ir::counted(l.calls, "call");
    if (l.minBytes <= l.maxBytes) {
      s += ", " + ir::bytesText(l.minBytes);
      if (l.maxBytes != l.minBytes)
        s += " to " + ir::bytesText(l.maxBytes);
    }
    s += "\n";
  }
  return s;
}

} // namespace

std::string commMembers(const std::vector<int> &worldRanks, bool inter) {
  if (worldRanks.empty())
    return inter ? "an inter-communicator" : "a communicator spanning another MPI_COMM_WORLD";
  std::vector<int> sorted = worldRanks;
  std::sort(sorted.begin(), sorted.end());
  return (sorted.size() == 1 ? "world rank " : "world ranks ") + rankRanges(sorted);
}

void countServed(CommState &cs, Kind k, std::string_view by, int64_t bytes) {
  if (!cs.counts)
    return;
  // A communicator has a line per (kind, algorithm) it used: a few.
  auto line = std::find_if(cs.served.begin(), cs.served.end(),
                           [&](const Served &l) { return l.kind == k && l.by == by; });
  if (line == cs.served.end())
    line = cs.served.insert(line, Served{k, std::string(by)});
  ++line->calls;
  if (bytes >= 0) {
    line->minBytes = std::min(line->minBytes, uint64_t(bytes));
    line->maxBytes = std::max(line->maxBytes, uint64_t(bytes));
  }
}

void listState(Global &g, CommState &cs) {
  std::lock_guard<std::mutex> lock(g.statsMu);
  g.comms.push_back(&cs);
}

void retireState(Global &g, CommState &cs) {
  std::lock_guard<std::mutex> lock(g.statsMu);
  g.comms.erase(std::remove(g.comms.begin(), g.comms.end(), &cs), g.comms.end());
  // Kept for the report only: without COLLC_STATS a program that makes and
  // frees communicators for ever must not grow.
  if (g.config.stats)
    g.retired += servedText(cs);
}

void reportServed(Global &g) {
  std::string mine;
  {
    std::lock_guard<std::mutex> lock(g.statsMu);
    for (const CommState *cs : g.comms) // MPI_COMM_WORLD first: made first
      mine += servedText(*cs);
    mine += g.retired;
  }
  // Collective over MPI_COMM_WORLD: every rank sends its text, rank 0 prints.
  const bool root = g.worldRank == 0;
  int len = int(mine.size());
  std::vector<int> lens(root ? size_t(g.worldSize) : 0), offsets(lens.size());
  if (PMPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
    return;
  std::string all;
  if (root) {
    size_t total = 0;
    for (size_t r = 0; r < lens.size(); ++r) {
      offsets[r] = int(total);
      total += size_t(lens[r]);
    }
    all.resize(total);
  }
  if (PMPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(), MPI_CHAR,
                   0, MPI_COMM_WORLD) != MPI_SUCCESS ||
      !root || !g.config.stats || all.empty())
    return;
  std::fprintf(stderr, "collc: calls per communicator (each call once, whatever its ranks):\n%s",
               all.c_str());
}

} // namespace collc::dropin
