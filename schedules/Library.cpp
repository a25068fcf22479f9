// schedules/Library.cpp: the registry over the embedded algorithm files.
#include "schedules/Embedded.h"
#include "schedules/Generators.h"

#include "lang/Instantiator.h"
#include "lang/Parser.h"
#include "ir/Wording.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <atomic>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <set>

namespace collc::sched {

namespace {

struct Library;

/// elsewhereNote over `table` (the registry while it is being built, too).
std::string elsewhereIn(llvm::ArrayRef<Algorithm> table, ir::Collective c, llvm::StringRef name) {
  std::vector<llvm::StringRef> others;
  for (const Algorithm &a : table)
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

/// What addUserAlgorithms asks the registry to read when it is built, and
/// what went wrong.
struct UserRequest {
  std::vector<std::string> folders, files;
  bool keepGoing = false;
  std::vector<std::string> errors;
};

UserRequest &userRequest() {
  static UserRequest r;
  return r;
}

std::atomic<bool> registryBuilt{false};

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
  std::deque<std::string> paths;    // the user's files, for Algorithm::file
  std::vector<Algorithm> table;
  LibraryResolver resolver{*this};

  Library() {
    registryBuilt = true;
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
    addUser(userRequest());
  }

  /// The user's files of `req`, each after its collective's algorithms.
  void addUser(UserRequest &req);

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
  const std::string elsewhere = elsewhereIn(lib_.table, c, name);
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      llvm::formatv("unknown {0} algorithm '{1}' ({2}known: {3}; or a file.calgo)",
                    ir::name(c), name, elsewhere.empty() ? "" : elsewhere + "; ",
                    known.empty() ? "none" : known)
          .str());
}

/// The .calgo files to read for `req`, in order, each real file once.
std::vector<std::string> userFiles(UserRequest &req) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](const std::string &path) {
    llvm::SmallString<256> real;
    if (llvm::sys::fs::real_path(path, real))
      real = path; // parseFile reports it
    if (seen.insert(real.str().str()).second)
      out.push_back(path);
  };
  for (const std::string &folder : req.folders) {
    if (!llvm::sys::fs::is_directory(folder)) {
      req.errors.push_back("library folder '" + folder + "': " +
                           (llvm::sys::fs::exists(folder) ? "not a folder"
                                                          : "no such folder"));
      continue;
    }
    std::error_code ec;
    std::vector<std::string> names;
    for (llvm::sys::fs::directory_iterator it(folder, ec), end; it != end && !ec;
         it.increment(ec))
      if (llvm::StringRef(it->path()).endswith(".calgo") &&
          !llvm::sys::fs::is_directory(it->path()))
        names.push_back(it->path());
    if (ec) {
      req.errors.push_back("library folder '" + folder + "': " + ec.message());
      continue;
    }
    std::sort(names.begin(), names.end());
    for (const std::string &n : names)
      add(n);
  }
  for (const std::string &f : req.files)
    add(f);
  return out;
}

void Library::addUser(UserRequest &req) {
  for (const std::string &path : userFiles(req)) {
    llvm::Expected<lang::Module> m = lang::parseFile(path);
    if (!m) {
      req.errors.push_back(llvm::toString(m.takeError()));
      continue;
    }
    if (const Algorithm *other = find(m->collective, m->name)) {
      req.errors.push_back(llvm::formatv("{0}: the {1} algorithm '{2}' is already {3}; rename "
                                         "one of them",
                                         path, ir::name(m->collective), m->name,
                                         other->user ? "defined by '" + other->file.str() + "'"
                                                     : "the library's (" + other->file.str() +
                                                           ", collc list)")
                               .str());
      continue;
    }
    modules.push_back(std::move(*m));
    lang::Module &mod = modules.back();
    mod.resolver = &resolver;
    paths.push_back(path);
    Algorithm a{mod.name, mod.collective, mod.commutative, mod.inPlace,
                mod.summary, paths.back(), &mod, /*user=*/true};
    // After the last algorithm of its collective (or at the end).
    size_t at = table.size();
    for (size_t i = table.size(); i-- > 0;)
      if (table[i].collective == a.collective) {
        at = i + 1;
        break;
      }
    table.insert(table.begin() + std::ptrdiff_t(at), a);
  }
  // What a file runs must resolve; a file that fails is left out, which may
  // fail another that runs it, so until none does.
  for (bool dropped = true; dropped;) {
    dropped = false;
    for (size_t i = 0; i < table.size(); ++i) {
      if (!table[i].user)
        continue;
      llvm::Expected<bool> c = lang::needsCommutative(*table[i].module, {});
      if (c) {
        table[i].needsCommutative = *c;
        continue;
      }
      req.errors.push_back(table[i].file.str() + ": " + llvm::toString(c.takeError()));
      table.erase(table.begin() + std::ptrdiff_t(i));
      dropped = true;
      break;
    }
  }
  if (!req.keepGoing && !req.errors.empty())
    llvm::erase_if(table, [](const Algorithm &a) { return a.user; });
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

llvm::Error addUserAlgorithms(llvm::ArrayRef<std::string> folders,
                              llvm::ArrayRef<std::string> files,
                              std::vector<std::string> *skipped) {
  if (folders.empty() && files.empty())
    return llvm::Error::success();
  if (registryBuilt)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: user algorithms added after the registry "
                                   "was built");
  UserRequest &req = userRequest();
  req.folders = folders.vec();
  req.files = files.vec();
  req.keepGoing = skipped != nullptr;
  (void)library();
  if (req.errors.empty())
    return llvm::Error::success();
  if (skipped) {
    skipped->insert(skipped->end(), req.errors.begin(), req.errors.end());
    return llvm::Error::success();
  }
  std::string all;
  for (const std::string &e : req.errors)
    all += (all.empty() ? "" : "\n") + e;
  return llvm::createStringError(llvm::inconvertibleErrorCode(), all);
}

std::vector<std::string> splitLibraryPath(llvm::StringRef value) {
  llvm::SmallVector<llvm::StringRef, 8> parts;
  value.split(parts, ':', -1, /*KeepEmpty=*/false);
  std::vector<std::string> out;
  for (llvm::StringRef p : parts)
    if (!p.trim().empty())
      out.push_back(p.trim().str());
  return out;
}

llvm::ArrayRef<Algorithm> algorithms() { return library().table; }

const Algorithm *findAlgorithm(ir::Collective c, llvm::StringRef name) {
  return library().find(c, name);
}

std::string elsewhereNote(ir::Collective c, llvm::StringRef name) {
  return elsewhereIn(algorithms(), c, name);
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
