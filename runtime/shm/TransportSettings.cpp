// runtime/shm/TransportSettings.cpp: COLLC_TRANSPORT, COLLC_SHM_SEGMENT,
// COLLC_SHM_FAST, COLLC_SHM_AFTER and COLLC_NODE_MAP (TransportSettings.h).
#include "runtime/shm/TransportSettings.h"

#include <cerrno>
#include <cstdlib>
#include <string_view>

namespace collc::rt {

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

void readTransport(const char *v, TransportSettings &s, std::vector<std::string> &warnings) {
  const std::string t = lower(trim(v));
  if (t.empty() || t == "auto")
    s.transport = TransportKind::Auto;
  else if (t == "shm")
    s.transport = TransportKind::Shm;
  else if (t == "mpi")
    s.transport = TransportKind::Mpi;
  else
    warnings.push_back("COLLC_TRANSPORT='" + std::string(v) + "' is not auto, shm or mpi; using auto");
}

/// Digits with an optional K, M or G suffix (powers of 1024), at most 2^40.
bool parseSize(std::string_view s, uint64_t &bytes) {
  uint64_t x = 0;
  size_t i = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    x = x * 10 + uint64_t(s[i] - '0');
    if (x > (uint64_t(1) << 40))
      return false;
  }
  if (i == 0)
    return false;
  unsigned shift = 0;
  if (i < s.size()) {
    const char u = s[i++];
    shift = u == 'K' || u == 'k' ? 10 : u == 'M' || u == 'm' ? 20 : u == 'G' || u == 'g' ? 30 : 64;
    if (shift == 64 || i != s.size())
      return false;
  }
  if (x > ((uint64_t(1) << 40) >> shift))
    return false;
  bytes = x << shift;
  return true;
}

void readSegment(const char *v, TransportSettings &s, std::vector<std::string> &warnings) {
  const std::string_view t = trim(v);
  if (t.empty())
    return;
  const std::string head = "COLLC_SHM_SEGMENT='" + std::string(v) + "' ";
  const std::string tail = "; using 32K";
  uint64_t b = 0;
  if (!parseSize(t, b))
    warnings.push_back(head + "is not a size in bytes (digits with an optional K or M suffix, "
                              "such as 32K)" + tail);
  else if (b < 4096 || b > (16u << 20))
    warnings.push_back(head + "is " + std::to_string(b) + " bytes, not from 4K to 16M" + tail);
  else if (b % 64)
    warnings.push_back(head + "is not a multiple of 64 bytes" + tail);
  else
    s.shmSegmentBytes = uint32_t(b);
}

void readFast(const char *v, TransportSettings &s, std::vector<std::string> &warnings) {
  const std::string t = lower(trim(v));
  if (t.empty() || t == "1" || t == "true" || t == "yes" || t == "on")
    s.shmFast = true;
  else if (t == "0" || t == "false" || t == "no" || t == "off")
    s.shmFast = false;
  else
    warnings.push_back("COLLC_SHM_FAST='" + std::string(v) +
                       "' is not 0 or 1 (or true/false, yes/no, on/off); using 1");
}

void readAfter(const char *v, TransportSettings &s, std::vector<std::string> &warnings) {
  const std::string_view t = trim(v);
  if (t.empty())
    return;
  uint64_t n = 0;
  bool ok = t.size() <= 10;
  for (char c : t)
    ok = ok && c >= '0' && c <= '9';
  if (ok)
    for (char c : t)
      n = n * 10 + uint64_t(c - '0');
  if (!ok || n > maxShmAfter)
    warnings.push_back("COLLC_SHM_AFTER='" + std::string(v) +
                       "' is not a number of calls from 0 to 1000000000; using " +
                       std::to_string(defaultShmAfter));
  else
    s.shmAfter = uint32_t(n);
}

} // namespace

bool parseNodeMap(const char *text, std::vector<int> &map, std::string &why) {
  map.clear();
  if (!text || !*text)
    return true;
  const std::string notList =
      "COLLC_NODE_MAP='" + std::string(text) + "' is not a list of node numbers (0,0,1,1)";
  const char *p = text;
  while (*p) {
    char *end = nullptr;
    errno = 0;
    long v = *p >= '0' && *p <= '9' ? std::strtol(p, &end, 10) : -1;
    if (v < 0 || end == p || errno || v > 1000000) {
      why = notList;
      map.clear();
      return false;
    }
    map.push_back(int(v));
    p = end;
    if (*p == ',' && p[1]) {
      ++p;
    } else if (*p) {
      why = notList;
      map.clear();
      return false;
    }
  }
  // A map of N ranks has at most N nodes: numbered 0 .. N-1.
  for (size_t r = 0; r < map.size(); ++r)
    if (size_t(map[r]) >= map.size()) {
      why = "COLLC_NODE_MAP='" + std::string(text) + "': rank " + std::to_string(r) +
            "'s node " + std::to_string(map[r]) + " is not below " +
            std::to_string(map.size()) + " (a map of " + std::to_string(map.size()) +
            " ranks numbers its nodes from 0 to " + std::to_string(map.size() - 1) + ")";
      map.clear();
      return false;
    }
  return true;
}

TransportSettings readTransportSettings(const TransportGetEnv &env,
                                        std::vector<std::string> &warnings) {
  TransportSettings s;
  if (const char *v = env("COLLC_TRANSPORT"))
    readTransport(v, s, warnings);
  if (const char *v = env("COLLC_SHM_SEGMENT"))
    readSegment(v, s, warnings);
  if (const char *v = env("COLLC_SHM_FAST"))
    readFast(v, s, warnings);
  if (const char *v = env("COLLC_SHM_AFTER"))
    readAfter(v, s, warnings);
  std::string why;
  if (!parseNodeMap(env("COLLC_NODE_MAP"), s.nodeMap, why))
    warnings.push_back(why + "; COLLC_NODE_MAP is ignored");
  return s;
}

} // namespace collc::rt
