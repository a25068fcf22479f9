// tests/dropin/ProofCacheTest.cpp: proof records (dropin/ProofCache.h) — the
// hash, the text round trip, merging on write, and every kind of bad file the
// drop-in may meet in COLLC_PROOF_CACHE: each is Invalid with a reason naming
// the file, never a crash.
#include "dropin/ProofCache.h"

#include "tests/dropin/TempDir.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace collc::dropin;

namespace {

namespace fs = std::filesystem;

ProofKey key() {
  ProofKey k;
  k.algorithm = "rabenseifner";
  k.collective = "allreduce";
  k.sourceHash = sha256Hex("algorithm rabenseifner\n");
  k.ranks = 4096;
  return k;
}

ProofRecord record() {
  ProofRecord r;
  r.key = key();
  r.roots = {0};
  r.anyAssociative = true;
  r.inPlace = true;
  r.identical = true;
  return r;
}

ProofNeeds needs() { return ProofNeeds{true, true, true}; }

void writeText(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(ProofCache, Sha256MatchesTheStandardVectors) {
  EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(ProofCache, RecordsRoundTrip) {
  ProofRecord r = record();
  r.key.params = {{"k", 4}, {"m", -2}};
  r.roots = {0, 1, 2, 5, 7, 8, 9};
  r.anyAssociative = false;
  const std::string text = formatRecord(r);
  EXPECT_NE(text.find("params: k=4,m=-2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("roots: 0..2,5,7..9\n"), std::string::npos) << text;
  EXPECT_NE(text.find("operations: commutative\n"), std::string::npos) << text;
  ProofRecord back;
  std::string error;
  ASSERT_TRUE(parseRecord(text, back, error)) << error;
  EXPECT_EQ(formatRecord(back), text);
  EXPECT_EQ(back.roots, r.roots);
  EXPECT_EQ(back.key.params, r.key.params);
  EXPECT_EQ(recordFileName(r.key),
            "allreduce-rabenseifner-" + r.key.sourceHash.substr(0, 16) + "-k=4,m=-2-p4096.proof");
}

TEST(ProofCache, MalformedRecordsAreRefusedWithTheirLine) {
  const std::string good = formatRecord(record());
  auto refuse = [](const std::string &text) {
    ProofRecord r;
    std::string error;
    EXPECT_FALSE(parseRecord(text, r, error)) << text;
    return error;
  };
  auto replace = [&](const std::string &from, const std::string &to) {
    std::string t = good;
    t.replace(t.find(from), from.size(), to);
    return refuse(t);
  };
  EXPECT_EQ(refuse(""), "line 1: missing 'format:' (the record ends early)");
  EXPECT_EQ(refuse(good.substr(0, good.size() - 1)),
            "line 11: the line does not end (a record ends with a newline)");
  EXPECT_EQ(refuse(good.substr(0, good.find("roots:"))),
            "line 8: missing 'roots:' (the record ends early)");
  EXPECT_EQ(refuse(good + "extra: 1\n"), "line 12: unexpected text after 'identical:'");
  EXPECT_EQ(replace("collc-proof/1", "collc-proof/2"),
            "line 1: format 'collc-proof/2' is not collc-proof/1");
  EXPECT_EQ(replace("algorithm: ", "algorithm:"), "line 2: expected 'algorithm: ...'");
  EXPECT_EQ(replace("sha256:", "md5:"), "line 4: expected sha256: and 64 lowercase hex digits");
  EXPECT_EQ(replace("ranks: 4096", "ranks: 04096"),
            "line 6: ranks '04096' is not a rank count (1..1048576)");
  EXPECT_EQ(replace("ranks: 4096", "ranks: 2000000"),
            "line 6: ranks '2000000' is not a rank count (1..1048576)");
  EXPECT_EQ(replace("params: none", "params: k"), "line 7: parameter 'k' is not name=value");
  EXPECT_EQ(replace("params: none", "params: m=1,k=2"),
            "line 7: parameters must be sorted by name, each once");
  EXPECT_EQ(replace("roots: 0", "roots: 4096"),
            "line 8: roots: '4096' is out of order or out of range (ranks = 4096)");
  EXPECT_EQ(replace("roots: 0", "roots: 5,3"),
            "line 8: roots: '3' is out of order or out of range (ranks = 4096)");
  EXPECT_EQ(replace("roots: 0", "roots: 0..x"),
            "line 8: roots: '0..x' is not a root or a range A..B");
  EXPECT_EQ(replace("operations: any", "operations: some"),
            "line 9: operations 'some' is not any or commutative");
  EXPECT_EQ(replace("in_place: yes", "in_place: maybe"),
            "line 10: expected yes or no, got 'maybe'");
}

TEST(ProofCache, WriteThenLookupAndRootsMerge) {
  const std::string dir = collc::test::freshDir("proofcache-merge");
  std::string error, why;
  EXPECT_EQ(lookupProof(dir, key(), 0, needs(), why), Lookup::Absent);
  EXPECT_EQ(lookupProof("", key(), 0, needs(), why), Lookup::Absent);
  ASSERT_TRUE(writeProof(dir, record(), error)) << error;
  EXPECT_EQ(lookupProof(dir, key(), 0, needs(), why), Lookup::Proven) << why;
  EXPECT_EQ(lookupProof(dir, key(), 3, needs(), why), Lookup::NotRoot);
  ProofRecord more = record();
  more.roots = {3, 1, 3};
  ASSERT_TRUE(writeProof(dir, more, error)) << error;
  ProofRecord back;
  std::ifstream in(fs::path(dir) / recordFileName(key()));
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  ASSERT_TRUE(parseRecord(text, back, error)) << error;
  EXPECT_EQ(back.roots, (std::vector<uint32_t>{0, 1, 3}));
  EXPECT_EQ(lookupProof(dir, key(), 3, needs(), why), Lookup::Proven);
  // Another key is another file.
  ProofKey other = key();
  other.ranks = 4095;
  EXPECT_EQ(lookupProof(dir, other, 0, needs(), why), Lookup::Absent);
  // A record with other properties replaces the file (its roots only).
  ProofRecord weaker = record();
  weaker.roots = {7};
  weaker.identical = false;
  ASSERT_TRUE(writeProof(dir, weaker, error)) << error;
  EXPECT_EQ(lookupProof(dir, key(), 0, needs(), why), Lookup::Invalid);
  EXPECT_NE(why.find("proves less than the plan claims"), std::string::npos) << why;
  ProofNeeds less = needs();
  less.identical = false;
  EXPECT_EQ(lookupProof(dir, key(), 7, less, why), Lookup::Proven) << why;
  EXPECT_EQ(lookupProof(dir, key(), 0, less, why), Lookup::NotRoot);
  fs::remove_all(dir);
}

TEST(ProofCache, BadFilesAreOneReasonNamingTheFileNeverACrash) {
  const std::string dir = collc::test::freshDir("proofcache-bad");
  const std::string path = (fs::path(dir) / recordFileName(key())).string();
  std::string why;
  auto invalid = [&](const std::string &expect) {
    EXPECT_EQ(lookupProof(dir, key(), 0, needs(), why), Lookup::Invalid) << expect;
    EXPECT_NE(why.find("COLLC_PROOF_CACHE: '" + path + "'"), std::string::npos) << why;
    EXPECT_NE(why.find(expect), std::string::npos) << why;
    EXPECT_NE(why.find("; it is not used"), std::string::npos) << why;
  };
  // Foreign bytes: binary, a truncated record, text of another kind.
  writeText(path, std::string("\x7f" "CPL\x02\x00\xff", 7));
  invalid("is not a proof record (line 1: ");
  writeText(path, formatRecord(record()).substr(0, 40));
  invalid("is not a proof record (line ");
  writeText(path, "format: collc-rules/1\nrules: []\n");
  invalid("is not a proof record (line 1: format 'collc-rules/1' is not collc-proof/1)");
  writeText(path, "");
  invalid("line 1: missing 'format:'");
  // A valid record, of something else, under this key's name.
  ProofRecord r = record();
  r.key.sourceHash = sha256Hex("another text");
  writeText(path, formatRecord(r));
  invalid("is a record of another algorithm text or shape");
  r = record();
  r.key.ranks = 8;
  writeText(path, formatRecord(r));
  invalid("is a record of another algorithm text or shape (allreduce rabenseifner, p = 8");
  r = record();
  r.pipeline = "dropin-O3/9";
  writeText(path, formatRecord(r));
  invalid("is a record of another compilation (pipeline dropin-O3/9");
  // Too large to be a record.
  writeText(path, std::string(2 << 20, 'x'));
  invalid("is larger than a record can be");
  // Not a file.
  fs::remove(path);
  fs::create_directories(path);
  invalid("is not a regular file");
  fs::remove_all(dir);
}

} // namespace
