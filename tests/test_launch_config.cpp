// The CUDA backend's launch shapes are plain C++: check, without a GPU, that every shape
// is legal for CUDA and covers each region's points exactly once.
#include <gtest/gtest.h>

#include <vector>

#include "cuda/launch_config.hpp"

namespace halo3d::cuda {
namespace {

void expect_legal(const Shape& block, const Shape& grid) {
  EXPECT_GE(block.x, 1u);
  EXPECT_LE(block.x, 1024u);
  EXPECT_LE(block.y, 1024u);
  EXPECT_LE(block.z, 64u);
  EXPECT_LE(block.count(), 1024);
  EXPECT_GE(grid.x, 1u);
  EXPECT_GE(grid.y, 1u);
  EXPECT_GE(grid.z, 1u);
  EXPECT_LE(grid.y, kMaxGridYZ);
  EXPECT_LE(grid.z, kMaxGridYZ);
}

TEST(LaunchConfig, SweepShapesAreLegalForEveryRegionShape) {
  const int sizes[] = {1, 2, 3, 7, 8, 31, 33, 64, 130};
  for (int nx : sizes)
    for (int ny : sizes)
      for (int nz : sizes) {
        const Layout l{nx, ny, nz};
        for (bool reduce : {false, true})
          for (auto v : {SweepVariant::naive, SweepVariant::march}) {
            // The whole box and thin slabs like the boundary shell's.
            for (const Region r : {Region::whole(l), Region{0, 1, 0, ny, 0, nz}, Region{0, nx, 0, 1, 0, nz},
                                   Region{0, nx, 0, ny, 0, 1}, Region{0, 1, 0, 1, 0, nz}}) {
              const SweepLaunch s = sweep_launch(l, r, v, 132 * 6, 0, reduce);
              expect_legal(s.block, s.grid);
              if (reduce && !s.march) EXPECT_EQ(s.block.count(), kBlockThreads);
              if (HasFailure()) {
                ADD_FAILURE() << "layout " << nx << "," << ny << "," << nz << " region " << r.i1 - r.i0
                              << "x" << r.j1 - r.j0 << "x" << r.k1 - r.k0;
                return;
              }
            }
          }
        const RowsLaunch rl = rows_launch(l, 132 * 8);
        expect_legal(rl.block, rl.grid);
      }
}

TEST(LaunchConfig, FaceShapesAreLegal) {
  for (int na : {1, 5, 32, 1000})
    for (int nb : {1, 9, 70000}) {
      const RowsLaunch f = face_launch(na, nb);
      expect_legal(f.block, f.grid);
    }
}

}  // namespace
}  // namespace halo3d::cuda
