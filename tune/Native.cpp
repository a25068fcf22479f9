// tune/Native.cpp: Open MPI's rules file and MPICH's selection JSON from a
// search (tune/Native.h).
#include "tune/Native.h"

#include "runtime/bytecode/Bundle.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <climits>
#include <map>

namespace collc::tune {

std::optional<NativeFormat> parseNativeFormat(llvm::StringRef text) {
  if (text == "ompi-rules")
    return NativeFormat::OmpiRules;
  if (text == "mpich-json")
    return NativeFormat::MpichJson;
  return std::nullopt;
}

llvm::StringRef name(NativeFormat f) {
  return f == NativeFormat::OmpiRules ? "ompi-rules" : "mpich-json";
}

llvm::StringRef mpiName(NativeFormat f) {
  return f == NativeFormat::OmpiRules ? "Open MPI" : "MPICH";
}

namespace {

llvm::Error failure(const llvm::Twine &m) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), m.str());
}

//===-- Open MPI's coll/tuned ---------------------------------------------===//

/// coll/tuned's collective numbers (ompi/mca/coll/base/coll_base_functions.h).
int ompiCollective(ir::Collective c) {
  switch (c) {
  case ir::Collective::Allgather:
    return 0;
  case ir::Collective::Allreduce:
    return 2;
  case ir::Collective::Bcast:
    return 7;
  case ir::Collective::Exscan:
    return 8;
  case ir::Collective::Reduce:
    return 11;
  case ir::Collective::ReduceScatterBlock:
    return 13;
  case ir::Collective::Scan:
    return 14;
  case ir::Collective::Alltoall: // not emitted (nativeAlgorithms)
  case ir::Collective::Gather:
  case ir::Collective::Scatter:
  case ir::Collective::Barrier:
    break;
  }
  return -1;
}

/// coll/tuned's algorithms of the collective numbered `id`, in Open MPI 4.1
/// (`ompi_info --param coll tuned --level 9`), index = algorithm number; the
/// comments of the rules file name them. Empty for other collectives.
std::vector<llvm::StringRef> ompiAlgorithmNames(int id) {
  switch (id) {
  case 0:
    return {"", "linear", "bruck", "recursive_doubling", "ring", "neighbor", "two_proc"};
  case 2:
    return {"",     "basic_linear",   "nonoverlapping", "recursive_doubling",
            "ring", "segmented_ring", "rabenseifner"};
  case 7:
    return {"",
            "basic_linear",
            "chain",
            "pipeline",
            "split_binary_tree",
            "binary_tree",
            "binomial",
            "knomial",
            "scatter_allgather",
            "scatter_allgather_ring"};
  case 8:
    return {"", "linear", "recursive_doubling"};
  case 11:
    return {"",       "linear",   "chain",           "pipeline",
            "binary", "binomial", "in-order_binary", "rabenseifner"};
  case 13:
    return {"", "basic_linear", "recursive_doubling", "recursive_halving", "butterfly"};
  case 14:
    return {"", "linear", "recursive_doubling"};
  default:
    return {};
  }
}

llvm::StringRef ompiCollectiveName(int id) {
  switch (id) {
  case 0:
    return "allgather";
  case 1:
    return "allgatherv";
  case 2:
    return "allreduce";
  case 3:
    return "alltoall";
  case 4:
    return "alltoallv";
  case 5:
    return "alltoallw";
  case 6:
    return "barrier";
  case 7:
    return "bcast";
  case 8:
    return "exscan";
  case 9:
    return "gather";
  case 10:
    return "gatherv";
  case 11:
    return "reduce";
  case 12:
    return "reduce_scatter";
  case 13:
    return "reduce_scatter_block";
  case 14:
    return "scan";
  case 15:
    return "scatter";
  case 16:
    return "scatterv";
  default:
    return "";
  }
}

/// The rules file as Open MPI reads it: numbers, `#` to the end of a line a
/// comment. Collectives, each with communicator sizes ascending (a size's
/// rules serve communicators from that size up to the next one listed), each
/// with message sizes ascending (a rule serves from its size up to the next).
struct OmpiMessageRule {
  uint64_t bytes = 0;
  int64_t algorithm = 0, fanout = 0, segsize = 0;
};
struct OmpiCommRule {
  uint64_t ranks = 0;
  std::vector<OmpiMessageRule> messages;
};
struct OmpiCollectiveRules {
  int64_t id = 0;
  std::vector<OmpiCommRule> comms;
};

/// The numbers of a rules file, each with its line; errors name the line.
llvm::Expected<std::vector<std::pair<int64_t, unsigned>>> ompiNumbers(llvm::StringRef text) {
  std::vector<std::pair<int64_t, unsigned>> out;
  unsigned line = 1;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '\n') {
      ++line, ++i;
    } else if (c == '#') {
      i = text.find('\n', i);
      if (i == llvm::StringRef::npos)
        break;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])))
        ++j;
      int64_t v = 0;
      if (text.slice(i, j).getAsInteger(10, v) || v > INT_MAX)
        return failure(llvm::formatv("line {0}: '{1}' is too large for Open MPI (at most {2})",
                                     line, text.slice(i, j), INT_MAX));
      out.emplace_back(v, line);
      i = j;
    } else {
      return failure(llvm::formatv("line {0}: '{1}' is neither a number nor a # comment", line, c));
    }
  }
  return out;
}

llvm::Expected<std::vector<OmpiCollectiveRules>> parseOmpiRules(llvm::StringRef text) {
  llvm::Expected<std::vector<std::pair<int64_t, unsigned>>> nums = ompiNumbers(text);
  if (!nums)
    return nums.takeError();
  size_t at = 0;
  std::string missing; // what the file ends without
  auto take = [&](const char *what, int64_t &v) {
    if (at == nums->size()) {
      if (missing.empty())
        missing = what;
      return false;
    }
    v = (*nums)[at++].first;
    return true;
  };
  std::vector<OmpiCollectiveRules> out;
  if (nums->empty())
    return out;
  int64_t ncoll = 0;
  take("the number of collectives", ncoll);
  for (int64_t k = 0; k < ncoll && missing.empty(); ++k) {
    OmpiCollectiveRules coll;
    int64_t ncomm = 0;
    if (!take("a collective's number", coll.id) || !take("its number of communicator sizes", ncomm))
      break;
    for (int64_t j = 0; j < ncomm && missing.empty(); ++j) {
      OmpiCommRule comm;
      int64_t ranks = 0, nmsg = 0;
      if (!take("a communicator size", ranks) || !take("its number of message sizes", nmsg))
        break;
      comm.ranks = uint64_t(ranks);
      for (int64_t m = 0; m < nmsg; ++m) {
        OmpiMessageRule rule;
        int64_t bytes = 0;
        const char *four = "a message rule's four numbers";
        if (!take(four, bytes) || !take(four, rule.algorithm) || !take(four, rule.fanout) ||
            !take(four, rule.segsize))
          break;
        rule.bytes = uint64_t(bytes);
        comm.messages.push_back(rule);
      }
      coll.comms.push_back(std::move(comm));
    }
    out.push_back(std::move(coll));
  }
  if (!missing.empty())
    return failure("the file ends where " + missing + " should be");
  if (at != nums->size())
    return failure(
        llvm::formatv("line {0}: numbers after the last collective's rules", (*nums)[at].second));
  return out;
}

std::string printOmpiRules(const std::vector<OmpiCollectiveRules> &colls) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "# Open MPI coll/tuned dynamic rules, written by collc tune (docs/tune.md, \"Tuning\n"
        "# files for MPIs' own algorithms\"). Use them with\n"
        "#   mpirun --mca coll_tuned_use_dynamic_rules 1 "
        "--mca coll_tuned_dynamic_rules_filename FILE ...\n"
        "# A communicator size's rules serve communicators from that size up to the next\n"
        "# size listed; a message rule, \"bytes algorithm fanout segsize\", serves calls\n"
        "# whose whole vector is from its bytes up to the next rule's. Algorithm 0 leaves\n"
        "# the choice to Open MPI. collc tune --emit ompi-rules merges into this file.\n";
  os << llvm::formatv("{0,-12}# collectives\n", colls.size());
  for (const OmpiCollectiveRules &c : colls) {
    os << llvm::formatv("{0,-12}# {1}\n", c.id, ompiCollectiveName(int(c.id)));
    os << llvm::formatv("{0,-12}# communicator sizes\n", c.comms.size());
    const std::vector<llvm::StringRef> algs = ompiAlgorithmNames(int(c.id));
    for (const OmpiCommRule &comm : c.comms) {
      os << llvm::formatv("{0,-12}# from {0} ranks\n", comm.ranks);
      os << llvm::formatv("{0,-12}# message sizes\n", comm.messages.size());
      for (const OmpiMessageRule &m : comm.messages) {
        const std::string rule =
            llvm::formatv("{0} {1} {2} {3}", m.bytes, m.algorithm, m.fanout, m.segsize).str();
        os << llvm::formatv("{0,-24}# from {1}: ", rule, formatBytes(m.bytes));
        if (m.algorithm == 0)
          os << "Open MPI's own choice\n";
        else if (size_t(m.algorithm) < algs.size())
          os << algs[size_t(m.algorithm)] << '\n';
        else
          os << "algorithm " << m.algorithm << '\n';
      }
    }
  }
  return os.str();
}

llvm::Expected<std::string> ompiRulesFile(const TuneResult &r,
                                          const std::vector<NativeRange> &ranges,
                                          llvm::StringRef existing) {
  llvm::Expected<std::vector<OmpiCollectiveRules>> colls = parseOmpiRules(existing);
  if (!colls)
    return failure("it is not an Open MPI rules file: " + llvm::toString(colls.takeError()));
  const int id = ompiCollective(r.options.collective);
  auto coll = llvm::find_if(*colls, [&](const OmpiCollectiveRules &c) { return c.id == id; });
  if (coll == colls->end()) {
    colls->push_back(OmpiCollectiveRules{id, {}});
    coll = std::prev(colls->end());
  }
  OmpiCommRule mine{r.options.ranks, {}};
  for (const NativeRange &g : ranges) {
    if (g.minBytes > uint64_t(INT_MAX))
      return failure(llvm::formatv("a range starts at {0} bytes, beyond what Open MPI 4.1 reads "
                                   "({1}); tune for smaller sizes",
                                   g.minBytes, INT_MAX));
    mine.messages.push_back(OmpiMessageRule{g.minBytes, g.algorithm.id, 0, 0});
  }
  std::vector<OmpiCommRule> &comms = coll->comms;
  auto put = [&](OmpiCommRule rule, bool replace) {
    auto it = llvm::find_if(comms, [&](const OmpiCommRule &c) { return c.ranks == rule.ranks; });
    if (it == comms.end())
      comms.push_back(std::move(rule));
    else if (replace)
      *it = std::move(rule);
  };
  put(std::move(mine), true);
  // Communicators larger than this tuning's keep Open MPI's own choice,
  // unless the file says otherwise already.
  put(OmpiCommRule{uint64_t(r.options.ranks) + 1, {OmpiMessageRule{}}}, false);
  llvm::sort(comms, [](const OmpiCommRule &a, const OmpiCommRule &b) { return a.ranks < b.ranks; });
  llvm::sort(*colls, [](const OmpiCollectiveRules &a, const OmpiCollectiveRules &b) {
    return a.id < b.id;
  });
  return printOmpiRules(*colls);
}

//===-- MPICH's collective selection JSON ---------------------------------===//

/// A selection file as MPICH reads it: objects only, each key a condition
/// ("collective=allreduce", "avg_msg_size<65536", "algorithm=MPIR_...") and
/// each value an object; siblings are tried in order, so the order is kept.
struct JsonKid;
struct JsonNode {
  std::vector<JsonKid> kids;
  JsonNode *find(llvm::StringRef key);
};
/// A key and its object (`first`, `second`, as in a map).
struct JsonKid {
  std::string first;
  JsonNode second;
};

JsonNode *JsonNode::find(llvm::StringRef key) {
  for (JsonKid &k : kids)
    if (k.first == key)
      return &k.second;
  return nullptr;
}

class JsonReader {
public:
  explicit JsonReader(llvm::StringRef text) : text_(text) {}

  llvm::Expected<JsonNode> document() {
    JsonNode root;
    if (!object(root, 0))
      return failure(error_);
    space();
    if (at_ != text_.size())
      return failure(where() + ": text after the selection's closing '}'");
    return root;
  }

private:
  llvm::StringRef text_;
  size_t at_ = 0;
  std::string error_;

  std::string where() const {
    const llvm::StringRef before = text_.take_front(at_);
    const size_t line = before.count('\n') + 1;
    const size_t col =
        at_ - (before.rfind('\n') == llvm::StringRef::npos ? 0 : before.rfind('\n') + 1) + 1;
    return llvm::formatv("{0}:{1}", line, col).str();
  }
  bool fail(const llvm::Twine &m) {
    if (error_.empty())
      error_ = where() + ": " + m.str();
    return false;
  }
  void space() {
    while (at_ < text_.size() && llvm::StringRef(" \t\r\n").contains(text_[at_]))
      ++at_;
  }
  bool eat(char c) {
    space();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  bool string(std::string &out) {
    if (!eat('"'))
      return fail("expected a key in double quotes (MPICH's selection holds only objects)");
    while (at_ < text_.size() && text_[at_] != '"') {
      char c = text_[at_++];
      if (c == '\\') {
        if (at_ == text_.size() || !llvm::StringRef("\"\\/").contains(text_[at_]))
          return fail("an escape other than \\\" \\\\ \\/ in a key");
        c = text_[at_++];
      }
      out += c;
    }
    if (at_ == text_.size())
      return fail("a key without its closing '\"'");
    ++at_;
    return true;
  }
  bool object(JsonNode &node, unsigned depth) {
    if (depth > 64)
      return fail("objects nested more than 64 deep");
    if (!eat('{'))
      return fail("expected '{' (MPICH's selection holds only objects)");
    if (eat('}'))
      return true;
    do {
      std::string key;
      JsonNode kid;
      if (!string(key))
        return false;
      if (!eat(':'))
        return fail("expected ':' after \"" + key + "\"");
      if (!object(kid, depth + 1))
        return false;
      node.kids.push_back(JsonKid{std::move(key), std::move(kid)});
    } while (eat(','));
    return eat('}') || fail("expected ',' or '}'");
  }
};

void printJson(llvm::raw_ostream &os, const JsonNode &n, unsigned indent) {
  if (n.kids.empty()) {
    os << "{}";
    return;
  }
  os << "{\n";
  for (size_t i = 0; i < n.kids.size(); ++i) {
    os.indent(indent + 2) << '"';
    for (char c : n.kids[i].first)
      os << (c == '"' || c == '\\' ? "\\" : "") << c;
    os << "\": ";
    printJson(os, n.kids[i].second, indent + 2);
    os << (i + 1 < n.kids.size() ? ",\n" : "\n");
  }
  os.indent(indent) << '}';
}

JsonNode leaf(llvm::StringRef algorithm) {
  JsonNode n;
  n.kids.push_back(JsonKid{"algorithm=" + algorithm.str(), JsonNode{}});
  return n;
}

JsonNode branch(std::initializer_list<JsonKid> kids) {
  JsonNode n;
  for (const auto &k : kids)
    n.kids.push_back(k);
  return n;
}

/// The MPIR function that serves what `alg` does not: MPICH calls whatever
/// the file names without checking its conditions (some assert them), so the
/// file guards them itself.
JsonNode mpichLeaf(ir::Collective c, llvm::StringRef alg) {
  using C = ir::Collective;
  // Built-in operations and count >= the largest power of two <= p only.
  if (alg == "MPIR_Allreduce_intra_reduce_scatter_allgather" ||
      alg == "MPIR_Reduce_intra_reduce_scatter_gather") {
    const JsonNode safe = leaf(c == C::Allreduce ? "MPIR_Allreduce_intra_recursive_doubling"
                                                 : "MPIR_Reduce_intra_binomial");
    return branch({{"is_op_built_in=yes", branch({{"count<pow2", safe}, {"count=any", leaf(alg)}})},
                   {"is_op_built_in=no", safe}});
  }
  // Commutative operations only.
  if (alg == "MPIR_Reduce_scatter_block_intra_recursive_halving" ||
      alg == "MPIR_Reduce_scatter_block_intra_pairwise")
    return branch(
        {{"is_commutative=yes", leaf(alg)},
         {"is_commutative=no", leaf("MPIR_Reduce_scatter_block_intra_recursive_doubling")}});
  return leaf(alg);
}

/// The size condition MPICH defines for a collective (none for scan and
/// exscan): the per-process vector, or every rank's blocks for allgather and
/// reduce_scatter_block — collc's bytes either way.
llvm::StringRef mpichSizeKey(ir::Collective c) {
  switch (c) {
  case ir::Collective::Allreduce:
  case ir::Collective::Reduce:
  case ir::Collective::Bcast:
    return "avg_msg_size";
  case ir::Collective::Allgather:
  case ir::Collective::ReduceScatterBlock:
    return "total_msg_size";
  case ir::Collective::Scan:
  case ir::Collective::Exscan:
  case ir::Collective::Alltoall: // not emitted (nativeAlgorithms)
  case ir::Collective::Gather:
  case ir::Collective::Scatter:
  case ir::Collective::Barrier:
    return "";
  }
  return "";
}

/// The collective's intra-communicator selection in a file (its
/// "comm_type=intra" branch, or the collective's whole selection where it
/// does not tell communicator types apart, as exscan's), or an error.
llvm::Expected<JsonNode *> mpichIntra(JsonNode &root, ir::Collective c) {
  const std::string key = "collective=" + ir::name(c).str();
  JsonNode *coll = root.find(key);
  if (!coll)
    return failure("it has no \"" + key +
                   "\"; MPICH needs a selection for every collective "
                   "(start from MPICH's own: leave the file out and collc tune writes it)");
  if (JsonNode *intra = coll->find("comm_type=intra"))
    return intra;
  if (llvm::any_of(coll->kids,
                   [](const auto &k) { return llvm::StringRef(k.first).startswith("comm_type="); }))
    return failure("its \"" + key + "\" has no \"comm_type=intra\" branch");
  return coll;
}

llvm::Expected<std::string> mpichJsonFile(const TuneResult &r,
                                          const std::vector<NativeRange> &ranges,
                                          llvm::StringRef existing) {
  if (existing.trim().empty())
    return failure("MPICH's file is written over MPICH's own selection, and none was given");
  llvm::Expected<JsonNode> root = JsonReader(existing).document();
  if (!root)
    return failure("it is not an MPICH selection file: " + llvm::toString(root.takeError()));
  const ir::Collective c = r.options.collective;
  llvm::Expected<JsonNode *> intra = mpichIntra(*root, c);
  if (!intra)
    return intra.takeError();
  JsonNode mine;
  const llvm::StringRef sizeKey = mpichSizeKey(c);
  if (sizeKey.empty()) {
    if (ranges.size() != 1)
      return failure(llvm::formatv("MPICH selects {0} by no message size, and the ranges "
                                   "found two algorithms",
                                   ir::name(c)));
    mine = mpichLeaf(c, ranges[0].algorithm.name);
  } else {
    for (const NativeRange &g : ranges)
      mine.kids.push_back(JsonKid{g.maxBytes == rt::bundle::unbounded
                                      ? (sizeKey + "=any").str()
                                      : llvm::formatv("{0}<{1}", sizeKey, g.maxBytes).str(),
                                  mpichLeaf(c, g.algorithm.name)});
  }
  // Communicators of P ranks get the tuned choice and every other size the
  // selection the file had; a selection this wrapped for the same P before
  // has its middle replaced.
  const std::string below = llvm::formatv("comm_size<{0}", r.options.ranks).str();
  const std::string at = llvm::formatv("comm_size<={0}", r.options.ranks).str();
  JsonNode &sel = **intra;
  if (sel.kids.size() == 3 && sel.kids[0].first == below && sel.kids[1].first == at &&
      sel.kids[2].first == "comm_size=any") {
    sel.kids[1].second = std::move(mine);
  } else {
    JsonNode before = sel;
    sel = branch({{below, before}, {at, mine}, {"comm_size=any", before}});
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  printJson(os, *root, 0);
  os << '\n';
  return os.str();
}

} // namespace

std::vector<NativeAlgorithm> nativeAlgorithms(ir::Collective c, NativeFormat f) {
  using C = ir::Collective;
  if (f == NativeFormat::OmpiRules) {
    const std::vector<llvm::StringRef> names = ompiAlgorithmNames(ompiCollective(c));
    auto alg = [&](llvm::StringRef collc, int id) { return NativeAlgorithm{collc, id, names[id]}; };
    switch (c) {
    case C::Allreduce:
      return {alg("recursive_doubling", 3), alg("rabenseifner", 6), alg("ring", 4)};
    case C::Reduce:
      return {alg("binomial", 5), alg("binary_tree", 6), alg("rabenseifner", 7)};
    case C::ReduceScatterBlock:
      return {alg("recursive_halving", 3)};
    case C::Scan:
    case C::Exscan:
      return {alg("chain", 1), alg("recursive_doubling", 2)};
    case C::Allgather:
      return {alg("ring", 4), alg("recursive_doubling", 3), alg("bruck", 2)};
    case C::Bcast:
      return {alg("binomial", 6), alg("scatter_allgather", 9)};
    case C::Alltoall: // not yet: the MPIs select these by a block's bytes
    case C::Gather:
    case C::Scatter:
    case C::Barrier:
      return {};
    }
    return {};
  }
  auto alg = [](llvm::StringRef collc, llvm::StringRef mpir) {
    return NativeAlgorithm{collc, 0, mpir};
  };
  switch (c) {
  case C::Allreduce:
    return {alg("recursive_doubling", "MPIR_Allreduce_intra_recursive_doubling"),
            alg("rabenseifner", "MPIR_Allreduce_intra_reduce_scatter_allgather")};
  case C::Reduce:
    return {alg("binomial", "MPIR_Reduce_intra_binomial"),
            alg("rabenseifner", "MPIR_Reduce_intra_reduce_scatter_gather")};
  case C::ReduceScatterBlock:
    return {alg("recursive_halving", "MPIR_Reduce_scatter_block_intra_recursive_halving"),
            alg("pairwise", "MPIR_Reduce_scatter_block_intra_pairwise")};
  case C::Scan:
    return {alg("recursive_doubling", "MPIR_Scan_intra_recursive_doubling")};
  case C::Exscan:
    return {alg("recursive_doubling", "MPIR_Exscan_intra_recursive_doubling")};
  case C::Allgather:
    return {alg("ring", "MPIR_Allgather_intra_ring"),
            alg("recursive_doubling", "MPIR_Allgather_intra_recursive_doubling"),
            alg("bruck", "MPIR_Allgather_intra_brucks")};
  case C::Bcast:
    return {alg("binomial", "MPIR_Bcast_intra_binomial"),
            alg("scatter_allgather", "MPIR_Bcast_intra_scatter_ring_allgather")};
  case C::Alltoall:
  case C::Gather:
  case C::Scatter:
  case C::Barrier:
    return {};
  }
  return {};
}

llvm::Expected<std::vector<NativeRange>> nativeRanges(const TuneResult &r, NativeFormat f) {
  const std::vector<NativeAlgorithm> pairs = nativeAlgorithms(r.options.collective, f);
  if (pairs.empty())
    return failure(llvm::formatv("--emit {0}: collc does not write {1}'s selection for {2} yet",
                                 name(f), mpiName(f), ir::name(r.options.collective)));
  // The candidates that are one of the pairs, each with the times it was
  // simulated at (a duplicate's are its original's).
  std::vector<std::pair<size_t, NativeAlgorithm>> usable;
  for (size_t i = 0; i < r.candidates.size(); ++i) {
    const CandidateResult &c = r.candidates[i];
    const size_t timed = c.status == Status::Duplicate ? c.duplicateOf : i;
    if (r.candidates[timed].status != Status::Compiled || c.candidate.segments != 1 ||
        !c.candidate.params.empty() || !c.candidate.algorithm || c.candidate.algorithm->user)
      continue;
    for (const NativeAlgorithm &a : pairs)
      if (a.collc == c.candidate.algorithm->name)
        usable.emplace_back(i, a);
  }
  if (usable.empty()) {
    std::string list;
    for (const NativeAlgorithm &a : pairs)
      list += (list.empty() ? "" : ", ") + a.collc.str();
    return failure(llvm::formatv("--emit {0}: no compiled candidate is an algorithm {1} has "
                                 "(for {2}: {3}, without --segments above 1 or parameters "
                                 "set)",
                                 name(f), mpiName(f), ir::name(r.options.collective),
                                 list.empty() ? std::string("none") : list));
  }
  auto timeAt = [&](size_t i, size_t s) {
    const CandidateResult &c = r.candidates[i];
    return r.candidates[c.status == Status::Duplicate ? c.duplicateOf : i].times[s].time;
  };
  const std::vector<uint64_t> &sizes = r.options.sizes;
  std::vector<NativeRange> out;
  for (size_t s = 0; s < sizes.size(); ++s) {
    size_t best = 0;
    for (size_t u = 1; u < usable.size(); ++u)
      if (timeAt(usable[u].first, s) < timeAt(usable[best].first, s))
        best = u;
    if (!out.empty() && out.back().candidate == usable[best].first)
      continue;
    const uint64_t from = s == 0 ? 0 : boundaryBetween(sizes[s - 1], sizes[s], r.options.elemBytes);
    if (!out.empty())
      out.back().maxBytes = from;
    out.push_back(
        NativeRange{from, rt::bundle::unbounded, usable[best].first, usable[best].second});
  }
  return out;
}

llvm::Error checkNativeFile(NativeFormat f, ir::Collective c, llvm::StringRef existing) {
  if (f == NativeFormat::OmpiRules) {
    if (llvm::Expected<std::vector<OmpiCollectiveRules>> colls = parseOmpiRules(existing); !colls)
      return failure("it is not an Open MPI rules file: " + llvm::toString(colls.takeError()));
    return llvm::Error::success();
  }
  llvm::Expected<JsonNode> root = JsonReader(existing).document();
  if (!root)
    return failure("it is not an MPICH selection file: " + llvm::toString(root.takeError()));
  llvm::Expected<JsonNode *> intra = mpichIntra(*root, c);
  return intra ? llvm::Error::success() : intra.takeError();
}

llvm::Expected<std::string> nativeFile(const TuneResult &r, NativeFormat f,
                                       llvm::StringRef existing) {
  llvm::Expected<std::vector<NativeRange>> ranges = nativeRanges(r, f);
  if (!ranges)
    return ranges.takeError();
  if (f == NativeFormat::MpichJson)
    return mpichJsonFile(r, *ranges, existing);
  return ompiRulesFile(r, *ranges, existing);
}

llvm::Expected<std::string> mpichDefaultSelection(llvm::StringRef library) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buf =
      llvm::MemoryBuffer::getFile(library, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf)
    return failure("cannot read MPICH's library '" + library + "': " + buf.getError().message());
  // The selection is a C string in the library's read-only data: the
  // NUL-delimited text around an MPIR algorithm's name that reads as a
  // selection with every collective collc tunes.
  const llvm::StringRef data = (*buf)->getBuffer();
  for (size_t hit = data.find("\"algorithm=MPIR_"); hit != llvm::StringRef::npos;) {
    const size_t begin = data.rfind('\0', hit) + 1; // npos + 1 == 0
    size_t end = data.find('\0', hit);
    if (end == llvm::StringRef::npos)
      end = data.size();
    const llvm::StringRef text = data.slice(begin, end);
    if (llvm::Expected<JsonNode> root = JsonReader(text).document()) {
      bool complete = true;
      for (ir::Collective c : {ir::Collective::Allreduce, ir::Collective::Reduce,
                               ir::Collective::ReduceScatterBlock, ir::Collective::Allgather,
                               ir::Collective::Bcast, ir::Collective::Scan, ir::Collective::Exscan})
        if (llvm::Expected<JsonNode *> intra = mpichIntra(*root, c); !intra) {
          llvm::consumeError(intra.takeError());
          complete = false;
        }
      if (complete)
        return text.str();
    } else {
      llvm::consumeError(root.takeError());
    }
    hit = data.find("\"algorithm=MPIR_", end);
  }
  return failure("'" + library +
                 "' holds no MPIR collective selection collc can read (is it "
                 "MPICH 4's libmpich?)");
}

} // namespace collc::tune
