// runtime/shm/ShmNode.cpp: finding the node's ranks, creating and mapping the region.
#include "runtime/shm/ShmNode.h"

#include "runtime/mpi/MpiTransport.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace collc::rt {

ShmNode::~ShmNode() {
  endpoint.reset();
  if (map)
    munmap(map, bytes);
}

namespace {

/// What the node's first rank tells the others.
struct Announcement {
  char name[64];
  uint64_t bytes;
  int32_t ok;
  char error[180];
};

std::string errnoText(const char *what) {
  return std::string(what) + ": " + std::strerror(errno);
}

/// Test aid (docs/shm-transport.md): COLLC_SHM_FAIL=create makes the node's
/// first rank fail to reserve the region as a full /dev/shm does; =map makes
/// the other ranks fail to map it.
bool simulatedFailure(const char *step) {
  const char *v = std::getenv("COLLC_SHM_FAIL");
  return v && !std::strcmp(v, step);
}

/// Creates and formats the region; on failure returns false with `error`.
bool createRegion(uint32_t localRanks, const ShmConfig &config, Announcement &a, void *&map,
                  std::string &error) {
  static std::atomic<uint32_t> serial{0};
  const auto stamp = uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  std::snprintf(a.name, sizeof a.name, "/collc-%ld-%u-%llx", long(getpid()), serial++,
                static_cast<unsigned long long>(stamp & 0xffffffffull));
  a.bytes = regionBytes(localRanks, config);
  int fd = shm_open(a.name, O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) {
    error = errnoText("shm_open");
    return false;
  }
  bool ok = false;
  if (int rc = simulatedFailure("create") ? ENOSPC : posix_fallocate(fd, 0, off_t(a.bytes));
      rc != 0) {
    errno = rc;
    error = errnoText("posix_fallocate") + " (" + std::to_string(a.bytes) + " bytes)";
  } else if (void *m = mmap(nullptr, a.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
             m == MAP_FAILED) {
    error = errnoText("mmap");
  } else {
    map = m;
    formatRegion(map, localRanks, config);
    ok = true;
  }
  close(fd);
  if (!ok)
    shm_unlink(a.name);
  return ok;
}

bool attachRegion(const Announcement &a, uint32_t localRanks, void *&map, ShmConfig &config,
                  std::string &error) {
  int fd = shm_open(a.name, O_RDWR, 0600);
  if (fd < 0) {
    error = errnoText("shm_open");
    return false;
  }
  void *m = simulatedFailure("map")
                ? (errno = ENOMEM, MAP_FAILED)
                : mmap(nullptr, a.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) {
    error = errnoText("mmap");
    return false;
  }
  if (Status s = checkRegion(m, a.bytes, localRanks, config); !s.ok()) {
    munmap(m, a.bytes);
    error = s.message();
    return false;
  }
  map = m;
  return true;
}

} // namespace

Status setupShmNode(MPI_Comm comm, const ShmConfig &config, const std::vector<int> &nodeMap,
                    ShmSetup &setup) {
  setup = ShmSetup{};
  int size = 0, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  if (size == 1) {
    setup.why = "the communicator has one rank";
    return Status::success();
  }

  // The node's ranks: COLLC_NODE_MAP when it names this communicator's size.
  MPI_Comm nodeComm = MPI_COMM_NULL;
  if (nodeMap.size() == size_t(size)) {
    if (int rc = MPI_Comm_split(comm, nodeMap[size_t(rank)], rank, &nodeComm); rc != MPI_SUCCESS)
      return mpiError("MPI_Comm_split", rc);
  } else if (int rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                                          &nodeComm);
             rc != MPI_SUCCESS) {
    return mpiError("MPI_Comm_split_type", rc);
  }
  struct Freer {
    MPI_Comm &c;
    ~Freer() {
      if (c != MPI_COMM_NULL)
        MPI_Comm_free(&c);
    }
  } freer{nodeComm};
  MPI_Comm_set_errhandler(nodeComm, MPI_ERRORS_RETURN);
  int localRanks = 0, self = 0;
  MPI_Comm_size(nodeComm, &localRanks);
  MPI_Comm_rank(nodeComm, &self);

  // Who is where: (the node's first rank in comm, index on the node) of every rank.
  int leader = rank;
  if (int rc = MPI_Bcast(&leader, 1, MPI_INT, 0, nodeComm); rc != MPI_SUCCESS)
    return mpiError("MPI_Bcast", rc);
  int mine[2] = {leader, self};
  std::vector<int> all(size_t(size) * 2);
  if (int rc = MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, comm); rc != MPI_SUCCESS)
    return mpiError("MPI_Allgather", rc);
  if (localRanks == 1) {
    setup.why = "no other rank of the communicator is on this node";
    return Status::success();
  }

  // The first rank creates the region, the others map it.
  Announcement a{};
  void *map = nullptr;
  std::string error;
  ShmConfig used = config;
  if (self == 0) {
    a.ok = createRegion(uint32_t(localRanks), config, a, map, error) ? 1 : 0;
    std::snprintf(a.error, sizeof a.error, "%s", error.c_str());
  }
  if (int rc = MPI_Bcast(&a, int(sizeof a), MPI_BYTE, 0, nodeComm); rc != MPI_SUCCESS) {
    if (map)
      munmap(map, a.bytes);
    if (self == 0 && a.ok)
      shm_unlink(a.name);
    return mpiError("MPI_Bcast", rc);
  }
  int ok = a.ok;
  if (self != 0 && a.ok)
    ok = attachRegion(a, uint32_t(localRanks), map, used, error) ? 1 : 0;
  else if (self != 0)
    error = std::string("the node's first rank could not create the region: ") + a.error;
  int allOk = 0;
  int rc = MPI_Allreduce(&ok, &allOk, 1, MPI_INT, MPI_MIN, nodeComm);
  if (self == 0 && a.ok)
    shm_unlink(a.name); // every rank has it mapped (or gave up): the name is not needed
  if (rc != MPI_SUCCESS || !allOk) {
    if (map)
      munmap(map, a.bytes);
    if (rc != MPI_SUCCESS)
      return mpiError("MPI_Allreduce", rc);
    setup.failed = true;
    setup.why = ok ? "another rank on this node could not map the shared-memory region"
                   : "shared memory: " + error;
    return Status::success();
  }

  auto node = std::make_unique<ShmNode>();
  node->map = map;
  node->bytes = a.bytes;
  node->endpoint = std::make_unique<ShmEndpoint>(map, uint32_t(self), uint32_t(localRanks), used);
  node->localOf.assign(size_t(size), -1);
  for (int r = 0; r < size; ++r) {
    if (all[size_t(r) * 2] != leader)
      ++node->remotePeers;
    else {
      node->localOf[size_t(r)] = all[size_t(r) * 2 + 1];
      node->localPeers += r != rank;
    }
  }
  setup.node = std::move(node);
  return Status::success();
}

} // namespace collc::rt
