#include "coefficients.hpp"

#include <algorithm>
#include <memory>
#include <utility>

#include "host_copy.hpp"
#include "point_ops.hpp"

namespace halo3d {

LevelCoefficients::LevelCoefficients(Kernels& k, const Layout& l, const Stencil& spacing,
                                     std::vector<double> kappa, std::vector<double> sigma,
                                     const NeumannPlanes& np)
    : l_(l),
      spacing_(spacing),
      np_(np),
      kappa_(std::move(kappa)),
      sigma_(std::move(sigma)),
      with_sigma_(!sigma_.empty()) {
  // Copied to backend memory on the host backend too: one copy of k, and the same memory on
  // every backend, as --dry-run counts it.
  const Buffer kd = upload(k, kappa_);
  const Buffer sd = with_sigma_ ? upload(k, sigma_) : Buffer();
  make_weights(k, kd.data(), nullptr, with_sigma_ ? sd.data() : nullptr);
  k.synchronize(Lane::interior);  // before kd and sd go
}

std::unique_ptr<LevelCoefficients> LevelCoefficients::galerkin(Kernels& k, const Layout& l,
                                                               const Stencil& spacing,
                                                               const double* parts,
                                                               const double* sigma,
                                                               const NeumannPlanes& np) {
  std::unique_ptr<LevelCoefficients> c(new LevelCoefficients(l, spacing, np, sigma != nullptr));
  c->make_weights(k, nullptr, parts, sigma);
  return c;
}

// The weights in backend memory: three arrays, then sigma itself with a variable shift.
void LevelCoefficients::make_weights(Kernels& k, const double* kappa, const double* parts,
                                     const double* sigma) {
  const std::size_t n = l_.padded_size();
  wd_ = Buffer(k, (with_sigma_ ? 4 : 3) * n);
  if (parts)
    k.galerkin_faces(l_, parts, wd_.data());
  else
    k.face_weights(l_, spacing_, np_, kappa, wd_.data());
  if (sigma) k.copy(wd_.data() + 3 * n, sigma, n, Lane::interior);
  // With Neumann planes each point's shift is sigma V_p (its control volume's fraction).
  if (sigma && np_.faces) k.volume_scale(l_, np_, false, wd_.data() + 3 * n);
}

double* LevelCoefficients::add_inverse_diagonal(Kernels& k) {
  if (!id_.size()) {
    id_ = Buffer(k, l_.padded_size());
    k.inverse_diagonal(l_, attach(spacing_), id_.data());
  }
  return id_.data();
}

void LevelCoefficients::add_float(Kernels& k) {
  // Each value rounded to nearest once.
  if (!wf_.size()) {
    wf_ = FloatBuffer(k, wd_.size());
    k.round_to_float(wd_.size(), wd_.data(), wf_.data());
  }
  if (id_.size() && !idf_.size()) {
    idf_ = FloatBuffer(k, id_.size());
    k.round_to_float(id_.size(), id_.data(), idf_.data());
  }
}

Stencil LevelCoefficients::attach(const Stencil& spacing) const {
  Stencil s = spacing;
  const std::size_t n = l_.padded_size();
  for (int a = 0; a < 3; ++a) {
    s.vd.w[a] = wd_.data() + std::size_t(a) * n;
    s.vf.w[a] = wf_.size() ? wf_.data() + std::size_t(a) * n : nullptr;
  }
  s.vd.sigma = with_sigma_ ? wd_.data() + 3 * n : nullptr;
  s.vf.sigma = with_sigma_ && wf_.size() ? wf_.data() + 3 * n : nullptr;
  s.vd.inv_diag = id_.size() ? id_.data() : nullptr;
  s.vf.inv_diag = idf_.size() ? idf_.data() : nullptr;
  return s;
}

double LevelCoefficients::local_spectrum_bound(Kernels& k, const Decomposition& d) const {
  BoxPlace p;
  for (int a = 0; a < 3; ++a) p.offset[a] = d.offset[a], p.grid[a] = d.grid[a];
  return k.spectrum_bound(l_, attach(spacing_), p);
}

double LevelCoefficients::local_max_diagonal(Kernels& k) const {
  return k.max_diagonal(l_, attach(spacing_), np_);
}

Buffer coarsen_points(Kernels& k, const Transfer& t, const double* fine) {
  Buffer out(k, t.coarse.padded_size());
  k.coarsen_mean(t, fine, out.data());
  return out;
}

void fill_boundary_ghosts(Kernels& k, const Decomposition& d, double* kappa) {
  int sides = 0;
  for (int a = 0; a < 3; ++a) {
    // A periodic axis has no boundary: its ghosts wrap (exchanged like a neighbour's).
    if (!d.periodic[a] && d.offset[a] == 0) sides |= 1 << (2 * a);
    if (!d.periodic[a] && d.offset[a] + d.count[a] == d.grid[a]) sides |= 1 << (2 * a + 1);
  }
  k.fill_boundary_ghosts(d.layout(), sides, kappa);
}

double local_max_diagonal(const Layout& l, const Stencil& spacing, const std::vector<double>& kappa,
                          const std::vector<double>* sigma, const NeumannPlanes& np) {
  // No backend is made for --dry-run: the host backend's kernels, the same ones a run on it
  // uses (the weights and the maximum of exact words), so no second copy of those loops.
  const std::unique_ptr<Kernels> host = make_host_kernels();
  const LevelCoefficients c(*host, l, spacing, kappa, sigma ? *sigma : std::vector<double>{}, np);
  return c.local_max_diagonal(*host);
}

}  // namespace halo3d
