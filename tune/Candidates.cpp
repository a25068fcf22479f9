// tune/Candidates.cpp: enumerating the search space.
#include "tune/Candidates.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace collc::tune {

namespace {

/// The first line of an instantiation error, without the "file:line:col:
/// error: " in front (the report names the algorithm already).
std::string reason(llvm::Error e) {
  std::string s = llvm::toString(std::move(e));
  s = s.substr(0, s.find('\n'));
  const size_t at = s.find("error: ");
  return at == std::string::npos ? s : s.substr(at + 7);
}

std::string candidateName(llvm::StringRef algorithm, const lang::ParamValues &params,
                          unsigned segments) {
  std::string name = algorithm.str();
  for (const auto &[k, v] : params)
    name += "." + k + (v.isAlgorithm() ? "=" + v.algorithm : std::to_string(v.number));
  if (segments > 1)
    name += ".seg" + std::to_string(segments);
  return name;
}

/// Every combination of the integer parameters' values, the first parameter
/// slowest, with the algorithm parameters at their defaults; then, with the
/// integer parameters at theirs, each algorithm parameter set to each of its
/// other choices while the others keep their defaults (one level of a
/// hierarchy varied at a time: the full product of three levels' choices
/// would be thousands). Each as the list of values that differ from the
/// defaults.
std::vector<lang::ParamValues> parameterCombinations(const sched::Algorithm &a) {
  std::vector<lang::ParamValues> out{{}};
  for (const lang::Param &p : a.module->params) {
    if (p.isAlgorithm)
      continue;
    std::vector<lang::ParamValues> next;
    for (const auto &partial : out)
      for (int64_t v : parameterValues(p)) {
        auto c = partial;
        if (v != p.defaultValue)
          c.emplace_back(p.name, lang::ParamValue(v));
        next.push_back(std::move(c));
      }
    out = std::move(next);
  }
  for (const sched::Parameter &p : a.parameters()) {
    if (!p.isAlgorithm)
      continue;
    for (const std::string &choice : p.choices)
      if (choice != p.defaultAlgorithm)
        out.push_back({{p.name, lang::ParamValue(choice)}});
  }
  return out;
}

} // namespace

std::vector<int64_t> parameterValues(const lang::Param &p) {
  std::vector<int64_t> v{p.defaultValue, 2, 3, 4, 8};
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

llvm::Expected<Enumeration> enumerate(ir::Collective c, const lang::InstantiateOptions &shape,
                                      const CandidateOptions &opts) {
  for (const std::string &a : opts.algorithms)
    if (!sched::findAlgorithm(c, a)) {
      std::string known;
      for (const sched::Algorithm &x : sched::algorithms())
        if (x.collective == c)
          known += (known.empty() ? "" : ", ") + x.name.str();
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     llvm::formatv("unknown {0} algorithm '{1}' (known: {2})",
                                                   ir::name(c), a, known)
                                         .str());
    }
  Enumeration out;
  for (const sched::Algorithm &a : sched::algorithms()) {
    if (a.collective != c ||
        (!opts.algorithms.empty() && !llvm::is_contained(opts.algorithms, a.name)))
      continue;
    for (const auto &params : parameterCombinations(a)) {
      lang::InstantiateOptions io = shape;
      io.params = params;
      const std::string base = candidateName(a.name, params, 1);
      llvm::Expected<lang::OpEstimate> est = lang::estimateOps(*a.module, io);
      if (!est) {
        out.notFitting.push_back({base, reason(est.takeError())});
        continue;
      }
      for (unsigned k : opts.segments) {
        const std::string name = candidateName(a.name, params, k);
        if (est->ops * k > opts.maxOps) {
          out.notFitting.push_back(
              {name, llvm::formatv("about {0} ops, more than the limit of {1}", est->ops * k,
                                   opts.maxOps)
                         .str()});
          continue;
        }
        out.candidates.push_back({name, &a, params, k, est->ops});
      }
    }
  }
  return out;
}

} // namespace collc::tune
