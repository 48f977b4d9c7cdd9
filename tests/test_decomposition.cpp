#include <gtest/gtest.h>
#include <mpi.h>

#include <vector>

#include "decomposition.hpp"
#include "errors.hpp"
#include "halo.hpp"
#include "operator.hpp"

namespace halo3d {
namespace {

TEST(SplitAxis, EveryPointOwnedExactlyOnce) {
  for (int n : {1, 2, 3, 7, 16, 17, 65, 101})
    for (int p = 1; p <= std::min(n, 9); ++p) {
      std::vector<int> owner(n, 0);
      int expect_offset = 0;
      for (int c = 0; c < p; ++c) {
        const Span s = split_axis(n, p, c);
        EXPECT_EQ(s.offset, expect_offset);
        EXPECT_GE(s.count, n / p);
        EXPECT_LE(s.count, n / p + 1);
        for (int i = s.offset; i < s.offset + s.count; ++i) ++owner[i];
        expect_offset += s.count;
      }
      EXPECT_EQ(expect_offset, n);
      for (int i = 0; i < n; ++i) EXPECT_EQ(owner[i], 1) << "n=" << n << " p=" << p << " i=" << i;
    }
}

// Odd splits (even non-periodic axes of 16 points or more, for multigrid's first step): every
// split between two parts at an odd index, each part within 2 points of n / p, every point
// owned once, for every p up to n / 2 + 1 (decompose refuses more).
TEST(SplitAxis, OddSplitsWhereTheFirstCoarseningNeedsThem) {
  EXPECT_FALSE(odd_splits(14, false));
  EXPECT_FALSE(odd_splits(17, false));
  EXPECT_FALSE(odd_splits(64, true));
  EXPECT_TRUE(odd_splits(16, false));
  for (int n = 16; n <= 300; n += 2)
    for (int p = 1; p <= n / 2 + 1; ++p) {
      int expect_offset = 0;
      for (int c = 0; c < p; ++c) {
        const Span s = split_axis(n, p, c, true);
        ASSERT_EQ(s.offset, expect_offset) << n << " " << p << " " << c;
        if (c > 0) EXPECT_EQ(s.offset % 2, 1) << n << " " << p << " " << c;
        EXPECT_GE(s.count, std::max(1, n / p - 1)) << n << " " << p << " " << c;
        EXPECT_LE(s.count, n / p + 2) << n << " " << p << " " << c;
        expect_offset += s.count;
      }
      EXPECT_EQ(expect_offset, n);
    }
}

TEST(ChooseProcs, ExplicitProcsChecked) {
  EXPECT_EQ(choose_procs({65, 33, 47}, 4, {2, 1, 2}), (Int3{2, 1, 2}));
  EXPECT_THROW(choose_procs({65, 33, 47}, 4, {2, 2, 2}), BadInput);  // product != ranks
  EXPECT_THROW(choose_procs({1, 33, 47}, 4, {2, 1, 2}), BadInput);   // a rank gets no x points
  EXPECT_THROW(choose_procs({0, 33, 47}, 1, {0, 0, 0}), BadInput);
}

TEST(ChooseProcs, DefaultsFitTheGrid) {
  for (int ranks : {1, 2, 3, 4, 6, 8, 12}) {
    const Int3 p = choose_procs({64, 64, 64}, ranks, {0, 0, 0});
    EXPECT_EQ(p[0] * p[1] * p[2], ranks);
  }
  // Larger factors go to the longer axes.
  const Int3 p = choose_procs({8, 8, 512}, 4, {0, 0, 0});
  EXPECT_GE(p[2], p[0]);
  EXPECT_GE(p[2], p[1]);
  // A thin grid forces everything onto the one long axis.
  EXPECT_EQ(choose_procs({1, 1, 64}, 4, {0, 0, 0}), (Int3{1, 1, 4}));
  EXPECT_EQ(choose_procs({2, 1, 64}, 4, {0, 0, 0})[1], 1);
  EXPECT_THROW(choose_procs({1, 1, 3}, 4, {0, 0, 0}), BadInput);
  // A fixed factor is respected.
  EXPECT_EQ(choose_procs({64, 64, 64}, 6, {3, 0, 0})[0], 3);
  EXPECT_THROW(choose_procs({64, 64, 64}, 6, {4, 0, 0}), BadInput);
}

TEST(Shell, InnerAndShellCoverTheBoxOnce) {
  // The operator's regions are disjoint and cover the box, also for 1- and 2-thick boxes.
  for (const Int3 n : {Int3{1, 1, 1}, Int3{2, 3, 1}, Int3{5, 4, 3}, Int3{1, 7, 2}}) {
    const Decomposition d = Decomposition::whole(n);
    Timers t;
    auto k = make_host_kernels();
    DistributedOperator op(*k, d, Stencil::laplacian(1, 1, 1), nullptr, true, t);
    std::vector<int> seen(std::size_t(n[0]) * n[1] * n[2], 0);
    auto mark = [&](const Region& r) {
      for (int z = r.k0; z < r.k1; ++z)
        for (int y = r.j0; y < r.j1; ++y)
          for (int x = r.i0; x < r.i1; ++x) ++seen[x + n[0] * (y + n[1] * std::size_t(z))];
    };
    mark(op.inner());
    for (const Region& r : op.shell()) mark(r);
    for (int s : seen) EXPECT_EQ(s, 1);
  }
}

}  // namespace
}  // namespace halo3d
