// Multigrid's levels as the V-cycle holds them: shared by multigrid.cpp (set-up and the
// cycle) and multigrid_info.cpp (what the levels cost and how they are described), and by
// nothing outside src/solver.
#pragma once
#include <array>
#include <memory>
#include <type_traits>
#include <vector>

#include "box_gather.hpp"
#include "coefficients.hpp"
#include "multigrid.hpp"
#include "operator.hpp"

namespace halo3d {

// A level's smoothing steps {cd, cr} (Kernels::smooth), and the coarsest level's solve, from
// its stencil, grid and box; bound: the operator's own Gershgorin bound of D^{-1}A with
// variable coefficients, else 0 (multigrid_smoother.cpp).
using MgSteps = std::vector<std::array<double, 2>>;
MgSteps smoother_steps(const MgOptions& o, const Stencil& s, const Int3& n, const Decomposition& p,
                       double bound);
// low: a low end of D^{-1}A where the spectrum of s cannot give one (no Dirichlet face, a
// variable shift: Multigrid::shifted_low), else 0.
MgSteps coarse_steps(const Stencil& s, const Int3& n, const Decomposition& p, double bound,
                     double low = 0);

// The box of the coarse grid nc whose points the rank with fine box f computes
// (multigrid_plan.cpp: the ownership rule that keeps transfers within one ghost layer).
Decomposition mg_coarser_box(const Decomposition& f, const Int3& nc);

// A level's vectors in the V-cycle's scalar type T.
template <class T>
struct MgVectors {
  // Double: level 0 has only w (b and x are the caller's, y the scratch Multigrid::apply
  // is lent); mixed: level 0 has b and x (y and w lent); coarser levels: all four.
  BasicBuffer<T> b, x, y, w;
  BasicBuffer<T> restricted;  // where the level gathers: its own coarse points, then gathered
  // Level 0 of a float V-cycle: y and w are the halves of the double vector the caller
  // lends (Multigrid::lend_fine_floats), not buffers of their own: 8 B a point less.
  T* lent_y = nullptr;
  T* lent_w = nullptr;
  T* yp() { return lent_y ? lent_y : y.data(); }
  T* wp() { return lent_w ? lent_w : w.data(); }
};

struct Multigrid::Level {
  Int3 grid{};
  bool distributed = true;
  Decomposition decomp;
  std::unique_ptr<DistributedOperator> own_op;
  DistributedOperator* A = nullptr;
  MgVectors<double> d;  // precision double
  MgVectors<float> f;   // precision mixed
  template <class T>
  MgVectors<T>& v() {
    if constexpr (std::is_same_v<T, float>)
      return f;
    else
      return d;
  }
  std::unique_ptr<LevelCoefficients> coef;  // variable coefficients (coarse levels; null: constant)
  std::vector<std::array<double, 2>> steps;  // smoothing (the coarsest: its solve, unless dense)
  // The coarsest level of at most kMgDensePoints points below the fine one: its operator's
  // inverse (mg_dense_inverse), which solves it exactly (Kernels::dense_solve), in the
  // cycle's precision.
  Buffer dense_d;
  FloatBuffer dense_f;
  bool dense = false;
  template <class T>
  const T* inverse() const {
    if constexpr (std::is_same_v<T, float>)
      return dense_f.data();
    else
      return dense_d.data();
  }
  TransferOp down;  // to the next level (where it gathers: restriction to its own coarse points)
  FloatBuffer od;   // variable coefficients: its transfers' interpolation weights (Transfer::od)
  double points = 0;
  // The last distributed level before gathered ones: the coarse points it restricts to are
  // all-gathered into the whole coarse grid on every rank, and `up` interpolates the
  // correction from that whole grid into this rank's box.
  bool gathers = false;
  TransferOp up;
  std::unique_ptr<BoxGather> gather;  // every rank's own coarse points into the whole grid
  // The cycle from this level down, recorded (Kernels::record) where no level from here on
  // fills a ghost or gathers: one rank's coarse levels, or the gathered ones without a
  // periodic axis. Per scalar type (double, float): the recording and the buffer it leaves
  // the result in. The first cycle runs as usual (every kernel's one-time set-up done), the
  // second is recorded; if it cannot be, every later one runs as usual.
  bool records = false;
  struct Recorded {
    enum State { cold, warm, refused } state = cold;
    std::unique_ptr<Recording> graph;
    void* out = nullptr;
  };
  Recorded recorded[2];
};

}  // namespace halo3d
