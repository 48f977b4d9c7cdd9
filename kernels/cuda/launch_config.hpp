// Every launch shape the CUDA backend uses is chosen here, in plain C++ (no CUDA types),
// so the choices can be read, and tested, in one place.
//
// Reductions are reproducible because a shape depends only on the region, the layout and
// the device's occupancy (fixed for a given GPU and build), never on timing.
#pragma once
#include <algorithm>
#include <cstddef>

#include "layout.hpp"

namespace halo3d::cuda {

enum class SweepVariant {
  naive,   // one thread per point, all seven loads through L1/L2
  march,   // (x,y) tiles marching along z, z-neighbours kept in registers
  tile3d,  // one thread per kTileZ z-consecutive points, all loads issued first, z-slow grid
  smem,    // 2.5D: (x,y) tile + halo in shared memory, short z-chunks, z-neighbours in registers
  slab,    // tile3d's shape, x and y neighbours from a shared tile of the block's kTileZ planes
  shfl     // tile3d with rows_per_thread rows per thread and x-neighbours by warp shuffle
};

// The vector kernels (axpby, cg_update, dot).
enum class RowsVariant {
  wave,  // one wave of blocks looping over rows, kRowsUnroll points per thread per step
  flat,  // a block per kFlatRows*by rows: kFlatX x kFlatRows points per thread, loads first
  vec2   // as flat, but 16-byte aligned pairs (double2), scalar at a row's unaligned ends
};

// Every reducing kernel uses blocks of this size, which the fixed-order block sum assumes.
inline constexpr int kBlockThreads = 256;

// March tiles: 32 doubles = one warp per row, so each warp reads whole 256-byte runs; 8 rows
// so that y-neighbours mostly come from rows other warps of the block just loaded (L1).
inline constexpr int kMarchX = 32;
inline constexpr int kMarchY = 8;
static_assert(kMarchX * kMarchY == kBlockThreads, "march tile must fill one block");
// z-planes a thread loads before computing them: 4 independent DRAM loads in flight per
// thread is what keeps ~32 KB per SM outstanding at 1024 resident threads.
inline constexpr int kMarchGroup = 4;

// Register budget of the march sweep, as resident blocks per SM: 4 (1024 threads, <= 64
// registers) keeps ~32 KB of loads in flight per SM; sweeps that also stream f carry twice
// the column registers and twice the loads, so 3 blocks suffice for them.
inline constexpr int kMarchMinBlocks = 4;
inline constexpr int kMarchMinBlocksF = 3;

// Vector kernels: x-points each thread loads before storing any (loads in flight).
inline constexpr int kRowsUnroll = 2;

// flat/vec2: x-points (vec2: pairs) and rows each thread loads before storing any.
// (Rows per thread are the op's kFlatRows: 2 for axpby and dot, 1 for cg_update's 4 arrays.)
inline constexpr int kFlatX = 4;
inline constexpr int kVec2X = 2;
inline constexpr int kFlatMinBlocks = 3;  // <= 80 registers: 768 threads, 16 loads each
// Cap on the blocks (= partials) of one reducing flat/vec2 launch; blocks then loop.
inline constexpr long long kMaxReduceBlocksFlat = 32768;

// tile3d: z-points per thread (independent chains, loads all issued before any compute).
inline constexpr int kTileZ = 4;
// smem: z-planes loaded one group ahead; default planes per block (short-lived blocks, so
// the resident ones stay at nearby z and share planes and tile halos in L2).
inline constexpr int kSmemDepth = 4;
static_assert(kSmemDepth % 2 == 0, "smem double-buffers by plane parity within a group");
inline constexpr int kSmemPlanes = 64;
inline constexpr int kSmemMinBlocks = 4;  // <= 64 registers: 1024 threads per SM
inline constexpr int kSmemMinBlocksF = 3;
// Cap on the blocks (= partials) of one reducing tile3d/smem launch.
inline constexpr long long kMaxReduceBlocksTile = 16384;

// The slot-finishing kernel: one block per slot.
inline constexpr int kFinishThreads = 1024;
inline constexpr int kFinishUnroll = 8;

// Partial sums each slot can hold between two read_slots: a 512^3 CG iteration adds at most
// ~33k per sweep (flat/vec2), so this is many sweeps' worth; 16 MiB per slot.
inline constexpr long long kSlotCapacity = 1 << 20;
// Cap on the blocks of one reducing naive launch (it then loops over y and z).
inline constexpr long long kMaxReduceBlocks = 8192;
inline constexpr unsigned kMaxGridYZ = 65535;
inline constexpr int kMaxBlockZ = 64;

// Tuning knobs (HALO3D_CUDA_TILE, HALO3D_CUDA_TILE_Z; defaults = the shapes above).
// tile3d/smem (i,j) tile: x a multiple of 32 (whole warps along a row, 256-byte runs),
// x*y <= kBlockThreads threads (the block sum handles any whole number of warps).
struct TileShape {
  int x = kMarchX, y = kMarchY;
};
inline bool tile_shape_ok(const TileShape& t) {
  return t.x >= 32 && t.x % 32 == 0 && t.y >= 1 && (long long)t.x * t.y <= kBlockThreads;
}
// smem's halo is loaded one cell per thread: 2(x+y) cells must not exceed the threads.
inline bool smem_tile_ok(const TileShape& t) {
  return tile_shape_ok(t) && 2LL * (t.x + t.y) <= (long long)t.x * t.y;
}
// tile3d z-points per thread compiled (HALO3D_CUDA_TILE_Z).
inline bool tile_z_ok(int z) { return z == 1 || z == 2 || z == 4 || z == 8; }

struct Shape {
  unsigned x = 1, y = 1, z = 1;
  long long count() const { return (long long)x * y * z; }
};

struct SweepLaunch {
  bool march = false;  // true: the variant asked for runs (march, tile3d or smem), else naive
  Shape grid, block;
  int kz = 0;  // march, smem: z-planes per block
};

struct RowsLaunch {
  Shape grid, block;
};

inline long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

// Smallest power of two >= n, clamped to [1, cap].
inline int pow2_at_least(long long n, int cap) {
  int p = 1;
  while (p < n && p < cap) p *= 2;
  return p;
}

// Time, in units of one full wave, to run `waves` waves' worth of blocks: a partial last
// wave is charged at least half a wave because half the resident slots are about what it
// takes to keep HBM saturated; below that the tail runs bandwidth-starved.
inline double wave_time(double waves) {
  constexpr double kSaturating = 0.5;
  const double full = static_cast<long long>(waves);
  const double tail = waves - full;
  return full + (tail > 0 ? std::max(tail, kSaturating) : 0.0);
}

// Planes per march block. One chunk per tile avoids re-reading the two planes around every
// chunk boundary and keeps all tiles at about the same z, so tile halos are L2 hits; more
// chunks are only worth it when the tiles alone cannot fill the device.
inline int march_planes(int nk, long long tiles, long long resident_blocks) {
  const long long resident = std::max(1LL, resident_blocks);
  double best_cost = 0;
  int best_kz = nk;
  const int max_chunks = std::max(1, std::min<int>(nk / (2 * kMarchGroup), kMaxGridYZ));
  for (int n = 1; n <= max_chunks; ++n) {
    const int kz = int(ceil_div(ceil_div(nk, n), kMarchGroup) * kMarchGroup);
    const long long chunks = ceil_div(nk, kz);
    if (chunks != n) continue;  // the same kz as a smaller n
    const double waves = double(tiles * chunks) / double(resident);
    // Each extra chunk re-reads two planes (8 B/point each) = one plane of 16 B/point traffic.
    const double traffic = 1.0 + double(chunks - 1) / nk;
    const double cost = traffic * wave_time(waves) / waves;
    if (n == 1 || cost < best_cost * (1 - 1e-9)) {
      best_cost = cost;
      best_kz = kz;
    }
  }
  return best_kz;
}

// `resident_march_blocks`: how many march blocks of this kernel fit on the device at once.
// `tile`, `tile_z`: tile3d/smem tile and tile3d z-points (tuning; see TileShape).
inline SweepLaunch sweep_launch(const Layout& l, const Region& r, SweepVariant variant,
                                long long resident_march_blocks, int kz_override, bool reduce,
                                TileShape tile = {}, int tile_z = kTileZ, int rows_per_thread = 1) {
  const int ni = r.i1 - r.i0, nj = r.j1 - r.j0, nk = r.k1 - r.k0;
  SweepLaunch s;

  // Thin regions (the boundary shell's slabs) would leave most of a tile idle.
  const long long tiles_x = ceil_div(ni, kMarchX), tiles_y = ceil_div(nj, kMarchY);
  const bool thick = ni >= kMarchX / 2 && nj >= kMarchY / 2 && nk >= 2 * kMarchGroup;
  // The march kernel addresses its column with 32-bit offsets of up to (2G+1) planes.
  const bool small_planes = (2 * kMarchGroup + 1) * (long long)l.sz() <= 0x7fffffffLL;
  if (variant == SweepVariant::march && thick && small_planes && tiles_y <= kMaxGridYZ &&
      (!reduce || tiles_x * tiles_y <= kMaxReduceBlocks)) {
    s.march = true;
    s.kz =
        kz_override > 0 ? kz_override : march_planes(nk, tiles_x * tiles_y, resident_march_blocks);
    s.block = {unsigned(kMarchX), unsigned(kMarchY), 1};
    s.grid = {unsigned(tiles_x), unsigned(tiles_y),
              unsigned(std::min<long long>(ceil_div(nk, s.kz), kMaxGridYZ))};
    if (ceil_div(nk, s.kz) <= kMaxGridYZ) return s;
    s = SweepLaunch{};  // an override too small for this nk: fall back
  }

  // tile3d / smem: tile.x x tile.y tiles (default 32x8, as march); thin slabs go to the
  // naive shape below (1-thick ones always, whatever the tile).
  const int rows = variant == SweepVariant::shfl ? rows_per_thread : 1;
  const long long ttx = ceil_div(ni, tile.x), tty = ceil_div(nj, (long long)tile.y * rows);
  const bool tile_thick =
      ni >= tile.x / 2 && nj >= std::max(2, tile.y * rows / 2) && ni >= 2 && nk >= 1;
  const long long tiles = ttx * tty;
  const bool per_thread_z = variant == SweepVariant::tile3d || variant == SweepVariant::slab ||
                            variant == SweepVariant::shfl;
  if ((per_thread_z || variant == SweepVariant::smem) && tile_thick && ttx <= 0x7fffffffLL &&
      tty <= kMaxGridYZ && (!reduce || tiles <= kMaxReduceBlocksTile)) {
    s.march = true;
    s.block = {unsigned(tile.x), unsigned(tile.y), 1};
    long long gz = 0;
    if (per_thread_z) {
      // Blocks stride over z-chunks of tile_z planes (only when capped).
      const long long chunks = ceil_div(nk, tile_z);
      gz = std::min<long long>(chunks, kMaxGridYZ);
      if (reduce) gz = std::max(1LL, std::min(gz, kMaxReduceBlocksTile / tiles));
      s.kz = tile_z;
    } else {
      long long kz = kz_override > 0 ? kz_override : kSmemPlanes;
      kz = std::min<long long>(kz, nk);
      kz = std::max(kz, ceil_div(nk, kMaxGridYZ));
      if (reduce) kz = std::max(kz, ceil_div(nk, std::max(1LL, kMaxReduceBlocksTile / tiles)));
      s.kz = int(kz);
      gz = ceil_div(nk, kz);
    }
    s.grid = {unsigned(ttx), unsigned(tty), unsigned(gz)};
    return s;
  }

  // Block shape follows the region so that a slab of thickness 1 in any axis still fills
  // every thread: x first (coalescing), then y, then z.
  int bx = pow2_at_least(ni, 32);
  const int by = pow2_at_least(nj, kBlockThreads / bx);
  // blockDim.z is at most 64: a 1x1 column widens in x (idle threads) to keep 256 threads,
  // which the reducing block sum needs.
  while (kBlockThreads / (bx * by) > kMaxBlockZ) bx *= 2;
  const int bz = kBlockThreads / (bx * by);
  s.block = {unsigned(bx), unsigned(by), unsigned(bz)};
  const long long gx = ceil_div(ni, bx);
  long long gy = std::min<long long>(ceil_div(nj, by), kMaxGridYZ);
  long long gz = std::min<long long>(ceil_div(nk, bz), kMaxGridYZ);
  if (reduce) {
    // Fewer blocks, each looping over more z (then y), so the partials stay few.
    gz = std::max(1LL, std::min(gz, kMaxReduceBlocks / std::max(1LL, gx * gy)));
    gy = std::max(1LL, std::min(gy, kMaxReduceBlocks / std::max(1LL, gx * gz)));
  }
  s.grid = {unsigned(gx), unsigned(gy), unsigned(gz)};
  return s;
}

// Vector kernels walk rows of nx contiguous points (the interior of each x-run).
inline RowsLaunch rows_launch(const Layout& l, long long resident_blocks) {
  const int bx = std::max(32, pow2_at_least(ceil_div(l.nx, kRowsUnroll), kBlockThreads));
  const int by = kBlockThreads / bx;
  const long long rows = (long long)l.ny * l.nz;
  // Exactly one wave: every block does the same number of rows (+-1), no tail.
  const long long blocks = std::max(
      1LL, std::min({ceil_div(rows, by), std::max(1LL, resident_blocks), kMaxReduceBlocks}));
  return {{unsigned(blocks), 1, 1}, {unsigned(bx), unsigned(by), 1}};
}

// flat / vec2: block (bx, by) of kBlockThreads; thread (tx, ty) of block (gx, gy) handles
// units tx + u*bx (u < ux: kFlatX or kVec2X) of the x-chunk gy, in rows ty + q*by (q < ur) of row
// group gx (+ gridDim.x per loop step, only where a reducing launch was capped). A unit is
// one point (flat) or one aligned pair (vec2); `units` is the most a row can have.
inline RowsLaunch flat_launch(const Layout& l, long long units, int ux, int ur, bool reduce) {
  const int bx = std::max(32, pow2_at_least(ceil_div(units, ux), kBlockThreads));
  const int by = kBlockThreads / bx;
  const long long rows = (long long)l.ny * l.nz;
  const long long gy = std::min<long long>(ceil_div(units, (long long)bx * ux), kMaxGridYZ);
  long long gx = std::max(1LL, ceil_div(rows, (long long)by * ur));
  gx = std::min<long long>(gx, 0x7fffffffLL);
  if (reduce) gx = std::max(1LL, std::min(gx, kMaxReduceBlocksFlat / gy));
  return {{unsigned(gx), unsigned(gy), 1}, {unsigned(bx), unsigned(by), 1}};
}
// Units of a vec2 row: the aligned pairs after the row's first point where that point is
// unaligned (unit 0's thread then does it as well), a half pair at an unaligned end.
inline long long vec2_units(const Layout& l) { return (l.nx + 1) / 2; }

inline RowsLaunch face_launch(int na, int nb) {
  return {
      {unsigned(ceil_div(na, 32)), unsigned(std::min<long long>(ceil_div(nb, 8), kMaxGridYZ)), 1},
      {32, 8, 1}};
}

}  // namespace halo3d::cuda
