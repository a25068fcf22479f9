// tools/netswitch/NetSwitch.cpp: collc-netswitch, the network of the emulated
// cluster (scripts/cluster, docs/cluster.md).
//
// Each emulated node is a network namespace with one tap interface; this
// process holds the other end of every tap and forwards Ethernet frames
// between them as a learning switch whose links are paced and delayed as the
// topology says (model/Emulation.h):
//
// - A frame from node a to node b crossing level J passes, in order, a's
//   up-link at levels 1..J and b's down-link at levels J..1. Each direction
//   of each link carries one frame at a time at its rate; a frame starts on
//   a link once the link is free and the frame has started on the previous
//   one, and cannot finish before it finished there (cut-through, FIFO per
//   link, no loss).
// - The frame is delivered α_J after it finished on its last link.
// - Broadcast, multicast and frames to an address not yet learned go to every
//   other node, each copy paced on its own path.
// - Queues are not bounded (no loss, as in a lossless HPC fabric), but a
//   frame that finds more than 16 KiB queued on a link of its path is marked
//   "congestion experienced" (ECN, RFC 3168) when its sender set ECN-capable,
//   as datacenter switches mark past a threshold (scripts/cluster leaves
//   the nodes' ECN off: classic ECN halved exchanges, docs/cluster.md).
// - Frames of at most 128 bytes (TCP's acknowledgements; MPI messages of a
//   few bytes) are paced but never wait behind other frames, as if each link
//   had a lane for them: acknowledgements queued behind the data of the flow
//   the other way starved it (two TCP flows in opposite directions got 16
//   and 25 of 25 MB/s; with the lane, both 24.7).
//
// The kernel's tc cannot do this here (the netem qdisc is missing from some
// kernels, this machine's among them), and a process gives every level the
// same model as the simulator's. Timing error: a frame is written when a
// timer fires, and a timer fires late (10-50 µs in a virtual machine); the
// switch measures how late its wake-ups are and arms the timer that much
// early (the 25th percentile of the last 128 wake-ups, at most 50 µs), so
// deliveries centre on their due times. --status reports the deliveries'
// error (early or late) so a run can be judged.
//
// Usage (scripts/cluster starts it; docs/cluster.md):
//   collc-netswitch --topology T.yaml --nodes N --ppn K --check [--write-topology F]
//   collc-netswitch --topology T.yaml --nodes N --ppn K --netns-prefix collc-n
//                   --tap collc-eth0 [--status FILE]
#include "model/Emulation.h"
#include "model/Topology.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <queue>
#include <string>
#include <vector>

namespace {

using collc::model::EmulatedNetwork;

struct Options {
  std::string topology, netnsPrefix = "collc-n", tap = "collc-eth0", status, writeTopology;
  uint32_t nodes = 0, ppn = 1;
  bool check = false;
};

[[noreturn]] void usage(const char *why) {
  std::fprintf(stderr,
               "collc-netswitch: %s\n"
               "usage: collc-netswitch --topology FILE --nodes N [--ppn K] --check "
               "[--write-topology FILE]\n"
               "       collc-netswitch --topology FILE --nodes N [--ppn K] [--netns-prefix P] "
               "[--tap NAME] [--status FILE]\n"
               "(started by scripts/cluster; docs/cluster.md)\n",
               why);
  std::exit(2);
}

uint32_t number(const char *flag, const char *v) {
  char *end = nullptr;
  errno = 0;
  unsigned long n = std::strtoul(v, &end, 10);
  if (errno || end == v || *end || n == 0 || n > 65536)
    usage(llvm::formatv("{0} wants a number 1..65536, got '{1}'", flag, v).str().c_str());
  return static_cast<uint32_t>(n);
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc)
        usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--topology")
      o.topology = value();
    else if (a == "--nodes")
      o.nodes = number("--nodes", value());
    else if (a == "--ppn")
      o.ppn = number("--ppn", value());
    else if (a == "--netns-prefix")
      o.netnsPrefix = value();
    else if (a == "--tap")
      o.tap = value();
    else if (a == "--status")
      o.status = value();
    else if (a == "--write-topology")
      o.writeTopology = value();
    else if (a == "--check")
      o.check = true;
    else if (a == "--help" || a == "-h")
      usage("the emulated cluster's switch");
    else
      usage(("unknown argument '" + a + "'").c_str());
  }
  if (o.topology.empty() || o.nodes == 0)
    usage("--topology and --nodes are required");
  return o;
}

int64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

/// A frame waiting for its delivery time.
struct Pending {
  int64_t due;
  uint64_t seq;
  uint32_t dst;
  std::vector<uint8_t> frame;
};
struct Later {
  bool operator()(const Pending &a, const Pending &b) const {
    return a.due != b.due ? a.due > b.due : a.seq > b.seq;
  }
};

/// Lateness of deliveries against their due time (early ones count as 0), in
/// buckets of powers of two µs.
struct Lateness {
  std::array<uint64_t, 24> buckets{}; // [0,1) µs, [1,2), [2,4), ...
  uint64_t count = 0;
  int64_t maxNs = 0;
  void add(int64_t ns) {
    ns = std::max<int64_t>(ns, 0);
    maxNs = std::max(maxNs, ns);
    const double us = double(ns) / 1000.0;
    size_t b = us < 1 ? 0 : std::min<size_t>(buckets.size() - 1, 1 + size_t(std::log2(us)));
    ++buckets[b];
    ++count;
  }
  /// The upper edge of the bucket holding quantile q, in µs.
  double quantile(double q) const {
    uint64_t seen = 0, want = static_cast<uint64_t>(std::ceil(q * double(count)));
    for (size_t b = 0; b < buckets.size(); ++b) {
      seen += buckets[b];
      if (seen >= want && seen > 0)
        return std::ldexp(1.0, static_cast<int>(b));
    }
    return 0;
  }
};

class Switch {
public:
  Switch(const EmulatedNetwork &net, std::vector<int> taps) : net(net), taps(std::move(taps)) {
    for (const auto &l : net.levels) {
      up.emplace_back(l.groups, 0.0);
      down.emplace_back(l.groups, 0.0);
      levelFrames.push_back(0);
      levelBytes.push_back(0);
    }
  }

  /// A frame read from node `src`'s tap at time `now`.
  void receive(uint32_t src, std::vector<uint8_t> frame, int64_t now) {
    if (frame.size() < 14)
      return;
    ++framesIn;
    const Mac dstMac = macAt(frame.data()), srcMac = macAt(frame.data() + 6);
    if (!(srcMac & (uint64_t(1) << 40)))
      learned[srcMac] = src;
    auto it = (dstMac & (uint64_t(1) << 40)) ? learned.end() : learned.find(dstMac);
    if (it != learned.end()) {
      if (it->second != src)
        schedule(src, it->second, std::move(frame), now);
      return;
    }
    for (uint32_t d = 0; d < net.nodes; ++d)
      if (d != src)
        schedule(src, d, frame, now);
  }

  /// Writes every frame due by `now` + `early`; the next due time or -1.
  int64_t deliver(int64_t now, int64_t early) {
    while (!pending.empty() && pending.top().due <= now + early) {
      const Pending &p = pending.top();
      lateness.add(now - p.due);
      if (p.due > now)
        earlyDeliveries.add(p.due - now);
      queuedBytes -= p.frame.size();
      if (write(taps[p.dst], p.frame.data(), p.frame.size()) < 0)
        ++writeErrors;
      pending.pop();
    }
    return pending.empty() ? -1 : pending.top().due;
  }

  void writeStatus(const std::string &path) const {
    if (path.empty())
      return;
    std::string tmp = path + ".tmp";
    FILE *f = std::fopen(tmp.c_str(), "w");
    if (!f)
      return;
    std::fprintf(f, "frames in: %llu\nframes delivered: %llu\nframes dropped: %llu\n",
                 (unsigned long long)framesIn, (unsigned long long)lateness.count,
                 (unsigned long long)dropped);
    for (size_t j = 0; j < net.levels.size(); ++j)
      std::fprintf(f, "level %s: %llu frames, %llu bytes crossed it\n",
                   net.levels[j].name.c_str(), (unsigned long long)levelFrames[j],
                   (unsigned long long)levelBytes[j]);
    std::fprintf(f, "queued now: %zu frames, %llu bytes (at most %llu)\n", pending.size(),
                 (unsigned long long)queuedBytes, (unsigned long long)maxQueuedBytes);
    std::fprintf(f, "late deliveries, us: p50 < %.0f, p99 < %.0f, p99.9 < %.0f, max %.1f\n",
                 lateness.quantile(0.5), lateness.quantile(0.99), lateness.quantile(0.999),
                 double(lateness.maxNs) / 1000.0);
    std::fprintf(f, "early deliveries: %llu, us: p50 < %.0f, max %.1f\n",
                 (unsigned long long)earlyDeliveries.count, earlyDeliveries.quantile(0.5),
                 double(earlyDeliveries.maxNs) / 1000.0);
    std::fprintf(f, "timer armed early by: %.1f us\n", double(armEarly) / 1000.0);
    std::fprintf(f, "write errors: %llu\n", (unsigned long long)writeErrors);
    std::fprintf(f, "frames marked congested (ECN): %llu\n", (unsigned long long)marked);
    std::fclose(f);
    std::rename(tmp.c_str(), path.c_str());
  }

private:
  using Mac = uint64_t;
  static Mac macAt(const uint8_t *p) {
    Mac m = 0;
    for (int i = 0; i < 6; ++i)
      m = (m << 8) | p[i];
    return m;
  }

  void schedule(uint32_t src, uint32_t dst, std::vector<uint8_t> frame, int64_t now) {
    if (queuedBytes + frame.size() > maxQueue) {
      ++dropped; // a safety net for runaway senders; TCP never fills it
      return;
    }
    const uint32_t crossed = net.levelOf(src, dst);
    const double bytes = double(frame.size());
    double start = double(now), finish = double(now);
    bool congested = false;
    const bool control = frame.size() <= controlBytes;
    auto pass = [&](double &freeAt, double rate) {
      if (control) { // its own lane: paced, never queued behind data
        finish = std::max(finish, start + bytes * 1e9 / rate);
        return;
      }
      // The link's backlog when the frame reaches it, in bytes.
      congested = congested || (freeAt - start) * rate / 1e9 > markBytes;
      start = std::max(start, freeAt);
      finish = std::max(start + bytes * 1e9 / rate, finish);
      freeAt = finish;
    };
    for (uint32_t j = 1; j <= crossed; ++j)
      pass(up[j - 1][net.linkOf(src, j)], net.levels[j - 1].bytesPerSecond);
    for (uint32_t j = crossed; j >= 1; --j)
      pass(down[j - 1][net.linkOf(dst, j)], net.levels[j - 1].bytesPerSecond);
    if (congested && markCongestion(frame))
      ++marked;
    ++levelFrames[crossed - 1];
    levelBytes[crossed - 1] += frame.size();
    const int64_t due =
        static_cast<int64_t>(std::ceil(finish + net.levels[crossed - 1].latency * 1e9));
    queuedBytes += frame.size();
    maxQueuedBytes = std::max(maxQueuedBytes, queuedBytes);
    pending.push(Pending{due, seq++, dst, std::move(frame)});
  }

  /// Sets an IPv4 frame's ECN field to CE (congestion experienced) when its
  /// sender said it understands ECN, as switches do past a queue threshold;
  /// fixes the header checksum. False for frames that cannot be marked.
  static bool markCongestion(std::vector<uint8_t> &f) {
    if (f.size() < 34 || f[12] != 0x08 || f[13] != 0x00 || (f[14] >> 4) != 4)
      return false;
    uint8_t &tos = f[15];
    if ((tos & 3) == 0 || (tos & 3) == 3)
      return false; // not ECN-capable, or marked already
    tos |= 3;
    const size_t ihl = size_t(f[14] & 15) * 4;
    if (ihl < 20 || f.size() < 14 + ihl)
      return false;
    f[24] = f[25] = 0;
    uint32_t sum = 0;
    for (size_t i = 0; i < ihl; i += 2)
      sum += (uint32_t(f[14 + i]) << 8) | f[15 + i];
    while (sum >> 16)
      sum = (sum & 0xffff) + (sum >> 16);
    sum = ~sum & 0xffff;
    f[24] = uint8_t(sum >> 8);
    f[25] = uint8_t(sum & 0xff);
    return true;
  }

  const EmulatedNetwork &net;
  std::vector<int> taps;
  std::vector<std::vector<double>> up, down; // per level: when each group's link is free, ns
  std::map<Mac, uint32_t> learned;
  std::priority_queue<Pending, std::vector<Pending>, Later> pending;
  uint64_t seq = 0, framesIn = 0, dropped = 0, writeErrors = 0, marked = 0;
  /// A link whose backlog passes this many bytes marks ECN-capable frames.
  static constexpr double markBytes = 16 * 1024;
  /// Frames of at most this many bytes (TCP's acknowledgements, a few bytes
  /// of MPI message) take the control lane.
  static constexpr size_t controlBytes = 128;
  uint64_t queuedBytes = 0, maxQueuedBytes = 0;
  static constexpr uint64_t maxQueue = uint64_t(1) << 30;
  std::vector<uint64_t> levelFrames, levelBytes;
  Lateness lateness, earlyDeliveries;

public:
  int64_t armEarly = 0; ///< the current compensation, ns (for the status)
};

/// How late the timer wakes: the 25th percentile of the last 128 wake-ups,
/// at most 50 µs, the amount to arm it early by.
class WakeLatency {
public:
  void add(int64_t ns) {
    ring[next++ % ring.size()] = std::clamp<int64_t>(ns, 0, 1000000);
    if (next % ring.size() == 0) {
      std::array<int64_t, 128> sorted = ring;
      std::nth_element(sorted.begin(), sorted.begin() + 32, sorted.end());
      estimate = std::min<int64_t>(sorted[32], 50000);
    }
  }
  int64_t early() const { return estimate; }

private:
  std::array<int64_t, 128> ring{};
  uint64_t next = 0;
  int64_t estimate = 0;
};

/// Opens the tap `name` inside network namespace /var/run/netns/`netns`.
int openTap(const std::string &netns, const std::string &name) {
  const int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  const std::string path = "/var/run/netns/" + netns;
  const int target = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (home < 0 || target < 0) {
    std::fprintf(stderr, "collc-netswitch: cannot open %s: %s\n", path.c_str(),
                 std::strerror(errno));
    std::exit(1);
  }
  if (setns(target, CLONE_NEWNET) != 0) {
    std::fprintf(stderr, "collc-netswitch: cannot enter %s: %s\n", netns.c_str(),
                 std::strerror(errno));
    std::exit(1);
  }
  const int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  ifreq ifr{};
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
  std::snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name.c_str());
  if (fd < 0 || ioctl(fd, TUNSETIFF, &ifr) != 0) {
    std::fprintf(stderr, "collc-netswitch: cannot attach tap %s in %s: %s\n", name.c_str(),
                 netns.c_str(), std::strerror(errno));
    std::exit(1);
  }
  if (setns(home, CLONE_NEWNET) != 0) {
    std::fprintf(stderr, "collc-netswitch: cannot return to its namespace: %s\n",
                 std::strerror(errno));
    std::exit(1);
  }
  close(target);
  close(home);
  return fd;
}

void armTimer(int tfd, int64_t due) {
  itimerspec its{};
  if (due >= 0) {
    its.it_value.tv_sec = due / 1000000000;
    its.it_value.tv_nsec = due % 1000000000;
    if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
      its.it_value.tv_nsec = 1;
  }
  timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, nullptr);
}

} // namespace

int main(int argc, char **argv) {
  const Options o = parse(argc, argv);
  auto topo = collc::model::readTopologyFile(o.topology);
  if (!topo) {
    llvm::errs() << "collc-netswitch: " << llvm::toString(topo.takeError()) << "\n";
    return 2;
  }
  auto net = collc::model::emulate(*topo, o.nodes, o.ppn);
  if (!net) {
    llvm::errs() << "collc-netswitch: " << o.topology << ": "
                 << llvm::toString(net.takeError()) << "\n";
    return 2;
  }
  if (!o.writeTopology.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream out(o.writeTopology, ec);
    if (ec) {
      llvm::errs() << "collc-netswitch: cannot write '" << o.writeTopology
                   << "': " << ec.message() << "\n";
      return 2;
    }
    collc::model::printTopology(net->topology, out);
  }
  if (o.check) {
    llvm::outs() << collc::model::describe(*net);
    return 0;
  }

  std::vector<int> taps;
  for (uint32_t n = 0; n < o.nodes; ++n)
    taps.push_back(openTap(o.netnsPrefix + std::to_string(n), o.tap));

  // Wake-ups on time: no timer slack, and ahead of the ranks that spin.
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  sched_param sp{};
  sp.sched_priority = 10;
  if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
    std::fprintf(stderr, "collc-netswitch: no real-time priority (%s): timing is looser\n",
                 std::strerror(errno));

  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGUSR1);
  sigaddset(&sigs, SIGHUP);
  sigprocmask(SIG_BLOCK, &sigs, nullptr);
  const int sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
  const int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  const int ep = epoll_create1(EPOLL_CLOEXEC);
  auto watch = [&](int fd, uint64_t tag) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = tag;
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
  };
  const uint64_t tagSignal = ~uint64_t(0), tagTimer = ~uint64_t(0) - 1;
  for (uint32_t n = 0; n < taps.size(); ++n)
    watch(taps[n], n);
  watch(sfd, tagSignal);
  watch(tfd, tagTimer);

  Switch sw(*net, taps);
  llvm::outs() << collc::model::describe(*net) << "ready\n";
  llvm::outs().flush();
  sw.writeStatus(o.status);

  std::vector<uint8_t> buf(65536 + 64);
  std::array<epoll_event, 64> events;
  int64_t armed = -1, armedAt = -1;
  WakeLatency wake;
  for (;;) {
    const int k = epoll_wait(ep, events.data(), static_cast<int>(events.size()), -1);
    if (k < 0 && errno != EINTR)
      break;
    for (int e = 0; e < k; ++e) {
      const uint64_t tag = events[e].data.u64;
      if (tag == tagSignal) {
        signalfd_siginfo si;
        while (read(sfd, &si, sizeof si) == sizeof si) {
          if (si.ssi_signo == SIGUSR1) {
            sw.writeStatus(o.status);
            continue;
          }
          sw.writeStatus(o.status);
          return 0;
        }
      } else if (tag == tagTimer) {
        uint64_t expirations;
        [[maybe_unused]] ssize_t r = read(tfd, &expirations, sizeof expirations);
        if (armedAt >= 0)
          wake.add(nowNs() - armedAt);
        armed = -1; // one-shot: fired
      } else {
        for (;;) {
          const ssize_t got = read(taps[tag], buf.data(), buf.size());
          if (got <= 0)
            break;
          sw.receive(static_cast<uint32_t>(tag), std::vector<uint8_t>(buf.begin(),
                                                                       buf.begin() + got),
                     nowNs());
        }
      }
    }
    const int64_t next = sw.deliver(nowNs(), wake.early());
    sw.armEarly = wake.early();
    if (next != armed) {
      armedAt = next < 0 ? -1 : next - wake.early();
      armTimer(tfd, armedAt);
      armed = next;
    }
  }
  return 1;
}
