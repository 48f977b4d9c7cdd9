#include "operator.hpp"

#include <algorithm>
#include <vector>

#include "errors.hpp"
#include "nvtx.hpp"
#include "timing.hpp"

namespace halo3d {

DistributedOperator::DistributedOperator(Kernels& k, const Decomposition& d, const Stencil& s,
                                         std::unique_ptr<HaloTransport> transport, bool overlap,
                                         Timers& timers)
    : k_(k),
      layout_(d.layout()),
      stencil_(s),
      plan_(HaloPlan::build(d)),
      transport_(std::move(transport)),
      overlap_(overlap),
      global_points_(double(d.global_points())),
      planes_(halo3d::neumann_planes(d)),
      timers_(timers) {
  for (int a = 0; a < 3; ++a) {
    split_axes_ += d.procs[a] > 1;
    exchanged_[a] = d.procs[a] > 1 || d.periodic[a];
  }
  // Inner box: one layer in from every side, so it reads no ghost cell.
  const int n[3] = {layout_.nx, layout_.ny, layout_.nz};
  int lo[3], hi[3];
  for (int a = 0; a < 3; ++a) {
    lo[a] = std::min(1, n[a]);
    hi[a] = std::max(lo[a], n[a] - 1);
  }
  inner_ = {lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]};
  // Shell: whole z-end planes, then y-end slabs of the middle, then x-end columns.
  shell_[0] = {0, n[0], 0, n[1], 0, lo[2]};
  shell_[1] = {0, n[0], 0, n[1], hi[2], n[2]};
  shell_[2] = {0, n[0], 0, lo[1], lo[2], hi[2]};
  shell_[3] = {0, n[0], hi[1], n[1], lo[2], hi[2]};
  shell_[4] = {0, lo[0], lo[1], hi[1], lo[2], hi[2]};
  shell_[5] = {hi[0], n[0], lo[1], hi[1], lo[2], hi[2]};
}

// T: the grid's scalar type (double; float on the levels of a float V-cycle).
template <class T, class Sweep>
void DistributedOperator::sweep_with_halo(T* u, const Sweep& sweep) {
  // No ghost to fill (one rank, or a gathered multigrid level, no periodic axis): no
  // transport call either (it would wait for the boundary lane), so that this sweep can be
  // recorded (Kernels::record). The fence keeps the order the exchange's gave.
  if (!plan_.fills_ghosts()) {
    k_.fence(Lane::boundary, Lane::interior);
    HALO3D_NVTX_RANGE("sweep (whole box)");
    ScopedTimer t(timers_.compute);
    sweep(Region::whole(layout_), Lane::interior);
    return;
  }
  // With no neighbour there is nothing to hide: one sweep over the whole box (its periodic
  // ghosts copied first).
  if (!overlap_ || plan_.faces.empty()) {
    {
      HALO3D_NVTX_RANGE("halo exchange");
      ScopedTimer t(timers_.halo);
      transport_->start(u);
      transport_->finish(u);
      k_.fence(Lane::boundary, Lane::interior);
    }
    HALO3D_NVTX_RANGE("sweep (whole box)");
    ScopedTimer t(timers_.compute);
    sweep(Region::whole(layout_), Lane::interior);
    return;
  }
  {
    HALO3D_NVTX_RANGE("halo start");
    ScopedTimer t(timers_.halo);
    transport_->start(u);
  }
  {
    HALO3D_NVTX_RANGE("interior");
    ScopedTimer t(timers_.compute);
    sweep(inner_, Lane::interior);
  }
  {
    HALO3D_NVTX_RANGE("halo finish");
    ScopedTimer t(timers_.halo);
    transport_->finish(u);
  }
  HALO3D_NVTX_RANGE("boundary shell");
  ScopedTimer t(timers_.compute);
  for (const Region& r : shell_)
    if (!r.empty()) sweep(r, Lane::boundary);
  k_.fence(Lane::boundary, Lane::interior);
}

void DistributedOperator::apply(double* u, double* out, int slot) {
  sweep_with_halo(
      u, [&](const Region& r, Lane lane) { k_.apply(layout_, stencil_, r, u, out, slot, lane); });
}

void DistributedOperator::residual(const double* f, double* u, double* res, int slot) {
  sweep_with_halo(u, [&](const Region& r, Lane lane) {
    k_.residual(layout_, stencil_, r, f, u, res, slot, lane);
  });
}

void DistributedOperator::residual(const float* f, float* u, float* res, int slot) {
  sweep_with_halo(u, [&](const Region& r, Lane lane) {
    k_.residual(layout_, stencil_, r, f, u, res, slot, lane);
  });
}

void DistributedOperator::jacobi(const double* f, double* u, double* unew, int slot) {
  sweep_with_halo(u, [&](const Region& r, Lane lane) {
    k_.jacobi(layout_, stencil_, r, f, u, unew, slot, lane);
  });
}

void DistributedOperator::heat(double alpha_dt, double* u, double* unew) {
  sweep_with_halo(u, [&](const Region& r, Lane lane) {
    k_.heat(layout_, stencil_, r, alpha_dt, u, unew, lane);
  });
}

void DistributedOperator::smooth(double cd, double cr, const double* f, double* u,
                                 const double* d_in, double* d_out, double* unew, int slot) {
  sweep_with_halo(u, [&](const Region& r, Lane lane) {
    k_.smooth(layout_, stencil_, r, cd, cr, f, u, d_in, d_out, unew, slot, lane);
  });
}

void DistributedOperator::smooth(double cd, double cr, const float* f, float* u, const float* d_in,
                                 float* d_out, float* unew, int slot) {
  sweep_with_halo(u, [&](const Region& r, Lane lane) {
    k_.smooth(layout_, stencil_, r, cd, cr, f, u, d_in, d_out, unew, slot, lane);
  });
}

void DistributedOperator::smooth_from_start(double cr0, double cd, double cr, double* f,
                                            double* d_out, double* unew, int slot) {
  sweep_with_halo(f, [&](const Region& r, Lane lane) {
    k_.smooth_from_start(layout_, stencil_, r, cr0, cd, cr, f, d_out, unew, slot, lane);
  });
}

void DistributedOperator::smooth_from_start(double cr0, double cd, double cr, float* f,
                                            float* d_out, float* unew, int slot) {
  sweep_with_halo(f, [&](const Region& r, Lane lane) {
    k_.smooth_from_start(layout_, stencil_, r, cr0, cd, cr, f, d_out, unew, slot, lane);
  });
}

void DistributedOperator::exchange(double* u) { exchange_t(u); }
void DistributedOperator::exchange(float* u) { exchange_t(u); }

template <class T>
void DistributedOperator::exchange_t(T* u) {
  HALO3D_NVTX_RANGE("halo exchange (edges and corners)");
  ScopedTimer t(timers_.halo);
  if (!plan_.fills_ghosts()) return;  // no neighbour, not even itself: nothing to fill
  if (transport_->fills_corners_in_one_round()) {
    transport_->start_all_ghosts(u);
    transport_->finish(u);
  } else {
    for (int a = 0; a < 3; ++a) {
      if (!exchanged_[a]) continue;
      transport_->start(u, AxisMask(1) << a);
      transport_->finish(u);
    }
  }
  k_.fence(Lane::boundary, Lane::interior);
}

DistributedOperator::ExchangeCost DistributedOperator::exchange_cost() const {
  if (plan_.faces.empty()) return {};
  if (transport_->fills_corners_in_one_round())
    return {1, plan_.around.size(), plan_.bytes_all_ghosts()};
  return {split_axes_, plan_.faces.size(), plan_.bytes_per_exchange()};
}

}  // namespace halo3d

namespace halo3d {

DistributedOperator::OverlapTimes DistributedOperator::measure_overlap(double* u, double* out,
                                                                       int reps, MPI_Comm comm) {
  auto median_ms = [&](const std::function<void()>& work) {
    work();  // warm-up
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
      HALO3D_MPI_CHECK(MPI_Barrier(comm));  // ranks start together, as in an iteration
      t.push_back(device_timer(k_).elapsed_ms(work));
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  // Runs after the solve: the sweeps below add to timers_, which the caller has read.
  const bool saved = overlap_;
  OverlapTimes r;
  r.compute_s = median_ms([&] {
    k_.apply(layout_, stencil_, Region::whole(layout_), u, out, kNoReduction, Lane::interior);
  });
  r.halo_s = median_ms([&] {
    transport_->start(u);
    transport_->finish(u);
  });
  overlap_ = true;
  r.overlapped_s = median_ms([&] { apply(u, out); });
  overlap_ = false;
  r.sequential_s = median_ms([&] { apply(u, out); });
  overlap_ = saved;
  double v[4] = {r.compute_s, r.halo_s, r.overlapped_s, r.sequential_s};
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_DOUBLE, MPI_MAX, comm));
  r.compute_s = v[0] * 1e-3, r.halo_s = v[1] * 1e-3, r.overlapped_s = v[2] * 1e-3,
  r.sequential_s = v[3] * 1e-3;
  // Paying compute + halo would hide nothing; paying max(compute, halo) hides it all.
  r.hidden_fraction =
      r.halo_s > 0 ? std::clamp((r.compute_s + r.halo_s - r.overlapped_s) / r.halo_s, 0.0, 1.0)
                   : 0.0;
  return r;
}

}  // namespace halo3d
