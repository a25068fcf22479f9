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
    name += "." + k + (v.isAlgorithm() ? "=" : "") + lang::formatParamValue(v);
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
std::vector<lang::ParamValues> parameterCombinations(const sched::Algorithm &a,
                                                     const lang::ParamValues &fixed) {
  auto fixedValue = [&](const std::string &name) -> const lang::ParamValue * {
    for (const auto &[k, v] : fixed)
      if (k == name)
        return &v;
    return nullptr;
  };
  std::vector<lang::ParamValues> out{{}};
  for (const lang::Param &p : a.module->params) {
    if (p.isAlgorithm)
      continue;
    const lang::ParamValue *f = fixedValue(p.name);
    const std::vector<int64_t> values = f ? std::vector<int64_t>{f->number} : parameterValues(p);
    std::vector<lang::ParamValues> next;
    for (const auto &partial : out)
      for (int64_t v : values) {
        auto c = partial;
        if (v != p.defaultValue)
          c.emplace_back(p.name, lang::ParamValue(v));
        next.push_back(std::move(c));
      }
    out = std::move(next);
  }
  const size_t integerCombinations = out.size();
  for (const sched::Parameter &p : a.parameters()) {
    if (!p.isAlgorithm)
      continue;
    if (const lang::ParamValue *f = fixedValue(p.name)) {
      // Fixed: every combination runs that choice; no variation.
      if (f->algorithm != p.defaultAlgorithm)
        for (size_t i = 0; i < integerCombinations; ++i)
          out[i].emplace_back(p.name, *f);
      continue;
    }
    for (const std::string &choice : p.choices)
      if (choice != p.defaultAlgorithm)
        out.push_back({{p.name, lang::ParamValue(choice)}});
  }
  // The variations of one level keep the other fixed levels.
  for (size_t i = integerCombinations; i < out.size(); ++i)
    for (const sched::Parameter &p : a.parameters())
      if (const lang::ParamValue *f = p.isAlgorithm ? fixedValue(p.name) : nullptr;
          f && f->algorithm != p.defaultAlgorithm)
        out[i].emplace_back(p.name, *f);
  // Integer fixed values of the variations too.
  for (size_t i = integerCombinations; i < out.size(); ++i)
    for (const lang::Param &p : a.module->params)
      if (const lang::ParamValue *f = !p.isAlgorithm ? fixedValue(p.name) : nullptr;
          f && f->number != p.defaultValue)
        out[i].emplace_back(p.name, *f);
  // In file order, as candidate names list them.
  auto position = [&](const std::string &name) {
    for (size_t k = 0; k < a.module->params.size(); ++k)
      if (a.module->params[k].name == name)
        return k;
    return a.module->params.size();
  };
  for (lang::ParamValues &c : out)
    std::stable_sort(c.begin(), c.end(), [&](const auto &x, const auto &y) {
      return position(x.first) < position(y.first);
    });
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
  auto considered = [&](const sched::Algorithm &a) {
    return a.collective == c &&
           (opts.algorithms.empty() || llvm::is_contained(opts.algorithms, a.name));
  };
  // A fixed parameter must be some considered algorithm's, of its kind.
  for (const auto &[name, value] : opts.fixed) {
    bool found = false;
    for (const sched::Algorithm &a : sched::algorithms()) {
      if (!considered(a))
        continue;
      for (const lang::Param &p : a.module->params) {
        if (p.name != name)
          continue;
        found = true;
        if (p.isAlgorithm != value.isAlgorithm())
          return llvm::createStringError(
              llvm::inconvertibleErrorCode(),
              llvm::formatv("--set {0}: '{0}' of {1} is {2}", name, a.name,
                            p.isAlgorithm ? "an algorithm parameter: give an algorithm's name"
                                          : "an integer parameter: give a number")
                  .str());
      }
    }
    if (!found)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          llvm::formatv("--set {0}: no {1} algorithm considered has a parameter '{0}' (collc "
                        "list; the parameters are in each file's header)",
                        name, ir::name(c))
              .str());
  }
  Enumeration out;
  for (const sched::Algorithm &a : sched::algorithms()) {
    if (!considered(a))
      continue;
    for (const auto &params : parameterCombinations(a, opts.fixed)) {
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
