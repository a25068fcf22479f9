// runtime/core/ThreadTransport.h: p ranks as threads of one process.
//
// For tests of the interpreter without MPI: a ThreadFabric connects p
// endpoints; a send is copied into the fabric at once (eager), matched with
// the receiver's posted receive by (source, tag) in posting order, so MPI's
// non-overtaking rule holds.
#ifndef COLLC_RUNTIME_CORE_THREADTRANSPORT_H
#define COLLC_RUNTIME_CORE_THREADTRANSPORT_H

#include "runtime/core/Transport.h"

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>

namespace collc::rt {

class ThreadFabric;

class ThreadTransport final : public Transport {
public:
  ThreadTransport(ThreadFabric &fabric, uint32_t rank, size_t elemSize)
      : fabric_(fabric), rank_(rank), elemSize_(elemSize) {}
  int maxTag() const override { return maxTag_; }
  Status send(const void *data, size_t elems, uint32_t peer, int tag, uint32_t id) override;
  Status recv(void *data, size_t elems, uint32_t peer, int tag, uint32_t id) override;
  Status poll(bool block, std::vector<uint32_t> &completed) override;
  void reserve(uint32_t) override {}
  /// Tests shrink the tag range to exercise wrap-around.
  void setMaxTag(int t) { maxTag_ = t; }

private:
  ThreadFabric &fabric_;
  uint32_t rank_;
  size_t elemSize_;
  int maxTag_ = 0x7fffffff;
};

/// The shared state of p thread ranks.
class ThreadFabric {
public:
  explicit ThreadFabric(uint32_t ranks);
  ~ThreadFabric();
  uint32_t ranks() const { return ranks_; }

private:
  friend class ThreadTransport;
  struct Message {
    uint32_t from;
    int tag;
    std::vector<char> bytes;
  };
  struct Posted {
    uint32_t from;
    int tag;
    char *data;
    size_t bytes;
    uint32_t id;
  };
  struct Mailbox {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<Message> unexpected;
    std::deque<Posted> posted;
    std::vector<uint32_t> completed;
    std::string error;
  };
  uint32_t ranks_;
  std::unique_ptr<Mailbox[]> boxes_;
};

} // namespace collc::rt

#endif // COLLC_RUNTIME_CORE_THREADTRANSPORT_H
