#include "operator.hpp"

#include <algorithm>

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
      timers_(timers) {
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

template <class Sweep>
void DistributedOperator::sweep_with_halo(double* u, const Sweep& sweep) {
  if (!overlap_) {
    {
      ScopedTimer t(timers_.halo);
      transport_->start(u);
      transport_->finish(u);
      k_.fence(Lane::boundary, Lane::interior);
    }
    ScopedTimer t(timers_.compute);
    sweep(Region::whole(layout_), Lane::interior);
    return;
  }
  {
    ScopedTimer t(timers_.halo);
    transport_->start(u);
  }
  {
    ScopedTimer t(timers_.compute);
    sweep(inner_, Lane::interior);
  }
  {
    ScopedTimer t(timers_.halo);
    transport_->finish(u);
  }
  ScopedTimer t(timers_.compute);
  for (const Region& r : shell_)
    if (!r.empty()) sweep(r, Lane::boundary);
  k_.fence(Lane::boundary, Lane::interior);
}

void DistributedOperator::apply(double* u, double* out, int slot) {
  sweep_with_halo(u, [&](const Region& r, Lane lane) {
    k_.apply(layout_, stencil_, r, u, out, slot, lane);
  });
}

void DistributedOperator::residual(const double* f, double* u, double* res, int slot) {
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

}  // namespace halo3d
