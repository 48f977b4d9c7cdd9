// What the iterative methods (cg.cpp, solvers.cpp) share: relative residuals, exact
// rescaling between powers of two, and the reads of the backend's reduction slots.
#pragma once
#include <mpi.h>

#include <cmath>
#include <limits>

#include "kernels.hpp"
#include "nvtx.hpp"
#include "reduction.hpp"
#include "timers.hpp"

namespace halo3d {

// sqrt(rr / bb): a relative residual from squared norms (b = 0: 0 when r = 0 too).
inline double relative(double rr, double bb) {
  if (bb == 0) return rr == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::sqrt(rr / bb);
}

// v holds a vector times `scale` (a power of two): make it the vector times `target`, in at
// most two exact passes (the problem's units in between, so the factor cannot overflow).
inline void rescale(Kernels& k, const Layout& l, Buffer& v, double& scale, double target) {
  if (scale == target) return;
  if (scale != 1.0) k.axpby(l, 1.0 / scale, v.data(), 0.0, v.data());
  if (target != 1.0) k.axpby(l, target, v.data(), 0.0, v.data());
  scale = target;
}

// Reads the backend's local partial sums and returns their global values.
class Reducer {
 public:
  Reducer(Kernels& k, MPI_Comm comm, Timers& t) : k_(k), comm_(comm), t_(t) {}
  double sum(int slot = 0) {
    double out[kReductionSlots];
    sums(slot + 1, out);
    return out[slot];
  }
  // Slots 0 .. n-1 in one reduction.
  void sums(int n, double* out) {
    HALO3D_NVTX_RANGE("reduction");
    ScopedTimer timer(t_.reduction);
    DD local[kReductionSlots];
    k_.read_slots(n, local);
    global_sums(comm_, local, n, out);
  }

 private:
  Kernels& k_;
  MPI_Comm comm_;
  Timers& t_;
};

}  // namespace halo3d
