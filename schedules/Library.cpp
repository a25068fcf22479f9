// schedules/Library.cpp: the registry over the embedded algorithm files.
#include "schedules/Embedded.h"
#include "schedules/Generators.h"

#include "compiler/lang/Instantiator.h"
#include "compiler/lang/Parser.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <deque>

namespace collc::sched {

namespace {

lang::InstantiateOptions toLang(const GenOptions &o) {
  lang::InstantiateOptions l;
  l.ranks = o.ranks;
  l.root = o.root;
  l.params = o.params;
  l.maxOps = o.maxOps;
  return l;
}

struct Library {
  std::deque<lang::Module> modules; // stable addresses for Algorithm::module
  std::vector<Algorithm> table;

  Library() {
    for (const EmbeddedFile &f : embeddedFiles()) {
      llvm::Expected<lang::Module> m = lang::parse(f.text, f.name);
      if (!m) {
        // The library is part of the build; tests parse every file.
        std::fprintf(stderr, "collc: internal error: %s\n",
                     llvm::toString(m.takeError()).c_str());
        std::abort();
      }
      modules.push_back(std::move(*m));
      const lang::Module &mod = modules.back();
      table.push_back(Algorithm{mod.name, mod.collective, mod.commutative, mod.inPlace,
                                mod.summary, f.name, &mod});
    }
  }
};

const Library &library() {
  static const Library lib;
  return lib;
}

} // namespace

bool Algorithm::accepts(const GenOptions &o) const {
  llvm::Expected<bool> ok = lang::accepts(*module, toLang(o));
  if (!ok) {
    llvm::consumeError(ok.takeError());
    return false;
  }
  return *ok;
}

ir::Plan Algorithm::build(const GenOptions &o) const {
  llvm::Expected<ir::Plan> plan = lang::instantiate(*module, toLang(o));
  if (!plan) {
    std::fprintf(stderr, "collc: internal error: %s\n",
                 llvm::toString(plan.takeError()).c_str());
    std::abort();
  }
  return std::move(*plan);
}

llvm::ArrayRef<Algorithm> algorithms() { return library().table; }

const Algorithm *findAlgorithm(ir::Collective c, llvm::StringRef name) {
  for (const Algorithm &a : algorithms())
    if (a.collective == c && a.name == name)
      return &a;
  return nullptr;
}

llvm::Expected<ir::Plan> generate(ir::Collective c, llvm::StringRef name,
                                  const GenOptions &opts) {
  const Algorithm *a = findAlgorithm(c, name);
  if (!a) {
    std::string known;
    for (const Algorithm &x : algorithms())
      if (x.collective == c)
        known += (known.empty() ? "" : ", ") + x.name.str();
    if (known.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "no generator for collective '%s'",
                                     ir::name(c).str().c_str());
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown %s algorithm '%s' (known: %s)",
                                   ir::name(c).str().c_str(), name.str().c_str(),
                                   known.c_str());
  }
  constexpr uint32_t maxRanks = 1u << 20;
  if (opts.ranks < 1 || opts.ranks > maxRanks)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--ranks %u out of range (1..%u)", opts.ranks, maxRanks);
  if (ir::hasRoot(c) ? opts.root >= opts.ranks : opts.root != 0)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        ir::hasRoot(c) ? llvm::formatv("--root {0} out of range (ranks = {1})", opts.root,
                                       opts.ranks)
                             .str()
                       : llvm::formatv("{0} has no root", ir::name(c)).str());
  llvm::Expected<ir::Plan> plan = lang::instantiate(*a->module, toLang(opts));
  if (plan)
    return plan;
  return llvm::handleErrors(plan.takeError(), [&](const lang::OpLimitError &e) -> llvm::Error {
    const std::string what =
        llvm::formatv("{0} {1} for {2} ranks", ir::name(c), name, opts.ranks).str();
    auto gb = [](double bytes) { return llvm::format("%.1f", bytes / 1e9); };
    if (e.estimate == 0)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          llvm::formatv("{0} has more than {1} ops (over {2} GB in memory); refused (the limit "
                        "is --max-ops)",
                        what, e.limit, gb(double(e.limit) * double(lang::planBytesPerOp)))
              .str());
    const std::string size =
        llvm::formatv("{0} would have about {1} ops (about {2} GB in memory)", what,
                      llvm::format("%.2e", double(e.estimate)),
                      gb(double(e.estimate) * double(lang::planBytesPerOp)))
            .str();
    if (e.memoryLimit)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          llvm::formatv("{0}, more than the {1} GB this process may use (physical memory, "
                        "ulimit -v); refused before generating",
                        size, gb(double(e.memoryLimit)))
              .str());
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("{0}; refused before generating (the limit is --max-ops {1})", size,
                      e.limit)
            .str());
  });
}

} // namespace collc::sched
