// dropin/Trust.cpp: which files the drop-in believes (Trust.h).
#include "dropin/Trust.h"

#include <cstdio>
#include <filesystem>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

namespace collc::dropin {

namespace {

namespace fs = std::filesystem;

/// The group `gid` is the private group of the user `uid`: named as the user,
/// with no other members listed.
bool privateGroup(gid_t gid, uid_t uid) {
  const struct group *g = ::getgrgid(gid);
  const struct passwd *p = ::getpwuid(uid);
  if (!g || !p || !g->gr_name || !p->pw_name || std::string(g->gr_name) != p->pw_name)
    return false;
  for (char **m = g->gr_mem; m && *m; ++m)
    if (std::string(*m) != p->pw_name)
      return false;
  return true;
}

std::string mode(mode_t m) {
  char s[8];
  std::snprintf(s, sizeof s, "%04o", unsigned(m & 07777));
  return s;
}

/// Why the one file or folder `p` is not to be believed, or "".
std::string check(const fs::path &p, bool leaf) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0)
    return "";
  const std::string what =
      leaf ? "it" : "'" + p.string() + "' (" + (S_ISDIR(st.st_mode) ? "a folder" : "a file") +
                        " above it)";
  const uid_t me = ::geteuid();
  if (st.st_uid != me && st.st_uid != 0)
    return what + " is owned by another user (uid " + std::to_string(st.st_uid) + ")";
  const bool sticky = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX);
  if ((st.st_mode & S_IWOTH) && !sticky)
    return what + " is writable by every user (mode " + mode(st.st_mode) + ")";
  if ((st.st_mode & S_IWGRP) && !sticky && !privateGroup(st.st_gid, me))
    return what + " is writable by its group (mode " + mode(st.st_mode) + ")";
  return "";
}

bool within(const fs::path &p, const fs::path &folder) {
  auto a = p.begin(), b = folder.begin();
  for (; b != folder.end(); ++a, ++b) {
    if (b->empty()) // a trailing separator
      continue;
    if (a == p.end() || *a != *b)
      return false;
  }
  return true;
}

} // namespace

std::string untrustedBecause(const std::string &path, const std::vector<std::string> &trusted) {
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec || !fs::exists(real, ec))
    return "";
  for (const std::string &t : trusted) {
    const fs::path folder = fs::weakly_canonical(fs::absolute(t, ec), ec);
    if (!ec && within(real, folder))
      return "";
  }
  bool leaf = true;
  for (fs::path p = real;; p = p.parent_path()) {
    if (std::string why = check(p, leaf); !why.empty())
      return why;
    leaf = false;
    if (p == p.root_path() || p.parent_path() == p)
      break;
  }
  return "";
}

std::string untrustedWarning(const std::string &setting, const std::string &path,
                             const std::string &why) {
  return setting + ": '" + path + "' is not read: " + why +
         ", so another user could have written it (COLLC_TRUSTED names folders to read anyway)";
}

} // namespace collc::dropin
