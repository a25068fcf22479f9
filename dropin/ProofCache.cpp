// dropin/ProofCache.cpp: proof records (ProofCache.h).
#include "dropin/ProofCache.h"

#include "dropin/Config.h"
#include "dropin/Trust.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace collc::dropin {

namespace {

namespace fs = std::filesystem;

/// The format's rank limit (docs/bytecode.md).
constexpr uint32_t maxRecordRanks = 1u << 20;

// --- SHA-256 (FIPS 180-4) ------------------------------------------------------

constexpr uint32_t sha256K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

uint32_t rotr(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

void sha256Block(uint32_t h[8], const unsigned char *p) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = uint32_t(p[4 * i]) << 24 | uint32_t(p[4 * i + 1]) << 16 |
           uint32_t(p[4 * i + 2]) << 8 | uint32_t(p[4 * i + 3]);
  for (int i = 16; i < 64; ++i) {
    const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (int i = 0; i < 64; ++i) {
    const uint32_t t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) +
                        sha256K[i] + w[i];
    const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    k = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

// --- the text form -----------------------------------------------------------------

std::string paramsText(const std::vector<std::pair<std::string, int64_t>> &params) {
  if (params.empty())
    return "none";
  std::string s;
  for (const auto &[k, v] : params)
    s += (s.empty() ? "" : ",") + k + "=" + std::to_string(v);
  return s;
}

std::string rootsText(const std::vector<uint32_t> &roots) {
  std::string s;
  for (size_t i = 0; i < roots.size();) {
    size_t j = i;
    while (j + 1 < roots.size() && roots[j + 1] == roots[j] + 1)
      ++j;
    s += (s.empty() ? "" : ",") + std::to_string(roots[i]);
    if (j > i)
      s += ".." + std::to_string(roots[j]);
    i = j + 1;
  }
  return s;
}

/// A decimal number below 2^32, canonical (no leading zeros but "0").
bool parseU32(std::string_view s, uint32_t &v) {
  uint64_t x = 0;
  if ((s.size() > 1 && s[0] == '0') || !parseDecimal(s, UINT32_MAX, x))
    return false;
  v = uint32_t(x);
  return true;
}

/// A decimal int64, canonical ("-0" is not).
bool parseI64(std::string_view s, int64_t &v) {
  const bool neg = !s.empty() && s[0] == '-';
  if (neg)
    s.remove_prefix(1);
  uint64_t x = 0;
  if ((s.size() > 1 && s[0] == '0') || (neg && s == "0") || !parseDecimal(s, INT64_MAX, x))
    return false;
  v = neg ? -int64_t(x) : int64_t(x);
  return true;
}

bool isName(std::string_view s) {
  if (s.empty() || s.size() > 128)
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

bool readFile(const std::string &path, std::string &out, std::string &error) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st))
    return false;
  if (!fs::is_regular_file(st)) {
    error = "is not a regular file";
    return true;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = std::string("cannot be read: ") + std::strerror(errno);
    return true;
  }
  // A record is a few hundred bytes: more is not a record.
  constexpr size_t limit = 1 << 20;
  out.assign(std::istreambuf_iterator<char>(in), {});
  if (out.size() > limit)
    error = "is larger than a record can be (" + std::to_string(out.size()) + " bytes)";
  return true;
}

bool sameKey(const ProofKey &a, const ProofKey &b) {
  return a.algorithm == b.algorithm && a.collective == b.collective &&
         a.sourceHash == b.sourceHash && a.ranks == b.ranks && a.params == b.params;
}

} // namespace

std::string sha256Hex(std::string_view bytes) {
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const auto *p = reinterpret_cast<const unsigned char *>(bytes.data());
  size_t n = bytes.size();
  for (; n >= 64; n -= 64, p += 64)
    sha256Block(h, p);
  unsigned char tail[128] = {};
  std::memcpy(tail, p, n);
  tail[n] = 0x80;
  const size_t blocks = n + 9 > 64 ? 2 : 1;
  const uint64_t bits = uint64_t(bytes.size()) * 8;
  for (int i = 0; i < 8; ++i)
    tail[blocks * 64 - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
  for (size_t b = 0; b < blocks; ++b)
    sha256Block(h, tail + 64 * b);
  char out[65];
  for (int i = 0; i < 8; ++i)
    std::snprintf(out + 8 * i, 9, "%08x", h[i]);
  return std::string(out, 64);
}

std::string recordFileName(const ProofKey &key) {
  std::string name = key.collective + "-" + key.algorithm + "-" + key.sourceHash.substr(0, 16);
  if (!key.params.empty()) {
    name += "-";
    for (const auto &[k, v] : key.params)
      name += k + "=" + std::to_string(v) + (k == key.params.back().first ? "" : ",");
  }
  return name + "-p" + std::to_string(key.ranks) + ".proof";
}

std::string formatRecord(const ProofRecord &r) {
  std::string s = "format: collc-proof/1\n";
  s += "algorithm: " + r.key.algorithm + "\n";
  s += "collective: " + r.key.collective + "\n";
  s += "source: sha256:" + r.key.sourceHash + "\n";
  s += "pipeline: " + r.pipeline + "\n";
  s += "ranks: " + std::to_string(r.key.ranks) + "\n";
  s += "params: " + paramsText(r.key.params) + "\n";
  s += "roots: " + rootsText(r.roots) + "\n";
  s += std::string("operations: ") + (r.anyAssociative ? "any" : "commutative") + "\n";
  s += std::string("in_place: ") + (r.inPlace ? "yes" : "no") + "\n";
  s += std::string("identical: ") + (r.identical ? "yes" : "no") + "\n";
  return s;
}

bool parseRecord(std::string_view text, ProofRecord &out, std::string &error) {
  static const char *const keys[] = {"format",  "algorithm", "collective", "source",
                                     "pipeline", "ranks",    "params",     "roots",
                                     "operations", "in_place", "identical"};
  constexpr size_t numKeys = sizeof keys / sizeof keys[0];
  ProofRecord r;
  size_t line = 0, pos = 0;
  auto fail = [&](const std::string &why) {
    error = "line " + std::to_string(line) + ": " + why;
    return false;
  };
  auto yesNo = [&](std::string_view v, bool &b) {
    if (v != "yes" && v != "no")
      return fail("expected yes or no, got '" + std::string(v) + "'");
    b = v == "yes";
    return true;
  };
  for (size_t k = 0; k < numKeys; ++k) {
    ++line;
    if (pos >= text.size())
      return fail(std::string("missing '") + keys[k] + ":' (the record ends early)");
    const size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos)
      return fail("the line does not end (a record ends with a newline)");
    const std::string_view l = text.substr(pos, nl - pos);
    pos = nl + 1;
    const std::string prefix = std::string(keys[k]) + ": ";
    if (l.substr(0, prefix.size()) != prefix)
      return fail(std::string("expected '") + keys[k] + ": ...'");
    const std::string_view v = l.substr(prefix.size());
    switch (k) {
    case 0:
      if (v != "collc-proof/1")
        return fail("format '" + std::string(v) + "' is not collc-proof/1");
      break;
    case 1:
      if (!isName(v))
        return fail("algorithm '" + std::string(v) + "' is not a name");
      r.key.algorithm = v;
      break;
    case 2:
      if (!isName(v))
        return fail("collective '" + std::string(v) + "' is not a name");
      r.key.collective = v;
      break;
    case 3: {
      const std::string_view tag = "sha256:";
      if (v.substr(0, tag.size()) != tag || v.size() != tag.size() + 64 ||
          v.substr(tag.size()).find_first_not_of("0123456789abcdef") != std::string_view::npos)
        return fail("expected sha256: and 64 lowercase hex digits");
      r.key.sourceHash = v.substr(tag.size());
      break;
    }
    case 4:
      if (v.empty())
        return fail("empty pipeline");
      r.pipeline = v;
      break;
    case 5:
      if (!parseU32(v, r.key.ranks) || r.key.ranks < 1 || r.key.ranks > maxRecordRanks)
        return fail("ranks '" + std::string(v) + "' is not a rank count (1.." +
                    std::to_string(maxRecordRanks) + ")");
      break;
    case 6:
      if (v != "none") {
        std::string_view rest = v;
        while (true) {
          const size_t comma = rest.find(',');
          const std::string_view item = rest.substr(0, comma);
          const size_t eq = item.find('=');
          int64_t value = 0;
          if (eq == std::string_view::npos || !isName(item.substr(0, eq)) ||
              !parseI64(item.substr(eq + 1), value))
            return fail("parameter '" + std::string(item) + "' is not name=value");
          const std::string name(item.substr(0, eq));
          if (!r.key.params.empty() && r.key.params.back().first >= name)
            return fail("parameters must be sorted by name, each once");
          r.key.params.emplace_back(name, value);
          if (comma == std::string_view::npos)
            break;
          rest = rest.substr(comma + 1);
        }
      }
      break;
    case 7: {
      std::string_view rest = v;
      while (true) {
        const size_t comma = rest.find(',');
        const std::string_view item = rest.substr(0, comma);
        const size_t dots = item.find("..");
        uint32_t a = 0, b = 0;
        if (!parseU32(item.substr(0, dots), a) ||
            (dots != std::string_view::npos && !parseU32(item.substr(dots + 2), b)))
          return fail("roots: '" + std::string(item) + "' is not a root or a range A..B");
        if (dots == std::string_view::npos)
          b = a;
        if (b < a || b >= r.key.ranks || (!r.roots.empty() && a <= r.roots.back()))
          return fail("roots: '" + std::string(item) +
                      "' is out of order or out of range (ranks = " +
                      std::to_string(r.key.ranks) + ")");
        for (uint64_t x = a; x <= b; ++x)
          r.roots.push_back(uint32_t(x));
        if (comma == std::string_view::npos)
          break;
        rest = rest.substr(comma + 1);
      }
      break;
    }
    case 8:
      if (v != "any" && v != "commutative")
        return fail("operations '" + std::string(v) + "' is not any or commutative");
      r.anyAssociative = v == "any";
      break;
    case 9:
      if (!yesNo(v, r.inPlace))
        return false;
      break;
    case 10:
      if (!yesNo(v, r.identical))
        return false;
      break;
    }
  }
  if (pos != text.size()) {
    ++line;
    return fail("unexpected text after 'identical:'");
  }
  out = std::move(r);
  return true;
}

Lookup lookupProof(const std::string &dir, const ProofKey &key, uint32_t root,
                   const ProofNeeds &needs, std::string &why,
                   const std::vector<std::string> *trusted) {
  if (dir.empty())
    return Lookup::Absent;
  const std::string path = (fs::path(dir) / recordFileName(key)).string();
  std::string text, error;
  if (!readFile(path, text, error))
    return Lookup::Absent;
  if (trusted)
    if (const std::string distrust = untrustedBecause(path, *trusted); !distrust.empty()) {
      why = untrustedWarning("COLLC_PROOF_CACHE", path, distrust) + "; it is not used";
      return Lookup::Invalid;
    }
  auto invalid = [&](const std::string &reason) {
    why = "COLLC_PROOF_CACHE: '" + path + "' " + reason + "; it is not used";
    return Lookup::Invalid;
  };
  if (!error.empty())
    return invalid(error);
  ProofRecord r;
  if (!parseRecord(text, r, error))
    return invalid("is not a proof record (" + error + ")");
  if (!sameKey(r.key, key))
    return invalid("is a record of another algorithm text or shape (" + r.key.collective + " " +
                   r.key.algorithm + ", p = " + std::to_string(r.key.ranks) +
                   ", source sha256:" + r.key.sourceHash.substr(0, 16) + "...)");
  if (r.pipeline != proofPipeline)
    return invalid("is a record of another compilation (pipeline " + r.pipeline + ", this " +
                   "collc compiles with " + std::string(proofPipeline) + ")");
  if ((needs.anyAssociative && !r.anyAssociative) || (needs.inPlace && !r.inPlace) ||
      (needs.identical && !r.identical))
    return invalid("proves less than the plan claims (operations: " +
                   std::string(r.anyAssociative ? "any" : "commutative") +
                   ", in_place: " + (r.inPlace ? "yes" : "no") +
                   ", identical: " + (r.identical ? "yes" : "no") + ")");
  if (!std::binary_search(r.roots.begin(), r.roots.end(), root))
    return Lookup::NotRoot;
  return Lookup::Proven;
}

bool writeProof(const std::string &dir, ProofRecord r, std::string &error) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    error = "cannot create '" + dir + "': " + ec.message();
    return false;
  }
  std::sort(r.roots.begin(), r.roots.end());
  r.roots.erase(std::unique(r.roots.begin(), r.roots.end()), r.roots.end());
  const fs::path path = fs::path(dir) / recordFileName(r.key);
  std::string text, readError;
  ProofRecord old;
  if (readFile(path.string(), text, readError) && readError.empty() &&
      parseRecord(text, old, readError) && sameKey(old.key, r.key) &&
      old.pipeline == r.pipeline && old.anyAssociative == r.anyAssociative &&
      old.inPlace == r.inPlace && old.identical == r.identical) {
    std::vector<uint32_t> merged;
    std::set_union(old.roots.begin(), old.roots.end(), r.roots.begin(), r.roots.end(),
                   std::back_inserter(merged));
    r.roots = std::move(merged);
  }
  const fs::path tmp = path.string() + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << formatRecord(r);
    out.close();
    if (!out) {
      error = "cannot write '" + tmp.string() + "'";
      fs::remove(tmp, ec);
      return false;
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    error = "cannot rename '" + tmp.string() + "' to '" + path.string() + "': " + ec.message();
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

} // namespace collc::dropin
