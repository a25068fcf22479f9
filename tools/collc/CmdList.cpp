// tools/collc/CmdList.cpp: `collc list` — the algorithms per collective.
#include "tools/collc/Commands.h"

#include "schedules/Generators.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

namespace collc::tool {

llvm::cl::SubCommand &ListCommand() {
  static llvm::cl::SubCommand sub("list", "List the algorithm generators and their properties");
  return sub;
}

int runList() {
  llvm::outs() << llvm::formatv("{0,-12} {1,-20} {2,-13} {3,-9} {4}\n", "collective",
                                "algorithm", "operations", "in-place", "description");
  for (const sched::Algorithm &a : sched::algorithms())
    llvm::outs() << llvm::formatv("{0,-12} {1,-20} {2,-13} {3,-9} {4}\n",
                                  ir::name(a.collective), a.name,
                                  a.needsCommutative ? "commutative" : "any",
                                  a.inPlace ? "yes" : "no", a.summary);
  return Success;
}

} // namespace collc::tool
