// tune/Refit.cpp: the topology's costs refitted to measurements (Refit.h).
#include "tune/Refit.h"

#include "compiler/Disasm.h"
#include "model/Simulator.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <deque>
#include <map>
#include <optional>

namespace collc::tune {

namespace {

/// One measured time of one plan at one size.
struct Sample {
  size_t sim = 0; ///< index of the plan's prepared simulation
  uint64_t bytes = 0;
  double measured = 0;
};

/// The factors stay within 1/1000..1000 of the topology's costs.
const double maxLogFactor = std::log(1000.0);
/// Pulls factors the samples do not determine (α and β of a level measured at
/// one size only) towards 1.
constexpr double tieBreak = 1e-6;
/// Evaluations of the objective, at most: each simulates every sample.
constexpr int maxEvaluations = 1500;

double sumSquares(const std::vector<double> &r) {
  double e = 0;
  for (double x : r)
    e += x * x;
  return e;
}

/// Solves a x = b (a: m x m, row-major with b as column m) by Gaussian
/// elimination with partial pivoting; nullopt when a is singular.
std::optional<std::vector<double>> solve(std::vector<std::vector<double>> a) {
  const size_t m = a.size();
  for (size_t c = 0; c < m; ++c) {
    size_t piv = c;
    for (size_t r = c + 1; r < m; ++r)
      if (std::abs(a[r][c]) > std::abs(a[piv][c]))
        piv = r;
    std::swap(a[c], a[piv]);
    if (std::abs(a[c][c]) < 1e-300)
      return std::nullopt;
    for (size_t r = c + 1; r < m; ++r) {
      const double f = a[r][c] / a[c][c];
      for (size_t q = c; q <= m; ++q)
        a[r][q] -= f * a[c][q];
    }
  }
  std::vector<double> x(m);
  for (size_t c = m; c-- > 0;) {
    double v = a[c][m];
    for (size_t q = c + 1; q < m; ++q)
      v -= a[c][q] * x[q];
    x[c] = v / a[c][c];
  }
  return x;
}

/// Levenberg-Marquardt on the coordinates `free` of `theta`, minimizing the
/// sum of squares of `residuals(theta)`; the Jacobian by forward differences.
template <class Residuals>
void levenbergMarquardt(Residuals &&residuals, const std::vector<size_t> &free,
                        std::vector<double> &theta) {
  const size_t m = free.size();
  std::vector<double> res = residuals(theta);
  double damping = 1e-3;
  for (int iter = 0; iter < 50 && m > 0; ++iter) {
    std::vector<std::vector<double>> jac(m); // jac[k][i] = d res_i / d theta[free[k]]
    for (size_t k = 0; k < m; ++k) {
      std::vector<double> th = theta;
      th[free[k]] += 1e-4;
      const std::vector<double> r2 = residuals(th);
      for (size_t i = 0; i < res.size(); ++i)
        jac[k].push_back((r2[i] - res[i]) / 1e-4);
    }
    // The normal equations J^T J delta = -J^T r, damped on the diagonal.
    std::vector<std::vector<double>> a(m, std::vector<double>(m + 1, 0.0));
    for (size_t k = 0; k < m; ++k) {
      for (size_t l = 0; l < m; ++l)
        for (size_t i = 0; i < res.size(); ++i)
          a[k][l] += jac[k][i] * jac[l][i];
      for (size_t i = 0; i < res.size(); ++i)
        a[k][m] -= jac[k][i] * res[i];
    }
    bool better = false;
    for (int tries = 0; tries < 10 && !better; ++tries, damping *= 10) {
      std::vector<std::vector<double>> b = a;
      for (size_t k = 0; k < m; ++k)
        b[k][k] += damping * (a[k][k] + 1e-12);
      const std::optional<std::vector<double>> delta = solve(std::move(b));
      if (!delta)
        continue;
      std::vector<double> trial = theta;
      for (size_t k = 0; k < m; ++k)
        trial[free[k]] = std::clamp(trial[free[k]] + (*delta)[k], -maxLogFactor, maxLogFactor);
      std::vector<double> r2 = residuals(trial);
      if (sumSquares(r2) < sumSquares(res) - 1e-18) {
        theta = std::move(trial), res = std::move(r2), better = true;
        damping = std::max(damping / 100, 1e-9);
      }
    }
    if (!better)
      return;
  }
}

} // namespace

llvm::Expected<Refit> refit(const model::Topology &topo, const TuneResult &r) {
  const TuneOptions &o = r.options;
  Refit out;
  out.topology = topo;
  model::Topology &t = out.topology;
  llvm::Expected<model::Placement> pl = model::place(t, o.ranks);
  if (!pl)
    return pl.takeError();

  // The measured (plan, size) pairs, each plan disassembled and prepared once.
  std::deque<ir::Plan> plans; // stable addresses: the simulations refer to them
  std::vector<model::PreparedSimulation> sims;
  std::map<size_t, size_t> simOf; // candidate -> sims index
  std::vector<Sample> samples;
  for (size_t s = 0; s < r.measured.size() && s < o.sizes.size(); ++s) {
    const Measurement &m = r.measured[s];
    if (m.native < 0)
      continue; // not measured
    for (size_t j = 0; j < m.timed.size(); ++j) {
      if (!(m.times[j] > 0))
        continue; // the call failed
      auto [it, added] = simOf.emplace(m.timed[j], sims.size());
      if (added) {
        llvm::Expected<ir::Plan> p = compiler::disassemble(r.candidates[m.timed[j]].plan);
        if (!p)
          return p.takeError();
        plans.push_back(std::move(*p));
        llvm::Expected<model::PreparedSimulation> sim =
            model::PreparedSimulation::prepare(plans.back(), t, *pl);
        if (!sim)
          return sim.takeError();
        sims.push_back(std::move(*sim));
      }
      samples.push_back({it->second, o.sizes[s], m.times[j]});
    }
  }
  if (samples.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "nothing was measured, so there is nothing to refit to");
  out.samples = samples.size();

  // The costs, as pointers into `t` (the simulations read it at every run).
  double gamma = t.gammaOf(o.dtype);
  std::vector<double *> value;
  for (model::Level &l : t.levels) {
    out.costs.push_back({l.name + " latency", l.alpha, l.alpha, ""});
    value.push_back(&l.alpha);
    out.costs.push_back({l.name + " bandwidth", l.beta, l.beta, ""});
    value.push_back(&l.beta);
  }
  out.costs.push_back({"reduce (" + o.dtype + ")", gamma, gamma, ""});
  value.push_back(&gamma);
  const size_t n = value.size();

  auto predictions = [&] {
    std::vector<double> v;
    for (const Sample &x : samples) {
      model::SimOptions so;
      so.bytes = x.bytes;
      so.elemBytes = o.elemBytes;
      so.gamma = gamma;
      so.criticalPath = false;
      v.push_back(sims[x.sim].run(so).time);
    }
    return v;
  };
  auto set = [&](const std::vector<double> &logFactor) {
    for (size_t k = 0; k < n; ++k)
      *value[k] = out.costs[k].before * std::exp(logFactor[k]);
  };
  // ln(predicted / measured) per sample, with the costs scaled by e^th.
  auto logErrors = [&](const std::vector<double> &th) {
    set(th);
    const std::vector<double> p = predictions();
    std::vector<double> e;
    for (size_t i = 0; i < samples.size(); ++i)
      e.push_back(std::log(std::max(p[i], 1e-15) / samples[i].measured));
    return e;
  };
  auto rms = [&](const std::vector<double> &th) {
    return std::sqrt(sumSquares(logErrors(th)) / double(samples.size()));
  };

  // Which costs the samples see: doubling one must move some prediction.
  std::vector<double> theta(n, 0.0);
  const std::vector<double> base = predictions();
  std::vector<size_t> free;
  for (size_t k = 0; k < n; ++k) {
    if (out.costs[k].before <= 0) {
      out.costs[k].kept = "zero in the topology";
      continue;
    }
    std::vector<double> probe(n, 0.0);
    probe[k] = std::log(2.0);
    set(probe);
    const std::vector<double> p = predictions();
    bool moves = false;
    for (size_t i = 0; i < p.size() && !moves; ++i)
      moves = std::abs(p[i] - base[i]) > 1e-9 * std::max(base[i], 1e-15);
    if (moves)
      free.push_back(k);
    else
      out.costs[k].kept = "no measured plan depends on it";
  }
  set(theta);

  // What both searches minimize: the mean squared log error, and the pull
  // towards the topology's costs (the factors of fixed costs stay 0).
  auto residuals = [&](const std::vector<double> &th) {
    std::vector<double> r = logErrors(th);
    for (double &x : r)
      x /= std::sqrt(double(samples.size()));
    for (size_t k : free)
      r.push_back(std::sqrt(tieBreak) * th[k]);
    return r;
  };
  auto objective = [&](const std::vector<double> &th) { return sumSquares(residuals(th)); };
  out.errorBefore = rms(theta);
  double best = objective(theta);
  int evaluations = 1;
  for (double step = std::log(4.0); step > 1e-3 && evaluations < maxEvaluations;) {
    bool improved = false;
    for (size_t k : free)
      for (double dir : {1.0, -1.0}) {
        std::vector<double> trial = theta;
        trial[k] = std::clamp(trial[k] + dir * step, -maxLogFactor, maxLogFactor);
        const double j = objective(trial);
        ++evaluations;
        if (j < best - 1e-15) {
          best = j, theta = std::move(trial), improved = true;
          break;
        }
      }
    if (!improved)
      step /= 2;
  }
  // Then Levenberg-Marquardt from there, for the valleys where two costs
  // trade off against each other and coordinate steps crawl.
  levenbergMarquardt(residuals, free, theta);
  out.errorAfter = rms(theta);
  if (!(out.errorAfter < out.errorBefore)) { // no better than the topology as given
    std::fill(theta.begin(), theta.end(), 0.0);
    out.errorAfter = out.errorBefore;
  }
  set(theta);
  for (size_t k = 0; k < n; ++k)
    out.costs[k].after = *value[k];

  // γ goes back as the datatype's own cost, so other datatypes keep theirs.
  auto own = std::find_if(t.gammaByType.begin(), t.gammaByType.end(),
                          [&](const model::ReduceCost &c) { return c.dtype == o.dtype; });
  if (gamma != out.costs.back().before) {
    if (own != t.gammaByType.end())
      own->gamma = gamma;
    else
      t.gammaByType.push_back({o.dtype, gamma});
  }
  t.description = llvm::formatv("{0}, refitted by collc tune --measure to {1} measured plan "
                                "times: rms of ln(predicted / measured) {2:f3} -> {3:f3}",
                                topo.name, out.samples, out.errorBefore, out.errorAfter)
                      .str();
  t.name = topo.name + "-refit";
  return out;
}

std::string refitReport(const Refit &f) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "\n## Refitted topology\n\nThe topology's costs scaled to fit the " << f.samples
     << " measured plan times (native MPI's not among them): the root mean square of "
        "ln(predicted / measured) went from "
     << llvm::formatv("{0:f3} to {1:f3}", f.errorBefore, f.errorAfter)
     << ".\n\n| cost | before | after | factor on the time |\n|---|---:|---:|---|\n";
  for (const RefitCost &c : f.costs) {
    const bool latency = llvm::StringRef(c.name).endswith(" latency");
    auto text = [&](double v) {
      char buf[64];
      if (latency)
        std::snprintf(buf, sizeof buf, "%.3g us", v * 1e6);
      else if (v > 0)
        std::snprintf(buf, sizeof buf, "%.3g GB/s", 1e-9 / v);
      else
        std::snprintf(buf, sizeof buf, "unlimited");
      return std::string(buf);
    };
    os << "| " << c.name << " | " << text(c.before) << " | " << text(c.after) << " | "
       << (c.kept.empty() ? llvm::formatv("x{0:f2}", c.before > 0 ? c.after / c.before : 1.0)
                                .str()
                          : "kept: " + c.kept)
       << " |\n";
  }
  return os.str();
}

} // namespace collc::tune
