// Multigrid's hierarchy as a plan: the levels' sizes (semi-coarsening by the operator's
// spacings), each rank's box on each level, and the memory the levels take.
#include <algorithm>
#include <cmath>

#include "multigrid.hpp"
#include "multigrid_level.hpp"
#include "point_ops.hpp"

namespace halo3d {
namespace {

// An axis is coarsened while its spacing is at most this times the finest spacing.
constexpr double kSemiCoarsening = 1.5;

}  // namespace

// Which rank computes a coarse point. Along an axis of m intervals (ops::intervals), coarse
// point I sits at fine position q = (I+1) r with r = mf/mc (fine point i at position i+1).
// The rank whose fine box is [o, e) owns the coarse points with q in [o+1, e+1) when r = 2
// (nested: coarse I is fine 2I+1) and with q in [o+2-r, e+2-r) when r <= 1.5. Then
// restriction at an owned point reads fine points within one ghost layer of the box (its
// support is the open interval (q-r, q+r)), and prolongation at an owned fine point reads
// coarse points within one ghost layer of the coarse box, provided every rank owns a coarse
// point (else the level is gathered). On a periodic axis the last coarse point sits at fine
// position nf, i.e. on the last fine point, and reads the fine ghost nf (point 0, wrapped).
// make_transfer checks both. This returns the first owned coarse point of the box starting
// at fine index o (and, for o = e, the end of the box).
// In general fine point i sits at position i + at0 (at0 = 0 behind a Neumann low face, the
// transfers' Transfer::at0) and coarse point I at (I + at0) r: nested, coarse I is fine
// 2I + at0; else the owned coarse points are those with position in [o+at0+1-r, e+at0+1-r).
// The first step of an even Dirichlet axis (mf = 2 mc + 1, mg_coarser's from_fine): coarse J
// restricts fine [2J, 2J+3]; the box owns the J whose fine 2J+1 it holds, which reads one
// ghost below it and, where the box ends at an odd index, none beyond the one above.
int mg_coarse_first(int o, int nf, int nc, bool periodic, bool low_neumann, bool high_neumann) {
  const int mf = ops::axis_intervals(nf, periodic, low_neumann, high_neumann),
            mc = ops::axis_intervals(nc, periodic, low_neumann, high_neumann);
  const int at0 = low_neumann ? 0 : 1;
  if (mf == 2 * mc) return int(ops::ceil_div(o - at0, 2));  // nested: coarse I is fine 2I+at0
  if (mf == 2 * mc + 1 && !periodic && !low_neumann && !high_neumann)
    return int(std::min<long long>(std::max(0LL, ops::ceil_div(o - 1, 2)), nc));
  const long long v = ops::ceil_div((long long)(o + at0 + 1) * mc, mf) - 1 - at0;
  return int(std::min<long long>(std::max(0LL, v), nc));
}

Decomposition mg_coarser_box(const Decomposition& f, const Int3& nc) {
  Decomposition c = f;
  c.grid = nc;
  for (int a = 0; a < 3; ++a) {
    const bool lo = f.neumann_face(a, 0), hi = f.neumann_face(a, 1);
    c.offset[a] = mg_coarse_first(f.offset[a], f.grid[a], nc[a], f.periodic[a], lo, hi);
    c.count[a] =
        mg_coarse_first(f.offset[a] + f.count[a], f.grid[a], nc[a], f.periodic[a], lo, hi) -
        c.offset[a];
  }
  return c;
}

int mg_coarser(int n, bool periodic, bool low_neumann, bool high_neumann, bool from_fine) {
  if (from_fine && !low_neumann && !high_neumann && odd_splits(n, periodic)) return n / 2 - 1;
  if (periodic || !(low_neumann || high_neumann)) return mg_coarser(n, periodic);
  const int m = ops::axis_intervals(n, false, low_neumann, high_neumann);
  if (m <= 1) return n;
  int mc = m / 2;
  if (m % 2) mc = (2 * m + 2) / 3, mc += mc % 2;  // ceil(2m/3), even: the next step nests
  return n - (m - mc);                            // the same ends, mc intervals
}

int mg_coarser(int n, bool periodic) {
  if (n <= 1) return n;
  if (periodic) {  // n intervals: even n nests (n/2), odd n takes ratio <= 1.5 to an even size
    if (n % 2 == 0) return n / 2;
    const int m = (2 * n + 2) / 3;  // ceil(2n/3)
    return m + m % 2;
  }
  if (n % 2 == 1) return (n - 1) / 2;
  int m = (2 * (n + 1) + 2) / 3;  // ceil((n+1)/1.5)
  if (m % 2) ++m;
  return m - 1;
}

std::vector<Int3> mg_level_grids(const Int3& grid, const std::array<double, 3>& h0, int max_levels,
                                 const Periodic& periodic, int neumann) {
  const auto lo = [neumann](int a) { return (neumann >> (2 * a) & 1) != 0; };
  const auto hi = [neumann](int a) { return (neumann >> (2 * a + 1) & 1) != 0; };
  const auto m = [&](int n, int a) { return ops::axis_intervals(n, periodic[a], lo(a), hi(a)); };
  std::vector<Int3> out{grid};
  std::array<double, 3> h = h0;
  while (max_levels <= 0 || int(out.size()) < max_levels) {
    const Int3& g = out.back();
    if (g[0] == 1 && g[1] == 1 && g[2] == 1) break;
    // Semi-coarsening (as hypre's PFMG): an axis whose spacing is well above the finest
    // one waits, so the coarse stencils stay near-isotropic and a point smoother works.
    // The relative slack keeps exact ties (the unit cube's integer ratios) coarsening
    // whatever the rounding of h.
    // An axis coarsens while it can (a Neumann axis of one interval cannot).
    const bool from_fine = out.size() == 1;
    const auto coarser = [&](int a) {
      return mg_coarser(g[a], periodic[a], lo(a), hi(a), from_fine);
    };
    const auto open = [&](int a) { return g[a] > 1 && coarser(a) < g[a]; };
    double finest = 0;
    for (int a = 0; a < 3; ++a)
      if (open(a) && (finest == 0 || h[a] < finest)) finest = h[a];
    Int3 c = g;
    for (int a = 0; a < 3; ++a)
      if (open(a) && h[a] <= kSemiCoarsening * finest * (1 + 1e-9)) c[a] = coarser(a);
    if (c == g) break;
    for (int a = 0; a < 3; ++a) h[a] *= double(m(g[a], a)) / double(m(c[a], a));
    out.push_back(c);
    if (double(c[0]) * c[1] * c[2] <= kMgDensePoints) break;  // solved exactly (mg_dense_level)
  }
  return out;
}

std::vector<Int3> mg_level_grids(const Int3& grid, int max_levels, const Periodic& periodic,
                                 int neumann) {
  std::array<double, 3> h{};
  for (int a = 0; a < 3; ++a)
    h[a] = 1.0 / ops::axis_intervals(grid[a], periodic[a], neumann >> (2 * a) & 1,
                                     neumann >> (2 * a + 1) & 1);
  return mg_level_grids(grid, h, max_levels, periodic, neumann);
}

std::array<double, 3> stencil_spacing(const Stencil& s) {
  return {1 / std::sqrt(s.cx), 1 / std::sqrt(s.cy), 1 / std::sqrt(s.cz)};
}

Multigrid::~Multigrid() = default;

std::vector<MgLevelPlan> mg_plan(const Decomposition& fine, const Stencil& fine_op,
                                 const MgOptions& o, bool gpu, MPI_Comm cart) {
  const double gather = double(mg_gather_points(o.gather_points, gpu));
  std::vector<MgLevelPlan> out;
  const std::vector<Int3> grids =
      mg_level_grids(fine.grid, stencil_spacing(fine_op), o.levels, fine.periodic, fine.neumann);
  for (const Int3& g : grids) {
    MgLevelPlan p;
    p.grid = g;
    if (out.empty()) {
      p.decomp = fine;
    } else if (out.back().distributed) {
      p.decomp = mg_coarser_box(out.back().decomp, g);
      int fewest = std::min({p.decomp.count[0], p.decomp.count[1], p.decomp.count[2]});
      HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &fewest, 1, MPI_INT, MPI_MIN, cart));
      const double points = double(g[0]) * g[1] * g[2];
      const bool dense = mg_dense_level(out.size(), grids.size(), g);  // whole on every rank
      p.distributed = fine.ranks == 1 || (fewest >= 1 && points > gather && !dense);
    } else {
      p.distributed = false;
    }
    if (!p.distributed) {
      p.decomp = Decomposition::whole(g, fine.periodic);
      p.decomp.neumann = fine.neumann;
    }
    out.push_back(p);
  }
  return out;
}

namespace {

// Variable coefficients on one level of n padded points: the coarse levels' face weights
// (three arrays, double, and float too when mixed); the fine level's float copy when mixed
// (its double ones are the runtime's); a variable shift's sigma as a fourth; and a smoothed
// level's inverse diagonal (LevelCoefficients::add_inverse_diagonal), double (and float).
double variable_level_bytes(double n, bool fine, bool dense, bool mixed, bool sigma) {
  const double weights = (sigma ? 4 : 3) * n * (fine ? (mixed ? 4 : 0) : (mixed ? 12 : 8));
  return weights + (dense ? 0.0 : n * (mixed ? 12 : 8));
}

}  // namespace

double mg_memory_bytes(const std::vector<MgLevelPlan>& plan, bool mixed, bool variable, bool sigma,
                       bool od) {
  const double e = mixed ? sizeof(float) : sizeof(double);
  double bytes = 0;
  for (std::size_t l = 0; l < plan.size(); ++l) {
    const double n = double(plan[l].decomp.layout().padded_size());
    const bool dense = mg_dense_level(l, plan.size(), plan[l].grid);
    if (variable) bytes += variable_level_bytes(n, l == 0, dense, mixed, sigma);
    // The fine level: w (double: b and x are CG's, y its lent scratch); mixed: b and x (y
    // and w in halves of the lent scratch); coarser levels: b, x, y, w.
    bytes += e * n * (l > 0 ? 4 : mixed ? 2 : 1);
    const Layout lay = plan[l].decomp.layout();
    // Mixed: zeros for the fine level's ghost shell (float).
    if (l == 0 && mixed) bytes += e * double(ghost_shell(lay).points());
    // The coarse levels' periodic wraps (the fine level's are the runtime's).
    if (l > 0) bytes += double(HaloPlan::build(plan[l].decomp).bytes_wrapped());
    // The coarsest level's inverse (n^2 values) where it is solved exactly.
    if (dense) {
      const double points = double(plan[l].grid[0]) * plan[l].grid[1] * plan[l].grid[2];
      bytes += e * points * points;
    }
    if (l + 1 == plan.size()) break;
    // --mg-interp operator: the transfers' interpolation weights (Transfer::od, float).
    if (od) bytes += 3 * n * sizeof(float);
    const Layout coarse = plan[l + 1].decomp.layout();
    bytes += double(transfer_table_bytes(lay, coarse));
    if (plan[l].distributed && !plan[l + 1].distributed) {  // gather: restriction to own box
      const Layout own = mg_coarser_box(plan[l].decomp, plan[l + 1].grid).layout();
      bytes += e * double(own.padded_size()) + double(transfer_table_bytes(lay, own));
    }
  }
  return bytes;
}

}  // namespace halo3d
