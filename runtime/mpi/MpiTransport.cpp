// runtime/mpi/MpiTransport.cpp: MPI_Isend / MPI_Irecv / MPI_Testsome (MPI_Test for one).
#include "runtime/mpi/MpiTransport.h"

#include <climits>
#include <string>

namespace collc::rt {

Status mpiError(const char *call, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
    len = 0;
  return Status::error(ErrorCode::Mpi,
                       std::string(call) + ": " + std::string(text, size_t(len)));
}

namespace {
/// Sends up to this size are tested once when posted (MPI implementations
/// send them eagerly; Open MPI's shared-memory eager limit is 4 KiB).
constexpr size_t kEagerBytes = 4096;
} // namespace

MpiTransport::MpiTransport(MPI_Comm comm, MPI_Datatype type, int tagUb)
    : comm_(comm), type_(type), tagUb_(tagUb) {
  int size = 0;
  if (MPI_Type_size(type, &size) == MPI_SUCCESS && size > 0)
    typeSize_ = size_t(size);
}

MpiTransport::~MpiTransport() { abandon(); }

void MpiTransport::abandon() {
  for (MPI_Request &r : active_) {
    if (r == MPI_REQUEST_NULL)
      continue;
    MPI_Cancel(&r);
    MPI_Request_free(&r);
  }
  active_.clear();
  ids_.clear();
  early_.clear();
}

void MpiTransport::reserve(uint32_t capacity) {
  active_.reserve(capacity);
  ids_.reserve(capacity);
  early_.reserve(capacity);
  indices_.resize(capacity);
}

void MpiTransport::add(MPI_Request r, uint32_t id) {
  active_.push_back(r);
  ids_.push_back(id);
}

namespace {
/// MPI counts are ints: the error for a longer message (off the hot path).
[[gnu::cold]] Status tooLong(size_t elems) {
  return Status::error(ErrorCode::Unsupported, "a message of " + std::to_string(elems) +
                                                   " elements exceeds MPI's int counts");
}
} // namespace

Status MpiTransport::send(const void *data, size_t elems, uint32_t peer, int tag,
                          uint32_t id) {
  if (elems > size_t(INT_MAX)) [[unlikely]]
    return tooLong(elems);
  MPI_Request r;
  if (int rc = MPI_Isend(data, int(elems), type_, int(peer), tag, comm_, &r); rc != MPI_SUCCESS)
    return mpiError("MPI_Isend", rc);
  if (elems * typeSize_ <= kEagerBytes) {
    int done = 0;
    if (int rc = MPI_Test(&r, &done, MPI_STATUS_IGNORE); rc != MPI_SUCCESS) {
      if (r != MPI_REQUEST_NULL) // still in flight: abandon() must cancel it
        add(r, id);
      return mpiError("MPI_Test", rc);
    }
    if (done) {
      early_.push_back(id);
      return Status::success();
    }
  }
  add(r, id);
  return Status::success();
}

Status MpiTransport::recv(void *data, size_t elems, uint32_t peer, int tag, uint32_t id) {
  if (elems > size_t(INT_MAX)) [[unlikely]]
    return tooLong(elems);
  MPI_Request r;
  if (int rc = MPI_Irecv(data, int(elems), type_, int(peer), tag, comm_, &r); rc != MPI_SUCCESS)
    return mpiError("MPI_Irecv", rc);
  add(r, id);
  return Status::success();
}

Status MpiTransport::poll(bool block, std::vector<uint32_t> &completed) {
  if (!early_.empty()) { // progress enough: report them, look at the rest next time
    completed.insert(completed.end(), early_.begin(), early_.end());
    early_.clear();
    return Status::success();
  }
  if (active_.empty())
    return Status::success();
  if (active_.size() == 1) { // MPI_Wait / MPI_Test skip Waitsome's set-up
    int flag = 1;
    int rc = block ? MPI_Wait(&active_[0], MPI_STATUS_IGNORE)
                   : MPI_Test(&active_[0], &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
      return mpiError(block ? "MPI_Wait" : "MPI_Test", rc);
    if (flag) {
      completed.push_back(ids_[0]);
      active_.clear();
      ids_.clear();
    }
    return Status::success();
  }
  if (indices_.size() < active_.size())
    indices_.resize(active_.size());
  int outcount = 0;
  int rc = block ? MPI_Waitsome(int(active_.size()), active_.data(), &outcount, indices_.data(),
                                MPI_STATUSES_IGNORE)
                 : MPI_Testsome(int(active_.size()), active_.data(), &outcount, indices_.data(),
                                MPI_STATUSES_IGNORE);
  if (rc != MPI_SUCCESS)
    return mpiError(block ? "MPI_Waitsome" : "MPI_Testsome", rc);
  if (outcount == MPI_UNDEFINED || outcount == 0)
    return Status::success();
  for (int k = 0; k < outcount; ++k)
    completed.push_back(ids_[size_t(indices_[k])]);
  if (size_t(outcount) == active_.size()) {
    active_.clear();
    ids_.clear();
    return Status::success();
  }
  // Compact: drop the completed (now MPI_REQUEST_NULL) entries.
  size_t w = 0;
  for (size_t i = 0; i < active_.size(); ++i)
    if (active_[i] != MPI_REQUEST_NULL) {
      active_[w] = active_[i];
      ids_[w] = ids_[i];
      ++w;
    }
  active_.resize(w);
  ids_.resize(w);
  return Status::success();
}

} // namespace collc::rt
