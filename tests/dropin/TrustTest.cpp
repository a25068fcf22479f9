// tests/dropin/TrustTest.cpp: which files the drop-in believes (Trust.h) —
// owner and mode of the file and of every folder above it, the sticky-bit
// exception, COLLC_TRUSTED, symbolic links followed — and a proof record
// another user could have written refused by lookupProof.
#include "dropin/ProofCache.h"
#include "dropin/Trust.h"
#include "tests/dropin/TempDir.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace collc::dropin;
namespace fs = std::filesystem;

namespace {

std::string writeFile(const fs::path &p, const std::string &text) {
  std::ofstream(p) << text;
  return p.string();
}

} // namespace

TEST(Trust, OwnFilesInOwnFoldersAreBelieved) {
  const fs::path d = collc::test::freshDir("trust-own");
  ::chmod(d.c_str(), 0755);
  const std::string f = writeFile(d / "a.cplan", "x");
  ::chmod(f.c_str(), 0644);
  EXPECT_EQ(untrustedBecause(f, {}), "");
  EXPECT_EQ(untrustedBecause(d.string(), {}), "");
  EXPECT_EQ(untrustedBecause((d / "missing").string(), {}), "") << "the reader reports it";
  fs::remove_all(d);
}

TEST(Trust, WritableByOthersIsRefusedUnlessTrusted) {
  const fs::path d = collc::test::freshDir("trust-mode");
  const fs::path sub = d / "plans";
  fs::create_directories(sub);
  ::chmod(d.c_str(), 0755);
  ::chmod(sub.c_str(), 0755);
  const std::string f = writeFile(sub / "a.cplan", "x");
  ::chmod(f.c_str(), 0666);
  EXPECT_EQ(untrustedBecause(f, {}), "it is writable by every user (mode 0666)");
  ::chmod(f.c_str(), 0644);
  ::chmod(sub.c_str(), 0777);
  EXPECT_EQ(untrustedBecause(f, {}),
            "'" + sub.string() + "' (a folder above it) is writable by every user (mode 0777)");
  EXPECT_EQ(untrustedBecause(sub.string(), {}), "it is writable by every user (mode 0777)");
  // A folder others can write but not replace entries in (the sticky bit,
  // as /tmp) does not make what is inside untrusted.
  ::chmod(sub.c_str(), 01777);
  EXPECT_EQ(untrustedBecause(f, {}), "");
  ::chmod(sub.c_str(), 0777);
  // COLLC_TRUSTED: the folder or one above it, with or without a trailing /.
  EXPECT_EQ(untrustedBecause(f, {sub.string()}), "");
  EXPECT_EQ(untrustedBecause(f, {d.string() + "/"}), "");
  EXPECT_NE(untrustedBecause(f, {(d / "other").string()}), "");
  // A link in a trusted place to a file in an untrusted one: what it leads to counts.
  const fs::path safe = d / "safe";
  fs::create_directories(safe);
  ::chmod(safe.c_str(), 0755);
  fs::create_symlink(f, safe / "link.cplan");
  EXPECT_NE(untrustedBecause((safe / "link.cplan").string(), {}), "");
  fs::remove_all(d);
}

TEST(Trust, GroupWritableIsRefusedUnlessThePrivateGroup) {
  const fs::path d = collc::test::freshDir("trust-group");
  ::chmod(d.c_str(), 0755);
  const std::string f = writeFile(d / "rules.yaml", "x");
  ::chmod(f.c_str(), 0664);
  // The file's group is this process's: refused unless it is the user's
  // private group (root's group "root" has no other members here).
  const std::string why = untrustedBecause(f, {});
  EXPECT_TRUE(why.empty() || why == "it is writable by its group (mode 0664)") << why;
  if (::chown(f.c_str(), ::geteuid(), 65534) == 0) { // nogroup: never a private group
    EXPECT_EQ(untrustedBecause(f, {}), "it is writable by its group (mode 0664)");
  }
  fs::remove_all(d);
}

TEST(Trust, AnotherUsersFileIsRefused) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "giving a file to another user needs root";
  const fs::path d = collc::test::freshDir("trust-owner");
  ::chmod(d.c_str(), 0755);
  const std::string f = writeFile(d / "a.cplan", "x");
  ASSERT_EQ(::chown(f.c_str(), 65534, 65534), 0);
  EXPECT_EQ(untrustedBecause(f, {}), "it is owned by another user (uid 65534)");
  EXPECT_EQ(untrustedBecause(f, {d.string()}), "");
  fs::remove_all(d);
}

// A record written by someone else — here one placed in a folder every user
// can write, claiming a proof nobody made — is refused, with the reason,
// where the drop-in asks with COLLC_TRUSTED; a genuine one in the same folder
// made private is believed.
TEST(Trust, AForgedProofRecordIsRefused) {
  const fs::path d = collc::test::freshDir("trust-proof");
  ProofRecord r;
  r.key.algorithm = "ring";
  r.key.collective = "allreduce";
  r.key.sourceHash = sha256Hex("not the library's ring");
  r.key.ranks = 64;
  r.roots = {0};
  r.anyAssociative = true;
  r.inPlace = true;
  r.identical = true;
  std::string error;
  ASSERT_TRUE(writeProof(d.string(), r, error)) << error;
  ProofNeeds needs;
  std::string why;
  const std::vector<std::string> none;
  ::chmod(d.c_str(), 0777);
  EXPECT_EQ(lookupProof(d.string(), r.key, 0, needs, why, &none), Lookup::Invalid);
  EXPECT_NE(why.find("is writable by every user (mode 0777)"), std::string::npos) << why;
  EXPECT_NE(why.find("COLLC_PROOF_CACHE: '" + (d / recordFileName(r.key)).string()),
            std::string::npos)
      << why;
  const std::vector<std::string> trusted{d.string()};
  EXPECT_EQ(lookupProof(d.string(), r.key, 0, needs, why, &trusted), Lookup::Proven);
  ::chmod(d.c_str(), 0755);
  EXPECT_EQ(lookupProof(d.string(), r.key, 0, needs, why, &none), Lookup::Proven);
  fs::remove_all(d);
}
