// runtime/api/Handles.cpp: deferred MPI_Op_free / MPI_Type_free (Handles.h).
#include "runtime/api/Handles.h"

#include "runtime/kernels/MpiTypes.h"

#include <dlfcn.h>

#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace {

/// The handles of one kind that requests hold, with their holds and whether
/// the user has freed them already.
template <class Handle> class Keeper {
public:
  using FreeFn = int (*)(Handle *);

  void hold(Handle h) {
    std::lock_guard<std::mutex> lock(mu_);
    ++held_[h].holds;
  }

  /// Releases one hold; true when `h` must now really be freed.
  bool release(Handle h) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = held_.find(h);
    if (it == held_.end() || --it->second.holds > 0)
      return false;
    const bool freed = it->second.freed;
    held_.erase(it);
    return freed;
  }

  /// Whether the user freed `h` while it is held.
  bool freedWhileHeld(Handle h) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = held_.find(h);
    return it != held_.end() && it->second.freed;
  }

  /// The user frees `h`: true when it is held (the free is deferred).
  bool deferFree(Handle h) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = held_.find(h);
    if (it == held_.end())
      return false;
    it->second.freed = true;
    return true;
  }

private:
  struct Entry {
    uint32_t holds = 0;
    bool freed = false;
  };
  std::mutex mu_;
  std::unordered_map<Handle, Entry> held_;
};

Keeper<MPI_Op> &ops() {
  static Keeper<MPI_Op> k;
  return k;
}
Keeper<MPI_Datatype> &types() {
  static Keeper<MPI_Datatype> k;
  return k;
}

/// The next definition of `name` after this library (the MPI library's, or
/// another interposer's), else `pmpi`.
template <class Fn> Fn nextDefinition(const char *name, Fn self, Fn pmpi) {
  auto next = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
  return next && next != self ? next : pmpi;
}

int realOpFree(MPI_Op *op) {
  static const auto next = nextDefinition<int (*)(MPI_Op *)>("MPI_Op_free", &MPI_Op_free,
                                                            &PMPI_Op_free);
  return next(op);
}

int realTypeFree(MPI_Datatype *type) {
  static const auto next = nextDefinition<int (*)(MPI_Datatype *)>(
      "MPI_Type_free", &MPI_Type_free, &PMPI_Type_free);
  return next(type);
}

bool isDerived(MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL)
    return false;
  int ints = 0, addrs = 0, types = 0, combiner = MPI_COMBINER_NAMED;
  PMPI_Type_get_envelope(type, &ints, &addrs, &types, &combiner);
  return combiner != MPI_COMBINER_NAMED;
}

} // namespace

namespace collc::rt {

bool holdOp(MPI_Op op) {
  if (op == MPI_OP_NULL || reduceOpOf(op))
    return false;
  ops().hold(op);
  return true;
}

void releaseOp(MPI_Op op) {
  int finalized = 0;
  if (ops().release(op) && PMPI_Finalized(&finalized) == MPI_SUCCESS && !finalized)
    (void)realOpFree(&op);
}

bool holdType(MPI_Datatype type) {
  if (!isDerived(type))
    return false;
  types().hold(type);
  return true;
}

void releaseType(MPI_Datatype type) {
  int finalized = 0;
  if (types().release(type) && PMPI_Finalized(&finalized) == MPI_SUCCESS && !finalized)
    (void)realTypeFree(&type);
}

bool handleFreesReachUs() {
  static std::once_flag once;
  static bool reach = false;
  std::call_once(once, [] {
    MPI_Datatype probe = MPI_DATATYPE_NULL;
    if (PMPI_Type_contiguous(1, MPI_BYTE, &probe) != MPI_SUCCESS)
      return;
    types().hold(probe);
    MPI_Datatype handle = probe;
    (void)MPI_Type_free(&handle); // as the program would: ours defers, MPI's frees
    reach = types().freedWhileHeld(probe);
    // Ours deferred it: free it now. MPI's freed it: only forget the hold.
    if (types().release(probe))
      (void)realTypeFree(&probe);
  });
  return reach;
}

int freeOp(MPI_Op *op) {
  if (op && *op != MPI_OP_NULL && ops().deferFree(*op)) {
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
  }
  return realOpFree(op);
}

int freeType(MPI_Datatype *type) {
  if (type && *type != MPI_DATATYPE_NULL && types().deferFree(*type)) {
    *type = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
  }
  return realTypeFree(type);
}

} // namespace collc::rt

