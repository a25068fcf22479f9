// runtime/core/ThreadTransport.cpp: in-process message matching.
#include "runtime/core/ThreadTransport.h"

#include <cstring>
#include <string>

namespace collc::rt {

ThreadFabric::ThreadFabric(uint32_t ranks) : ranks_(ranks), boxes_(new Mailbox[ranks]) {}
ThreadFabric::~ThreadFabric() = default;

Status ThreadTransport::send(const void *data, size_t elems, uint32_t peer, int tag,
                             uint32_t id) {
  if (peer >= fabric_.ranks_)
    return Status::error(ErrorCode::Invalid, "send to rank " + std::to_string(peer));
  const size_t bytes = elems * elemSize_;
  {
    ThreadFabric::Mailbox &box = fabric_.boxes_[peer];
    std::lock_guard<std::mutex> lock(box.mu);
    bool matched = false;
    for (auto it = box.posted.begin(); it != box.posted.end(); ++it) {
      if (it->from != rank_ || it->tag != tag)
        continue;
      if (it->bytes != bytes)
        box.error = "message of " + std::to_string(bytes) + " bytes from rank " +
                    std::to_string(rank_) + " for a receive of " + std::to_string(it->bytes);
      else if (bytes)
        std::memcpy(it->data, data, bytes);
      box.completed.push_back(it->id);
      box.posted.erase(it);
      matched = true;
      break;
    }
    if (!matched) {
      const char *p = static_cast<const char *>(data);
      box.unexpected.push_back({rank_, tag, std::vector<char>(p, p + bytes)});
    }
    box.cv.notify_all();
  }
  // Eager: the send completes at once.
  ThreadFabric::Mailbox &mine = fabric_.boxes_[rank_];
  std::lock_guard<std::mutex> lock(mine.mu);
  mine.completed.push_back(id);
  return Status::success();
}

Status ThreadTransport::recv(void *data, size_t elems, uint32_t peer, int tag, uint32_t id) {
  if (peer >= fabric_.ranks_)
    return Status::error(ErrorCode::Invalid, "receive from rank " + std::to_string(peer));
  const size_t bytes = elems * elemSize_;
  ThreadFabric::Mailbox &box = fabric_.boxes_[rank_];
  std::lock_guard<std::mutex> lock(box.mu);
  for (auto it = box.unexpected.begin(); it != box.unexpected.end(); ++it) {
    if (it->from != peer || it->tag != tag)
      continue;
    if (it->bytes.size() != bytes)
      box.error = "message of " + std::to_string(it->bytes.size()) + " bytes from rank " +
                  std::to_string(peer) + " for a receive of " + std::to_string(bytes);
    else if (bytes)
      std::memcpy(data, it->bytes.data(), bytes);
    box.unexpected.erase(it);
    box.completed.push_back(id);
    return Status::success();
  }
  box.posted.push_back({peer, tag, static_cast<char *>(data), bytes, id});
  return Status::success();
}

Status ThreadTransport::poll(bool block, std::vector<uint32_t> &completed) {
  ThreadFabric::Mailbox &box = fabric_.boxes_[rank_];
  std::unique_lock<std::mutex> lock(box.mu);
  if (block)
    box.cv.wait(lock, [&] { return !box.completed.empty() || !box.error.empty(); });
  if (!box.error.empty())
    return Status::error(ErrorCode::Mismatch, box.error);
  completed.insert(completed.end(), box.completed.begin(), box.completed.end());
  box.completed.clear();
  return Status::success();
}

} // namespace collc::rt
