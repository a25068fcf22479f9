// tests/model/TopologyTest.cpp: the topology reader (one test per malformed
// input), the printer's round trip, units and rank placement.
#include "model/Topology.h"

#include <gtest/gtest.h>

using namespace collc::model;

namespace {

const char *cluster = R"(format: collc-topology/1
name: test-cluster
levels:
  - {name: node, size: 4, latency: 0.5us, bandwidth: 10GB/s}
  - {name: network, size: 3, latency: 2us, bandwidth: 100Gb/s, share: 2}
reduce:
  default: 5GB/s
  float: 10GB/s
copy: 20GB/s
)";

std::string errorOf(const std::string &text) {
  llvm::Expected<Topology> t = parseTopology(text, "t.yaml");
  if (t) {
    ADD_FAILURE() << "expected an error for:\n" << text;
    return "";
  }
  return llvm::toString(t.takeError());
}

/// The cluster text with `from` replaced by `to` (which must occur).
std::string edit(llvm::StringRef from, llvm::StringRef to) {
  std::string s = cluster;
  size_t at = s.find(from.str());
  EXPECT_NE(at, std::string::npos) << from.str();
  return s.replace(at, from.size(), to.str());
}

Topology mustParse(const std::string &text) {
  llvm::Expected<Topology> t = parseTopology(text, "t.yaml");
  EXPECT_TRUE(bool(t)) << (t ? "" : llvm::toString(t.takeError()));
  return t ? std::move(*t) : Topology();
}

TEST(TopologyReader, ReadsEveryField) {
  Topology t = mustParse(cluster);
  EXPECT_EQ(t.name, "test-cluster");
  ASSERT_EQ(t.levels.size(), 2u);
  EXPECT_EQ(t.levels[0].name, "node");
  EXPECT_EQ(t.levels[0].size, 4u);
  EXPECT_DOUBLE_EQ(t.levels[0].alpha, 0.5e-6);
  EXPECT_DOUBLE_EQ(t.levels[0].beta, 1e-10);
  EXPECT_EQ(t.levels[0].share, 1u);
  EXPECT_DOUBLE_EQ(t.levels[1].beta, 8e-11); // 100 Gb/s = 12.5 GB/s
  EXPECT_EQ(t.levels[1].share, 2u);
  EXPECT_DOUBLE_EQ(t.gamma, 2e-10);
  EXPECT_DOUBLE_EQ(t.gammaOf("float"), 1e-10);
  EXPECT_DOUBLE_EQ(t.gammaOf("double"), 2e-10);
  EXPECT_DOUBLE_EQ(t.copyBeta, 5e-11);
  EXPECT_EQ(t.capacity(), 12u);
  EXPECT_EQ(t.mapping, Mapping::Block);
}

TEST(TopologyReader, NameDefaultsToTheFileStem) {
  std::string s = edit("name: test-cluster\n", "");
  llvm::Expected<Topology> t = parseTopology(s, "dir/machine.yaml");
  ASSERT_TRUE(bool(t));
  EXPECT_EQ(t->name, "machine");
}

TEST(TopologyPrinter, RoundTrips) {
  for (const std::string &text :
       {std::string(cluster), edit("copy: 20GB/s\n", "mapping: round-robin\nby: node\n"),
        edit("copy: 20GB/s\n", "mapping: explicit\nmap: [[0, 1], [2, 3], [2, 3]]\n")}) {
    Topology t = mustParse(text);
    const std::string printed = printTopology(t);
    Topology u = mustParse(printed);
    EXPECT_EQ(printTopology(u), printed);
    ASSERT_EQ(u.levels.size(), t.levels.size());
    for (size_t j = 0; j < t.levels.size(); ++j) {
      EXPECT_DOUBLE_EQ(u.levels[j].alpha, t.levels[j].alpha);
      EXPECT_DOUBLE_EQ(u.levels[j].beta, t.levels[j].beta);
      EXPECT_EQ(u.levels[j].share, t.levels[j].share);
    }
    EXPECT_EQ(u.map, t.map);
    EXPECT_EQ(u.mapping, t.mapping);
    EXPECT_EQ(u.mapBy, t.mapBy);
    EXPECT_DOUBLE_EQ(u.gammaOf("float"), t.gammaOf("float"));
  }
}

TEST(TopologyUnits, TimesAndBandwidths) {
  EXPECT_DOUBLE_EQ(*parseTime("1.5us"), 1.5e-6);
  EXPECT_DOUBLE_EQ(*parseTime("800ns"), 8e-7);
  EXPECT_DOUBLE_EQ(*parseTime("2ms"), 2e-3);
  EXPECT_DOUBLE_EQ(*parseTime("1e-6s"), 1e-6);
  EXPECT_DOUBLE_EQ(*parseTime("0"), 0);
  EXPECT_FALSE(parseTime("1.5"));
  EXPECT_FALSE(parseTime("us"));
  EXPECT_FALSE(parseTime("-1us"));
  EXPECT_FALSE(parseTime("1.5 fortnights"));
  EXPECT_DOUBLE_EQ(*parseBandwidth("12.5GB/s"), 1 / 12.5e9);
  EXPECT_DOUBLE_EQ(*parseBandwidth("100Gb/s"), 1 / 12.5e9);
  EXPECT_DOUBLE_EQ(*parseBandwidth("1GiB/s"), 1 / 1073741824.0);
  EXPECT_DOUBLE_EQ(*parseBandwidth("500MB/s"), 1 / 5e8);
  EXPECT_DOUBLE_EQ(*parseBandwidth("1kB/s"), 1e-3);
  EXPECT_DOUBLE_EQ(*parseBandwidth("inf"), 0);
  EXPECT_FALSE(parseBandwidth("0GB/s"));
  EXPECT_FALSE(parseBandwidth("12GB"));
  EXPECT_FALSE(parseBandwidth("12XB/s"));
  EXPECT_FALSE(parseBandwidth("12iB/s"));
  EXPECT_EQ(formatTime(1.5e-6), "1.5us");
  EXPECT_EQ(formatBandwidth(1 / 12.5e9), "12.5GB/s");
}

// --- one test per malformed input ------------------------------------------------

TEST(TopologyReader, RejectsEmptyDocument) {
  EXPECT_EQ(errorOf(""), "t.yaml:1:1: syntax: empty document: expected a topology (format: "
                         "collc-topology/1)");
}

TEST(TopologyReader, RejectsMalformedYaml) {
  EXPECT_EQ(errorOf("format: [unclosed\n"), "t.yaml:2:1: syntax: end of sequence flow not found");
}

TEST(TopologyReader, RejectsTabIndentation) {
  EXPECT_EQ(errorOf("levels:\n\t- {name: a}\n"),
            "t.yaml:2:1: syntax: a tab in the indentation (YAML indents with spaces only)");
}

TEST(TopologyReader, RejectsWrongFormat) {
  EXPECT_EQ(errorOf(edit("collc-topology/1", "collc-plan/1")),
            "t.yaml:1:9: syntax: unsupported format 'collc-plan/1' (this build reads "
            "collc-topology/1)");
}

TEST(TopologyReader, RejectsMissingFormat) {
  EXPECT_EQ(errorOf(edit("format: collc-topology/1\n", "")),
            "t.yaml:1:1: syntax: missing key 'format' in the topology");
}

TEST(TopologyReader, RejectsUnknownKey) {
  EXPECT_EQ(errorOf(edit("copy:", "cpy:")),
            "t.yaml:9:1: syntax: unknown key 'cpy' in the topology (expected one of: format, "
            "name, description, levels, reduce, copy, mapping, by, map)");
}

TEST(TopologyReader, RejectsDuplicateKey) {
  EXPECT_EQ(errorOf(std::string(cluster) + "copy: 1GB/s\n"),
            "t.yaml:10:1: syntax: duplicate key 'copy' in the topology");
}

TEST(TopologyReader, RejectsNonMappingDocument) {
  EXPECT_EQ(errorOf("- 1\n"), "t.yaml:1:1: syntax: expected a mapping for the topology");
}

TEST(TopologyReader, RejectsEmptyLevels) {
  EXPECT_EQ(errorOf("format: collc-topology/1\nlevels: []\nreduce: 1GB/s\n"),
            "t.yaml:2:9: syntax: expected a non-empty list of levels (innermost first)");
}

TEST(TopologyReader, RejectsLevelMissingKey) {
  EXPECT_EQ(errorOf(edit("latency: 0.5us, ", "")),
            "t.yaml:4:5: syntax: missing key 'latency' in level 0");
}

TEST(TopologyReader, RejectsUnknownLevelKey) {
  EXPECT_EQ(errorOf(edit("share: 2", "shared: 2")),
            "t.yaml:5:64: syntax: unknown key 'shared' in level 1 (expected one of: name, "
            "size, latency, bandwidth, share)");
}

TEST(TopologyReader, RejectsZeroSize) {
  EXPECT_EQ(errorOf(edit("size: 4", "size: 0")),
            "t.yaml:4:24: invalid: level 'node': size must be at least 1");
}

TEST(TopologyReader, RejectsNonIntegerSize) {
  EXPECT_EQ(errorOf(edit("size: 4", "size: four")),
            "t.yaml:4:24: syntax: expected a non-negative integer for 'size', got 'four'");
}

TEST(TopologyReader, RejectsLatencyWithoutUnit) {
  EXPECT_EQ(errorOf(edit("0.5us", "0.5")),
            "t.yaml:4:36: syntax: expected a time with its unit for 'latency' (such as 1.5us, "
            "800ns, 2ms), got '0.5'");
}

TEST(TopologyReader, RejectsBandwidthWithoutPerSecond) {
  EXPECT_EQ(errorOf(edit("10GB/s", "10GB")),
            "t.yaml:4:54: syntax: expected a bandwidth for 'bandwidth' (such as 12.5GB/s, "
            "100Gb/s, 800MiB/s, inf), got '10GB'");
}

TEST(TopologyReader, RejectsShareAtLevelZero) {
  EXPECT_EQ(errorOf(edit("10GB/s}", "10GB/s, share: 2}")),
            "t.yaml:4:69: invalid: level 'node': share must be 1..1, the ranks of one slot "
            "(level 0 links are per rank)");
}

TEST(TopologyReader, RejectsShareAboveGroupSize) {
  EXPECT_EQ(errorOf(edit("share: 2", "share: 5")),
            "t.yaml:5:71: invalid: level 'network': share must be 1..4, the ranks of one node");
}

TEST(TopologyReader, RejectsDuplicateLevelName) {
  EXPECT_EQ(errorOf(edit("name: network", "name: node")),
            "t.yaml:5:12: invalid: a second level named 'node'");
}

TEST(TopologyReader, RejectsTooManySlots) {
  EXPECT_EQ(errorOf(edit("size: 3", "size: 2000000000")),
            "t.yaml:5:27: invalid: the topology would have more than 2^32 slots");
}

TEST(TopologyReader, RejectsMissingReduce) {
  std::string s = cluster;
  s = s.substr(0, s.find("reduce:")) + "copy: 20GB/s\n";
  EXPECT_EQ(errorOf(s), "t.yaml:1:1: syntax: missing key 'reduce' in the topology");
}

TEST(TopologyReader, RejectsReduceWithoutDefault) {
  EXPECT_EQ(errorOf(edit("  default: 5GB/s\n", "")),
            "t.yaml:7:3: syntax: missing key 'default' in 'reduce'");
}

TEST(TopologyReader, RejectsUnknownDatatype) {
  std::string e = errorOf(edit("float:", "floot:"));
  EXPECT_EQ(e.substr(0, e.find(" (")), "t.yaml:8:3: syntax: unknown datatype 'floot' in 'reduce'");
}

TEST(TopologyReader, RejectsUnknownMapping) {
  EXPECT_EQ(errorOf(std::string(cluster) + "mapping: scatter\n"),
            "t.yaml:10:10: syntax: unknown mapping 'scatter' (expected block, round-robin or "
            "explicit)");
}

TEST(TopologyReader, RejectsByWithoutRoundRobin) {
  EXPECT_EQ(errorOf(std::string(cluster) + "by: node\n"),
            "t.yaml:10:5: syntax: 'by' belongs to 'mapping: round-robin'");
}

TEST(TopologyReader, RejectsByUnknownLevel) {
  EXPECT_EQ(errorOf(std::string(cluster) + "mapping: round-robin\nby: rack\n"),
            "t.yaml:11:5: invalid: 'by' names no level: 'rack'");
}

TEST(TopologyReader, RejectsMapWithoutExplicit) {
  EXPECT_EQ(errorOf(std::string(cluster) + "map: [[0, 0]]\n"),
            "t.yaml:10:6: syntax: 'map' belongs to 'mapping: explicit'");
}

TEST(TopologyReader, RejectsExplicitWithoutMap) {
  EXPECT_EQ(errorOf(std::string(cluster) + "mapping: explicit\n"),
            "t.yaml:10:10: syntax: 'mapping: explicit' needs 'map', one location per rank");
}

TEST(TopologyReader, RejectsLocationOfWrongLength) {
  EXPECT_EQ(errorOf(std::string(cluster) + "mapping: explicit\nmap: [[0, 0], [1]]\n"),
            "t.yaml:11:15: syntax: rank 1: expected a location of 2 coordinates, outermost "
            "level first");
}

TEST(TopologyReader, RejectsCoordinateOutOfRange) {
  EXPECT_EQ(errorOf(std::string(cluster) + "mapping: explicit\nmap: [[0, 0], [3, 0]]\n"),
            "t.yaml:11:16: invalid: rank 1: coordinate 3 of level 'network' is not below its "
            "size 3");
}

TEST(TopologyReader, ReportsUnreadableFile) {
  llvm::Expected<Topology> t = readTopologyFile("/nonexistent/t.yaml");
  ASSERT_FALSE(bool(t));
  EXPECT_EQ(llvm::toString(t.takeError()).rfind("cannot read '/nonexistent/t.yaml': ", 0), 0u);
}

// --- placement ------------------------------------------------------------------

TEST(Placement, BlockFillsNodesInOrder) {
  Topology t = mustParse(cluster);
  llvm::Expected<Placement> p = place(t, 12);
  ASSERT_TRUE(bool(p));
  EXPECT_EQ(p->location(0), "0.0");
  EXPECT_EQ(p->location(5), "1.1");
  EXPECT_EQ(p->levelOf(0, 3), 0u);
  EXPECT_EQ(p->levelOf(3, 4), 1u);
  // share 2: ranks 0,1 of a node use link 0 of the node, 2,3 link 1.
  EXPECT_EQ(p->linkOf(0, 1), 0u);
  EXPECT_EQ(p->linkOf(1, 1), 0u);
  EXPECT_EQ(p->linkOf(2, 1), 1u);
  EXPECT_EQ(p->linkOf(4, 1), 2u);
  EXPECT_EQ(p->numLinks(1), 6u);
  EXPECT_EQ(p->linkOf(7, 0), 7u); // level 0: one link per slot
}

TEST(Placement, RoundRobinAlternatesNodes) {
  Topology t = mustParse(std::string(cluster) + "mapping: round-robin\n");
  llvm::Expected<Placement> p = place(t, 7);
  ASSERT_TRUE(bool(p));
  EXPECT_EQ(p->location(0), "0.0");
  EXPECT_EQ(p->location(1), "1.0");
  EXPECT_EQ(p->location(2), "2.0");
  EXPECT_EQ(p->location(3), "0.1");
  EXPECT_EQ(p->levelOf(0, 3), 0u);
  EXPECT_EQ(p->levelOf(0, 1), 1u);
}

TEST(Placement, ExplicitFollowsTheMap) {
  Topology t = mustParse(std::string(cluster) + "mapping: explicit\nmap: [[2, 3], [0, 1]]\n");
  llvm::Expected<Placement> p = place(t, 2);
  ASSERT_TRUE(bool(p));
  EXPECT_EQ(p->location(0), "2.3");
  EXPECT_EQ(p->location(1), "0.1");
  llvm::Expected<Placement> q = place(t, 3);
  ASSERT_FALSE(bool(q));
  EXPECT_EQ(llvm::toString(q.takeError()), "3 ranks, but the topology 'test-cluster' maps only 2");
}

TEST(Placement, RefusesMoreRanksThanSlots) {
  Topology t = mustParse(cluster);
  llvm::Expected<Placement> p = place(t, 13);
  ASSERT_FALSE(bool(p));
  EXPECT_EQ(llvm::toString(p.takeError()),
            "13 ranks, but the topology 'test-cluster' has only 12 slots");
}

} // namespace
