// What multigrid's levels cost and how they are described: the byte model, timed levels,
// the halo traffic per V-cycle and the one-line description (bench, the report, --dry-run).
#include <algorithm>
#include <string>
#include <vector>

#include "multigrid.hpp"
#include "multigrid_level.hpp"
#include "timing.hpp"

namespace halo3d {

// Per level: the smoothing steps (smooth_bytes), then on every level but the coarsest the
// residual (24 B/point), restriction (8) and prolongation (16) on the fine side and 16 on
// the coarse side; in 8-byte values (mixed: halved, 4-byte values); with variable
// coefficients the face weights of each sweep (each smoothing step but the first from zero,
// which reads D^{-1} instead, and the residual: DistributedOperator::weight_bytes) and,
// with --mg-interp operator, the interpolation weights the restriction and the
// prolongation each read (Transfer::od: 12 B a fine point, float in either precision).
std::vector<double> Multigrid::level_bytes() const {
  std::vector<double> out;
  const double e = mixed_ ? 0.5 : 1.0;
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    const Level& L = *levels_[l];
    const std::size_t n = L.steps.size();
    const double w = L.A->weight_bytes(), start = start_over_sweep_bytes(*L.A);
    const double down = smooth_bytes(L.steps, true);
    if (l + 1 == levels_.size()) {  // its solve: the inverse's n^2 values, b and x
      out.push_back(e * (L.dense ? 8 * L.points * L.points + 16 * L.points
                                 : L.points * (down + n * w + start)));
      break;
    }
    out.push_back(
        e * (L.points * (down + smooth_bytes(L.steps, false) + 48 + (2 * n + 1) * w + start) +
             16 * levels_[l + 1]->points) +
        (L.down.t.od ? 2 * 12 * L.points : 0.0));
  }
  return out;
}

double Multigrid::start_over_sweep_bytes(const DistributedOperator& A) {
  const double w = A.weight_bytes();
  return w > 0 ? 8 - w : 0;
}

std::vector<double> Multigrid::level_ms(double* in, double* out, int reps) {
  Kernels& k = *rt_.kernels;
  apply(in, out);  // fills every level's right-hand side with real data
  std::vector<double> from(levels_.size() + 1, 0.0);
  for (std::size_t l = levels_.size(); l-- > 0;) {
    auto work = [&] {
      if (l == 0)
        apply(in, out);
      else
        cycle_from(l);
    };
    work();
    std::vector<double> t;
    for (int r = 0; r < std::max(reps, 1); ++r) t.push_back(device_timer(k).elapsed_ms(work));
    std::sort(t.begin(), t.end());
    from[l] = t[t.size() / 2];
  }
  std::vector<double> own(levels_.size());
  for (std::size_t l = 0; l < levels_.size(); ++l) own[l] = std::max(0.0, from[l] - from[l + 1]);
  return own;
}

const Transfer* Multigrid::fine_transfer() const {
  return levels_.size() > 1 ? &levels_[0]->down.t : nullptr;
}

std::vector<MgLevelTraffic> Multigrid::level_traffic() const {
  std::vector<MgLevelTraffic> out(levels_.size());
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    const Level& L = *levels_[l];
    MgLevelTraffic& t = out[l];
    t.gathers = L.gathers;
    const HaloPlan& plan = L.A->plan();
    if (!L.distributed || plan.faces.empty()) continue;
    const int sweeps = int(L.steps.size());
    const bool coarsest = l + 1 == levels_.size();
    // Pre-smoothing from zero (its first step does not sweep), the residual, post-smoothing:
    // all faces at once each.
    const int sweep_exchanges = L.dense ? 0 : coarsest ? sweeps - 1 : 2 * sweeps;
    // w before the restriction, e before prolongation: every ghost, in one round to every
    // neighbour or one round per split axis (DistributedOperator::exchange).
    const int transfers = int(!coarsest) + int(l > 0 && !levels_[l - 1]->gathers);
    const DistributedOperator::ExchangeCost x = L.A->exchange_cost();
    t.exchanges = sweep_exchanges + transfers * x.rounds;
    t.messages = double(sweep_exchanges) * double(plan.faces.size()) +
                 double(transfers) * double(x.messages);
    t.bytes = (double(sweep_exchanges) * double(plan.bytes_per_exchange()) +
               double(transfers) * double(x.bytes)) *
              (mixed_ ? 0.5 : 1.0);
  }
  return out;
}

std::vector<MgLevelInfo> Multigrid::levels() const {
  std::vector<MgLevelInfo> out;
  for (const auto& L : levels_) out.push_back({L->grid, L->distributed});
  return out;
}

std::string Multigrid::describe() const {
  std::string s = std::to_string(levels_.size()) + " levels (";
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    const Int3& g = levels_[l]->grid;
    s += (l ? " " : "") + std::to_string(g[0]) + "x" + std::to_string(g[1]) + "x" +
         std::to_string(g[2]) + (levels_[l]->distributed ? "" : "*");
  }
  std::string gathered;
  for (const auto& L : levels_)
    if (L->gathers) gathered = "; * = gathered on every rank (via " + L->gather->describe() + ")";
  return s + "), " + (mixed_ ? "float V-cycle (mixed precision), " : "") + to_string(o_.smoother) +
         " " + std::to_string(o_.smooth) + "+" + std::to_string(o_.smooth) + ", coarsest " +
         (levels_.back()->dense
              ? std::string("solved exactly")
              : std::to_string(levels_.back()->steps.size()) + " Chebyshev steps") +
         gathered;
}

}  // namespace halo3d
