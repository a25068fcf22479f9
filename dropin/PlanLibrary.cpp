// dropin/PlanLibrary.cpp: plan files and generated plans.
#include "dropin/PlanLibrary.h"

#include "dropin/Trust.h"

#include "dropin/ProofCache.h"
#include "dropin/RankCompile.h"

#include "compiler/Disasm.h"
#include "compiler/Lower.h"
#include "compiler/Verifier.h"
#include "compiler/passes/Pipeline.h"
#include "runtime/bytecode/Loader.h"
#include "runtime/bytecode/ReadFile.h"
#include "runtime/bytecode/Bundle.h"
#include "schedules/Generators.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>

namespace collc::dropin {

namespace {

namespace fs = std::filesystem;

ir::Collective toIr(Coll c) {
  switch (c) {
  case Coll::Allreduce:
    return ir::Collective::Allreduce;
  case Coll::Reduce:
    return ir::Collective::Reduce;
  case Coll::ReduceScatter:
    return ir::Collective::ReduceScatterBlock;
  case Coll::Scan:
    return ir::Collective::Scan;
  case Coll::Exscan:
    return ir::Collective::Exscan;
  case Coll::Allgather:
    return ir::Collective::Allgather;
  case Coll::Bcast:
    return ir::Collective::Bcast;
  case Coll::Alltoall:
    return ir::Collective::Alltoall;
  case Coll::Gather:
    return ir::Collective::Gather;
  case Coll::Scatter:
    return ir::Collective::Scatter;
  case Coll::Barrier:
    return ir::Collective::Barrier;
  }
  return ir::Collective::Allreduce;
}

bool endsWith(const std::string &s, const char *suffix) {
  const size_t n = std::char_traits<char>::length(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

/// The first diagnostic of a failed verification, and how many there were.
std::string describeFailure(const compiler::VerifyResult &r) {
  const size_t n = r.diagnostics.size() + r.dropped;
  std::string s = r.diagnostics.empty() ? std::string("it does not verify")
                                        : compiler::toString(r.diagnostics.front());
  if (n > 1)
    s += " (and " + std::to_string(n - 1) + " more)";
  return s;
}

/// What COLLC_VERIFY proves: the plan, and for allreduce that every rank
/// computes the same expression (docs/plan-format.md, "Identical results"),
/// so ranks cannot get different bits from an operation sensitive to operand
/// order.
compiler::VerifyOptions proofOptions(const ir::Shape &shape) {
  compiler::VerifyOptions o;
  o.requireIdentical = shape.collective == ir::Collective::Allreduce;
  return o;
}

double cpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

lang::InstantiateOptions instantiateOptions(uint32_t ranks, uint32_t root) {
  lang::InstantiateOptions o;
  o.ranks = ranks;
  o.root = root;
  return o;
}

static_assert(ciProvenRanks == 32, "the text of Guarantee::ProvenInCi names the bound");

} // namespace

const char *text(Guarantee g) {
  switch (g) {
#define COLLC_X(E, T)                                                                      \
  case Guarantee::E:                                                                       \
    return T;
    COLLC_GUARANTEES(COLLC_X)
#undef COLLC_X
  case Guarantee::Count:
    break;
  }
  return "?";
}

void PlanLibrary::admit(PlanFile f, const rt::Proof &proof, const Config &config,
                        std::vector<std::string> &warnings) {
  const bool identicalNeeded = f.collective == rt::Collective::Allreduce;
  if (!config.verify && !config.acceptUnproven) {
    std::string why;
    if (!proof.verified)
      why = "is unproven (compiled with --no-verify)";
    else if (identicalNeeded && !proof.identical)
      why = "is proven, but its ranks may compute different results (not identical)";
    if (!why.empty()) {
      warnings.push_back("COLLC_PLAN_PATH: '" + f.origin + "' " + why +
                         "; it is not used (COLLC_VERIFY=1 proves plans before use, "
                         "COLLC_ACCEPT_UNPROVEN=1 uses them as they are)");
      return;
    }
  }
  files_.push_back(std::move(f));
}

void PlanLibrary::addFile(const std::string &path, const Config &config,
                          std::vector<std::string> &warnings) {
  if (const std::string why = untrustedBecause(path, config.trusted); !why.empty()) {
    warnings.push_back(untrustedWarning("COLLC_PLAN_PATH", path, why) + "; it is not used");
    return;
  }
  std::vector<uint8_t> bytes;
  if (rt::Status s = rt::readRegularFile(path, bytes); !s.ok()) {
    warnings.push_back("COLLC_PLAN_PATH: cannot read '" + path + "' (" + s.message() +
                       "); it is not used");
    return;
  }
  if (bytes.empty()) {
    warnings.push_back("COLLC_PLAN_PATH: '" + path + "' is empty; it is not used");
    return;
  }
  if (rt::looksLikeBundle(bytes)) {
    rt::Bundle b;
    if (rt::Status s = rt::readBundle(bytes, b); !s.ok()) {
      warnings.push_back("COLLC_PLAN_PATH: '" + path + "' is not a valid bundle (" +
                         s.message() + "); it is not used");
      return;
    }
    for (size_t i = 0; i < b.entries.size(); ++i) {
      PlanFile f;
      f.origin = path + "#" + std::to_string(i);
      const rt::Shape &shape = b.plans[i].shape;
      f.collective = shape.collective;
      f.ranks = shape.ranks;
      f.root = shape.root;
      f.commutative = shape.commutative;
      f.inPlace = shape.inPlace;
      f.algorithm = b.plans[i].algorithm;
      f.minBytes = b.entries[i].minBytes;
      f.maxBytes = b.entries[i].maxBytes;
      f.bytes = std::move(b.entries[i].plan);
      f.crc = rt::crc32(f.bytes);
      admit(std::move(f), b.plans[i].proof, config, warnings);
    }
    return;
  }
  rt::LoadedPlan p;
  if (rt::Status s = rt::load(bytes, p); !s.ok()) {
    warnings.push_back("COLLC_PLAN_PATH: '" + path + "' is not a valid compiled plan (" +
                       s.message() + "); it is not used");
    return;
  }
  PlanFile f;
  f.origin = path;
  f.collective = p.shape.collective;
  f.ranks = p.shape.ranks;
  f.root = p.shape.root;
  f.commutative = p.shape.commutative;
  f.inPlace = p.shape.inPlace;
  f.algorithm = p.algorithm;
  f.crc = rt::crc32(bytes);
  f.bytes = std::move(bytes);
  admit(std::move(f), p.proof, config, warnings);
}

void PlanLibrary::scan(const std::vector<std::string> &folders, const Config &config,
                       std::vector<std::string> &warnings) {
  files_.clear();
  for (const std::string &folder : folders) {
    std::error_code ec;
    const fs::file_status st = fs::status(folder, ec);
    if (ec || !fs::exists(st)) {
      warnings.push_back("COLLC_PLAN_PATH: '" + folder + "' does not exist");
      continue;
    }
    if (fs::is_regular_file(st)) {
      addFile(folder, config, warnings);
      continue;
    }
    if (!fs::is_directory(st)) {
      warnings.push_back("COLLC_PLAN_PATH: '" + folder + "' is neither a folder nor a file");
      continue;
    }
    std::vector<std::string> names;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string p = it->path().string();
      if (endsWith(p, ".cplan") || endsWith(p, ".cbundle"))
        names.push_back(p);
    }
    if (ec) {
      warnings.push_back("COLLC_PLAN_PATH: cannot list '" + folder + "': " + ec.message());
      continue;
    }
    std::sort(names.begin(), names.end());
    for (const std::string &p : names)
      addFile(p, config, warnings);
  }
}

std::vector<FileCandidate> PlanLibrary::candidates(Coll c, uint32_t ranks) const {
  std::vector<FileCandidate> out;
  for (size_t i = 0; i < files_.size(); ++i) {
    const PlanFile &f = files_[i];
    if (f.collective != toRt(c) || f.ranks != ranks)
      continue;
    FileCandidate fc;
    fc.id = int(i);
    fc.root = f.root;
    fc.minBytes = f.minBytes;
    fc.maxBytes = f.maxBytes;
    fc.needsCommutative = f.commutative;
    fc.algorithm = f.algorithm;
    fc.origin = f.origin;
    out.push_back(fc);
  }
  return out;
}

KnownAlgorithms PlanLibrary::knownAlgorithms() const {
  KnownAlgorithms k;
  for (const sched::Algorithm &a : sched::algorithms())
    for (unsigned c = 0; c < numColls; ++c)
      if (a.collective == toIr(Coll(c)))
        k.names[c].push_back(a.name.str());
  for (const PlanFile &f : files_)
    for (unsigned c = 0; c < numColls; ++c) {
      auto &v = k.names[c];
      if (f.collective == toRt(Coll(c)) && std::find(v.begin(), v.end(), f.algorithm) == v.end())
        v.push_back(f.algorithm);
    }
  return k;
}

void PlanLibrary::addUserAlgorithms(const std::vector<std::string> &folders,
                                    const std::vector<std::string> &trusted,
                                    std::vector<std::string> &warnings) {
  // A folder with a file another user could have written is read file by
  // file, without that file.
  std::vector<std::string> whole, files;
  for (const std::string &folder : folders) {
    if (const std::string why = untrustedBecause(folder, trusted); !why.empty()) {
      warnings.push_back(untrustedWarning("COLLC_LIBRARY", folder, why) +
                         "; its algorithms are not used");
      continue;
    }
    std::vector<std::string> mine;
    bool refused = false;
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string p = it->path().string();
      if (!endsWith(p, ".calgo"))
        continue;
      if (const std::string why = untrustedBecause(p, trusted); !why.empty()) {
        warnings.push_back(untrustedWarning("COLLC_LIBRARY", p, why) +
                           "; that file's algorithm is not used");
        refused = true;
      } else {
        mine.push_back(p);
      }
    }
    if (!refused) {
      whole.push_back(folder);
    } else {
      std::sort(mine.begin(), mine.end());
      files.insert(files.end(), mine.begin(), mine.end());
    }
  }
  std::vector<std::string> skipped;
  if (llvm::Error e = sched::addUserAlgorithms(whole, files, &skipped))
    skipped.push_back(llvm::toString(std::move(e)));
  for (const std::string &why : skipped)
    warnings.push_back("COLLC_LIBRARY: " + why + "; that file's algorithm is not used");
}

uint64_t PlanLibrary::libraryHash(bool user) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto add = [&h](llvm::StringRef s) {
    for (char c : s)
      h = (h ^ uint8_t(c)) * 0x100000001b3ull;
    h = (h ^ 0xff) * 0x100000001b3ull;
  };
  add(llvm::StringRef(proofPipeline.data(), proofPipeline.size()));
  for (const sched::Algorithm &a : sched::algorithms()) {
    if (a.user != user)
      continue;
    add(ir::name(a.collective));
    add(a.name);
    add(a.module->source.text);
  }
  return h;
}

bool PlanLibrary::generatorInfo(Coll c, std::string_view name, bool &needsCommutative) {
  const sched::Algorithm *a =
      sched::findAlgorithm(toIr(c), llvm::StringRef(name.data(), name.size()));
  if (!a)
    return false;
  needsCommutative = a->needsCommutative;
  return true;
}

bool PlanLibrary::generatorFits(Coll c, std::string_view name, uint32_t ranks, uint32_t root) {
  const sched::Algorithm *a =
      sched::findAlgorithm(toIr(c), llvm::StringRef(name.data(), name.size()));
  sched::GenOptions o;
  o.ranks = ranks;
  o.root = root;
  return a && a->accepts(o);
}

std::shared_ptr<const std::vector<uint8_t>>
PlanLibrary::generated(Coll c, std::string_view name, uint32_t ranks, uint32_t root,
                       std::string &error) {
  std::lock_guard<std::mutex> lock(mu_);
  Generated &g = generated_[{unsigned(c), std::string(name), ranks, root}];
  if (!g.bytes && g.error.empty()) {
    sched::GenOptions opts;
    opts.ranks = ranks;
    opts.root = root;
    // The whole plan, unlike build()'s per-rank plans, may not fit.
    llvm::Expected<ir::Plan> plan =
        sched::generate(toIr(c), llvm::StringRef(name.data(), name.size()), opts);
    if (!plan) {
      g.error = llvm::toString(plan.takeError());
    } else if (compiler::VerifyResult r = compiler::verify(*plan, proofOptions(plan->shape));
               !r.proven()) {
      // Never expected (the test suite proves every generator), but a plan
      // that is not proven for this communicator is never run: native MPI
      // serves the call instead.
      g.error = "the generated plan does not verify: " + describeFailure(r);
    } else {
      // The drop-in's pipeline (the one build() compiles each rank with,
      // so every rank runs the same program whichever way it got it), each
      // pass's result proven again (translation validation). Should a pass
      // ever break a plan, the plan as generated — proven just above — is
      // used instead (every rank does this under COLLC_VERIFY).
      if (llvm::Expected<ir::Plan> optimized =
              compiler::optimize(*plan, dropinPipeline(/*verifyEach=*/true))) {
        *plan = std::move(*optimized);
      } else {
        g.optimizeError = llvm::toString(optimized.takeError());
        std::fprintf(stderr,
                     "collc: warning: -O2 was refused for the generated %.*s plan for %u "
                     "ranks; using it unoptimized: %s\n",
                     int(name.size()), name.data(), unsigned(ranks), g.optimizeError.c_str());
      }
      // Proven (the input above, each pass's result in optimize), and the
      // passes keep identical results identical.
      g.bytes = std::make_shared<const std::vector<uint8_t>>(
          compiler::lower(*plan, rt::Proof{true, r.stats.identical}));
    }
  }
  if (!g.error.empty()) {
    error = g.error;
    return nullptr;
  }
  return g.bytes;
}

bool PlanLibrary::verifyFile(int id, std::string &error) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = fileVerified_.find(id);
  if (it == fileVerified_.end()) {
    std::pair<bool, std::string> result{true, ""};
    llvm::Expected<ir::Plan> plan = compiler::disassemble(files_[size_t(id)].bytes);
    if (!plan) {
      result = {false, llvm::toString(plan.takeError())};
    } else {
      compiler::VerifyResult r = compiler::verify(*plan, proofOptions(plan->shape));
      if (!r.proven())
        result = {false, describeFailure(r)};
    }
    it = fileVerified_.emplace(id, std::move(result)).first;
  }
  error = it->second.second;
  return it->second.first;
}

Guarantee PlanLibrary::guaranteeFor(Coll c, std::string_view name, uint32_t ranks,
                                    uint32_t root, const Config &config, std::string &record,
                                    std::vector<std::string> &warnings) {
  auto key = std::make_tuple(unsigned(c), std::string(name), ranks, root);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = guarantees_.find(key); it != guarantees_.end()) {
      record = it->second.second;
      return it->second.first;
    }
  }
  Guarantee g = Guarantee::None;
  record.clear();
  const sched::Algorithm *a =
      sched::findAlgorithm(toIr(c), llvm::StringRef(name.data(), name.size()));
  if (a && !a->user && ranks <= ciProvenRanks) {
    g = Guarantee::ProvenInCi;
  } else if (a && !config.proofCache.empty()) {
    ProofKey k;
    k.algorithm = a->name.str();
    k.collective = ir::name(toIr(c)).str();
    k.sourceHash = sha256Hex(a->module->source.text);
    k.ranks = ranks;
    ProofNeeds needs;
    needs.anyAssociative = !a->needsCommutative;
    needs.inPlace = a->inPlace;
    needs.identical = c == Coll::Allreduce;
    std::string why;
    switch (lookupProof(config.proofCache, k, root, needs, why, &config.trusted)) {
    case Lookup::Proven:
      g = Guarantee::ProofRecord;
      record = config.proofCache + "/" + recordFileName(k);
      break;
    case Lookup::Invalid:
      warnings.push_back(why);
      break;
    case Lookup::Absent:
    case Lookup::NotRoot:
      break;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  guarantees_[key] = {g, record};
  return g;
}

bool PlanLibrary::build(Coll c, std::string_view name, uint32_t ranks, uint32_t root,
                        uint32_t rank, const Config &config, BuiltPlan &out,
                        std::string &error, std::vector<std::string> &warnings) {
  const sched::Algorithm *a =
      sched::findAlgorithm(toIr(c), llvm::StringRef(name.data(), name.size()));
  if (!a) {
    error = "no library algorithm " + std::string(name) + " for " + std::string(dropin::name(c));
    return false;
  }
  std::string record;
  const Guarantee g = guaranteeFor(c, name, ranks, root, config, record, warnings);
  // The whole plan, proven on load: with COLLC_VERIFY, for the allreduce
  // algorithms whose ranks compute identical results only at some p, and for
  // a user's algorithm no proof record covers. (Ranks may decide this
  // differently when they read different proof records: a rank's program is
  // the same either way, see generated().)
  const bool unprovenUser = a->user && g != Guarantee::ProofRecord;
  if (config.verify || unprovenUser || (c == Coll::Allreduce && nonIdenticalAllreduce(name))) {
    std::shared_ptr<const std::vector<uint8_t>> bytes = generated(c, name, ranks, root, error);
    if (!bytes)
      return false;
    out = BuiltPlan{};
    out.bytes = std::move(bytes);
    out.whole = true;
    out.guarantee = unprovenUser && !config.verify ? Guarantee::ProvenOnFirstUse
                                                   : Guarantee::ProvenOnLoad;
    return true;
  }
  std::lock_guard<std::mutex> lock(mu_);
  Built &b = built_[{unsigned(c), std::string(name), ranks, root, rank}];
  if (!b.plan.bytes && b.error.empty()) {
    const double t0 = cpuSeconds();
    llvm::Expected<RankPlan> rp = compileRank(*a->module, instantiateOptions(ranks, root), rank);
    if (!rp) {
      b.error = llvm::toString(rp.takeError());
    } else {
      b.plan.bytes = std::make_shared<const std::vector<uint8_t>>(std::move(rp->bytes));
      b.plan.sections = rp->sections;
      b.plan.ownOps = rp->ownOps;
      b.plan.contextOps = rp->contextOps;
      b.plan.seconds = cpuSeconds() - t0;
    }
  } else {
    b.plan.seconds = 0; // cached: built by an earlier communicator
  }
  if (!b.error.empty()) {
    error = b.error;
    return false;
  }
  out = b.plan;
  out.guarantee = g;
  out.record = record;
  return true;
}

} // namespace collc::dropin
