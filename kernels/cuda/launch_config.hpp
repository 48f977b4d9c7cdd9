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
  tile3d,  // one thread per kTileZ z-consecutive points, all loads issued first, z-slow grid
  smem     // 2.5D: (x,y) tile + halo in shared memory, short z-chunks, z-neighbours in registers
};

// The vector kernels (axpby, cg_update, dot).
enum class RowsVariant {
  flat,  // a block per kFlatRows*by rows: kFlatX x kFlatRows points per thread, loads first
  vec2   // as flat, but 16-byte aligned pairs (double2), scalar at a row's unaligned ends
};

// Every reducing kernel uses blocks of this size, which the fixed-order block sum assumes.
inline constexpr int kBlockThreads = 256;

// The default (i,j) tile of tile3d and smem: 64 doubles = two warps per row, so each warp
// reads whole 256-byte runs. The only tile the backend compiles (the smem kernel's template
// arguments default to it); docs/performance-log.md versions 4 and 5 measured the others.
inline constexpr int kTileX = 64;
inline constexpr int kTileY = 4;
static_assert(kTileX * kTileY == kBlockThreads, "the default tile fills one block");

// flat/vec2: x-points (vec2: pairs) and rows each thread loads before storing any.
// (Rows per thread are the op's kFlatRows: 2 for axpby and dot, 1 for cg_update's 4 arrays.)
inline constexpr int kFlatX = 4;
inline constexpr int kVec2X = 2;
inline constexpr int kFlatMinBlocks = 3;  // <= 80 registers: 768 threads, 16 loads each
// Cap on the blocks (= partials) of one reducing flat/vec2 launch; blocks then loop.
inline constexpr long long kMaxReduceBlocksFlat = 32768;

// The largest-word reductions (max_abs, the set-up's spectrum bound and largest diagonal):
// the z-planes of their grid, so that a launch has at most kMaxWordBlocks blocks; each
// thread keeps its own maximum over every gridDim.z-th plane, and each warp then makes one
// atomicMax on the one result word. With a block per plane, the 4.2e6 atomics of a 512^3
// box queued on that word: max|b| took 4 ms on an H100, ten times a read of b.
inline constexpr long long kMaxWordBlocks = 4096;
inline unsigned max_word_planes(long long plane_blocks, int nz) {
  const long long cap = kMaxWordBlocks / std::max(1LL, plane_blocks);
  return unsigned(std::max(1LL, std::min<long long>(nz, cap)));
}

// Multigrid's smoothing step: points of a row per thread (blockDim.x apart), by scalar type.
template <class T>
inline constexpr int kSmoothPointsX = sizeof(T) == 4 ? 2 : 1;

// tile3d: z-points per thread (independent chains, loads all issued before any compute) and
// x-points per thread (one 16-byte aligned pair).
inline constexpr int kTileZ = 8;
inline constexpr int kTileXPoints = 2;
// tile3d's register budget without a reduction, as __launch_bounds__'s minimum resident
// blocks per SM: 6 (<= 40 registers, ptxas would take 42: 5 blocks). Reducing sweeps and
// sweeps reading f are not capped (0: ptxas chooses): they would spill.
inline constexpr int kTile3dMinBlocks = 6;
// smem: z-planes loaded one group ahead; default planes per block (short-lived blocks, so
// the resident ones stay at nearby z and share planes and tile halos in L2).
inline constexpr int kSmemDepth = 4;
static_assert(kSmemDepth % 2 == 0, "smem double-buffers by plane parity within a group");
inline constexpr int kSmemPlanes = 64;
inline constexpr int kSmemMinBlocks = 4;  // <= 64 registers: 1024 threads per SM
inline constexpr int kSmemMinBlocksF = 3;
// Cap on the blocks (= partials) of one reducing smem launch (its blocks then take more
// planes each) and of one reducing tile3d launch (one block per chunk: beyond it, naive).
inline constexpr long long kMaxReduceBlocksTile = 16384;
inline constexpr long long kMaxReduceBlocksTile3d = 1 << 18;

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

// A tile3d/smem (i,j) tile. The backend runs the default; the launch functions take any
// valid tile so that the tests and bench/gpu/sweep_probe.cu can check and time others:
// x a multiple of 32 (whole warps along a row, 256-byte runs),
// x*y <= kBlockThreads threads (the block sum handles any whole number of warps).
struct TileShape {
  int x = kTileX, y = kTileY;
};
inline bool tile_shape_ok(const TileShape& t) {
  return t.x >= 32 && t.x % 32 == 0 && t.y >= 1 && (long long)t.x * t.y <= kBlockThreads;
}
// smem's halo is loaded one cell per thread: 2(x+y) cells must not exceed the threads.
inline bool smem_tile_ok(const TileShape& t) {
  return tile_shape_ok(t) && 2LL * (t.x + t.y) <= (long long)t.x * t.y;
}

struct Shape {
  unsigned x = 1, y = 1, z = 1;
  long long count() const { return (long long)x * y * z; }
};

struct SweepLaunch {
  bool tiled = false;  // true: the variant asked for runs (tile3d or smem), else naive
  Shape grid, block;
  int kz = 0;  // tile3d: z-points per thread; smem: z-planes per block
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

// tile3d / smem: tile.x x tile.y tiles; thin slabs (the boundary shell's) would leave
// most of a tile idle and go to the naive shape (1-thick ones always).
inline bool tile_thick(int ni, int nj, int nk, TileShape tile) {
  return ni >= tile.x / 2 && nj >= std::max(2, tile.y / 2) && ni >= 2 && nk >= 1;
}

// tile3d: a box of whole pairs and whole chunks (tile3d_split), one chunk per block; false
// (and `s` untouched) when the region is not such a box or the grid would be too large.
inline bool tile3d_launch(const Region& r, bool reduce, TileShape tile, int tile_z,
                          SweepLaunch& s) {
  const int ni = r.i1 - r.i0, nj = r.j1 - r.j0, nk = r.k1 - r.k0;
  const long long tty = ceil_div(nj, tile.y);
  const long long ttx = ceil_div(ni, (long long)kTileXPoints * tile.x);
  const long long chunks = nk / tile_z;
  const bool exact = r.i0 % 2 == 0 && ni % 2 == 0 && nk % tile_z == 0;
  if (!(exact && tile_thick(ni, nj, nk, tile) && ttx <= 0x7fffffffLL && tty <= kMaxGridYZ &&
        chunks <= kMaxGridYZ && (!reduce || ttx * tty * chunks <= kMaxReduceBlocksTile3d)))
    return false;
  s.tiled = true;
  s.block = {unsigned(tile.x), unsigned(tile.y), 1};
  s.grid = {unsigned(ttx), unsigned(tty), unsigned(chunks)};
  s.kz = tile_z;
  return true;
}

// smem: tiles of `kz` z-planes per block; false (and `s` untouched) for a thin slab or a
// grid that would be too large.
inline bool smem_launch(const Region& r, bool reduce, TileShape tile, SweepLaunch& s) {
  const int ni = r.i1 - r.i0, nj = r.j1 - r.j0, nk = r.k1 - r.k0;
  const long long tty = ceil_div(nj, tile.y);
  const long long ttx = ceil_div(ni, tile.x), tiles = ttx * tty;
  if (!(tile_thick(ni, nj, nk, tile) && ttx <= 0x7fffffffLL && tty <= kMaxGridYZ &&
        (!reduce || tiles <= kMaxReduceBlocksTile)))
    return false;
  s.tiled = true;
  s.block = {unsigned(tile.x), unsigned(tile.y), 1};
  long long kz = std::min<long long>(kSmemPlanes, nk);
  kz = std::max(kz, ceil_div(nk, kMaxGridYZ));
  if (reduce) kz = std::max(kz, ceil_div(nk, std::max(1LL, kMaxReduceBlocksTile / tiles)));
  s.kz = int(kz);
  s.grid = {unsigned(ttx), unsigned(tty), unsigned(ceil_div(nk, kz))};
  return true;
}

// naive: one thread per point.
inline SweepLaunch naive_launch(const Region& r, bool reduce) {
  const int ni = r.i1 - r.i0, nj = r.j1 - r.j0, nk = r.k1 - r.k0;
  SweepLaunch s;
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

// `tile`, `tile_z`: tile3d/smem tile and tile3d z-points (see TileShape). The variant asked
// for where the region suits it, else naive.
inline SweepLaunch sweep_launch(const Region& r, SweepVariant variant, bool reduce,
                                TileShape tile = {}, int tile_z = kTileZ) {
  SweepLaunch s;
  if (variant == SweepVariant::tile3d && tile3d_launch(r, reduce, tile, tile_z, s)) return s;
  if (variant == SweepVariant::smem && smem_launch(r, reduce, tile, s)) return s;
  return naive_launch(r, reduce);
}

// tile3d covers a box of whole x-pairs (even i) and whole chunks of T planes; the rest of a
// region goes to other launches: `ztail` (the last nk mod T planes, over the same pairs; run
// with T = 1) and the x-slivers `xlo`, `xhi` (at most one column each; naive). Empty parts
// are empty Regions. Together they are the region, each point once.
struct Tile3dParts {
  Region main, ztail, xlo, xhi;
};
inline Tile3dParts tile3d_split(const Region& r, int tile_z) {
  const int i0 = r.i0 + (r.i0 & 1);                // round up to even
  const int i1 = std::max(i0, r.i1 - (r.i1 & 1));  // round down to even
  const int km = r.k0 + (r.k1 - r.k0) / tile_z * tile_z;
  Tile3dParts p;
  p.main = {i0, i1, r.j0, r.j1, r.k0, km};
  p.ztail = {i0, i1, r.j0, r.j1, km, r.k1};
  p.xlo = {r.i0, std::min(i0, r.i1), r.j0, r.j1, r.k0, r.k1};
  p.xhi = {i1, r.i1, r.j0, r.j1, r.k0, r.k1};
  return p;
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

// move_boxes: one thread per value, blocks capped (the kernel strides over the rest).
inline unsigned boxes_blocks(long long points) {
  return unsigned(std::min<long long>(ceil_div(points, kBlockThreads), 1 << 16));
}

inline RowsLaunch face_launch(int na, int nb) {
  return {
      {unsigned(ceil_div(na, 32)), unsigned(std::min<long long>(ceil_div(nb, 8), kMaxGridYZ)), 1},
      {32, 8, 1}};
}

}  // namespace halo3d::cuda
