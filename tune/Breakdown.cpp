// tune/Breakdown.cpp: the α/β/γ breakdown of a critical path.
#include "tune/Breakdown.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace collc::tune {

double Breakdown::total() const {
  return std::accumulate(alpha.begin(), alpha.end(), 0.0) +
         std::accumulate(beta.begin(), beta.end(), 0.0) + gamma + copy + contention;
}

Breakdown breakdown(const ir::Plan &plan, const model::Topology &topo,
                    const model::SimResult &sim, double gamma) {
  const size_t levels = topo.levels.size();
  Breakdown b;
  b.alpha.assign(levels, 0);
  b.beta.assign(levels, 0);
  b.messages.assign(levels, 0);
  b.bytes.assign(levels, 0);
  double covered = 0; // the path's time accounted for so far
  for (const model::PathStep &s : sim.criticalPath) {
    double fresh = std::max(0.0, s.end - std::max(s.start, covered));
    covered = std::max(covered, s.end);
    // Takes up to `cost` of the step's fresh time for one term.
    auto take = [&](double &term, double cost) {
      const double t = std::min(fresh, std::max(0.0, cost));
      term += t;
      fresh -= t;
    };
    const ir::Op &op = plan.programs[s.rank].ops[s.op];
    switch (op.kind) {
    case ir::OpKind::Send: {
      const model::Level &lv = topo.levels[s.level];
      // Counted: the latencies the path pays, and the bytes whose transfer
      // time is on it (a message that overlaps the path's time adds none).
      // After waiting for a shared link, a message's latency overlaps the
      // one before it on that link: what it adds is its transfer.
      const double before = b.alpha[s.level], transfer = double(s.bytes) * lv.beta;
      double beta = 0;
      if (s.cause == model::Cause::Link) {
        beta = std::min(fresh, transfer);
        take(b.beta[s.level], transfer);
        take(b.alpha[s.level], lv.alpha);
      } else {
        take(b.alpha[s.level], lv.alpha);
        beta = std::min(fresh, transfer);
        take(b.beta[s.level], transfer);
      }
      // (A latency paid: more than rounding left over from the transfer.)
      const bool paid = b.alpha[s.level] - before > 1e-6 * lv.alpha;
      b.messages[s.level] += paid;
      if (lv.beta > 0)
        b.bytes[s.level] += uint64_t(std::llround(beta / lv.beta));
      else if (paid)
        b.bytes[s.level] += s.bytes;
      b.contention += fresh;
      break;
    }
    case ir::OpKind::Recv:
      b.contention += fresh; // a recv ends when its message arrives: nothing of its own
      break;
    case ir::OpKind::RecvReduce:
    case ir::OpKind::Reduce:
      take(b.gamma, double(s.bytes) * gamma);
      b.contention += fresh;
      break;
    case ir::OpKind::Copy:
      take(b.copy, double(s.bytes) * topo.copyBeta);
      b.contention += fresh;
      break;
    }
  }
  return b;
}

std::vector<Term> terms(const Breakdown &b, const std::vector<std::string> &levels) {
  std::vector<Term> out;
  const size_t n = levels.size();
  for (size_t j = 0; j < n; ++j)
    out.push_back({"α " + levels[j], "alpha." + levels[j], b.alpha[j],
                   b.messages[j], b.bytes[j]});
  for (size_t j = 0; j < n; ++j)
    out.push_back({"β " + levels[j], "beta." + levels[j], b.beta[j],
                   b.messages[j], b.bytes[j]});
  out.push_back({"γ", "gamma", b.gamma});
  out.push_back({"copy", "copy", b.copy});
  out.push_back({"contention", "contention", b.contention});
  return out;
}

} // namespace collc::tune
