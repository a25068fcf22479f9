// runtime/shm/ShmChannels.cpp: the channel protocol (ShmChannels.h) and ShmTransport.
#include "runtime/shm/ShmChannels.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace collc::rt {

namespace {

constexpr uint64_t kMagic = 0x31484d53434c4c43ull; // "CLLCSMH1"
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = 4096;
constexpr size_t kLine = 64;
/// Counters start here, so that every run crosses the 2^32 wrap early.
constexpr uint32_t kSeqStart = 0xfffffff0u;
/// Idle polls before a blocked rank starts yielding its core: few when the
/// node has more of our ranks than cores (the peer it waits for may need
/// this core), many otherwise (a yield on a busy machine can cost a whole
/// time slice, far more than the wait).
int spinsBeforeYield(uint32_t localRanks) {
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores > 0 && long(localRanks) > cores ? 64 : 1 << 14;
}

struct RegionHeader {
  uint64_t magic;
  uint32_t version, localRanks, slots, slotBytes, readyEntries, pad;
  uint64_t channelBytes;
};

struct ReadyEntry {
  int32_t tag;
  uint32_t pad;
  uint64_t bytes;
};

struct SegHeader {
  int32_t tag;
  uint32_t pad;
  uint64_t offset, bytes;
};
/// Where a slot's payload starts: 32 bytes in, so that a short payload
/// shares the header's cache line (one line moves for an 8-byte message),
/// and 16-byte aligned for every element type.
constexpr size_t kPayload = 32;
static_assert(sizeof(SegHeader) <= kPayload);

size_t roundUp(size_t x, size_t a) { return (x + a - 1) / a * a; }

} // namespace

struct ShmEndpoint::Channel {
  alignas(kLine) std::atomic<uint32_t> dataHead;  ///< segments published (sender)
  alignas(kLine) std::atomic<uint32_t> dataTail;  ///< segments consumed (receiver)
  alignas(kLine) std::atomic<uint32_t> readyHead; ///< receives announced (receiver)
  alignas(kLine) std::atomic<uint32_t> readyTail; ///< announcements taken (sender)
};

namespace {

size_t readyOffset() { return roundUp(sizeof(ShmEndpoint::Channel), kLine); }
size_t slotsOffset(const ShmConfig &c) {
  return roundUp(readyOffset() + size_t(c.readyEntries) * sizeof(ReadyEntry), kLine);
}
size_t channelBytesOf(const ShmConfig &c) {
  return roundUp(slotsOffset(c) + size_t(c.slots) * (kLine + c.slotBytes), 4096);
}

} // namespace

size_t regionBytes(uint32_t localRanks, const ShmConfig &config) {
  return kHeaderBytes + size_t(localRanks) * localRanks * channelBytesOf(config);
}

void formatRegion(void *region, uint32_t localRanks, const ShmConfig &config) {
  char *base = static_cast<char *>(region);
  auto *h = new (base) RegionHeader{};
  h->magic = kMagic;
  h->version = kVersion;
  h->localRanks = localRanks;
  h->slots = config.slots;
  h->slotBytes = config.slotBytes;
  h->readyEntries = config.readyEntries;
  h->channelBytes = channelBytesOf(config);
  for (size_t i = 0; i < size_t(localRanks) * localRanks; ++i) {
    auto *c = new (base + kHeaderBytes + i * h->channelBytes) ShmEndpoint::Channel;
    c->dataHead.store(kSeqStart, std::memory_order_relaxed);
    c->dataTail.store(kSeqStart, std::memory_order_relaxed);
    c->readyHead.store(kSeqStart, std::memory_order_relaxed);
    c->readyTail.store(kSeqStart, std::memory_order_relaxed);
  }
  std::atomic_thread_fence(std::memory_order_release);
}

Status checkRegion(const void *region, size_t bytes, uint32_t localRanks, ShmConfig &config) {
  auto bad = [](std::string why) {
    return Status::error(ErrorCode::Invalid, "shared-memory region: " + why);
  };
  if (bytes < kHeaderBytes)
    return bad("smaller than its header");
  const auto *h = static_cast<const RegionHeader *>(region);
  if (h->magic != kMagic || h->version != kVersion)
    return bad("not a collc region of version " + std::to_string(kVersion));
  if (h->localRanks != localRanks)
    return bad("made for " + std::to_string(h->localRanks) + " ranks, not " +
               std::to_string(localRanks));
  ShmConfig c{h->slots, h->slotBytes, h->readyEntries};
  if (!c.slots || (c.slots & (c.slots - 1)) || !c.readyEntries || !c.slotBytes ||
      c.slotBytes % kLine || h->channelBytes != channelBytesOf(c) ||
      regionBytes(localRanks, c) > bytes)
    return bad("inconsistent geometry");
  config = c;
  return Status::success();
}

// --- the endpoint ----------------------------------------------------------------

ShmEndpoint::ShmEndpoint(void *region, uint32_t self, uint32_t localRanks,
                         const ShmConfig &config)
    : region_(static_cast<char *>(region)), self_(self), localRanks_(localRanks),
      config_(config), channelBytes_(channelBytesOf(config)),
      spinsBeforeYield_(spinsBeforeYield(localRanks)), peers_(localRanks) {}

ShmEndpoint::Channel &ShmEndpoint::channel(uint32_t from, uint32_t to) const {
  return *std::launder(reinterpret_cast<Channel *>(
      region_ + kHeaderBytes + (size_t(from) * localRanks_ + to) * channelBytes_));
}

char *ShmEndpoint::slot(Channel &c, uint32_t index) const {
  return reinterpret_cast<char *>(&c) + slotsOffset(config_) +
         size_t(index & (config_.slots - 1)) * (kLine + config_.slotBytes);
}

void ShmEndpoint::takeReadies(uint32_t q) {
  Channel &c = channel(self_, q);
  Peer &p = peers_[q];
  const uint32_t head = c.readyHead.load(std::memory_order_acquire);
  uint32_t tail = c.readyTail.load(std::memory_order_relaxed);
  if (head == tail)
    return;
  auto *entries = reinterpret_cast<ReadyEntry *>(reinterpret_cast<char *>(&c) + readyOffset());
  for (; tail != head; ++tail) {
    const ReadyEntry e = entries[tail % config_.readyEntries];
    auto it = std::find_if(p.sends.begin(), p.sends.end(),
                           [&](const SendOp &s) { return !s.matched && s.tag == e.tag; });
    if (it == p.sends.end()) {
      p.readies.push_back({e.tag, e.bytes});
      continue;
    }
    if (it->bytes != e.bytes)
      error_ = "a message of " + std::to_string(it->bytes) + " bytes to local rank " +
               std::to_string(q) + " for a receive of " + std::to_string(e.bytes) + " bytes";
    it->matched = true;
  }
  c.readyTail.store(tail, std::memory_order_release);
}

void ShmEndpoint::stream(uint32_t q) {
  Channel &c = channel(self_, q);
  Peer &p = peers_[q];
  uint32_t head = c.dataHead.load(std::memory_order_relaxed);
  uint32_t tail = c.dataTail.load(std::memory_order_acquire);
  for (size_t i = 0; i < p.sends.size();) {
    SendOp &s = p.sends[i];
    if (!s.matched) {
      ++i;
      continue;
    }
    const uint64_t maxSeg = config_.slotBytes / s.grain * s.grain;
    do {
      if (head - tail == config_.slots) {
        tail = c.dataTail.load(std::memory_order_acquire);
        if (head - tail == config_.slots)
          return; // the ring is full: the rest on a later pass
      }
      char *at = slot(c, head);
      const uint64_t seg = std::min(s.bytes - s.done, maxSeg);
      new (at) SegHeader{s.tag, 0, s.done, seg};
      if (seg)
        std::memcpy(at + kPayload, s.data + s.done, seg);
      s.done += seg;
      c.dataHead.store(++head, std::memory_order_release);
    } while (s.done < s.bytes);
    s.owner->done_.push_back(s.id);
    p.sends.erase(p.sends.begin() + std::ptrdiff_t(i));
  }
}

void ShmEndpoint::consume(uint32_t q) {
  Channel &c = channel(q, self_);
  Peer &p = peers_[q];
  const uint32_t head = c.dataHead.load(std::memory_order_acquire);
  uint32_t tail = c.dataTail.load(std::memory_order_relaxed);
  while (tail != head) {
    const char *at = slot(c, tail);
    const SegHeader h = *reinterpret_cast<const SegHeader *>(at);
    auto it = std::find_if(p.recvs.begin(), p.recvs.end(),
                           [&](const RecvOp &r) { return r.announced && r.tag == h.tag; });
    if (it == p.recvs.end() || h.offset != it->done || h.bytes > it->bytes - it->done) {
      error_ = "local rank " + std::to_string(q) + " sent a segment (tag " +
               std::to_string(h.tag) + ", bytes " + std::to_string(h.offset) + ".." +
               std::to_string(h.offset + h.bytes) + ") that no posted receive expects";
      return;
    }
    RecvOp &r = *it;
    if (r.data) {
      if (h.bytes)
        std::memcpy(r.data + h.offset, at + kPayload, h.bytes);
    } else if (h.bytes) {
      const size_t e = r.owner->elemSize_;
      r.owner->sink_.fn(r.owner->sink_.ctx, r.id, at + kPayload, h.offset / e, h.bytes / e);
    }
    r.done += h.bytes;
    c.dataTail.store(++tail, std::memory_order_release);
    if (r.done == r.bytes) {
      r.owner->done_.push_back(r.id);
      p.recvs.erase(it);
    }
  }
}

void ShmEndpoint::announce(uint32_t q) {
  Peer &p = peers_[q];
  if (!p.unannounced)
    return;
  Channel &c = channel(q, self_);
  uint32_t head = c.readyHead.load(std::memory_order_relaxed);
  uint32_t tail = c.readyTail.load(std::memory_order_acquire);
  auto *entries = reinterpret_cast<ReadyEntry *>(reinterpret_cast<char *>(&c) + readyOffset());
  for (RecvOp &r : p.recvs) {
    if (r.announced)
      continue;
    if (head - tail == config_.readyEntries) {
      tail = c.readyTail.load(std::memory_order_acquire);
      if (head - tail == config_.readyEntries)
        break;
    }
    entries[head % config_.readyEntries] = ReadyEntry{r.tag, 0, r.bytes};
    ++head;
    r.announced = true;
    --p.unannounced;
  }
  c.readyHead.store(head, std::memory_order_release);
}

void ShmEndpoint::progressPeer(uint32_t q) {
  Peer &p = peers_[q];
  if (!p.recvs.empty()) {
    announce(q);
    consume(q);
  }
  if (!p.sends.empty()) {
    takeReadies(q);
    stream(q);
  }
}

bool ShmEndpoint::progressLocked() {
  for (uint32_t q = 0; q < localRanks_ && error_.empty(); ++q)
    if (q != self_)
      progressPeer(q);
  return error_.empty();
}

void ShmEndpoint::forget(ShmTransport *owner) {
  for (uint32_t q = 0; q < localRanks_; ++q) {
    Peer &p = peers_[q];
    for (const SendOp &s : p.sends)
      if (s.owner == owner && s.matched && error_.empty())
        error_ = "an execution was abandoned while sending to local rank " + std::to_string(q);
    for (const RecvOp &r : p.recvs)
      if (r.owner == owner && r.announced && error_.empty())
        error_ = "an execution was abandoned while receiving from local rank " +
                 std::to_string(q);
    std::erase_if(p.sends, [&](const SendOp &s) { return s.owner == owner; });
    for (const RecvOp &r : p.recvs)
      if (r.owner == owner && !r.announced)
        --p.unannounced;
    std::erase_if(p.recvs, [&](const RecvOp &r) { return r.owner == owner; });
  }
}

// --- the transport ---------------------------------------------------------------

ShmTransport::ShmTransport(ShmEndpoint &endpoint, const int32_t *localOf, Transport *remote,
                           size_t elemSize, int maxTag)
    : ep_(endpoint), localOf_(localOf), remote_(remote), elemSize_(elemSize ? elemSize : 1),
      maxTag_(maxTag) {}

ShmTransport::~ShmTransport() { abandon(); }

void ShmTransport::abandon() {
  {
    std::lock_guard<std::mutex> lock(ep_.mu_);
    ep_.forget(this);
    done_.clear();
    outstanding_ = 0;
  }
  if (remote_)
    remote_->abandon();
}

void ShmTransport::reserve(uint32_t capacity) {
  std::lock_guard<std::mutex> lock(ep_.mu_);
  done_.reserve(capacity);
  for (ShmEndpoint::Peer &p : ep_.peers_) {
    p.sends.reserve(std::max<size_t>(p.sends.capacity(), capacity));
    p.recvs.reserve(std::max<size_t>(p.recvs.capacity(), capacity));
  }
}

Status ShmTransport::send(const void *data, size_t elems, uint32_t peer, int tag, uint32_t id) {
  const int32_t q = localOf_[peer];
  if (q < 0)
    return remote_->send(data, elems, peer, tag, id);
  if (elemSize_ > ep_.config_.slotBytes) [[unlikely]]
    return Status::error(ErrorCode::Unsupported, "an element of " + std::to_string(elemSize_) +
                                                     " bytes does not fit a shared-memory slot");
  std::lock_guard<std::mutex> lock(ep_.mu_);
  ShmEndpoint::Peer &p = ep_.peers_[uint32_t(q)];
  const uint64_t bytes = uint64_t(elems) * elemSize_;
  bool matched = false;
  for (auto it = p.readies.begin(); it != p.readies.end(); ++it)
    if (it->tag == tag) {
      if (it->bytes != bytes)
        ep_.error_ = "a message of " + std::to_string(bytes) + " bytes to local rank " +
                     std::to_string(q) + " for a receive of " + std::to_string(it->bytes) +
                     " bytes";
      p.readies.erase(it);
      matched = true;
      break;
    }
  p.sends.push_back({this, id, tag, static_cast<const char *>(data), bytes, 0,
                     uint32_t(elemSize_), matched});
  ++outstanding_;
  if (!matched)
    ep_.takeReadies(uint32_t(q));
  ep_.stream(uint32_t(q));
  if (!ep_.error_.empty())
    return Status::error(ErrorCode::Mismatch, "shared memory: " + ep_.error_);
  return Status::success();
}

Status ShmTransport::post(void *data, size_t elems, uint32_t peer, int tag, uint32_t id) {
  const int32_t q = localOf_[peer];
  std::lock_guard<std::mutex> lock(ep_.mu_);
  ShmEndpoint::Peer &p = ep_.peers_[uint32_t(q)];
  p.recvs.push_back({this, id, tag, static_cast<char *>(data), uint64_t(elems) * elemSize_, 0,
                     false});
  ++p.unannounced;
  ++outstanding_;
  ep_.announce(uint32_t(q));
  return Status::success();
}

Status ShmTransport::recv(void *data, size_t elems, uint32_t peer, int tag, uint32_t id) {
  if (localOf_[peer] < 0)
    return remote_->recv(data, elems, peer, tag, id);
  return post(data, elems, peer, tag, id);
}

Status ShmTransport::recvStream(size_t elems, uint32_t peer, int tag, uint32_t id) {
  return post(nullptr, elems, peer, tag, id);
}

Status ShmTransport::poll(bool block, std::vector<uint32_t> &completed) {
  if (block && outstanding_ == 0 && remote_) // only MPI requests are in flight
    return remote_->poll(true, completed);
  for (int idle = 0;; ++idle) {
    const size_t before = completed.size();
    if (outstanding_) {
      std::lock_guard<std::mutex> lock(ep_.mu_);
      if (!ep_.progressLocked())
        return Status::error(ErrorCode::Mismatch, "shared memory: " + ep_.error_);
      completed.insert(completed.end(), done_.begin(), done_.end());
      outstanding_ -= uint32_t(done_.size());
      done_.clear();
    }
    if (remote_)
      COLLC_RT_TRY(remote_->poll(false, completed));
    if (!block || completed.size() != before)
      return Status::success();
    if (idle >= ep_.spinsBeforeYield_)
      sched_yield();
  }
}

} // namespace collc::rt
