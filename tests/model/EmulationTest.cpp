// tests/model/EmulationTest.cpp: how a topology becomes the emulated
// cluster's links (model/Emulation.h, docs/cluster.md).
#include "model/Emulation.h"

#include <gtest/gtest.h>

#include <string>

namespace collc::model {
namespace {

Topology read(const std::string &text) {
  auto t = parseTopology(text, "t.yaml");
  EXPECT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  return *t;
}

std::string errorOf(llvm::Expected<EmulatedNetwork> net) {
  if (net)
    return "no error";
  return llvm::toString(net.takeError());
}

const char *twoLevel = R"(format: collc-topology/1
name: c
levels:
  - {name: node, size: 32, latency: 0.4us, bandwidth: 8GB/s}
  - {name: network, size: 64, latency: 50us, bandwidth: 1Gb/s, share: 32}
reduce: 4GB/s
)";

const char *threeLevel = R"(format: collc-topology/1
name: r
levels:
  - {name: node, size: 2, latency: 1us, bandwidth: 8GB/s}
  - {name: rack, size: 2, latency: 20us, bandwidth: 1Gb/s, share: 2}
  - {name: system, size: 4, latency: 100us, bandwidth: 400Mb/s, share: 4}
reduce: 4GB/s
mapping: round-robin
)";

TEST(Emulation, OneNicPerNodeAtTheFilesLatencyAndRate) {
  auto net = emulate(read(twoLevel), 4, 2);
  ASSERT_TRUE(static_cast<bool>(net)) << llvm::toString(net.takeError());
  ASSERT_EQ(net->levels.size(), 1u);
  const EmulatedLevel &l = net->levels[0];
  EXPECT_EQ(l.name, "network");
  EXPECT_DOUBLE_EQ(l.latency, 50e-6);
  EXPECT_DOUBLE_EQ(l.bytesPerSecond, 125e6); // 1 Gb/s
  EXPECT_EQ(l.groups, 4u);
  EXPECT_EQ(l.linksSummed, 1u);
  // As emulated: 4 nodes of 2 ranks, one link per node, block mapping.
  EXPECT_EQ(net->topology.levels[0].size, 2u);
  EXPECT_EQ(net->topology.levels[1].size, 4u);
  EXPECT_EQ(net->topology.levels[1].share, 2u);
  EXPECT_EQ(net->topology.capacity(), 8u);
  for (uint32_t a = 0; a < 4; ++a)
    for (uint32_t b = 0; b < 4; ++b)
      if (a != b) {
        EXPECT_EQ(net->levelOf(a, b), 1u);
      }
  EXPECT_EQ(net->linkOf(3, 1), 3u);
}

TEST(Emulation, SeveralLinksOfANodeAreOneLinkOfTheirSum) {
  // share 1 with 2 ranks per node: the file gives each rank a link.
  std::string t = twoLevel;
  t.replace(t.find("share: 32"), 9, "share: 1");
  auto net = emulate(read(t), 2, 2);
  ASSERT_TRUE(static_cast<bool>(net)) << llvm::toString(net.takeError());
  EXPECT_EQ(net->levels[0].linksSummed, 2u);
  EXPECT_DOUBLE_EQ(net->levels[0].bytesPerSecond, 250e6);
  // The topology as emulated says the same: one link of half the β.
  EXPECT_EQ(net->topology.levels[1].share, 2u);
  EXPECT_DOUBLE_EQ(net->topology.levels[1].beta, 1.0 / 250e6);
  EXPECT_NE(describe(*net).find("2 links per group, summed"), std::string::npos);
}

TEST(Emulation, RacksHaveUplinksAndTheirOwnLatency) {
  auto net = emulate(read(threeLevel), 8, 2);
  ASSERT_TRUE(static_cast<bool>(net)) << llvm::toString(net.takeError());
  ASSERT_EQ(net->levels.size(), 2u);
  EXPECT_EQ(net->levels[0].groups, 8u); // a NIC per node
  EXPECT_EQ(net->levels[1].groups, 4u); // an uplink per rack of 2 nodes
  EXPECT_DOUBLE_EQ(net->levels[1].latency, 100e-6);
  EXPECT_EQ(net->levels[1].linksSummed, 1u); // 4 ranks per rack, share 4
  EXPECT_EQ(net->levelOf(0, 1), 1u);         // same rack
  EXPECT_EQ(net->levelOf(1, 2), 2u);         // racks 0 and 1
  EXPECT_EQ(net->levelOf(7, 0), 2u);
  EXPECT_EQ(net->linkOf(5, 2), 2u);
  EXPECT_EQ(net->nodesPerGroup(2), 2u);
  // Placement follows the hostfile, not the file's round-robin.
  EXPECT_EQ(net->topology.mapping, Mapping::Block);
}

TEST(Emulation, FewerNodesThanARackIsOneRack) {
  auto net = emulate(read(threeLevel), 2, 1);
  ASSERT_TRUE(static_cast<bool>(net)) << llvm::toString(net.takeError());
  EXPECT_EQ(net->topology.levels[1].size, 2u);
  EXPECT_EQ(net->topology.levels[2].size, 1u);
  EXPECT_EQ(net->levelOf(0, 1), 1u);
}

TEST(Emulation, RefusesWhatALinkCannotFollow) {
  EXPECT_EQ(errorOf(emulate(read(threeLevel), 3, 1)),
            "3 nodes do not fill level 'rack' (2 of its groups each): use a multiple of 2, or "
            "at most 2");
  EXPECT_EQ(errorOf(emulate(read(threeLevel), 16, 1)), "16 nodes are more than topology 'r' has (8)");
  std::string inf = twoLevel;
  inf.replace(inf.find("bandwidth: 1Gb/s"), 16, "bandwidth: inf");
  EXPECT_EQ(errorOf(emulate(read(inf), 2, 1)),
            "level 'network' has bandwidth inf, which a link cannot be paced to: give it a "
            "finite bandwidth");
  auto one = read("format: collc-topology/1\nname: u\nlevels:\n"
                  "  - {name: node, size: 4, latency: 1us, bandwidth: 1GB/s}\nreduce: 1GB/s\n");
  EXPECT_EQ(errorOf(emulate(one, 2, 1)),
            "topology 'u' has one level: an emulated cluster needs a level above the node "
            "(docs/cluster.md)");
}

} // namespace
} // namespace collc::model
