// schedules/Library.cpp: the registry over the embedded algorithm files.
#include "schedules/Embedded.h"
#include "schedules/Generators.h"

#include "lang/Instantiator.h"
#include "lang/Parser.h"
#include "ir/Wording.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>

namespace collc::sched {

namespace {

struct Library;

/// The library's algorithms by name, and files read once.
class LibraryResolver : public lang::Resolver {
public:
  explicit LibraryResolver(const Library &lib) : lib_(lib) {}
  llvm::Expected<const lang::Module *> resolve(ir::Collective c, llvm::StringRef name,
                                               const lang::Module &caller) const override;

private:
  const Library &lib_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::unique_ptr<lang::Module>> files_;
};

struct Library {
  std::deque<lang::Module> modules; // stable addresses for Algorithm::module
  std::vector<Algorithm> table;
  LibraryResolver resolver{*this};

  Library() {
    auto internal = [](llvm::Error e) {
      // The library is part of the build; tests parse and prove every file.
      std::fprintf(stderr, "collc: internal error: %s\n", llvm::toString(std::move(e)).c_str());
      std::abort();
    };
    for (const EmbeddedFile &f : embeddedFiles()) {
      llvm::Expected<lang::Module> m = lang::parse(f.text, f.name);
      if (!m)
        internal(m.takeError());
      modules.push_back(std::move(*m));
      lang::Module &mod = modules.back();
      mod.resolver = &resolver;
      table.push_back(Algorithm{mod.name, mod.collective, mod.commutative, mod.inPlace,
                                mod.summary, f.name, &mod});
    }
    // A composed algorithm needs commutativity when what it runs does.
    for (Algorithm &a : table) {
      llvm::Expected<bool> c = lang::needsCommutative(*a.module, {});
      if (!c)
        internal(c.takeError());
      a.needsCommutative = *c;
    }
  }

  const Algorithm *find(ir::Collective c, llvm::StringRef name) const {
    for (const Algorithm &a : table)
      if (a.collective == c && a.name == name)
        return &a;
    return nullptr;
  }
};

llvm::Expected<const lang::Module *> LibraryResolver::resolve(ir::Collective c,
                                                              llvm::StringRef name,
                                                              const lang::Module &) const {
  if (name.endswith(".calgo")) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = files_.find(name.str());
    if (it == files_.end()) {
      llvm::Expected<lang::Module> m = lang::parseFile(name);
      if (!m)
        return m.takeError();
      auto owned = std::make_unique<lang::Module>(std::move(*m));
      owned->resolver = this;
      it = files_.emplace(name.str(), std::move(owned)).first;
    }
    return it->second.get();
  }
  if (const Algorithm *a = lib_.find(c, name))
    return a->module;
  std::string known;
  for (const Algorithm &a : lib_.table)
    if (a.collective == c)
      known += (known.empty() ? "" : ", ") + a.name.str();
  const std::string elsewhere = elsewhereNote(c, name);
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      llvm::formatv("unknown {0} algorithm '{1}' ({2}known: {3}; or a file.calgo)",
                    ir::name(c), name, elsewhere.empty() ? "" : elsewhere + "; ",
                    known.empty() ? "none" : known)
          .str());
}

const Library &library() {
  static const Library lib;
  return lib;
}

lang::InstantiateOptions toLang(const GenOptions &o) {
  lang::InstantiateOptions l;
  l.ranks = o.ranks;
  l.root = o.root;
  l.params = o.params;
  l.maxOps = o.maxOps;
  l.layout = o.layout;
  l.resolver = &library().resolver;
  return l;
}

} // namespace

const lang::Resolver &libraryResolver() { return library().resolver; }

std::vector<Parameter> Algorithm::parameters() const {
  std::vector<Parameter> out;
  for (const lang::Param &prm : module->params) {
    Parameter q;
    q.name = prm.name;
    q.isAlgorithm = prm.isAlgorithm;
    q.defaultValue = prm.defaultValue;
    q.defaultAlgorithm = prm.defaultAlgorithm.name;
    q.collectives = prm.collectives;
    if (prm.isAlgorithm && !prm.collectives.empty())
      for (const Algorithm &a : algorithms()) {
        if (a.collective != prm.collectives[0])
          continue;
        bool everywhere = true;
        for (ir::Collective c : prm.collectives)
          everywhere = everywhere && findAlgorithm(c, a.name);
        if (!everywhere ||
            std::find(q.choices.begin(), q.choices.end(), a.name.str()) != q.choices.end())
          continue;
        // A choice that makes the algorithm run itself is refused here.
        lang::InstantiateOptions o;
        o.params = {{prm.name, lang::ParamValue(a.name.str())}};
        llvm::Expected<bool> ok = lang::needsCommutative(*module, o);
        if (!ok) {
          llvm::consumeError(ok.takeError());
          continue;
        }
        q.choices.push_back(a.name.str());
      }
    out.push_back(std::move(q));
  }
  return out;
}

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
  return library().find(c, name);
}

std::string elsewhereNote(ir::Collective c, llvm::StringRef name) {
  std::vector<llvm::StringRef> others;
  for (const Algorithm &a : algorithms())
    if (a.collective != c && a.name == name &&
        llvm::find(others, ir::name(a.collective)) == others.end())
      others.push_back(ir::name(a.collective));
  if (others.empty())
    return "";
  std::string list;
  for (size_t i = 0; i < others.size(); ++i)
    list += (i == 0 ? "" : i + 1 == others.size() ? " and " : ", ") + others[i].str();
  return "'" + name.str() + "' is " + ir::article(list).str() + " " + list + " algorithm";
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
