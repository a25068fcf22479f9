// runtime/api/Api.cpp: the C API (collc/collc.h) over the interpreter.
//
// Per communicator, a private duplicate (for our messages only) and its tag
// counter are cached on the user's communicator with an attribute and freed
// with it. Per plan, each rank's prepared program is built on first
// use and shared by every execution.
#include "collc/collc.h"

#include "runtime/api/Execution.h"
#include "runtime/bytecode/Loader.h"
#include "runtime/bytecode/ReadFile.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <new>

using namespace collc::rt;

struct collc_plan_s {
  LoadedPlan plan;
  /// Unique per loaded plan in this process (a freed plan's address may be
  /// reused; its id is not).
  uint64_t id = nextId();
  static uint64_t nextId() {
    static std::atomic<uint64_t> counter{1};
    return counter++;
  }
  std::mutex mu;
  std::map<uint32_t, std::unique_ptr<PreparedRank>> prepared;
  std::atomic<int> requests{0};

  const PreparedRank &forRank(uint32_t rank) {
    std::lock_guard<std::mutex> lock(mu);
    auto &slot = prepared[rank];
    if (!slot)
      slot = std::make_unique<PreparedRank>(prepareRank(plan, rank));
    return *slot;
  }
};

namespace collc::rt {

namespace {
thread_local std::string lastError;
} // namespace

int fail(int code, std::string message) {
  lastError = std::move(message);
  return code;
}

int failStatus(const Status &s, int fallback) {
  int code = fallback;
  switch (s.code()) {
  case ErrorCode::Argument:
    code = COLLC_ERR_ARG;
    break;
  case ErrorCode::Io:
    code = COLLC_ERR_IO;
    break;
  case ErrorCode::Shape:
    code = COLLC_ERR_SHAPE;
    break;
  case ErrorCode::Mpi:
    code = COLLC_ERR_MPI;
    break;
  case ErrorCode::State:
    code = COLLC_ERR_STATE;
    break;
  case ErrorCode::Invalid: // a plan that binding shows cannot be right
    code = COLLC_ERR_PLAN;
    break;
  default:
    break;
  }
  return fail(code, s.message());
}

const LoadedPlan &loadedOf(collc_plan p) { return p->plan; }
const PreparedRank &preparedOf(collc_plan p, uint32_t rank) { return p->forRank(rank); }
void countRequest(collc_plan p, int delta) { p->requests += delta; }
uint64_t planId(collc_plan p) { return p->id; }

} // namespace collc::rt

extern "C" {

int collc_plan_load_memory(const void *data, size_t size, collc_plan *plan) {
  if (!plan || (!data && size))
    return fail(COLLC_ERR_ARG, "collc_plan_load_memory: null argument");
  *plan = COLLC_PLAN_NULL;
  auto p = std::unique_ptr<collc_plan_s>(new (std::nothrow) collc_plan_s);
  if (!p)
    return fail(COLLC_ERR_NOMEM, "out of memory");
  Status s = load(std::span<const uint8_t>(static_cast<const uint8_t *>(data), size), p->plan);
  if (!s.ok())
    return fail(COLLC_ERR_PLAN, s.message());
  *plan = p.release();
  return COLLC_SUCCESS;
}

int collc_plan_load_file(const char *path, collc_plan *plan) {
  if (!path || !plan)
    return fail(COLLC_ERR_ARG, "collc_plan_load_file: null argument");
  *plan = COLLC_PLAN_NULL;
  std::vector<uint8_t> bytes;
  if (Status s = readRegularFile(path, bytes); !s.ok())
    return fail(COLLC_ERR_IO, std::string("cannot read '") + path + "': " + s.message());
  int rc = collc_plan_load_memory(bytes.data(), bytes.size(), plan);
  if (rc != COLLC_SUCCESS)
    lastError = std::string(path) + ": " + lastError;
  return rc;
}

int collc_plan_free(collc_plan *plan) {
  if (!plan)
    return fail(COLLC_ERR_ARG, "collc_plan_free: null argument");
  if (*plan && (*plan)->requests > 0)
    return fail(COLLC_ERR_STATE, "collc_plan_free: requests made from the plan are not freed");
  delete *plan;
  *plan = COLLC_PLAN_NULL;
  return COLLC_SUCCESS;
}

int collc_plan_get_info(collc_plan plan, collc_plan_info *info) {
  if (!plan || !info)
    return fail(COLLC_ERR_ARG, "collc_plan_get_info: null argument");
  const Shape &s = plan->plan.shape;
  info->collective = int(s.collective);
  info->ranks = int(s.ranks);
  info->root = int(s.root);
  info->chunks = int(s.chunks);
  info->commutative = s.commutative;
  info->in_place = s.inPlace;
  info->algorithm = plan->plan.algorithm.c_str();
  info->verified = plan->plan.proof.verified;
  info->identical = plan->plan.proof.identical;
  return COLLC_SUCCESS;
}

const char *collc_strerror(int status) {
  switch (status) {
  case COLLC_SUCCESS:
    return "success";
  case COLLC_ERR_ARG:
    return "invalid argument";
  case COLLC_ERR_IO:
    return "cannot read the plan file";
  case COLLC_ERR_PLAN:
    return "not a valid compiled plan";
  case COLLC_ERR_SHAPE:
    return "the plan does not fit the call";
  case COLLC_ERR_UNSUPPORTED:
    return "the plan cannot serve this datatype, operation or in-place use";
  case COLLC_ERR_MPI:
    return "an MPI call failed";
  case COLLC_ERR_STATE:
    return "request used in the wrong state";
  case COLLC_ERR_NOMEM:
    return "out of memory";
  }
  return "unknown collc status";
}

const char *collc_error_message(void) { return lastError.c_str(); }

} // extern "C"
