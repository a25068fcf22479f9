// tools/collc/LibraryFlags.cpp: --library DIR and COLLC_LIBRARY — the user's
// algorithm folders, added to the registry before any command reads it.
#include "tools/collc/Commands.h"

#include "schedules/Generators.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

namespace collc::tool {

namespace {
namespace cl = llvm::cl;
// Read from argv by loadUserLibraries (before parsing: `collc gen --help`
// lists the algorithms); declared here so that parsing accepts it and --help
// lists it under every command that reads algorithms.
cl::list<std::string> library("library",
                              cl::desc("Add every .calgo file in DIR to the algorithms "
                                       "(repeatable; also COLLC_LIBRARY=DIR:DIR...)"),
                              cl::value_desc("DIR"), cl::sub(ListCommand()),
                              cl::sub(GenCommand()), cl::sub(VerifyCommand()),
                              cl::sub(CompileCommand()), cl::sub(OptCommand()),
                              cl::sub(SimulateCommand()), cl::sub(TuneCommand()),
                              cl::sub(DrawCommand()), cl::sub(ExplainCommand()),
                              cl::cat(category()));

/// The value of option `name` at argv[i] ("--name V", "--name=V", one dash
/// too), advancing i past it; nullptr when argv[i] is not that option.
const char *optionValue(int argc, char **argv, int &i, llvm::StringRef name) {
  llvm::StringRef a = argv[i];
  if (!a.consume_front("--") && !a.consume_front("-"))
    return nullptr;
  if (a == name)
    return i + 1 < argc ? argv[++i] : nullptr;
  if (a.consume_front(name) && a.consume_front("="))
    return argv[i] + (llvm::StringRef(argv[i]).size() - a.size());
  return nullptr;
}
} // namespace

const std::vector<std::string> &libraryFlags() { return library; }

bool loadUserLibraries(int argc, char **argv) {
  std::vector<std::string> folders, files;
  const bool tune = argc > 1 && llvm::StringRef(argv[1]) == "tune";
  for (int i = 1; i < argc; ++i) {
    if (llvm::StringRef(argv[i]) == "--")
      break;
    if (const char *v = optionValue(argc, argv, i, "library")) {
      folders.push_back(v);
    } else if (const char *v = tune ? optionValue(argc, argv, i, "algorithms") : nullptr) {
      // tune --algorithms a,b,torus.calgo: the files are the user's algorithms.
      llvm::SmallVector<llvm::StringRef, 8> items;
      llvm::StringRef(v).split(items, ',', -1, /*KeepEmpty=*/false);
      for (llvm::StringRef it : items)
        if (it.trim().endswith(".calgo"))
          files.push_back(it.trim().str());
    }
  }
  if (const char *env = std::getenv("COLLC_LIBRARY"))
    for (std::string &f : sched::splitLibraryPath(env))
      folders.push_back(std::move(f));
  if (llvm::Error e = sched::addUserAlgorithms(folders, files)) {
    llvm::SmallVector<llvm::StringRef, 4> lines;
    const std::string text = llvm::toString(std::move(e));
    llvm::StringRef(text).split(lines, '\n');
    for (llvm::StringRef l : lines)
      llvm::errs() << "collc: " << l << '\n';
    return false;
  }
  return true;
}

} // namespace collc::tool
