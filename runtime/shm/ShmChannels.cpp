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
constexpr uint32_t kVersion = 2;
constexpr size_t kHeaderBytes = 4096;
constexpr size_t kLine = 64;
/// Counters start here, so that every run crosses the 2^32 wrap early.
constexpr uint32_t kSeqStart = 0xfffffff0u;
/// Eager sequence numbers are 31 bits (the acknowledgement adds a bit); they
/// start 16 below their wrap.
constexpr uint32_t kEagerSeqMask = 0x7fffffffu;
constexpr uint32_t kEagerSeqStart = kEagerSeqMask - 15;
constexpr uint32_t kMaxEagerSlots = 16;
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
  uint32_t version, localRanks, slots, slotBytes, readyEntries, eagerSlots, eagerBytes, pad;
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
/// The header of an eager slot; its payload follows at kEagerPayload.
struct EagerHeader {
  std::atomic<uint32_t> seq; ///< changed (released) last, when the slot is filled
  int32_t tag;
  uint32_t bytes, pad;
};
constexpr size_t kEagerPayload = 16;
static_assert(sizeof(EagerHeader) <= kEagerPayload);

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
  /// Per eager slot: seq * 2 + announced, once the receiver is done with the
  /// message (announced: its receive had been announced, so the sender has a
  /// stale announcement to drop).
  alignas(kLine) std::atomic<uint32_t> eagerAck[kMaxEagerSlots];
  /// The sender's short sends waiting for an announcement (not eager).
  alignas(kLine) std::atomic<uint32_t> eagerWanted;
};

namespace {

size_t readyOffset() { return roundUp(sizeof(ShmEndpoint::Channel), kLine); }
size_t eagerOffset(const ShmConfig &c) {
  return roundUp(readyOffset() + size_t(c.readyEntries) * sizeof(ReadyEntry), kLine);
}
size_t eagerStride(const ShmConfig &c) { return kEagerPayload + c.eagerBytes; }
size_t slotsOffset(const ShmConfig &c) {
  return eagerOffset(c) + size_t(c.eagerSlots) * eagerStride(c);
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
  h->eagerSlots = config.eagerSlots;
  h->eagerBytes = config.eagerBytes;
  h->channelBytes = channelBytesOf(config);
  for (size_t i = 0; i < size_t(localRanks) * localRanks; ++i) {
    auto *c = new (base + kHeaderBytes + i * h->channelBytes) ShmEndpoint::Channel;
    c->dataHead.store(kSeqStart, std::memory_order_relaxed);
    c->dataTail.store(kSeqStart, std::memory_order_relaxed);
    c->readyHead.store(kSeqStart, std::memory_order_relaxed);
    c->readyTail.store(kSeqStart, std::memory_order_relaxed);
    c->eagerWanted.store(0, std::memory_order_relaxed);
    for (uint32_t e = 0; e < config.eagerSlots; ++e) {
      c->eagerAck[e].store(kEagerSeqStart * 2, std::memory_order_relaxed);
      new (reinterpret_cast<char *>(c) + eagerOffset(config) + e * eagerStride(config))
          EagerHeader{{kEagerSeqStart}, 0, 0, 0};
    }
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
  ShmConfig c{h->slots, h->slotBytes, h->readyEntries, h->eagerSlots, h->eagerBytes};
  if (!c.slots || (c.slots & (c.slots - 1)) || !c.readyEntries || !c.slotBytes ||
      c.slotBytes % kLine || c.eagerSlots > kMaxEagerSlots ||
      (c.eagerSlots && (c.eagerBytes + kEagerPayload) % kLine) ||
      h->channelBytes != channelBytesOf(c) ||
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
      eagerOffset_(eagerOffset(config)), eagerStride_(eagerStride(config)),
      slotsOffset_(slotsOffset(config)), eager_(config.eagerSlots != 0),
      eagerMax_(config.eagerSlots ? config.eagerBytes : 0),
      spinsBeforeYield_(spinsBeforeYield(localRanks)), peers_(localRanks) {
  for (Peer &p : peers_) {
    std::fill(std::begin(p.eager.seq), std::end(p.eager.seq), kEagerSeqStart);
    std::fill(std::begin(p.eager.seen), std::end(p.eager.seen), kEagerSeqStart);
    // Each owed drop stands for an announcement in the ready ring, or for an
    // eager slot: never more than R + E at once.
    p.eager.owed.reserve(config.readyEntries + config.eagerSlots);
  }
}

ShmEndpoint::Channel &ShmEndpoint::channel(uint32_t from, uint32_t to) const {
  return *std::launder(reinterpret_cast<Channel *>(
      region_ + kHeaderBytes + (size_t(from) * localRanks_ + to) * channelBytes_));
}

char *ShmEndpoint::slot(Channel &c, uint32_t index) const {
  return reinterpret_cast<char *>(&c) + slotsOffset_ +
         size_t(index & (config_.slots - 1)) * (kLine + config_.slotBytes);
}

void ShmEndpoint::takeReadies(uint32_t q) {
  Channel &c = channel(self_, q);
  Peer &p = peers_[q];
  const uint32_t head = c.readyHead.load(std::memory_order_acquire);
  uint32_t tail = c.readyTail.load(std::memory_order_relaxed);
  if (head == tail)
    return;
  // Acknowledgements read after readyHead: one the peer gave before
  // announcing a receive up to `head` is seen, so a fresh announcement is
  // never taken for a stale one.
  Eager &g = p.eager;
  if (g.busy)
    reapEager(q);
  auto *entries = reinterpret_cast<ReadyEntry *>(reinterpret_cast<char *>(&c) + readyOffset());
  for (; tail != head; ++tail) {
    const ReadyEntry e = entries[tail % config_.readyEntries];
    // A stale announcement (its receive was served eagerly): the oldest
    // eager message of that tag owes it, acknowledged ones before busy ones.
    if (auto o = std::find(g.owed.begin(), g.owed.end(), e.tag); o != g.owed.end()) {
      g.owed.erase(o);
      continue;
    }
    bool stale = false;
    for (uint32_t m = g.busy & ~g.dropped; m && !stale; m &= m - 1)
      if (const uint32_t i = uint32_t(__builtin_ctz(m)); g.tag[i] == e.tag) {
        g.dropped |= 1u << i;
        stale = true;
      }
    if (stale)
      continue;
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
    unwant(q, *it);
  }
  c.readyTail.store(tail, std::memory_order_release);
}

char *ShmEndpoint::eagerSlot(Channel &c, uint32_t i) const {
  return reinterpret_cast<char *>(&c) + eagerOffset_ + i * eagerStride_;
}

void ShmEndpoint::reapEager(uint32_t q) {
  Channel &c = channel(self_, q);
  Eager &g = peers_[q].eager;
  for (uint32_t m = g.busy; m; m &= m - 1) {
    const uint32_t i = uint32_t(__builtin_ctz(m));
    const uint32_t ack = c.eagerAck[i].load(std::memory_order_acquire);
    if (ack >> 1 != g.seq[i])
      continue;
    if ((ack & 1) && !(g.dropped & (1u << i)))
      g.owed.push_back(g.tag[i]); // its announcement is published: the next takeReadies drops it
    g.busy &= ~(1u << i);
    g.dropped &= ~(1u << i);
  }
}

bool ShmEndpoint::sendEager(uint32_t q, const char *data, uint64_t bytes, int tag) {
  Eager &g = peers_[q].eager;
  const uint32_t all = (1u << config_.eagerSlots) - 1;
  auto sameTag = [&] {
    for (uint32_t m = g.busy; m; m &= m - 1)
      if (g.tag[__builtin_ctz(m)] == tag)
        return true;
    return false;
  };
  // An unacknowledged message of the same tag (an execution a whole tag
  // cycle earlier) would make matching ambiguous: then the rendezvous path.
  if ((g.busy == all || sameTag()) && (reapEager(q), g.busy == all || sameTag()))
    return false;
  // The next free slot after the last one used, so that slots are reused as
  // late as possible (their acknowledgements have long arrived).
  uint32_t free = ~g.busy & all;
  const uint32_t rotated = free >> g.next;
  const uint32_t i =
      rotated ? g.next + uint32_t(__builtin_ctz(rotated)) : uint32_t(__builtin_ctz(free));
  g.next = i + 1 == config_.eagerSlots ? 0 : i + 1;
  Channel &c = channel(self_, q);
  char *at = eagerSlot(c, i);
  auto *h = reinterpret_cast<EagerHeader *>(at);
  h->tag = tag;
  h->bytes = uint32_t(bytes);
  if (bytes)
    std::memcpy(at + kEagerPayload, data, bytes);
  g.seq[i] = (g.seq[i] + 1) & kEagerSeqMask;
  g.tag[i] = tag;
  g.busy |= 1u << i;
  h->seq.store(g.seq[i], std::memory_order_release);
  return true;
}

void ShmEndpoint::deliverEager(uint32_t q, uint32_t i, const RecvOp &r) {
  Channel &c = channel(q, self_);
  const char *at = eagerSlot(c, i);
  const auto *h = reinterpret_cast<const EagerHeader *>(at);
  if (h->bytes != r.bytes) {
    error_ = "a message of " + std::to_string(h->bytes) + " bytes from local rank " +
             std::to_string(q) + " for a receive of " + std::to_string(r.bytes) + " bytes";
    return;
  }
  if (r.data) {
    if (r.bytes)
      std::memcpy(r.data, at + kEagerPayload, r.bytes);
  } else if (r.bytes) {
    const size_t e = r.owner->elemSize_;
    r.owner->sink_.fn(r.owner->sink_.ctx, r.id, at + kEagerPayload, 0, r.bytes / e);
  }
  r.owner->done_.push_back(r.id);
  // Released after the payload is read: the sender may overwrite it then.
  c.eagerAck[i].store(peers_[q].eager.seen[i] * 2 + (r.announced ? 1 : 0),
                      std::memory_order_release);
}

bool ShmEndpoint::takeEager(uint32_t q, const RecvOp *posted) {
  Channel &c = channel(q, self_);
  Peer &p = peers_[q];
  Eager &g = p.eager;
  auto header = [&](uint32_t i) {
    return reinterpret_cast<const EagerHeader *>(eagerSlot(c, i));
  };
  // A receive just posted: a message already waiting for it?
  if (posted)
    for (uint32_t m = g.waiting; m; m &= m - 1)
      if (const uint32_t i = uint32_t(__builtin_ctz(m)); header(i)->tag == posted->tag) {
        g.waiting &= ~(1u << i);
        deliverEager(q, i, *posted);
        return true;
      }
  // New messages, from the slot after the last one found (the sender fills
  // them in turn), until every posted short receive has had its message.
  bool served = false;
  uint32_t wanted = p.postedShort + (posted ? 1 : 0);
  for (uint32_t k = 0, i = g.expect; k < config_.eagerSlots && wanted; ++k) {
    if (k)
      i = i + 1 == config_.eagerSlots ? 0 : i + 1;
    if (g.waiting & (1u << i))
      continue;
    const EagerHeader *h = header(i);
    const uint32_t seq = h->seq.load(std::memory_order_acquire);
    if (seq == g.seen[i])
      continue;
    g.seen[i] = seq;
    g.expect = i + 1 == config_.eagerSlots ? 0 : i + 1;
    const int tag = h->tag;
    if (posted && !served && posted->tag == tag) {
      deliverEager(q, i, *posted);
      served = true;
      --wanted;
      continue;
    }
    auto it = std::find_if(p.recvs.begin(), p.recvs.end(),
                           [&](const RecvOp &r) { return r.tag == tag; });
    if (it == p.recvs.end()) {
      g.waiting |= 1u << i; // it waits in its slot for its receive
      continue;
    }
    deliverEager(q, i, *it);
    wanted -= shortMessage(it->bytes);
    dropRecv(q, it);
  }
  return served;
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
  if (p.postedShort)
    takeEager(q);
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
  // Short receives wait for their eager messages unless the peer has short
  // sends that could not go eagerly.
  const bool shortToo = c.eagerWanted.load(std::memory_order_acquire) != 0;
  if (!shortToo && p.unannounced == p.unannouncedShort)
    return;
  uint32_t head = c.readyHead.load(std::memory_order_relaxed);
  uint32_t tail = c.readyTail.load(std::memory_order_acquire);
  auto *entries = reinterpret_cast<ReadyEntry *>(reinterpret_cast<char *>(&c) + readyOffset());
  for (RecvOp &r : p.recvs) {
    const bool isShort = shortMessage(r.bytes);
    if (r.announced || (isShort && !shortToo))
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
    p.unannouncedShort -= isShort;
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

bool ShmEndpoint::idle() const {
  for (const Peer &p : peers_)
    if (!p.sends.empty() || !p.recvs.empty() || !p.readies.empty())
      return false;
  return error_.empty();
}

void ShmEndpoint::unwant(uint32_t q, SendOp &s) {
  if (!s.wanted)
    return;
  s.wanted = false;
  channel(self_, q).eagerWanted.store(--peers_[q].wanted, std::memory_order_release);
}

std::vector<ShmEndpoint::RecvOp>::iterator ShmEndpoint::dropRecv(uint32_t q,
                                                                 std::vector<RecvOp>::iterator it) {
  Peer &p = peers_[q];
  const bool isShort = shortMessage(it->bytes);
  p.postedShort -= isShort;
  if (!it->announced) {
    --p.unannounced;
    p.unannouncedShort -= isShort;
  }
  return p.recvs.erase(it);
}

void ShmEndpoint::forget(ShmTransport *owner) {
  for (uint32_t q = 0; q < localRanks_; ++q) {
    Peer &p = peers_[q];
    for (SendOp &s : p.sends) {
      if (s.owner == owner && s.matched && error_.empty())
        error_ = "an execution was abandoned while sending to local rank " + std::to_string(q);
      if (s.owner == owner)
        unwant(q, s);
    }
    for (const RecvOp &r : p.recvs)
      if (r.owner == owner && r.announced && error_.empty())
        error_ = "an execution was abandoned while receiving from local rank " +
                 std::to_string(q);
    std::erase_if(p.sends, [&](const SendOp &s) { return s.owner == owner; });
    for (auto it = p.recvs.begin(); it != p.recvs.end();)
      it = it->owner == owner ? dropRecv(q, it) : it + 1;
  }
}

// --- the transport ---------------------------------------------------------------

ShmTransport::ShmTransport(ShmEndpoint &endpoint, const int32_t *localOf, Transport *remote,
                           size_t elemSize, int maxTag, bool direct)
    : ep_(endpoint), localOf_(localOf), remote_(remote), elemSize_(elemSize ? elemSize : 1),
      maxTag_(maxTag), direct_(direct && endpoint.eager_) {}

ShmTransport::~ShmTransport() { abandon(); }

void ShmTransport::abandon() {
  {
    std::lock_guard<ShmEndpoint::Lock> lock(ep_.mu_);
    ep_.forget(this);
    done_.clear();
    outstanding_ = 0;
  }
  if (remote_)
    remote_->abandon();
}

void ShmTransport::reserve(uint32_t capacity) {
  std::lock_guard<ShmEndpoint::Lock> lock(ep_.mu_);
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
  std::lock_guard<ShmEndpoint::Lock> lock(ep_.mu_);
  return sendLocked(data, elems, uint32_t(q), tag, id);
}

Status ShmTransport::sendLocked(const void *data, size_t elems, uint32_t q, int tag,
                                uint32_t id) {
  ShmEndpoint::Peer &p = ep_.peers_[q];
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
  ++outstanding_;
  // Short, and not announced yet: into an eager slot if one can take it;
  // else the peer is asked to announce its short receives (eagerWanted).
  const bool wanted = !matched && ep_.shortMessage(bytes);
  if (wanted && ep_.sendEager(uint32_t(q), static_cast<const char *>(data), bytes, tag)) {
    done_.push_back(id);
    return Status::success();
  }
  if (wanted)
    ep_.channel(ep_.self_, uint32_t(q)).eagerWanted.store(++p.wanted, std::memory_order_release);
  p.sends.push_back({this, id, tag, static_cast<const char *>(data), bytes, 0,
                     uint32_t(elemSize_), matched, wanted});
  if (!matched)
    ep_.takeReadies(uint32_t(q));
  ep_.stream(uint32_t(q));
  if (!ep_.error_.empty())
    return Status::error(ErrorCode::Mismatch, "shared memory: " + ep_.error_);
  return Status::success();
}

Status ShmTransport::post(void *data, size_t elems, uint32_t peer, int tag, uint32_t id) {
  std::lock_guard<ShmEndpoint::Lock> lock(ep_.mu_);
  return postLocked(data, elems, peer, tag, id);
}

Status ShmTransport::postLocked(void *data, size_t elems, uint32_t peer, int tag, uint32_t id) {
  const int32_t q = localOf_[peer];
  ShmEndpoint::Peer &p = ep_.peers_[uint32_t(q)];
  const ShmEndpoint::RecvOp r{this, id, tag, static_cast<char *>(data),
                              uint64_t(elems) * elemSize_, 0, false};
  ++outstanding_;
  // Its message may be waiting in an eager slot already: then it is done.
  const bool isShort = ep_.shortMessage(r.bytes);
  const bool served = isShort && ep_.takeEager(uint32_t(q), &r);
  if (!ep_.error_.empty())
    return Status::error(ErrorCode::Mismatch, "shared memory: " + ep_.error_);
  if (served)
    return Status::success();
  p.recvs.push_back(r);
  ++p.unannounced;
  p.unannouncedShort += isShort;
  p.postedShort += isShort;
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

// --- the direct path -------------------------------------------------------------

bool ShmTransport::enter() {
  ep_.mu_.lock();
  if (outstanding_ == 0 && ep_.idle())
    return true;
  ep_.mu_.unlock();
  return false;
}

void ShmTransport::pause(int idle) {
  ep_.mu_.unlock();
  if (idle >= ep_.spinsBeforeYield_)
    sched_yield();
  ep_.mu_.lock();
}

bool ShmTransport::trySend(const void *data, uint64_t bytes, uint32_t peer, int tag) {
  const uint32_t q = uint32_t(localOf_[peer]);
  // An announcement taken already might be this message's receive: the
  // request path matches it (sendLocked).
  return ep_.peers_[q].readies.empty() &&
         ep_.sendEager(q, static_cast<const char *>(data), bytes, tag);
}

Status ShmTransport::tryRecv(uint64_t bytes, uint32_t peer, int tag, uint32_t id, bool &done) {
  const ShmEndpoint::RecvOp r{this, id, tag, nullptr, bytes, 0, false};
  done = ep_.takeEager(uint32_t(localOf_[peer]), &r);
  done_.clear(); // deliverEager reported it there; nothing else is (outstanding_ == 0)
  if (!ep_.error_.empty()) [[unlikely]]
    return Status::error(ErrorCode::Mismatch, "shared memory: " + ep_.error_);
  return Status::success();
}

bool ShmTransport::peerWaits(uint32_t peer) const {
  const uint32_t q = uint32_t(localOf_[peer]);
  return ep_.channel(q, ep_.self_).eagerWanted.load(std::memory_order_acquire) != 0;
}

Status ShmTransport::postSend(const void *data, size_t elems, uint32_t peer, int tag,
                              uint32_t id) {
  return sendLocked(data, elems, uint32_t(localOf_[peer]), tag, id);
}

Status ShmTransport::poll(bool block, std::vector<uint32_t> &completed) {
  if (block && outstanding_ == 0 && remote_) // only MPI requests are in flight
    return remote_->poll(true, completed);
  for (int idle = 0;; ++idle) {
    const size_t before = completed.size();
    if (outstanding_) {
      std::lock_guard<ShmEndpoint::Lock> lock(ep_.mu_);
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
