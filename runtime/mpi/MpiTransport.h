// runtime/mpi/MpiTransport.h: the interpreter's transport over MPI
// point-to-point messages on a (private) communicator.
//
// Requests are MPI_Isend / MPI_Irecv of the user's datatype; poll() runs
// MPI_Testsome / MPI_Waitsome over the active requests only (kept compact,
// so progress costs O(requests in flight), not O(ops)), or MPI_Wait /
// MPI_Test when one is left. A short send is tested once when it is posted:
// it usually leaves eagerly, and then no Waitsome is spent on it. Every MPI return code
// is checked and turned into text with MPI_Error_string.
#ifndef COLLC_RUNTIME_MPI_MPITRANSPORT_H
#define COLLC_RUNTIME_MPI_MPITRANSPORT_H

#include "runtime/core/Transport.h"

#include <mpi.h>

namespace collc::rt {

/// "MPI_Isend: MPI_ERR_TAG: invalid tag" for a failed MPI call.
Status mpiError(const char *call, int code);

class MpiTransport final : public Transport {
public:
  /// `comm` must have MPI_ERRORS_RETURN; `tagUb` is its MPI_TAG_UB.
  MpiTransport(MPI_Comm comm, MPI_Datatype type, int tagUb);
  ~MpiTransport() override;

  int maxTag() const override { return tagUb_; }
  Status send(const void *data, size_t elems, uint32_t peer, int tag, uint32_t id) override;
  Status recv(void *data, size_t elems, uint32_t peer, int tag, uint32_t id) override;
  Status poll(bool block, std::vector<uint32_t> &completed) override;
  void reserve(uint32_t capacity) override;
  /// Cancels and frees requests still in flight (after an error).
  void abandon() override;

private:
  void add(MPI_Request r, uint32_t id);
  MPI_Comm comm_;
  MPI_Datatype type_;
  int tagUb_;
  size_t typeSize_ = 0; ///< bytes per element (MPI_Type_size)
  std::vector<MPI_Request> active_;
  /// Sends that completed when they were posted: the next poll reports them
  /// without calling MPI.
  std::vector<uint32_t> early_;
  std::vector<uint32_t> ids_;
  std::vector<int> indices_;
};

} // namespace collc::rt

#endif // COLLC_RUNTIME_MPI_MPITRANSPORT_H
