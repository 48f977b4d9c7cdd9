#include "coefficients.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "point_ops.hpp"

namespace halo3d {
namespace {

// The face weights of layout l: array a (of 3, each padded) holds at point c the face
// between c and its +a neighbour, for every point of the box and, along a, the ghost
// layer below it (the faces to the low neighbour or the boundary).
// A variable shift (sigma non-empty) follows as a fourth array: sigma itself.
std::vector<double> face_weights(const Layout& l, const Stencil& s, const std::vector<double>& k,
                                 const std::vector<double>& sigma) {
  const std::size_t n = l.padded_size();
  std::vector<double> w((sigma.empty() ? 3 : 4) * n, 0.0);
  if (!sigma.empty()) std::copy(sigma.begin(), sigma.end(), w.begin() + std::ptrdiff_t(3 * n));
  const double inv_h2[3] = {s.cx, s.cy, s.cz};
  const std::ptrdiff_t step[3] = {1, l.sy(), l.sz()};
  for (int a = 0; a < 3; ++a)
    for (int z = a == 2 ? -1 : 0; z < l.nz; ++z)
      for (int y = a == 1 ? -1 : 0; y < l.ny; ++y)
        for (int x = a == 0 ? -1 : 0; x < l.nx; ++x) {
          const std::size_t c = std::size_t(l.at(x, y, z));
          w[std::size_t(a) * n + c] = face_weight(k[c], k[c + std::size_t(step[a])], inv_h2[a]);
        }
  return w;
}

const std::vector<double>& no_sigma() {
  static const std::vector<double> none;
  return none;
}

}  // namespace

LevelCoefficients::LevelCoefficients(Kernels& k, const Layout& l, const Stencil& spacing,
                                     std::vector<double> kappa, std::vector<double> sigma)
    : l_(l), spacing_(spacing), kappa_(std::move(kappa)), sigma_(std::move(sigma)) {
  const std::vector<double> w = face_weights(l_, spacing_, kappa_, sigma_);
  wd_ = Buffer(k, w.size());
  k.copy(wd_.data(), w.data(), w.size(), Lane::interior);
  k.synchronize(Lane::interior);  // before `w` goes
}

void LevelCoefficients::add_float(Kernels& k) {
  if (wf_.size()) return;
  const std::vector<double> w = face_weights(l_, spacing_, kappa_, sigma_);
  const std::vector<float> f(w.begin(), w.end());  // each rounded to nearest once
  wf_ = FloatBuffer(k, f.size());
  k.copy(wf_.data(), f.data(), f.size(), Lane::interior);
  k.synchronize(Lane::interior);
}

Stencil LevelCoefficients::attach(const Stencil& spacing) const {
  Stencil s = spacing;
  const std::size_t n = l_.padded_size();
  for (int a = 0; a < 3; ++a) {
    s.vd.w[a] = wd_.data() + std::size_t(a) * n;
    s.vf.w[a] = wf_.size() ? wf_.data() + std::size_t(a) * n : nullptr;
  }
  s.vd.sigma = sigma_.empty() ? nullptr : wd_.data() + 3 * n;
  s.vf.sigma = sigma_.empty() || !wf_.size() ? nullptr : wf_.data() + 3 * n;
  return s;
}

double LevelCoefficients::local_spectrum_bound(const Decomposition& d) const {
  const std::vector<double> w = face_weights(l_, spacing_, kappa_, {});
  const std::size_t n = l_.padded_size();
  const std::ptrdiff_t step[3] = {1, l_.sy(), l_.sz()};
  double bound = 1.0;
  for (int z = 0; z < l_.nz; ++z)
    for (int y = 0; y < l_.ny; ++y)
      for (int x = 0; x < l_.nx; ++x) {
        const int idx[3] = {x, y, z};
        const std::ptrdiff_t c = l_.at(x, y, z);
        double diag = sigma_.empty() ? spacing_.shift : sigma_[std::size_t(c)], off = 0;
        for (int a = 0; a < 3; ++a) {
          const double lo = w[std::size_t(a) * n + std::size_t(c - step[a])];
          const double hi = w[std::size_t(a) * n + std::size_t(c)];
          diag += lo + hi;
          // A neighbour beyond the domain's boundary is a Dirichlet value, not an unknown.
          const int g = d.offset[a] + idx[a];
          if (g > 0) off += lo;
          if (g + 1 < d.grid[a]) off += hi;
        }
        bound = std::max(bound, 1.0 + off / diag);
      }
  return bound;
}

double LevelCoefficients::device_bytes(const Layout& l, bool with_float, bool with_sigma) {
  return (with_sigma ? 4.0 : 3.0) * double(l.padded_size()) * (with_float ? 12.0 : 8.0);
}

std::vector<double> coarsen_kappa(const Transfer& t, const std::vector<double>& fine) {
  const ops::TransferTables tab = ops::transfer_tables(t);
  const Layout& c = t.coarse;
  const Layout& f = t.fine;
  std::vector<double> out(c.padded_size(), 0.0);
  for (int K = 0; K < c.nz; ++K)
    for (int J = 0; J < c.ny; ++J)
      for (int I = 0; I < c.nx; ++I) {
        const int idx[3] = {I, J, K};
        int first[3], count[3];
        const double* w[3];
        for (int a = 0; a < 3; ++a) {
          first[a] = tab.ridx[a][2 * std::size_t(idx[a])];
          count[a] = tab.ridx[a][2 * std::size_t(idx[a]) + 1];
          w[a] = tab.rw[a].data() + 4 * std::size_t(idx[a]);
        }
        double num = 0, den = 0;
        for (int z = 0; z < count[2]; ++z)
          for (int y = 0; y < count[1]; ++y)
            for (int x = 0; x < count[0]; ++x) {
              const double wt = w[2][z] * w[1][y] * w[0][x];
              num += wt * fine[std::size_t(f.at(first[0] + x, first[1] + y, first[2] + z))];
              den += wt;
            }
        out[std::size_t(c.at(I, J, K))] = num / den;
      }
  return out;
}

void fill_boundary_ghosts(const Decomposition& d, std::vector<double>& kappa) {
  const Layout l = d.layout();
  const int n[3] = {l.nx, l.ny, l.nz};
  bool low[3], high[3];
  for (int a = 0; a < 3; ++a) {
    // A periodic axis has no boundary: its ghosts wrap (exchanged like a neighbour's).
    low[a] = !d.periodic[a] && d.offset[a] == 0;
    high[a] = !d.periodic[a] && d.offset[a] + d.count[a] == d.grid[a];
  }
  for (int z = -1; z <= l.nz; ++z)
    for (int y = -1; y <= l.ny; ++y)
      for (int x = -1; x <= l.nx; ++x) {
        int idx[3] = {x, y, z};
        bool moved = false;
        for (int a = 0; a < 3; ++a) {
          if (idx[a] < 0 && low[a]) idx[a] = 0, moved = true;
          if (idx[a] >= n[a] && high[a]) idx[a] = n[a] - 1, moved = true;
        }
        if (moved && n[0] > 0 && n[1] > 0 && n[2] > 0)
          kappa[std::size_t(l.at(x, y, z))] = kappa[std::size_t(l.at(idx[0], idx[1], idx[2]))];
      }
}

double local_max_diagonal(const Layout& l, const Stencil& spacing, const std::vector<double>& kappa,
                          const std::vector<double>* sigma) {
  const std::vector<double> w = face_weights(l, spacing, kappa, sigma ? *sigma : no_sigma());
  const std::size_t n = l.padded_size();
  FaceWeights<double> f;
  for (int a = 0; a < 3; ++a) f.w[a] = w.data() + std::size_t(a) * n;
  if (sigma) f.sigma = w.data() + 3 * n;
  double m = 0;
  for (int z = 0; z < l.nz; ++z)
    for (int y = 0; y < l.ny; ++y)
      for (int x = 0; x < l.nx; ++x) {
        const double d = ops::point_diag(f, l.at(x, y, z), l.sy(), l.sz(), spacing.shift);
        // NaN: weights that overflowed (inf times 0), an unusable operator, not a small one.
        m = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(m, d);
      }
  return m;
}

}  // namespace halo3d
