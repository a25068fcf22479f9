// collc/collc.hpp: a thin C++ wrapper of collc/collc.h — owning handles and
// exceptions instead of status codes.
#ifndef COLLC_COLLC_HPP
#define COLLC_COLLC_HPP

#include "collc/collc.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace collc {

/// A failed collc call: the status code and collc_error_message().
class Error : public std::runtime_error {
public:
  explicit Error(int code)
      : std::runtime_error(std::string(collc_strerror(code)) + ": " + collc_error_message()),
        code_(code) {}
  int code() const { return code_; }

private:
  int code_;
};

inline void check(int rc) {
  if (rc != COLLC_SUCCESS)
    throw Error(rc);
}

/// An execution in flight (non-blocking) or bound (persistent).
class Request {
public:
  Request() = default;
  explicit Request(collc_request r) : r_(r) {}
  Request(Request &&o) noexcept : r_(std::exchange(o.r_, COLLC_REQUEST_NULL)) {}
  Request &operator=(Request &&o) noexcept {
    reset();
    r_ = std::exchange(o.r_, COLLC_REQUEST_NULL);
    return *this;
  }
  ~Request() { reset(); }

  /// Persistent requests only.
  void start() { check(collc_start(r_)); }
  /// True when finished (a non-blocking request is then released).
  bool test() {
    int flag = 0;
    check(collc_test(&r_, &flag));
    return flag != 0;
  }
  void wait() { check(collc_wait(&r_)); }
  collc_request get() const { return r_; }

private:
  void reset() {
    if (r_ != COLLC_REQUEST_NULL) {
      collc_wait(&r_); // finish an active one before freeing
      if (r_ != COLLC_REQUEST_NULL)
        collc_request_free(&r_);
    }
  }
  collc_request r_ = COLLC_REQUEST_NULL;
};

/// A loaded plan.
class Plan {
public:
  static Plan fromFile(const std::string &path) {
    collc_plan p;
    check(collc_plan_load_file(path.c_str(), &p));
    return Plan(p);
  }
  static Plan fromMemory(const void *data, size_t size) {
    collc_plan p;
    check(collc_plan_load_memory(data, size, &p));
    return Plan(p);
  }
  Plan(Plan &&o) noexcept : p_(std::exchange(o.p_, COLLC_PLAN_NULL)) {}
  Plan &operator=(Plan &&o) noexcept {
    collc_plan_free(&p_);
    p_ = std::exchange(o.p_, COLLC_PLAN_NULL);
    return *this;
  }
  ~Plan() { collc_plan_free(&p_); }

  collc_plan_info info() const {
    collc_plan_info i;
    check(collc_plan_get_info(p_, &i));
    return i;
  }
  void allreduce(const void *send, void *recv, MPI_Count n, MPI_Datatype t, MPI_Op op,
                 MPI_Comm comm) const {
    check(collc_allreduce(p_, send, recv, n, t, op, comm));
  }
  void reduce(const void *send, void *recv, MPI_Count n, MPI_Datatype t, MPI_Op op, int root,
              MPI_Comm comm) const {
    check(collc_reduce(p_, send, recv, n, t, op, root, comm));
  }
  Request iallreduce(const void *send, void *recv, MPI_Count n, MPI_Datatype t, MPI_Op op,
                     MPI_Comm comm) const {
    collc_request r;
    check(collc_iallreduce(p_, send, recv, n, t, op, comm, &r));
    return Request(r);
  }
  Request ireduce(const void *send, void *recv, MPI_Count n, MPI_Datatype t, MPI_Op op,
                  int root, MPI_Comm comm) const {
    collc_request r;
    check(collc_ireduce(p_, send, recv, n, t, op, root, comm, &r));
    return Request(r);
  }
  Request allreduceInit(const void *send, void *recv, MPI_Count n, MPI_Datatype t, MPI_Op op,
                        MPI_Comm comm) const {
    collc_request r;
    check(collc_allreduce_init(p_, send, recv, n, t, op, comm, &r));
    return Request(r);
  }
  Request reduceInit(const void *send, void *recv, MPI_Count n, MPI_Datatype t, MPI_Op op,
                     int root, MPI_Comm comm) const {
    collc_request r;
    check(collc_reduce_init(p_, send, recv, n, t, op, root, comm, &r));
    return Request(r);
  }
  // The rest of the family: blocking, then start/init returning a Request.
  void reduceScatterBlock(const void *send, void *recv, MPI_Count recvcount, MPI_Datatype t,
                          MPI_Op op, MPI_Comm comm) const {
    check(collc_reduce_scatter_block(p_, send, recv, recvcount, t, op, comm));
  }
  void reduceScatter(const void *send, void *recv, const MPI_Count recvcounts[], MPI_Datatype t,
                     MPI_Op op, MPI_Comm comm) const {
    check(collc_reduce_scatter(p_, send, recv, recvcounts, t, op, comm));
  }
  void scan(const void *send, void *recv, MPI_Count n, MPI_Datatype t, MPI_Op op,
            MPI_Comm comm) const {
    check(collc_scan(p_, send, recv, n, t, op, comm));
  }
  void exscan(const void *send, void *recv, MPI_Count n, MPI_Datatype t, MPI_Op op,
              MPI_Comm comm) const {
    check(collc_exscan(p_, send, recv, n, t, op, comm));
  }
  void allgather(const void *send, void *recv, MPI_Count n, MPI_Datatype t,
                 MPI_Comm comm) const {
    check(collc_allgather(p_, send, recv, n, t, comm));
  }
  void allgatherv(const void *send, void *recv, const MPI_Count recvcounts[], MPI_Datatype t,
                  MPI_Comm comm) const {
    check(collc_allgatherv(p_, send, recv, recvcounts, t, comm));
  }
  void bcast(void *buffer, MPI_Count n, MPI_Datatype t, int root, MPI_Comm comm) const {
    check(collc_bcast(p_, buffer, n, t, root, comm));
  }
  void alltoall(const void *send, void *recv, MPI_Count n, MPI_Datatype t,
                MPI_Comm comm) const {
    check(collc_alltoall(p_, send, recv, n, t, comm));
  }
  void gather(const void *send, void *recv, MPI_Count n, MPI_Datatype t, int root,
              MPI_Comm comm) const {
    check(collc_gather(p_, send, recv, n, t, root, comm));
  }
  void scatter(const void *send, void *recv, MPI_Count n, MPI_Datatype t, int root,
               MPI_Comm comm) const {
    check(collc_scatter(p_, send, recv, n, t, root, comm));
  }
  void gatherv(const void *send, MPI_Count sendcount, void *recv, const MPI_Count recvcounts[],
               MPI_Datatype t, int root, MPI_Comm comm) const {
    check(collc_gatherv(p_, send, sendcount, recv, recvcounts, t, root, comm));
  }
  void scatterv(const void *send, const MPI_Count sendcounts[], void *recv, MPI_Count recvcount,
                MPI_Datatype t, int root, MPI_Comm comm) const {
    check(collc_scatterv(p_, send, sendcounts, recv, recvcount, t, root, comm));
  }
  void alltoallv(const void *send, const MPI_Count sendcounts[], void *recv,
                 const MPI_Count recvcounts[], MPI_Datatype t, MPI_Comm comm) const {
    check(collc_alltoallv(p_, send, sendcounts, recv, recvcounts, t, comm));
  }
  void barrier(MPI_Comm comm) const { check(collc_barrier(p_, comm)); }
  /// The non-blocking or persistent form of a family call:
  /// `call(plan, &request)` is any collc_i* or collc_*_init call bound to its
  /// arguments, e.g. [&](collc_plan p, collc_request *r) { return
  /// collc_iscan(p, in, out, n, MPI_DOUBLE, MPI_SUM, comm, r); }.
  template <class F> Request request(F &&call) const {
    collc_request r;
    check(call(p_, &r));
    return Request(r);
  }

  collc_plan get() const { return p_; }
  /// Gives up ownership: the caller frees the plan with collc_plan_free.
  collc_plan release() { return std::exchange(p_, COLLC_PLAN_NULL); }

private:
  explicit Plan(collc_plan p) : p_(p) {}
  collc_plan p_ = COLLC_PLAN_NULL;
};

} // namespace collc

#endif // COLLC_COLLC_HPP
