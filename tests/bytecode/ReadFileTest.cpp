// tests/bytecode/ReadFileTest.cpp: reading plan, bundle and rules files —
// never a throw, an abort or a wait, whatever the path names.
#include "runtime/bytecode/ReadFile.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

using collc::rt::readRegularFile;

namespace {

class ReadFile : public ::testing::Test {
protected:
  void SetUp() override {
    char tmpl[] = "/tmp/collc-readfile.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string path(const char *name) const { return dir_ + "/" + name; }
  std::string dir_;
};

TEST_F(ReadFile, ReadsARegularFileWhole) {
  std::string text(100000, 'x');
  text[99999] = 'y';
  std::ofstream(path("f")) << text;
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(readRegularFile(path("f"), bytes).ok());
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), text);
}

TEST_F(ReadFile, ReadsAnEmptyFileAsNoBytes) {
  std::ofstream(path("empty")).flush();
  std::vector<uint8_t> bytes{1, 2, 3};
  ASSERT_TRUE(readRegularFile(path("empty"), bytes).ok());
  EXPECT_TRUE(bytes.empty());
}

TEST_F(ReadFile, RefusesADirectory) {
  std::vector<uint8_t> bytes;
  collc::rt::Status s = readRegularFile(dir_, bytes);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "it is a directory, not a file");
}

TEST_F(ReadFile, RefusesAFifoWithoutWaitingForAWriter) {
  ASSERT_EQ(mkfifo(path("fifo").c_str(), 0600), 0);
  std::vector<uint8_t> bytes;
  collc::rt::Status s = readRegularFile(path("fifo"), bytes);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "it is a FIFO, not a regular file");
}

TEST_F(ReadFile, RefusesADevice) {
  std::vector<uint8_t> bytes;
  collc::rt::Status s = readRegularFile("/dev/null", bytes);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "it is a device, not a regular file");
}

TEST_F(ReadFile, GivesTheSystemsReasonForAMissingFile) {
  std::vector<uint8_t> bytes;
  collc::rt::Status s = readRegularFile(path("nope"), bytes);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "No such file or directory");
}

TEST_F(ReadFile, GivesTheSystemsReasonForAnUnreadableFile) {
  if (geteuid() == 0)
    GTEST_SKIP() << "root reads every file";
  std::ofstream(path("secret")) << "x";
  ASSERT_EQ(chmod(path("secret").c_str(), 0), 0);
  std::vector<uint8_t> bytes;
  collc::rt::Status s = readRegularFile(path("secret"), bytes);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "Permission denied");
}

} // namespace
