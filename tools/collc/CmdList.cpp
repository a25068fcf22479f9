// tools/collc/CmdList.cpp: `collc list` — the algorithms per collective.
#include "tools/collc/Commands.h"

#include "schedules/Generators.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

namespace collc::tool {

llvm::cl::SubCommand &ListCommand() {
  static llvm::cl::SubCommand sub("list", "List the algorithms (the library's schedules/*.calgo and the user's --library files) and their properties");
  return sub;
}

int runList() {
  const char *row = "{0,-10} {1,-22} {2,-12} {3,-9} {4,-30} {5}\n";
  llvm::outs() << llvm::formatv(row, "collective", "algorithm", "operations", "in-place",
                                "file", "description");
  for (const sched::Algorithm &a : sched::algorithms())
    llvm::outs() << llvm::formatv(row, ir::name(a.collective), a.name,
                                  a.needsCommutative ? "commutative" : "any",
                                  a.inPlace ? "yes" : "no", a.file, a.summary);
  return Success;
}

} // namespace collc::tool
