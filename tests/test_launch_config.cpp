// The CUDA backend's launch shapes are plain C++: check, without a GPU, that every shape
// is legal for CUDA and covers each region's points exactly once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "cuda/launch_config.hpp"
#include "cuda_variants.hpp"

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

// The launch of one part: legal, whole warps, its tiles (tile3d: of x-pairs and whole
// chunks, one per block) or naive blocks cover the part exactly.
void expect_part(const Region& r, SweepVariant v, bool reduce, TileShape t, int tz) {
  const SweepLaunch s = sweep_launch(r, v, reduce, t, tz);
  const long long ni = r.i1 - r.i0, nj = r.j1 - r.j0, nk = r.k1 - r.k0;
  expect_legal(s.block, s.grid);
  if (reduce) EXPECT_LE(s.grid.count(), kSlotCapacity);
  if (ni == 1 || nj == 1) EXPECT_FALSE(s.tiled);  // 1-thick: naive
  if (!s.tiled) {
    EXPECT_EQ(s.block.count(), kBlockThreads);
    EXPECT_GE((long long)s.grid.x * s.block.x, ni);
    return;
  }
  EXPECT_NE(v, SweepVariant::naive);
  EXPECT_EQ(s.block.x, unsigned(t.x));
  EXPECT_EQ(s.block.y, unsigned(t.y));
  EXPECT_EQ(s.block.z, 1u);
  EXPECT_EQ(s.block.count() % 32, 0);  // whole warps (block sum)
  EXPECT_LE(s.block.count(), kBlockThreads);
  EXPECT_GE((long long)s.grid.y * s.block.y, nj);
  EXPECT_LT((long long)(s.grid.y - 1) * s.block.y, nj);
  if (v == SweepVariant::tile3d) {
    EXPECT_EQ(r.i0 % 2, 0);
    EXPECT_EQ(ni % 2, 0);
    EXPECT_EQ(nk % tz, 0);
    EXPECT_EQ(s.kz, tz);
    EXPECT_EQ((long long)s.grid.z * tz, nk);
    EXPECT_GE((long long)s.grid.x * s.block.x * kTileXPoints, ni);
    EXPECT_LT((long long)(s.grid.x - 1) * s.block.x * kTileXPoints, ni);
    if (reduce) EXPECT_LE(s.grid.count(), kMaxReduceBlocksTile3d);
  } else {
    EXPECT_GE((long long)s.grid.x * s.block.x, ni);
    EXPECT_LT((long long)(s.grid.x - 1) * s.block.x, ni);
    EXPECT_GE((long long)s.grid.z * s.kz, nk);
    EXPECT_LT((long long)(s.grid.z - 1) * s.kz, nk);
    if (reduce) EXPECT_LE(s.grid.count(), kMaxReduceBlocksTile);
  }
}

// A sweep as the backend launches it: tile3d's region split into its parts (each point in
// exactly one), every other variant in one launch.
void expect_sweep(const Region& r, SweepVariant v, bool reduce, TileShape t = {}, int tz = kTileZ) {
  if (r.empty()) return;  // the backend returns before choosing a shape
  if (v != SweepVariant::tile3d) return expect_part(r, v, reduce, t, tz);
  const Tile3dParts p = tile3d_split(r, tz);
  std::vector<int> seen(r.size(), 0);
  for (const Region& q : {p.main, p.ztail, p.xlo, p.xhi})
    for (int k = q.k0; k < q.k1; ++k)
      for (int j = q.j0; j < q.j1; ++j)
        for (int i = q.i0; i < q.i1; ++i) {
          const bool inside =
              i >= r.i0 && i < r.i1 && j >= r.j0 && j < r.j1 && k >= r.k0 && k < r.k1;
          EXPECT_TRUE(inside);
          if (inside)
            ++seen[(std::size_t(k - r.k0) * (r.j1 - r.j0) + (j - r.j0)) * (r.i1 - r.i0) +
                   (i - r.i0)];
        }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), (long)seen.size());
  EXPECT_LE(p.xlo.i1 - p.xlo.i0, 1);
  EXPECT_LE(p.xhi.i1 - p.xhi.i0, 1);
  EXPECT_LT(p.ztail.k1 - p.ztail.k0, tz);
  if (!p.main.empty()) expect_part(p.main, v, reduce, t, tz);
  if (!p.ztail.empty()) expect_part(p.ztail, v, reduce, t, 1);
  if (!p.xlo.empty()) expect_part(p.xlo, SweepVariant::naive, reduce, t, tz);
  if (!p.xhi.empty()) expect_part(p.xhi, SweepVariant::naive, reduce, t, tz);
}

TEST(LaunchConfig, SweepShapesAreLegalForEveryRegionShape) {
  const int sizes[] = {1, 2, 3, 7, 8, 31, 33, 64, 130};
  for (int nx : sizes)
    for (int ny : sizes)
      for (int nz : sizes) {
        const Layout l{nx, ny, nz};
        for (bool reduce : {false, true})
          for (auto v : {SweepVariant::naive, SweepVariant::tile3d, SweepVariant::smem}) {
            // The whole box, thin slabs like the boundary shell's, the overlap's inner box.
            for (const Region r :
                 {Region::whole(l), Region{0, 1, 0, ny, 0, nz}, Region{0, nx, 0, 1, 0, nz},
                  Region{0, nx, 0, ny, 0, 1}, Region{0, 1, 0, 1, 0, nz},
                  Region{1, nx - 1, 1, ny - 1, 1, nz - 1}}) {
              expect_sweep(r, v, reduce);
              if (HasFailure()) {
                ADD_FAILURE() << "layout " << nx << "," << ny << "," << nz << " region "
                              << r.i1 - r.i0 << "x" << r.j1 - r.j0 << "x" << r.k1 - r.k0;
                return;
              }
            }
          }
        // flat/vec2: the x-chunks cover each row's units (the kernels loop over row groups
        // where a reducing launch was capped).
        for (bool reduce : {false, true})
          for (int pairs : {0, 1})
            for (int ur : {1, 2}) {
              const long long units = pairs ? vec2_units(l) : nx;
              const int ux = pairs ? kVec2X : kFlatX;
              const RowsLaunch f = flat_launch(l, units, ux, ur, reduce);
              expect_legal(f.block, f.grid);
              EXPECT_EQ(f.block.count(), kBlockThreads);
              EXPECT_GE((long long)f.grid.y * f.block.x * ux, units);
              if (!reduce)
                EXPECT_GE((long long)f.grid.x * f.block.y * ur, (long long)ny * nz);
              else
                EXPECT_LE(f.grid.count(), kMaxReduceBlocksFlat);
            }
      }
}

// Every valid tile3d/smem shape (the backend runs one; bench/gpu/sweep_probe.cu times more) covers
// the region, reducing launches stay few and made of whole warps, and thin slabs go to naive.
TEST(LaunchConfig, TunedTileShapesCoverEveryRegion) {
  const TileShape tiles[] = {{32, 8}, {64, 4}, {32, 4}, {128, 2}, {256, 1}, {64, 2}};
  EXPECT_TRUE(smem_tile_ok({32, 8}));
  EXPECT_TRUE(smem_tile_ok({64, 4}));
  EXPECT_TRUE(smem_tile_ok({32, 4}));
  EXPECT_FALSE(smem_tile_ok({128, 2}));
  EXPECT_FALSE(tile_shape_ok({16, 16}));
  EXPECT_FALSE(tile_shape_ok({64, 8}));
  const int sizes[] = {1, 2, 3, 7, 31, 33, 64, 130, 513};
  for (const TileShape t : tiles) {
    ASSERT_TRUE(tile_shape_ok(t));
    for (int tz : {1, 2, 4, 8})
      for (int nx : sizes)
        for (int ny : sizes)
          for (int nz : {1, 2, 5, 9, 64}) {
            const Layout l{nx, ny, nz};
            for (bool reduce : {false, true})
              for (auto v : {SweepVariant::tile3d, SweepVariant::smem}) {
                if (v == SweepVariant::smem && (!smem_tile_ok(t) || tz != kTileZ)) continue;
                for (const Region r :
                     {Region::whole(l), Region{0, 1, 0, ny, 0, nz}, Region{0, nx, 0, 1, 0, nz},
                      Region{0, nx, 0, ny, 0, 1}, Region{0, 1, 0, 1, 0, nz},
                      Region{nx / 3, nx, ny / 2, ny, nz / 4, nz}}) {
                  expect_sweep(r, v, reduce, t, tz);
                  const long long ni = r.i1 - r.i0, nj = r.j1 - r.j0, nk = r.k1 - r.k0;
                  if (HasFailure()) {
                    ADD_FAILURE() << "tile " << t.x << "x" << t.y << " z " << tz << " layout " << nx
                                  << "," << ny << "," << nz << " region " << ni << "x" << nj << "x"
                                  << nk << " reduce " << reduce;
                    return;
                  }
                }
              }
          }
  }
}

// The default tile3d shape at 512^3: 64x4 threads of x-pairs (128x4 points), kTileZ = 8
// planes per thread, one chunk per block, reducing or not; nothing left over.
TEST(LaunchConfig, DefaultTuningIsTheFixedShape) {
  const Layout l{512, 512, 512};
  EXPECT_EQ(kTileZ, 8);
  const Tile3dParts p = tile3d_split(Region::whole(l), kTileZ);
  EXPECT_TRUE(p.ztail.empty() && p.xlo.empty() && p.xhi.empty());
  for (bool reduce : {false, true}) {
    const SweepLaunch s = sweep_launch(p.main, SweepVariant::tile3d, reduce);
    EXPECT_TRUE(s.tiled);
    EXPECT_EQ(s.block.x, 64u);
    EXPECT_EQ(s.block.y, 4u);
    EXPECT_EQ(s.kz, kTileZ);
    EXPECT_EQ(s.grid.x, 4u);
    EXPECT_EQ(s.grid.y, 128u);
    EXPECT_EQ(s.grid.z, 64u);
  }
}

// vec2 units: aligned pairs after an unaligned first point cover the rest of the row.
TEST(LaunchConfig, Vec2UnitsCoverEveryRowParity) {
  for (int nx = 1; nx < 70; ++nx) {
    const Layout l{nx, 3, 3};
    for (long long c0 : {10LL, 11LL}) {
      const long long start = c0 + (c0 & 1), end = c0 + nx;
      std::vector<int> seen(nx, 0);
      if (c0 & 1) ++seen[0];  // unit 0's thread
      for (long long m = 0; m < vec2_units(l); ++m) {
        const long long e = start + 2 * m;
        if (e < end) ++seen[e - c0];
        if (e < end && e + 1 < end) ++seen[e + 1 - c0];
      }
      for (int i = 0; i < nx; ++i) EXPECT_EQ(seen[i], 1) << "nx " << nx << " c0 " << c0;
    }
  }
}

TEST(LaunchConfig, FaceShapesAreLegal) {
  for (int na : {1, 5, 32, 1000})
    for (int nb : {1, 9, 70000}) {
      const RowsLaunch f = face_launch(na, nb);
      expect_legal(f.block, f.grid);
    }
}

// Every plane is visited (the grid has 1..nz of them), and a launch stays within
// kMaxWordBlocks blocks unless one plane of blocks alone is more.
TEST(LaunchConfig, MaxWordPlanesCoverTheBoxWithinTheCap) {
  for (long long plane : {1LL, 7LL, 1024LL, 4096LL, 100000LL})
    for (int nz : {1, 3, 64, 512, 5000}) {
      const unsigned z = max_word_planes(plane, nz);
      EXPECT_GE(z, 1u);
      EXPECT_LE(z, unsigned(nz));
      if (plane <= kMaxWordBlocks) EXPECT_LE(plane * z, kMaxWordBlocks) << plane << " " << nz;
      if (plane >= kMaxWordBlocks) EXPECT_EQ(z, 1u);
    }
  EXPECT_EQ(max_word_planes(1024, 512), 4u);  // 512^3: 4 planes of 16 x 64 blocks
  EXPECT_EQ(max_word_planes(1, 5), 5u);       // a coarse level: a block a plane, as before
}

}  // namespace
}  // namespace halo3d::cuda

namespace halo3d {
namespace {

// HALO3D_CUDA_APPLY / HALO3D_CUDA_ROWS, read once outside the backend: every value maps to
// its variant, unset or empty is the default, anything else is a BadInput naming the choices.
TEST(CudaVariants, FromTheEnvironment) {
  using Sweep = CudaVariants::Sweep;
  using Rows = CudaVariants::Rows;
  unsetenv("HALO3D_CUDA_APPLY");
  unsetenv("HALO3D_CUDA_ROWS");
  EXPECT_EQ(cuda_variants_from_env().sweep, Sweep::fastest);
  EXPECT_EQ(cuda_variants_from_env().rows, Rows::vec2);
  const std::pair<const char*, Sweep> sweeps[] = {{"", Sweep::fastest},
                                                  {"auto", Sweep::fastest},
                                                  {"naive", Sweep::naive},
                                                  {"tile3d", Sweep::tile3d},
                                                  {"smem", Sweep::smem}};
  for (const auto& [value, sweep] : sweeps) {
    setenv("HALO3D_CUDA_APPLY", value, 1);
    EXPECT_EQ(cuda_variants_from_env().sweep, sweep) << value;
  }
  setenv("HALO3D_CUDA_ROWS", "flat", 1);
  EXPECT_EQ(cuda_variants_from_env().rows, Rows::flat);
  setenv("HALO3D_CUDA_ROWS", "vec2", 1);
  EXPECT_EQ(cuda_variants_from_env().rows, Rows::vec2);
  for (const char* name : {"HALO3D_CUDA_APPLY", "HALO3D_CUDA_ROWS"}) {
    setenv(name, "Tile3D", 1);  // case matters, as everywhere else
    try {
      cuda_variants_from_env();
      ADD_FAILURE() << name << "=Tile3D accepted";
    } catch (const BadInput& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(name) + " must be one of"),
                std::string::npos)
          << e.what();
    }
    unsetenv(name);
  }
}

}  // namespace
}  // namespace halo3d
