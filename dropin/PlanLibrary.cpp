// dropin/PlanLibrary.cpp: plan files and generated plans.
#include "dropin/PlanLibrary.h"

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
  }
  return ir::Collective::Allreduce;
}

/// Every collective a plan can implement has an intercepted MPI call.
bool served(rt::Collective c) {
  for (unsigned i = 0; i < numColls; ++i)
    if (toRt(Coll(i)) == c)
      return true;
  return false;
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

} // namespace

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
  auto notServed = [&](rt::Collective c) {
    warnings.push_back("COLLC_PLAN_PATH: '" + path + "' is a plan for " + rt::name(c) +
                       ", which the interposer does not intercept (only allreduce and "
                       "reduce); it is not used");
  };
  if (rt::looksLikeBundle(bytes)) {
    rt::Bundle b;
    if (rt::Status s = rt::readBundle(bytes, b); !s.ok()) {
      warnings.push_back("COLLC_PLAN_PATH: '" + path + "' is not a valid bundle (" +
                         s.message() + "); it is not used");
      return;
    }
    if (!served(b.collective))
      return notServed(b.collective);
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
  if (!served(p.shape.collective))
    return notServed(p.shape.collective);
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

bool PlanLibrary::generatorInfo(Coll c, std::string_view name, bool &needsCommutative) {
  const sched::Algorithm *a =
      sched::findAlgorithm(toIr(c), llvm::StringRef(name.data(), name.size()));
  if (!a)
    return false;
  needsCommutative = a->needsCommutative;
  return true;
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
      // As `collc compile` would: -O2, each pass's result proven again
      // (translation validation). Should a pass ever break a plan, the plan
      // as generated — proven just above — is used instead.
      compiler::PipelineOptions o2;
      o2.level = 2;
      if (llvm::Expected<ir::Plan> optimized = compiler::optimize(*plan, o2)) {
        *plan = std::move(*optimized);
      } else {
        g.optimizeError = llvm::toString(optimized.takeError());
        std::fprintf(stderr,
                     "collc: warning: -O2 was refused for the generated %.*s plan for %u "
                     "ranks; using it unoptimized: %s\n",
                     int(name.size()), name.data(), unsigned(ranks), g.optimizeError.c_str());
      }
      g.bytes = std::make_shared<const std::vector<uint8_t>>(compiler::lower(*plan));
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

} // namespace collc::dropin
