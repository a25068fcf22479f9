// tools/collc/CmdBundle.cpp: `collc bundle` — pack compiled plans for one
// (collective, ranks) with the message sizes each serves into a .cbundle
// (docs/bundle.md), or list a bundle's entries.
//
//   collc bundle small.cplan@0-2K large.cplan@2K- -o allreduce-8.cbundle
//   collc bundle --list allreduce-8.cbundle
//
// Like `compile`, it never writes a file the runtime would refuse: each plan
// goes through the loader, is proven by the verifier (unless --no-verify), and
// the finished bundle is read back by the bundle reader before it is written.
#include "tools/collc/Commands.h"

#include "compiler/Disasm.h"
#include "compiler/Lower.h"
#include "compiler/Verifier.h"
#include "runtime/bytecode/Bundle.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace collc::tool {

llvm::cl::SubCommand &BundleCommand() {
  static llvm::cl::SubCommand sub(
      "bundle", "Pack .cplan plans for one collective and rank count, each with the message "
                "sizes it serves, into a .cbundle (exit 0 written, 1 refused, 2 unreadable "
                "input)");
  return sub;
}

namespace {
namespace cl = llvm::cl;
cl::list<std::string> inputs(cl::Positional, cl::OneOrMore,
                             cl::desc("PLAN.cplan[@MIN-MAX]... (bytes of the whole vector, K/M/G = "
                                      "KiB/MiB/GiB, MAX excluded; default: all sizes); with "
                                      "--list: FILE.cbundle"),
                             cl::sub(BundleCommand()), cl::cat(category()));
cl::opt<std::string> output("o", cl::desc("Output file (.cbundle; - = stdout)"),
                            cl::value_desc("FILE"), cl::sub(BundleCommand()),
                            cl::cat(category()));
cl::opt<bool> list("list", cl::desc("Print the entries of a bundle"), cl::sub(BundleCommand()),
                   cl::cat(category()));
cl::opt<bool> extract("extract",
                      cl::desc("Write the plans of a bundle as .cplan files: -o DIR gets "
                               "NAME.I.cplan per entry I (NAME: the bundle's file name without "
                               ".cbundle); with --entry, -o names the one file"),
                      cl::sub(BundleCommand()), cl::cat(category()));
cl::opt<int> entry("entry", cl::desc("With --extract: only entry N"), cl::value_desc("N"),
                   cl::init(-1), cl::sub(BundleCommand()), cl::cat(category()));
cl::opt<bool> noVerify("no-verify", cl::desc("Bundle even plans that do not verify"),
                       cl::sub(BundleCommand()), cl::cat(category()));

llvm::Error misuse(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

bool readBytes(const std::string &path, std::vector<uint8_t> &bytes) {
  auto buf = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/false);
  if (!buf) {
    llvm::errs() << "collc: cannot read '" << path << "': " << buf.getError().message() << '\n';
    return false;
  }
  llvm::StringRef data = (*buf)->getBuffer();
  bytes.assign(data.begin(), data.end());
  return true;
}

/// Reads the one bundle `what` (--list, --extract) takes; Success or the
/// exit code, after reporting.
int readOneBundle(const char *what, rt::Bundle &b) {
  if (inputs.size() != 1)
    return reportMisuse(misuse(llvm::Twine(what) + " takes one bundle"));
  std::vector<uint8_t> bytes;
  if (!readBytes(inputs[0], bytes))
    return Misuse;
  if (rt::Status s = rt::readBundle(bytes, b); !s.ok()) {
    llvm::errs() << "collc: " << inputs[0] << ": " << s.message() << '\n';
    return Refused;
  }
  return Success;
}

int listBundle() {
  rt::Bundle b;
  if (int rc = readOneBundle("--list", b); rc != Success)
    return rc;
  llvm::raw_ostream &os = llvm::outs();
  os << "bundle: " << rt::name(b.collective) << ", " << b.ranks
     << (b.ranks == 1 ? " rank, " : " ranks, ") << b.entries.size()
     << (b.entries.size() == 1 ? " plan\n" : " plans\n");
  for (size_t i = 0; i < b.entries.size(); ++i) {
    const rt::Shape &s = b.plans[i].shape;
    os << llvm::formatv("  {0}: bytes {1,-10} {2,-20}", i,
                        rt::formatByteRange(b.entries[i].minBytes, b.entries[i].maxBytes),
                        b.plans[i].algorithm);
    if (rt::hasRoot(s.collective))
      os << " root " << s.root;
    const rt::Proof &proof = b.plans[i].proof;
    os << (s.commutative ? " commutative" : " any-op") << (s.inPlace ? " in-place" : "")
       << (!proof.verified   ? " UNPROVEN"
           : proof.identical ? " proven identical"
                             : " proven")
       << ", " << b.entries[i].plan.size() << " bytes\n";
  }
  return Success;
}

int extractBundle() {
  if (output.empty())
    return reportMisuse(misuse("--extract needs -o (a directory, or with --entry a file)"));
  rt::Bundle b;
  if (int rc = readOneBundle("--extract", b); rc != Success)
    return rc;
  auto bytesOf = [&](size_t i) {
    return llvm::StringRef(reinterpret_cast<const char *>(b.entries[i].plan.data()),
                           b.entries[i].plan.size());
  };
  if (entry >= 0) {
    if (size_t(entry) >= b.entries.size())
      return reportMisuse(misuse(llvm::formatv("--entry {0}: the bundle has {1} entries", entry,
                                               b.entries.size())));
    return writeOutput(output, bytesOf(size_t(entry))) ? Success : Misuse;
  }
  if (std::error_code ec = llvm::sys::fs::create_directories(output)) {
    llvm::errs() << "collc: cannot create '" << output << "': " << ec.message() << '\n';
    return Misuse;
  }
  llvm::StringRef stem = llvm::sys::path::filename(inputs[0]);
  stem.consume_back(".cbundle");
  for (size_t i = 0; i < b.entries.size(); ++i) {
    llvm::SmallString<256> path(output);
    llvm::sys::path::append(path, llvm::formatv("{0}.{1}.cplan", stem, i).str());
    if (!writeOutput(path, bytesOf(i)))
      return Misuse;
    llvm::outs() << path << ": bytes "
                 << rt::formatByteRange(b.entries[i].minBytes, b.entries[i].maxBytes) << ", "
                 << b.plans[i].algorithm << '\n';
  }
  return Success;
}

/// Warns about the message sizes no entry serves (per root, for reduce): a
/// gap is allowed (those calls fall to the drop-in's other choices) but is
/// more often a typo in a range.
void warnAboutGaps(const rt::Bundle &b) {
  std::vector<uint32_t> roots;
  for (const rt::LoadedPlan &p : b.plans)
    if (!llvm::is_contained(roots, p.shape.root))
      roots.push_back(p.shape.root);
  for (uint32_t root : roots) {
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    for (size_t i = 0; i < b.entries.size(); ++i)
      if (b.plans[i].shape.root == root)
        ranges.emplace_back(b.entries[i].minBytes, b.entries[i].maxBytes);
    llvm::sort(ranges);
    std::vector<std::pair<uint64_t, uint64_t>> gaps;
    uint64_t covered = 0; // [0, covered) is served
    for (auto [lo, hi] : ranges) {
      if (lo > covered)
        gaps.emplace_back(covered, lo);
      covered = std::max(covered, hi);
    }
    if (covered != rt::bundle::unbounded)
      gaps.emplace_back(covered, rt::bundle::unbounded);
    for (auto [lo, hi] : gaps)
      llvm::errs() << "collc: warning: no plan in the bundle serves "
                   << rt::formatByteRange(lo, hi) << " bytes"
                   << (rt::hasRoot(b.collective) ? " at root " + std::to_string(root) : "")
                   << "; such calls use the drop-in's other choices (rules, other files, the "
                      "default table)\n";
  }
}

} // namespace

int runBundle() {
  if (list && extract)
    return reportMisuse(misuse("--list and --extract exclude each other"));
  if (list)
    return listBundle();
  if (extract)
    return extractBundle();
  if (entry >= 0)
    return reportMisuse(misuse("--entry goes with --extract"));
  if (output.empty())
    return reportMisuse(misuse("no output file given (-o FILE.cbundle)"));
  std::vector<rt::BundleEntry> entries;
  for (const std::string &arg : inputs) {
    std::string path = arg;
    rt::BundleEntry e;
    const size_t at = arg.rfind('@');
    if (at != std::string::npos) {
      path = arg.substr(0, at);
      if (!rt::parseByteRange(arg.substr(at + 1), e.minBytes, e.maxBytes))
        return reportMisuse(misuse("'" + arg.substr(at + 1) + "' in '" + arg +
                                   "' is not a byte range (MIN-MAX, MIN- or -MAX, with "
                                   "optional K/M/G suffixes, MIN < MAX)"));
    }
    if (!readBytes(path, e.plan))
      return Misuse;
    rt::Proof proof;
    llvm::Expected<ir::Plan> plan = compiler::disassemble(e.plan, &proof);
    if (!plan) {
      llvm::errs() << "collc: " << path << ": " << llvm::toString(plan.takeError()) << '\n';
      return Refused;
    }
    if (!noVerify) {
      compiler::VerifyOptions vo;
      vo.requireIdentical = proof.identical; // a recorded claim is proven too
      compiler::VerifyResult r = compiler::verify(*plan, vo);
      if (!r.proven()) {
        for (const compiler::Diagnostic &d : r.diagnostics) {
          compiler::print(d, llvm::errs());
          llvm::errs() << '\n';
        }
        llvm::errs() << "collc: refusing to bundle '" << path
                     << "': it does not verify (--no-verify bundles it anyway)\n";
        return Refused;
      }
      if (!proof.verified) // proven now: record it, as compile would have
        e.plan = compiler::lower(*plan, rt::Proof{true, r.stats.identical});
    }
    entries.push_back(std::move(e));
  }
  std::vector<uint8_t> bytes;
  if (rt::Status s = rt::writeBundle(entries, bytes); !s.ok()) {
    llvm::errs() << "collc: cannot bundle: " << s.message() << '\n';
    return Refused;
  }
  rt::Bundle check; // the reader is the last word, as the loader is for compile
  if (rt::Status s = rt::readBundle(bytes, check); !s.ok()) {
    llvm::errs() << "collc: cannot bundle: " << s.message() << '\n';
    return Refused;
  }
  if (!writeOutput(output, llvm::StringRef(reinterpret_cast<const char *>(bytes.data()),
                                           bytes.size())))
    return Misuse;
  warnAboutGaps(check);
  return Success;
}

} // namespace collc::tool
