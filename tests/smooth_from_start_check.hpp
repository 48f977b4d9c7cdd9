// The first two smoothing steps from zero in one sweep (Kernels::smooth_from_start) against
// the two apart, for the constant and the variable coefficients' tests alike.
#pragma once
#include <gtest/gtest.h>

#include <vector>

#include "host_copy.hpp"
#include "kernels.hpp"

namespace halo3d::test {

// smooth_start gives x at the box's points, and smooth_from_start is smooth with d_in = u = x,
// bitwise (its result, direction and f.unew), over the whole box and a part of it (on the
// boundary lane). x: cr0 D^{-1} f at every point of the padded box, its ghosts as a
// neighbour's values would be; poison: random values the sweeps must overwrite.
template <class T>
void expect_from_start_is_start_then_smooth(Kernels& k, const Layout& l, const Stencil& s,
                                            const std::vector<T>& f, const std::vector<T>& x,
                                            const std::vector<T>& poison, double cr0) {
  const double cd = 0.3, cr = 0.013;
  BasicBuffer<T> f_d = upload(k, f), x_d = upload(k, x), start_d = upload(k, poison);
  k.smooth_start(l, s, cr0, f_d.data(), start_d.data());
  const std::vector<T> start = download(k, start_d);
  for (int kk = 0; kk < l.nz; ++kk)
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i) ASSERT_EQ(start[l.at(i, j, kk)], x[l.at(i, j, kk)]);
  for (const Region& r : {Region::whole(l), Region{2, 11, 1, 6, 0, 4}}) {
    const Lane lane = r.size() == Region::whole(l).size() ? Lane::interior : Lane::boundary;
    BasicBuffer<T> dout_a = upload(k, poison), un_a = upload(k, poison), dout_b = upload(k, poison),
                   un_b = upload(k, poison);
    k.smooth(l, s, r, cd, cr, f_d.data(), x_d.data(), x_d.data(), dout_a.data(), un_a.data(), 0,
             lane);
    k.smooth_from_start(l, s, r, cr0, cd, cr, f_d.data(), dout_b.data(), un_b.data(), 1, lane);
    DD v[2];
    k.read_slots(2, v);
    EXPECT_EQ(v[0].hi, v[1].hi);
    EXPECT_EQ(v[0].lo, v[1].lo);
    EXPECT_EQ(download(k, un_a), download(k, un_b));
    EXPECT_EQ(download(k, dout_a), download(k, dout_b));
    EXPECT_NE(download(k, un_a), poison);  // the sweep wrote something
  }
}

}  // namespace halo3d::test
