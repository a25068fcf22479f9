// tests/dropin/ConfigTest.cpp: the environment and the rules files — the
// exact message for each kind of mistake, and that a mistake means the default
// (nothing half-applied).
#include "dropin/Config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>

using namespace collc::dropin;

namespace {

KnownAlgorithms known() {
  KnownAlgorithms k;
  k.names[0] = {"binary_tree", "recursive_doubling", "rabenseifner", "binary_blocks", "ring"};
  k.names[1] = {"binomial", "binary_tree", "rabenseifner"};
  k.names[unsigned(Coll::ReduceScatter)] = {"chain", "ring", "recursive_halving"};
  k.names[unsigned(Coll::Scan)] = {"chain", "recursive_doubling", "brent_kung"};
  k.names[unsigned(Coll::Bcast)] = {"binomial", "scatter_allgather", "chain"};
  k.names[unsigned(Coll::Gather)] = {"binomial", "linear"};
  return k;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<std::string> rulesErrors(const std::string &text) {
  std::vector<Rule> rules;
  std::vector<std::string> errors;
  EXPECT_FALSE(parseRules(text, "r.yaml", known(), rules, errors));
  EXPECT_TRUE(rules.empty());
  return errors;
}

} // namespace

TEST(Rules, ReadsTheDocumentedForms) {
  const std::string path = COLLC_RULES_DIR "/sizes.yaml";
  std::vector<Rule> rules;
  std::vector<std::string> errors;
  ASSERT_TRUE(parseRules(readFile(path), "sizes.yaml", known(), rules, errors))
      << (errors.empty() ? "" : errors[0]);
  ASSERT_EQ(rules.size(), 5u);
  EXPECT_EQ(rules[0].collective, Coll::Allreduce);
  EXPECT_EQ(rules[0].minRanks, 1u);
  EXPECT_EQ(rules[0].maxRanks, 4u);
  EXPECT_EQ(rules[0].minBytes, 0u);
  EXPECT_EQ(rules[0].maxBytes, 1024u);
  EXPECT_EQ(rules[0].algorithm, "binary_tree");
  EXPECT_EQ(rules[0].where, "sizes.yaml:4");
  EXPECT_EQ(rules[1].minRanks, 5u); // flow mapping
  EXPECT_EQ(rules[1].maxRanks, UINT32_MAX);
  EXPECT_EQ(rules[1].where, "sizes.yaml:8");
  EXPECT_EQ(rules[2].algorithm, "ring");
  EXPECT_EQ(rules[3].algorithm, "native");
  EXPECT_EQ(rules[3].minBytes, 1u << 20);
  EXPECT_EQ(rules[3].maxBytes, ~uint64_t(0));
  EXPECT_EQ(rules[4].collective, Coll::Reduce);
  EXPECT_TRUE(rules[4].matches(1000, 1 << 30));
  EXPECT_TRUE(rules[0].matches(4, 1023));
  EXPECT_FALSE(rules[0].matches(4, 1024));
  EXPECT_FALSE(rules[0].matches(5, 0));
}

TEST(Rules, EmptyListAndCommentsAreFine) {
  std::vector<Rule> rules;
  std::vector<std::string> errors;
  EXPECT_TRUE(parseRules("# nothing yet\nformat: collc-rules/1\nrules: []\n", "r.yaml", known(),
                         rules, errors));
  EXPECT_TRUE(parseRules("---\nformat: \"collc-rules/1\"   # quoted\nrules:\n- collective: "
                         "reduce   # at column 0\n  algorithm: 'binomial'\n",
                         "r.yaml", known(), rules, errors));
  ASSERT_EQ(rules.size(), 1u);
  EXPECT_EQ(rules[0].algorithm, "binomial");
}

TEST(Rules, NamesFileAndLineOfEachMistake) {
  // Golden messages of the bad files the MPI tests use.
  const std::map<std::string, std::vector<std::string>> golden = {
      {"bad-key.yaml",
       {"bad-key.yaml:4: unknown key 'byte' (expected collective, ranks, bytes, algorithm)"}},
      {"bad-algorithm.yaml",
       {"bad-algorithm.yaml:3: unknown allreduce algorithm 'rign' (known: binary_tree, "
        "recursive_doubling, rabenseifner, binary_blocks, ring, native)"}},
      {"bad-range.yaml",
       {"bad-range.yaml:4: ranks '8-2': expected N, A-B or A- (rank counts, A <= B)",
        "bad-range.yaml:5: bytes '2K-1K': expected MIN-MAX, MIN- or -MAX in bytes with "
        "optional K/M/G (KiB/MiB/GiB) suffixes, MIN < MAX, MAX excluded (e.g. 0-2K, 2K-)"}},
      {"bad-tab.yaml",
       {"bad-tab.yaml:4: a tab in the indentation (YAML allows spaces only)",
        "bad-tab.yaml:3: the rule has no 'algorithm:'"}},
      {"bad-format.yaml",
       {"bad-format.yaml:3: expected 'key: value', got 'algorithm ring'",
        "bad-format.yaml:2: the rule has no 'algorithm:'",
        "bad-format.yaml:1: missing 'format: collc-rules/1'"}},
  };
  for (const auto &[file, want] : golden) {
    std::vector<Rule> rules;
    std::vector<std::string> errors;
    EXPECT_FALSE(parseRules(readFile(COLLC_RULES_DIR "/" + file), file, known(), rules, errors))
        << file;
    EXPECT_EQ(errors, want) << file;
  }
}

TEST(Rules, RefusesEverythingOutsideTheSubset) {
  EXPECT_EQ(rulesErrors("format: collc-rules/2\nrules: []\n"),
            std::vector<std::string>{
                "r.yaml:1: format 'collc-rules/2' is not supported (expected collc-rules/1)"});
  EXPECT_EQ(rulesErrors("format: collc-rules/1\n"),
            std::vector<std::string>{"r.yaml:1: missing 'rules:' (a list of rules, or [] for none)"});
  EXPECT_EQ(rulesErrors("format: collc-rules/1\nrules: 3\n"),
            std::vector<std::string>{"r.yaml:2: 'rules:' takes a list of rules on the lines below it"});
  EXPECT_EQ(rulesErrors("format: collc-rules/1\nrule:\n"),
            (std::vector<std::string>{"r.yaml:2: unknown key 'rule' (expected format, rules)",
                                      "r.yaml:1: missing 'rules:' (a list of rules, or [] for none)"}));
  EXPECT_EQ(rulesErrors("format: collc-rules/1\nrules:\n  - {collective: gatherv, algorithm: x}\n"),
            std::vector<std::string>{
                "r.yaml:3: unknown collective 'gatherv' (expected allreduce, reduce, "
                "reduce_scatter, scan, exscan, allgather, bcast, alltoall, gather, scatter or "
                "barrier; "
                "each covers its non-blocking and persistent forms too)"});
  EXPECT_EQ(rulesErrors("format: collc-rules/1\nrules:\n  - {collective: gather, algorithm: x}\n"),
            std::vector<std::string>{"r.yaml:3: unknown gather algorithm 'x' (known: "
                                     "binomial, linear, native)"});
  EXPECT_EQ(rulesErrors("format: collc-rules/1\nrules:\n  - {collective: reduce, algorithm: "
                        "ring\n"),
            std::vector<std::string>{"r.yaml:3: a flow mapping '{...}' must end on the same line"});
  EXPECT_EQ(rulesErrors("format: collc-rules/1\nrules:\n  - collective: reduce\n    algorithm: "
                        "binomial\n    algorithm: binary_tree\n"),
            std::vector<std::string>{"r.yaml:5: 'algorithm' given twice in one rule"});
  EXPECT_EQ(rulesErrors("format: collc-rules/1\n  collective: reduce\n"),
            (std::vector<std::string>{"r.yaml:2: this line is not inside 'rules:'",
                                      "r.yaml:1: missing 'rules:' (a list of rules, or [] for none)"}));
  EXPECT_EQ(rulesErrors("format: collc-rules/1\nrules:\n  - ranks: 0\n"),
            (std::vector<std::string>{
                "r.yaml:3: ranks '0': expected N, A-B or A- (rank counts, A <= B)",
                "r.yaml:3: the rule has no 'collective:' (allreduce, reduce, reduce_scatter, "
                "scan, exscan, allgather, bcast, alltoall, gather, scatter or barrier)",
                "r.yaml:3: the rule has no 'algorithm:'"}));
}

TEST(Algorithm, ForcesPerCollective) {
  Config c;
  parseAlgorithm("allreduce:ring, reduce:binomial", known(), c);
  EXPECT_TRUE(c.warnings.empty());
  EXPECT_EQ(c.forced[0], "ring");
  EXPECT_EQ(c.forced[1], "binomial");
  Config n;
  parseAlgorithm("reduce:native", known(), n);
  EXPECT_EQ(n.forced[0], "");
  EXPECT_EQ(n.forced[1], "native");
}

TEST(Algorithm, ForcesTheRestOfTheFamily) {
  Config c;
  parseAlgorithm("reduce_scatter:ring,scan:brent_kung,bcast:native", known(), c);
  EXPECT_TRUE(c.warnings.empty());
  EXPECT_EQ(c.forced[unsigned(Coll::ReduceScatter)], "ring");
  EXPECT_EQ(c.forced[unsigned(Coll::Scan)], "brent_kung");
  EXPECT_EQ(c.forced[unsigned(Coll::Bcast)], "native");
  EXPECT_EQ(c.forced[unsigned(Coll::Exscan)], "");
  // The plans' name for the reduce-scatters is the same collective.
  Config b;
  parseAlgorithm("reduce_scatter_block:chain", known(), b);
  EXPECT_TRUE(b.warnings.empty());
  EXPECT_EQ(b.forced[unsigned(Coll::ReduceScatter)], "chain");
  Config twice;
  parseAlgorithm("reduce_scatter:chain,reduce_scatter_block:ring", known(), twice);
  ASSERT_EQ(twice.warnings.size(), 1u);
  EXPECT_EQ(twice.warnings[0], "COLLC_ALGORITHM='reduce_scatter:chain,reduce_scatter_block:ring': "
                               "reduce_scatter is given twice; COLLC_ALGORITHM is ignored");
  Config wrong;
  parseAlgorithm("scan:recursive_halving", known(), wrong);
  ASSERT_EQ(wrong.warnings.size(), 1u);
  EXPECT_EQ(wrong.warnings[0], "COLLC_ALGORITHM='scan:recursive_halving': unknown scan algorithm "
                               "'recursive_halving' (known: chain, recursive_doubling, brent_kung, "
                               "native); COLLC_ALGORITHM is ignored");
}

TEST(Rules, TheRestOfTheFamily) {
  std::vector<Rule> rules;
  std::vector<std::string> errors;
  ASSERT_TRUE(parseRules("format: collc-rules/1\nrules:\n"
                         "  - {collective: bcast, bytes: 1M-, algorithm: scatter_allgather}\n"
                         "  - {collective: reduce_scatter, ranks: 3-, algorithm: ring}\n",
                         "r.yaml", known(), rules, errors))
      << (errors.empty() ? "" : errors[0]);
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].collective, Coll::Bcast);
  EXPECT_EQ(rules[0].minBytes, uint64_t(1) << 20);
  EXPECT_EQ(rules[1].collective, Coll::ReduceScatter);
  EXPECT_EQ(rules[1].minRanks, 3u);
}

TEST(Algorithm, AMistakeIsOneWarningAndNothingForced) {
  const std::map<std::string, std::string> golden = {
      {"allreduce:rign", "COLLC_ALGORITHM='allreduce:rign': unknown allreduce algorithm 'rign' "
                         "(known: binary_tree, recursive_doubling, rabenseifner, binary_blocks, "
                         "ring, native); COLLC_ALGORITHM is ignored"},
      {"allreduce=ring", "COLLC_ALGORITHM='allreduce=ring': 'allreduce=ring' is not "
                         "COLLECTIVE:ALGORITHM; COLLC_ALGORITHM is ignored"},
      {"reduce:binomial,alltoallv:x", "COLLC_ALGORITHM='reduce:binomial,alltoallv:x': unknown "
                                      "collective 'alltoallv' (expected allreduce, reduce, "
                                      "reduce_scatter, scan, exscan, allgather, bcast, "
                                      "alltoall, gather, scatter or barrier); COLLC_ALGORITHM is ignored"},
      {"allreduce:ring,allreduce:ring", "COLLC_ALGORITHM='allreduce:ring,allreduce:ring': "
                                        "allreduce is given twice; COLLC_ALGORITHM is ignored"},
      {"reduce:", "COLLC_ALGORITHM='reduce:': no algorithm after 'reduce:'; COLLC_ALGORITHM is "
                  "ignored"},
      {"reduce:ring", "COLLC_ALGORITHM='reduce:ring': unknown reduce algorithm 'ring' (known: "
                      "binomial, binary_tree, rabenseifner, native); COLLC_ALGORITHM is ignored"},
  };
  for (const auto &[value, want] : golden) {
    Config c;
    parseAlgorithm(value.c_str(), known(), c);
    ASSERT_EQ(c.warnings.size(), 1u) << value;
    EXPECT_EQ(c.warnings[0], want);
    EXPECT_EQ(c.forced[0], "") << value;
    EXPECT_EQ(c.forced[1], "") << value;
  }
  Config empty;
  parseAlgorithm("  ", known(), empty);
  EXPECT_TRUE(empty.warnings.empty());
}

TEST(Environment, FlagsAndPlanPath) {
  std::map<std::string, std::string> env = {{"COLLC_DEBUG", "1"},
                                            {"COLLC_STATS", "yes"},
                                            {"COLLC_VERIFY", "maybe"},
                                            {"COLLC_PLAN_PATH", "/a:: /b :"}};
  Config c;
  parseBasics(
      [&](const char *v) -> const char * {
        auto it = env.find(v);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      c);
  EXPECT_TRUE(c.debug);
  EXPECT_TRUE(c.stats);
  EXPECT_FALSE(c.verify);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0], "COLLC_VERIFY='maybe' is not 0 or 1 (or true/false, yes/no, on/off); "
                           "using 0");
  EXPECT_EQ(c.planPath, (std::vector<std::string>{"/a", "/b"}));
}

TEST(Environment, UnreadableRulesFileIsOneWarning) {
  Config c;
  loadRules("/nonexistent/rules.yaml", known(), c);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0].rfind("COLLC_RULES='/nonexistent/rules.yaml': cannot read the file (", 0),
            0u);
  EXPECT_TRUE(c.rules.empty());
  Config bad;
  loadRules(COLLC_RULES_DIR "/bad-range.yaml", known(), bad);
  ASSERT_EQ(bad.warnings.size(), 1u);
  EXPECT_NE(bad.warnings[0].find("is not a valid rules file; no rules apply:\n  "),
            std::string::npos);
  EXPECT_TRUE(bad.rules.empty());
}

namespace {

Config configOf(const std::map<std::string, std::string> &env) {
  Config c;
  parseBasics(
      [&](const char *v) -> const char * {
        auto it = env.find(v);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      c);
  return c;
}

} // namespace

TEST(Environment, TransportSettingsAreRead) {
  Config c = configOf({{"COLLC_TRANSPORT", "MPI"},
                       {"COLLC_SHM_SEGMENT", "64k"},
                       {"COLLC_SHM_FAST", "off"},
                       {"COLLC_SHM_AFTER", " 0 "},
                       {"COLLC_NODE_MAP", "0,0,1,1"}});
  EXPECT_TRUE(c.warnings.empty()) << c.warnings[0];
  EXPECT_EQ(c.transport.transport, collc::rt::TransportKind::Mpi);
  EXPECT_EQ(c.transport.shmSegmentBytes, 64u << 10);
  EXPECT_FALSE(c.transport.shmFast);
  EXPECT_EQ(c.transport.shmAfter, 0u);
  EXPECT_EQ(c.transport.nodeMap, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(configOf({{"COLLC_SHM_AFTER", "1000000000"}}).transport.shmAfter, 1000000000u);
  for (const char *yes : {"1", "true", "YES", " on "})
    EXPECT_TRUE(configOf({{"COLLC_SHM_FAST", yes}}).transport.shmFast) << yes;
  Config d = configOf({});
  EXPECT_EQ(d.transport.transport, collc::rt::TransportKind::Auto);
  EXPECT_EQ(d.transport.shmSegmentBytes, 32u << 10);
  EXPECT_TRUE(d.transport.shmFast);
  EXPECT_EQ(d.transport.shmAfter, 16u);
  EXPECT_TRUE(d.transport.nodeMap.empty());
}

// Each bad value is one warning that says what is wrong and what is used
// instead, and that setting keeps its default.
TEST(Environment, EachBadTransportSettingIsOneWarning) {
  const std::pair<std::map<std::string, std::string>, std::string> cases[] = {
      {{{"COLLC_TRANSPORT", "fast"}}, "COLLC_TRANSPORT='fast' is not auto, shm or mpi; using auto"},
      {{{"COLLC_SHM_SEGMENT", "100"}},
       "COLLC_SHM_SEGMENT='100' is 100 bytes, not from 4K to 16M; using 32K"},
      {{{"COLLC_SHM_SEGMENT", "1G"}},
       "COLLC_SHM_SEGMENT='1G' is 1073741824 bytes, not from 4K to 16M; using 32K"},
      {{{"COLLC_SHM_SEGMENT", "abc"}},
       "COLLC_SHM_SEGMENT='abc' is not a size in bytes (digits with an optional K or M suffix, "
       "such as 32K); using 32K"},
      {{{"COLLC_SHM_SEGMENT", "4100"}},
       "COLLC_SHM_SEGMENT='4100' is not a multiple of 64 bytes; using 32K"},
      {{{"COLLC_SHM_SEGMENT", "99999999999999999999K"}},
       "COLLC_SHM_SEGMENT='99999999999999999999K' is not a size in bytes (digits with an "
       "optional K or M suffix, such as 32K); using 32K"},
      {{{"COLLC_SHM_FAST", "maybe"}},
       "COLLC_SHM_FAST='maybe' is not 0 or 1 (or true/false, yes/no, on/off); using 1"},
      {{{"COLLC_SHM_AFTER", "-1"}},
       "COLLC_SHM_AFTER='-1' is not a number of calls from 0 to 1000000000; using 16"},
      {{{"COLLC_SHM_AFTER", "1000000001"}},
       "COLLC_SHM_AFTER='1000000001' is not a number of calls from 0 to 1000000000; using 16"},
      {{{"COLLC_SHM_AFTER", "99999999999"}},
       "COLLC_SHM_AFTER='99999999999' is not a number of calls from 0 to 1000000000; using 16"},
      {{{"COLLC_SHM_AFTER", "8 calls"}},
       "COLLC_SHM_AFTER='8 calls' is not a number of calls from 0 to 1000000000; using 16"},
      {{{"COLLC_NODE_MAP", "0,x,1"}},
       "COLLC_NODE_MAP='0,x,1' is not a list of node numbers (0,0,1,1); COLLC_NODE_MAP is "
       "ignored"},
      {{{"COLLC_NODE_MAP", "5,5,5"}},
       "COLLC_NODE_MAP='5,5,5': rank 0's node 5 is not below 3 (a map of 3 ranks numbers its "
       "nodes from 0 to 2); COLLC_NODE_MAP is ignored"},
      {{{"COLLC_NODE_MAP", "0,0,11"}},
       "COLLC_NODE_MAP='0,0,11': rank 2's node 11 is not below 3 (a map of 3 ranks numbers its "
       "nodes from 0 to 2); COLLC_NODE_MAP is ignored"},
  };
  for (const auto &[env, warning] : cases) {
    Config c = configOf(env);
    ASSERT_EQ(c.warnings.size(), 1u) << env.begin()->second;
    EXPECT_EQ(c.warnings[0], warning);
    const Config d = configOf({});
    EXPECT_EQ(c.transport.transport, d.transport.transport);
    EXPECT_EQ(c.transport.shmSegmentBytes, d.transport.shmSegmentBytes);
    EXPECT_EQ(c.transport.shmFast, d.transport.shmFast);
    EXPECT_EQ(c.transport.shmAfter, d.transport.shmAfter);
    EXPECT_EQ(c.transport.nodeMap, d.transport.nodeMap);
  }
}

TEST(Environment, ProofCacheMustBeAFolder) {
  EXPECT_EQ(proofCacheProblem(""), "");
  EXPECT_EQ(proofCacheProblem(COLLC_RULES_DIR), "");
  EXPECT_EQ(proofCacheProblem("/nonexistent/proofs"), "No such file or directory");
  EXPECT_EQ(proofCacheProblem(COLLC_RULES_DIR "/sizes.yaml"), "not a folder");
}

// COLLC_FAULT (a test aid): kinds at world ranks; a malformed value is one
// warning naming the bad item, and nothing is injected.
TEST(Environment, FaultsAreReadOrOneWarning) {
  using collc::dropin::Fault;
  Config c = configOf({{"COLLC_FAULT", " build@3, memory@0 ,build@1"}});
  EXPECT_TRUE(c.warnings.empty()) << c.warnings[0];
  EXPECT_TRUE(c.fails(Fault::Build, 3));
  EXPECT_TRUE(c.fails(Fault::Build, 1));
  EXPECT_FALSE(c.fails(Fault::Build, 0));
  EXPECT_TRUE(c.fails(Fault::Memory, 0));
  EXPECT_FALSE(c.fails(Fault::Setup, 3));
  EXPECT_FALSE(configOf({}).fails(Fault::Load, 0));
  const std::pair<std::string, std::string> bad[] = {
      {"crash@1", "'crash@1' does not start with setup, build, load, tags or memory"},
      {"build", "'build' is not WHAT@RANK (a world rank)"},
      {"build@x", "'build@x' is not WHAT@RANK (a world rank)"},
      {"build@-1", "'build@-1' is not WHAT@RANK (a world rank)"},
      {"setup@1,,load@2", "'' does not start with setup, build, load, tags or memory"},
      {"tags@99999999999", "'tags@99999999999' is not WHAT@RANK (a world rank)"},
  };
  for (const auto &[value, problem] : bad) {
    Config d = configOf({{"COLLC_FAULT", value}});
    ASSERT_EQ(d.warnings.size(), 1u) << value;
    EXPECT_EQ(d.warnings[0],
              "COLLC_FAULT='" + value + "': " + problem + "; no failure is injected");
    for (unsigned k = 0; k < collc::dropin::numFaults; ++k)
      EXPECT_TRUE(d.faults[k].empty()) << value;
  }
}
