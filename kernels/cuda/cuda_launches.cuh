// How the CUDA backend launches its kernels: the sweep and row variants and their launch
// shapes, the per-slot reduction scratch the reducing launches write partials into, and each
// kernel's resident-block count. CudaKernels (cuda_kernels.cu) derives from it and passes
// the stream of the lane it runs on.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <string>
#include <unordered_map>

#include "cuda_check.hpp"
#include "cuda_handles.hpp"
#include "device_kernels.cuh"
#include "device_vector_kernels.cuh"
#include "kernels.hpp"
#include "launch_config.hpp"

namespace halo3d {
namespace cuda {

// What the caller asked for (CudaVariants) in the backend's terms.
inline SweepVariant sweep_variant(CudaVariants::Sweep s) {
  switch (s) {
    case CudaVariants::Sweep::naive:
      return SweepVariant::naive;
    case CudaVariants::Sweep::tile3d:
      return SweepVariant::tile3d;
    default:
      return SweepVariant::smem;
  }
}

inline dim3 to_dim3(const Shape& s) { return dim3(s.x, s.y, s.z); }

// Thrown, while Kernels::record captures, by a call that a replay could not repeat; record
// then runs the work as usual.
struct NotRecordable {};

class Launches {
 protected:
  explicit Launches(const CudaVariants& variants)
      : variant_(sweep_variant(variants.sweep)),
        // fastest: tile3d without a reduction, smem with one (launch_sweep).
        auto_variant_(variants.sweep == CudaVariants::Sweep::fastest),
        rows_variant_(variants.rows == CudaVariants::Rows::flat ? RowsVariant::flat
                                                                : RowsVariant::vec2) {}

  // Multigrid box kernels: 32 threads along x (coarse rows are short), the rest along y.
  static constexpr unsigned kBoxX = 32;
  static constexpr long long kBoxPartials = 1 << 16;  // partial sums of one reducing launch
  static unsigned blocks(int n, unsigned per) { return (unsigned(n) + per - 1) / per; }
  static dim3 box_block() { return dim3(kBoxX, kBlockThreads / kBoxX); }
  static dim3 box_grid(int nx, int ny, unsigned nz) {
    return dim3(blocks(nx, kBoxX), blocks(ny, kBlockThreads / kBoxX), nz);
  }

  static void check_slot(int slot) {
    if (slot != kNoReduction && (slot < 0 || slot >= kReductionSlots))
      throw CudaError("reduction slot " + std::to_string(slot) + " is outside [0, " +
                      std::to_string(kReductionSlots) + ")");
  }

  static void check_region(const Layout& l, const Region& r) {
    if (r.i0 < 0 || r.j0 < 0 || r.k0 < 0 || r.i1 > l.nx || r.j1 > l.ny || r.k1 > l.nz)
      throw CudaError("region outside the local box");
  }

  // A box kernel over r: launch(grid, block, stream, partials), partials null without a
  // reduction. With one, a partial per block: blocks step over z so that a slot's capacity
  // holds them. per_x: points of a row each thread computes (blockDim.x apart).
  template <class Launch>
  void box_sweep(const Region& r, int slot, cudaStream_t st, const Launch& launch, int per_x = 1) {
    const dim3 block = box_block();
    dim3 grid = box_grid(r.i1 - r.i0, r.j1 - r.j0, r.k1 - r.k0);
    grid.x = blocks(r.i1 - r.i0, kBoxX * unsigned(per_x));
    double2* partials = nullptr;
    if (slot != kNoReduction) {
      const long long plane = (long long)grid.x * grid.y;
      grid.z = unsigned(std::max(1LL, std::min<long long>(grid.z, kBoxPartials / plane)));
      partials = reserve(slot, plane * grid.z);
    }
    launch(grid, block, st, partials);
    HALO3D_CUDA_CHECK_LAUNCH();
  }

  // Reserves `blocks` partials in a slot; the launch writes them at the returned address.
  double2* reserve(int slot, long long blocks) {
    // A replay would write the partials again without reserving them (the offsets are
    // host state), so work that reduces is not recorded.
    if (capturing_) throw NotRecordable{};
    if (offset_[slot] + blocks > kSlotCapacity)
      throw CudaError("reduction slot " + std::to_string(slot) + " would hold " +
                      std::to_string(offset_[slot] + blocks) + " partial sums, more than its " +
                      std::to_string(kSlotCapacity) + "; call read_slots more often");
    double2* p = static_cast<double2*>(scratch_.get()) + slot * kSlotCapacity + offset_[slot];
    offset_[slot] += blocks;
    return p;
  }

  // Blocks of `kernel` (of `threads` threads) resident on the whole device at once. The
  // first call also asks for the largest L1, for every kernel alike: they use almost no
  // shared memory, get their neighbour reuse from L1, and kernels of one carveout can share
  // an SM (the boundary lane's run beside the interior's).
  // The smem sweep asks for a quarter of the unified memory as shared instead (its tile
  // buffers, 5.4 KB a block, must not cap its occupancy).
  template <class Kernel>
  long long resident_blocks(Kernel* kernel, int threads = kBlockThreads,
                            int carveout = int(cudaSharedmemCarveoutMaxL1)) {
    const void* key = reinterpret_cast<const void*>(kernel);
    auto it = resident_.find(key);
    if (it != resident_.end()) return it->second;
    HALO3D_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, carveout));
    int per_sm = 0;
    HALO3D_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
    return resident_[key] = (long long)per_sm * sms_;
  }

  template <class Op>
  void sweep(const Layout& l, const Region& r, const Op& op, int slot, cudaStream_t st) {
    check_slot(slot);
    if (r.empty()) return;
    check_region(l, r);
    if (slot == kNoReduction)
      launch_sweep<Op, false>(l, r, op, slot, st);
    else
      launch_sweep<Op, true>(l, r, op, slot, st);
  }

  // The variant asked for, or (fastest) the one measured fastest for this kind of sweep on
  // an H200 at 512^3 (docs/performance-log.md, version 7): tile3d without a reduction, smem
  // with one.
  template <class Op, bool kReduce>
  void launch_sweep(const Layout& l, const Region& r, const Op& op, int slot, cudaStream_t st) {
    SweepVariant v =
        auto_variant_ ? (kReduce ? SweepVariant::smem : SweepVariant::tile3d) : variant_;
    // tile3d and smem hand the point update a register or shared-memory window, whose
    // offsets do not address the variable coefficients' face weights: those run naive.
    if (op.s.variable()) v = SweepVariant::naive;
    // tile3d's pair accesses need 16-byte aligned arrays (cudaMalloc's are), and its offsets
    // from a column's base (at most tile_z planes and a row) must fit in an int.
    if (v == SweepVariant::tile3d &&
        (!op_aligned16(op) || (long long)kTileZ * l.sz() + l.sy() > INT_MAX))
      v = SweepVariant::naive;
    if (v != SweepVariant::tile3d) {
      launch_part<Op, kReduce>(l, r, op, slot, st, v, kTileZ);
      return;
    }
    const Tile3dParts p = tile3d_split(r, kTileZ);
    launch_part<Op, kReduce>(l, p.main, op, slot, st, v, kTileZ);
    launch_part<Op, kReduce>(l, p.ztail, op, slot, st, v, 1);
    launch_part<Op, kReduce>(l, p.xlo, op, slot, st, SweepVariant::naive, 0);
    launch_part<Op, kReduce>(l, p.xhi, op, slot, st, SweepVariant::naive, 0);
  }

  // One launch over r (tile3d: z = its planes per thread), or none if r is empty.
  template <class Op, bool kReduce>
  void launch_part(const Layout& l, const Region& r, const Op& op, int slot, cudaStream_t st,
                   SweepVariant v, int z) {
    if (r.empty()) return;
    const SweepLaunch g = sweep_launch(r, v, kReduce, TileShape{}, z);
    double2* partials = kReduce ? reserve(slot, g.grid.count()) : nullptr;
    const dim3 grid = to_dim3(g.grid), block = to_dim3(g.block);
    if (g.tiled && v == SweepVariant::tile3d) {
      auto* tile3d = tile3d_kernel<Op, kReduce>(z);
      resident_blocks(tile3d, int(g.block.count()));  // sets its L1 preference
      tile3d<<<grid, block, 0, st>>>(l, r, op, partials);
    } else if (g.tiled && v == SweepVariant::smem) {
      auto* smem = smem_sweep<Op, kReduce>;
      resident_blocks(smem, int(g.block.count()), 25);
      smem<<<grid, block, 0, st>>>(l, r, g.kz, op, partials);
    } else {
      with_coefficients(op.s, [&](auto kind) {
        auto* naive = naive_sweep<Op, kReduce, decltype(kind)::value>;
        resident_blocks(naive);  // sets its L1 preference
        naive<<<grid, block, 0, st>>>(l, r, op, partials);
      });
    }
    HALO3D_CUDA_CHECK_LAUNCH();
  }

  template <class Op>
  void rows(const Layout& l, const Op& op, int slot, cudaStream_t st) {
    check_slot(slot);
    if (l.nx <= 0 || l.ny <= 0 || l.nz <= 0) return;
    if ((long long)l.ny * l.nz > INT_MAX) throw CudaError("ny*nz exceeds the row index range");
    if (slot == kNoReduction)
      launch_rows<Op, false>(l, op, slot, st);
    else
      launch_rows<Op, true>(l, op, slot, st);
  }

  template <class Op, bool kReduce>
  void launch_rows(const Layout& l, const Op& op, int slot, cudaStream_t st) {
    RowsVariant v = rows_variant_;
    // vec2 needs every array 16-byte aligned (cudaMalloc's are); else it runs as flat.
    if (v == RowsVariant::vec2 && !op_aligned16(op)) v = RowsVariant::flat;
    const bool pairs = v == RowsVariant::vec2;
    const long long units = pairs ? vec2_units(l) : l.nx;
    const RowsLaunch g = flat_launch(l, units, pairs ? kVec2X : kFlatX, Op::kFlatRows, kReduce);
    double2* partials = kReduce ? reserve(slot, g.grid.count()) : nullptr;
    auto* kernel = pairs ? flat_kernel<Op, kReduce, true> : flat_kernel<Op, kReduce, false>;
    resident_blocks(kernel);  // sets its L1 preference
    kernel<<<to_dim3(g.grid), to_dim3(g.block), 0, st>>>(l, units, op, partials);
    HALO3D_CUDA_CHECK_LAUNCH();
  }

  int sms_ = 0;  // the device's, set by the backend before any launch
  SweepVariant variant_ = SweepVariant::smem;
  bool auto_variant_ = true;
  RowsVariant rows_variant_ = RowsVariant::vec2;
  DeviceMemory scratch_;  // kReductionSlots x kSlotCapacity block partials
  long long offset_[kReductionSlots] = {};
  bool capturing_ = false;  // Kernels::record is capturing the interior stream
  std::unordered_map<const void*, long long> resident_;
};

}  // namespace cuda
}  // namespace halo3d
