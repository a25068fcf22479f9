// runtime/kernels/KernelsAvx2.cpp: the kernel loops built for AVX2 (this file
// is compiled with -mavx2); used only where the CPU supports it.
#include "runtime/kernels/KernelLoops.h"
#include "runtime/kernels/KernelTables.h"

namespace collc::rt {
const KernelFn *avx2KernelTable() { return kKernels.data(); }
} // namespace collc::rt
