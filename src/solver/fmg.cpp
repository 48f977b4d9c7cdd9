// Full multigrid: Multigrid's F-cycle (see fmg.hpp).
#include "fmg.hpp"

#include <utility>
#include <vector>

#include "box_gather.hpp"
#include "multigrid.hpp"
#include "nvtx.hpp"

namespace halo3d {

// The F-cycle on level 0's right-hand side b, with x and y level 0's two iterate buffers;
// returns the one holding the result.
template <class T>
T* Multigrid::fmg(const T* b, T* x, T* y) {
  Kernels& k = *rt_.kernels;
  const std::size_t n = levels_.size();
  // Down: b_{l+1} = R b_l, as the V-cycle restricts its residual (gathered the same way).
  const T* bl = b;
  for (std::size_t l = 0; l + 1 < n; ++l) {
    const MgLevelView<T> F = view<T>(l), C = view<T>(l + 1);
    F.A->exchange(const_cast<T*>(bl));  // ghosts only: b's values are unchanged
    k.restrict_to(*F.down, bl, F.gather ? F.restricted : C.b);
    if (F.gather) F.gather->gather(F.restricted, C.b);
    bl = C.b;
  }
  // The coarsest level: its solve, from zero.
  const MgLevelView<T> last = view<T>(n - 1);
  T* xc = n == 1 ? cycle<T>(0, b, x, y, kNoReduction)
                 : cycle<T>(n - 1, bl, last.x, last.y, kNoReduction);
  // Up: the coarser solution interpolated is the guess for V-cycles on the finer level.
  for (std::size_t l = n - 1; l-- > 0;) {
    const MgLevelView<T> F = view<T>(l), C = view<T>(l + 1);
    T* u = l == 0 ? x : F.x;
    T* other = l == 0 ? y : F.y;
    const T* f = l == 0 ? b : F.b;
    k.axpby(F.A->layout(), 0.0, u, 0.0, u);  // u = 0, then u += P xc
    // A gathered level is whole on every rank: only its periodic axes' ghosts are left.
    if (!F.gather || C.wraps) C.A->exchange(xc);
    k.prolong_add(F.gather ? *F.up : *F.down, xc, u);
    for (int c = 0; c < o_.fmg_cycles; ++c) {
      T* r = cycle<T>(l, f, u, other, kNoReduction, false);
      if (r != u) std::swap(u, other);
    }
    xc = u;
  }
  return xc;
}

bool Multigrid::first_iterate(double* b, double* x, double* scratch) {
  if (o_.fmg_cycles <= 0) return false;
  HALO3D_NVTX_RANGE("full multigrid");
  Kernels& k = *rt_.kernels;
  const MgLevelView<double> d0 = view<double>(0);
  const Layout lay = d0.A->layout();
  if (mixed_) {  // b and x the level's own, y and w in the scratch (see apply_mixed)
    lend_fine_floats(scratch);
    const MgLevelView<float> f0 = view<float>(0);
    k.convert(lay, b, f0.b);
    const float* z = fmg<float>(f0.b, f0.x, f0.y);
    k.convert(lay, z, x, nullptr, kNoReduction);
    return true;
  }
  const double* r = fmg<double>(b, x, fine_scratch(scratch));
  if (r != x) k.copy(x, r, lay.padded_size(), Lane::interior);
  return true;
}

// The model of bytes_per_apply for the F-cycle (e-byte values): per level but the coarsest,
// b restricted (read e, write e per coarse point), u zeroed and interpolated into (16 B and
// the coarse point read), then V-cycles from that level down, whose pre-smoothing starts
// from u (smooth_bytes from a guess); the coarsest level's solve; mixed: the conversions.
double Multigrid::fmg_bytes() const {
  if (o_.fmg_cycles <= 0) return 0;
  const std::vector<double> own = level_bytes();
  const double e = mixed_ ? 0.5 : 1.0;
  double bytes = own.back(), below = own.back();
  for (std::size_t l = levels_.size() - 1; l-- > 0;) {
    const MgLevelView<double> F = view<double>(l), C = view<double>(l + 1);
    below += own[l];
    // From a guess the first step reads the face weights where from zero it reads D^{-1}.
    const double guess =
        smooth_bytes(*F.steps, false) - smooth_bytes(*F.steps, true) - start_over_sweep_bytes(*F.A);
    bytes += e * (8 * F.points + 8 * C.points) + e * (16 * F.points + 8 * C.points) +
             o_.fmg_cycles * (below + e * F.points * guess);
  }
  if (mixed_) bytes += view<double>(0).points * (12 + 12);
  return bytes;
}

}  // namespace halo3d
