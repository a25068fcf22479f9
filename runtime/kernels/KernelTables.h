// runtime/kernels/KernelTables.h: the kernel tables of each instruction-set
// build, indexed [op * kNumElemTypes + type] (private to runtime/kernels).
#ifndef COLLC_RUNTIME_KERNELS_KERNELTABLES_H
#define COLLC_RUNTIME_KERNELS_KERNELTABLES_H

#include "runtime/kernels/Kernels.h"

namespace collc::rt {
const KernelFn *baselineKernelTable();
const KernelFn *avx2KernelTable(); ///< only in builds with COLLC_HAVE_AVX2_KERNELS
} // namespace collc::rt

#endif // COLLC_RUNTIME_KERNELS_KERNELTABLES_H
