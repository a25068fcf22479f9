// tests/oracle/Oracle.cpp: the table of the oracle generators.
#include "tests/oracle/Oracle.h"

namespace collc::oracle {

llvm::ArrayRef<Generator> generators() {
  using ir::Collective;
  static const Generator table[] = {
      {"binary_tree", Collective::Allreduce, buildAllreduceBinaryTree},
      {"recursive_doubling", Collective::Allreduce, buildAllreduceRecursiveDoubling},
      {"rabenseifner", Collective::Allreduce, buildAllreduceRabenseifner},
      {"binary_blocks", Collective::Allreduce, buildAllreduceBinaryBlocks},
      {"ring", Collective::Allreduce, buildAllreduceRing},
      {"binomial", Collective::Reduce, buildReduceBinomial},
      {"binary_tree", Collective::Reduce, buildReduceBinaryTree},
      {"rabenseifner", Collective::Reduce, buildReduceRabenseifner},
  };
  return table;
}

} // namespace collc::oracle
