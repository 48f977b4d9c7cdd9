// The distributed operator: stencil sweeps with their halo exchange, overlapped or not.
// Solvers call these and never see a region, a lane or a message.
#pragma once
#include <mpi.h>

#include <array>
#include <functional>
#include <memory>

#include "decomposition.hpp"
#include "halo.hpp"
#include "kernels.hpp"
#include "timers.hpp"

namespace halo3d {

class DistributedOperator {
 public:
  DistributedOperator(Kernels& k, const Decomposition& d, const Stencil& s,
                      std::unique_ptr<HaloTransport> transport, bool overlap, Timers& timers);

  const Layout& layout() const { return layout_; }
  const Stencil& stencil() const { return stencil_; }
  // Bytes per point that one sweep of this operator reads beyond the constant stencil's
  // (bench's rows, the solvers' and multigrid's byte counts): a variable operator's three
  // padded face-weight arrays, 24 B in double (a float sweep reads half), and a variable
  // shift's sigma, 8 B more.
  double weight_bytes() const {
    return stencil_.variable() ? (stencil_.vd.sigma ? 32.0 : 24.0) : 0.0;
  }
  // Another operator of the same layout (multigrid lends a level its variable coefficients
  // once they are made; the halo does not depend on the stencil).
  void set_stencil(const Stencil& s) { stencil_ = s; }
  const HaloPlan& plan() const { return plan_; }
  Kernels& kernels() { return k_; }
  const HaloTransport& transport() const { return *transport_; }
  bool overlap() const { return overlap_; }
  void set_overlap(bool on) { overlap_ = on; }  // the same results either way
  double global_points() const { return global_points_; }
  // The box's Neumann planes (none: faces 0): heat's mass V_p.
  const NeumannPlanes& neumann_planes() const { return planes_; }

  // out = A u (u's ghost layers are refreshed); slot += u.out
  void apply(double* u, double* out, int dot_slot = kNoReduction);
  // res = f - A u; slot += res.res
  void residual(const double* f, double* u, double* res, int rr_slot);
  void residual(const float* f, float* u, float* res, int rr_slot);  // a float V-cycle's
  // unew = u + (f - A u)/diag; slot += |f - A u|^2
  void jacobi(const double* f, double* u, double* unew, int rr_slot);
  // unew = u - alpha_dt A u
  void heat(double alpha_dt, double* u, double* unew);
  // d = cd d_in + cr (f - A u); unew = u + d; d_out = d  (multigrid smoothing step; see
  // Kernels::smooth for null and aliased d_in, d_out)
  // slot += f.unew
  void smooth(double cd, double cr, const double* f, double* u, const double* d_in, double* d_out,
              double* unew, int dot_slot = kNoReduction);
  void smooth(double cd, double cr, const float* f, float* u, const float* d_in, float* d_out,
              float* unew, int dot_slot = kNoReduction);
  // The first two smoothing steps from u = 0 in one sweep (constant coefficients): x = cr0 f,
  // then smooth(cd, cr, f, x, x, d_out, unew) (Kernels::smooth_from_start). Refreshes f's
  // ghost layer, not x's (x is never stored).
  void smooth_from_start(double cr0, double cd, double cr, double* f, double* d_out, double* unew,
                         int dot_slot = kNoReduction);
  void smooth_from_start(double cr0, double cd, double cr, float* f, float* d_out, float* unew,
                         int dot_slot = kNoReduction);
  // Refreshes every ghost point of u that has a neighbour, edges and corners included (the
  // multigrid transfers read them; a sweep's own exchange fills only what the stencil
  // reads). Where the transport can (fills_corners_in_one_round: mpi, mpi-cuda, ipc), in
  // one round: each neighbour of the process grid, diagonal ones too (up to 26), gets the
  // sub-box of u it needs, all messages in flight at once. Otherwise (nccl) one round
  // per split or periodic axis, in axis order, each sending that axis's wide faces (ghost
  // rim included), which pass on the ghosts the previous rounds filled. Both give the same
  // bits: this is data movement only. Ghosts whose neighbour is this rank (a periodic axis
  // with one rank along it) are filled by the transport's local copies (WrapCopies).
  void exchange(double* u);
  void exchange(float* u);
  // What one exchange() costs this rank in messages: rounds of messages (each waits for the
  // one before), messages and bytes (of doubles; floats send half). Local copies are free.
  struct ExchangeCost {
    int rounds = 0;
    std::size_t messages = 0, bytes = 0;
  };
  ExchangeCost exchange_cost() const;

  // Times (median of `reps`, slowest rank) of one operator application as compute only
  // (no exchange), halo only (exchange, no sweep) and overlapped; hidden = the fraction of
  // the halo time the overlapped application does not pay for.
  struct OverlapTimes {
    double compute_s = 0, halo_s = 0, overlapped_s = 0, sequential_s = 0, hidden_fraction = 0;
  };
  OverlapTimes measure_overlap(double* u, double* out, int reps, MPI_Comm comm);

  // The interior sweep region and the six boundary-shell slabs around it (disjoint,
  // covering the local box); public for tests.
  const Region& inner() const { return inner_; }
  const std::array<Region, 6>& shell() const { return shell_; }

 private:
  template <class T, class Sweep>
  void sweep_with_halo(T* u, const Sweep& sweep);
  template <class T>
  void exchange_t(T* u);

  Kernels& k_;
  Layout layout_;
  Stencil stencil_;
  HaloPlan plan_;
  std::unique_ptr<HaloTransport> transport_;
  bool overlap_;
  int split_axes_ = 0;  // axes the process grid splits: message rounds of exchange()
  // Axes the per-axis exchange() has a round for: split, or periodic (its ghosts wrap).
  bool exchanged_[3] = {false, false, false};
  double global_points_;
  NeumannPlanes planes_;
  Timers& timers_;
  Region inner_;
  std::array<Region, 6> shell_;
};

}  // namespace halo3d
