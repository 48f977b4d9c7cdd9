// CUDA backend: two prioritised streams, device-resident grids, and reductions that land
// in per-slot scratch as one double-double per block, summed in a fixed order on demand.
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "cuda_check.hpp"
#include "cuda_handles.hpp"
#include "device_kernels.cuh"
#include "device_vector_kernels.cuh"
#include "kernels.hpp"
#include "launch_config.hpp"
#include "timing.hpp"

namespace halo3d {
namespace cuda {
namespace {

// What the caller asked for (CudaVariants) in the backend's terms.
SweepVariant sweep_variant(CudaVariants::Sweep s) {
  switch (s) {
    case CudaVariants::Sweep::naive:
      return SweepVariant::naive;
    case CudaVariants::Sweep::tile3d:
      return SweepVariant::tile3d;
    default:
      return SweepVariant::smem;
  }
}

dim3 to_dim3(const Shape& s) { return dim3(s.x, s.y, s.z); }

class CudaKernels final : public TypedKernels<CudaKernels>, public DeviceTimer {
 public:
  CudaKernels(int device, const CudaVariants& variants)
      : device_(device),
        variant_(sweep_variant(variants.sweep)),
        // fastest: tile3d without a reduction, smem with one (launch_sweep).
        auto_variant_(variants.sweep == CudaVariants::Sweep::fastest),
        rows_variant_(variants.rows == CudaVariants::Rows::flat ? RowsVariant::flat
                                                                : RowsVariant::vec2) {
    HALO3D_CUDA_CHECK(cudaSetDevice(device));
    cudaDeviceProp prop{};
    HALO3D_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    char bus[32] = {};
    HALO3D_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
    device_name_ = std::string(prop.name) + " (GPU " + std::to_string(device) + ", " + bus +
                   ", sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ")";
    sms_ = prop.multiProcessorCount;

    // Numerically lower is higher priority: halo faces and the shell jump ahead of the
    // interior sweep, which then fills whatever the boundary work leaves idle.
    int least = 0, greatest = 0;
    HALO3D_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    interior_ = make_stream(least);
    boundary_ = make_stream(greatest);
    for (Event& e : fence_) e = make_event(false);
    join_ = make_event(false);
    start_ = make_event(true);
    stop_ = make_event(true);

    scratch_ = make_device_memory(sizeof(double2) * kReductionSlots * kSlotCapacity);
    results_ = make_pinned_memory(sizeof(double2) * kReductionSlots);
    std::memset(results_.get(), 0, sizeof(double2) * kReductionSlots);
    void* dev = nullptr;
    HALO3D_CUDA_CHECK(cudaHostGetDevicePointer(&dev, results_.get(), 0));
    results_dev_ = static_cast<double2*>(dev);
    max_word_ = make_device_memory(sizeof(unsigned long long));
  }

  ~CudaKernels() override {
    // Work may still read or write the scratch and result memory released below.
    if (interior_) HALO3D_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(interior_.get()));
    if (boundary_) HALO3D_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(boundary_.get()));
  }

  std::string name() const override { return "cuda"; }
  std::string device_name() const override { return device_name_; }
  std::size_t available_memory() const override {
    std::size_t free = 0, total = 0;
    HALO3D_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return free;
  }
  bool device_memory_is_remote() const override { return true; }
  int device() const override { return device_; }
  void* native_stream(Lane lane) const override { return stream(lane); }

  void* allocate_bytes(std::size_t n, Memory where) override {
    const std::size_t bytes = n ? n : sizeof(double);
    if (where == Memory::host_pinned) {
      void* p = nullptr;
      HALO3D_CUDA_CHECK(cudaMallocHost(&p, bytes));
      std::memset(p, 0, bytes);
      return p;
    }
    DeviceMemory m = make_device_memory(bytes);
    // Waited for here, so the zeros are in place whichever lane first uses the buffer.
    HALO3D_CUDA_CHECK(cudaMemsetAsync(m.get(), 0, bytes, interior_.get()));
    HALO3D_CUDA_CHECK(cudaStreamSynchronize(interior_.get()));
    return m.release();
  }

  void deallocate_bytes(void* p, Memory where) noexcept override {
    if (!p) return;
    if (where == Memory::host_pinned)
      HALO3D_CUDA_CHECK_NOTHROW(cudaFreeHost(p));
    else
      HALO3D_CUDA_CHECK_NOTHROW(cudaFree(p));
  }

  void copy_bytes(void* dst, const void* src, std::size_t n, Lane lane) override {
    if (n == 0) return;
    HALO3D_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, stream(lane)));
  }

  void apply(const Layout& l, const Stencil& s, const Region& r, const double* u, double* out,
             int slot, Lane lane) override {
    sweep(l, r, ApplyOp{{u, nullptr, out, s}}, slot, lane);
  }
  void jacobi(const Layout& l, const Stencil& s, const Region& r, const double* f, const double* u,
              double* unew, int slot, Lane lane) override {
    // Divided on the host, as the host backend does, so the factor is bitwise the same.
    sweep(l, r, JacobiOp{{u, f, unew, s}, 1.0 / s.diag}, slot, lane);
  }
  void heat(const Layout& l, const Stencil& s, const Region& r, double alpha_dt, const double* u,
            double* unew, Lane lane) override {
    sweep(l, r, HeatOp{{u, nullptr, unew, s}, alpha_dt}, kNoReduction, lane);
  }

  void convert(const Layout& l, const double* in, float* out) override { convert_t(l, in, out); }
  void convert(const Layout& l, const float* in, double* out, const double* with,
               int slot) override {
    check_slot(slot);
    if (slot == kNoReduction) return convert_t(l, in, out);
    const Region r = Region::whole(l);
    if (r.empty()) return;
    box_sweep(r, slot, Lane::interior,
              [&](dim3 grid, dim3 block, cudaStream_t st, double2* partials) {
                widen_dot_box<<<grid, block, 0, st>>>(l, r, in, out, with, partials);
              });
  }

  void fill(const Layout& l, const FieldGen& g, double* out) override {
    if (l.interior_size() == 0) return;
    fill_box<<<box_grid(l.nx, l.ny, l.nz), box_block(), 0, interior_.get()>>>(l, g, out);
    HALO3D_CUDA_CHECK_LAUNCH();
  }
  double max_abs(const Layout& l, const double* x) override {
    if (l.interior_size() == 0) return 0.0;
    auto* word = static_cast<unsigned long long*>(max_word_.get());
    cudaStream_t st = interior_.get();
    fence(Lane::boundary, Lane::interior);  // x may come from either lane
    HALO3D_CUDA_CHECK(cudaMemsetAsync(word, 0, sizeof *word, st));
    max_abs_box<<<box_grid(l.nx, l.ny, l.nz), box_block(), 0, st>>>(l, x, word);
    HALO3D_CUDA_CHECK_LAUNCH();
    unsigned long long host = 0;
    HALO3D_CUDA_CHECK(cudaMemcpyAsync(&host, word, sizeof host, cudaMemcpyDeviceToHost, st));
    HALO3D_CUDA_CHECK(cudaStreamSynchronize(st));
    return ops::from_magnitude_bits(host);
  }

  void cg_update(const Layout& l, double alpha, const double* p, const double* ap, double* x,
                 double* r, int slot) override {
    rows(l, CgUpdateOp{alpha, p, ap, x, r}, slot);
  }

  void fence(Lane before, Lane after) override {
    if (before == after) return;  // one stream is already ordered
    cudaEvent_t e = fence_[int(before)].get();
    HALO3D_CUDA_CHECK(cudaEventRecord(e, stream(before)));
    HALO3D_CUDA_CHECK(cudaStreamWaitEvent(stream(after), e, 0));
  }
  void synchronize(Lane lane) override { HALO3D_CUDA_CHECK(cudaStreamSynchronize(stream(lane))); }
  void synchronize() override {
    synchronize(Lane::boundary);
    synchronize(Lane::interior);
  }

  void read_slots(int n, DD* out) override {
    if (n < 0 || n > kReductionSlots)
      throw CudaError("read_slots: n = " + std::to_string(n) + " is outside [0, " +
                      std::to_string(kReductionSlots) + "]");
    SlotCounts counts{};
    bool any = false;
    for (int i = 0; i < n; ++i) any |= (counts.n[i] = offset_[i]) > 0;
    if (!any) {
      synchronize();
      for (int i = 0; i < n; ++i) out[i] = DD{};
      return;
    }
    // One launch and one wait: the interior stream waits for the boundary stream, sums
    // every slot in one kernel that writes the totals straight into mapped host memory.
    fence(Lane::boundary, Lane::interior);
    resident_blocks(finish_slots, kFinishThreads);
    finish_slots<<<n, kFinishThreads, 0, interior_.get()>>>(
        static_cast<const double2*>(scratch_.get()), counts, results_dev_);
    HALO3D_CUDA_CHECK_LAUNCH();
    HALO3D_CUDA_CHECK(cudaStreamSynchronize(interior_.get()));
    const auto* res = static_cast<const double2*>(results_.get());
    for (int i = 0; i < n; ++i) {
      out[i] = {res[i].x, res[i].y};
      offset_[i] = 0;
    }
  }

  double elapsed_ms(const std::function<void()>& enqueue) override {
    synchronize();
    // Both lanes start after `start_` and `stop_` comes after both, so the span covers all
    // the work enqueue puts on either lane.
    HALO3D_CUDA_CHECK(cudaEventRecord(start_.get(), interior_.get()));
    HALO3D_CUDA_CHECK(cudaStreamWaitEvent(boundary_.get(), start_.get(), 0));
    enqueue();
    HALO3D_CUDA_CHECK(cudaEventRecord(join_.get(), boundary_.get()));
    HALO3D_CUDA_CHECK(cudaStreamWaitEvent(interior_.get(), join_.get(), 0));
    HALO3D_CUDA_CHECK(cudaEventRecord(stop_.get(), interior_.get()));
    HALO3D_CUDA_CHECK(cudaEventSynchronize(stop_.get()));
    float ms = 0.0f;
    HALO3D_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    synchronize();
    return double(ms);
  }

 private:
  friend class TypedKernels<CudaKernels>;
  cudaStream_t stream(Lane lane) const {
    return lane == Lane::boundary ? boundary_.get() : interior_.get();
  }

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

  // One implementation per operation for both scalar types (see Kernels).

  // A box kernel over r: launch(grid, block, stream, partials), partials null without a
  // reduction. With one, a partial per block: blocks step over z so that a slot's capacity
  // holds them.
  template <class Launch>
  void box_sweep(const Region& r, int slot, Lane lane, const Launch& launch) {
    const dim3 block = box_block();
    dim3 grid = box_grid(r.i1 - r.i0, r.j1 - r.j0, r.k1 - r.k0);
    double2* partials = nullptr;
    if (slot != kNoReduction) {
      const long long plane = (long long)grid.x * grid.y;
      grid.z = unsigned(std::max(1LL, std::min<long long>(grid.z, kBoxPartials / plane)));
      partials = reserve(slot, plane * grid.z);
    }
    launch(grid, block, stream(lane), partials);
    HALO3D_CUDA_CHECK_LAUNCH();
  }

  template <class T>
  void residual_t(const Layout& l, const Stencil& s, const Region& r, const T* f, const T* u,
                  T* res, int slot, Lane lane) {
    if constexpr (std::is_same_v<T, double>) {
      sweep(l, r, ResidualOp{{u, f, res, s}}, slot, lane);  // the tuned double sweeps
    } else {
      check_slot(slot);
      if (r.empty()) return;
      check_region(l, r);
      box_sweep(r, slot, lane, [&](dim3 grid, dim3 block, cudaStream_t st, double2* partials) {
        if (partials)
          residual_box<T, true><<<grid, block, 0, st>>>(l, r, s, f, u, res, partials);
        else
          residual_box<T, false><<<grid, block, 0, st>>>(l, r, s, f, u, res, nullptr);
      });
    }
  }
  template <class T>
  void axpby_t(const Layout& l, double a, const T* x, double b, T* y) {
    // a and b rounded to T here, as the host backend does.
    rows(l, AxpbyOp<T>{T(a), T(b), x, y}, kNoReduction);
  }
  template <class T>
  void dot_t(const Layout& l, const T* x, const T* y, int slot) {
    check_slot(slot);
    if (slot != kNoReduction) rows(l, DotOp<T>{x, y}, slot);
  }

  template <class T>
  void smooth_t(const Layout& l, const Stencil& s, const Region& r, double cd, double cr,
                const T* f, const T* u, const T* d_in, T* d_out, T* unew, int slot, Lane lane) {
    check_slot(slot);
    if (r.empty()) return;
    check_region(l, r);
    box_sweep(r, slot, lane, [&](dim3 grid, dim3 block, cudaStream_t st, double2* partials) {
      if (partials)
        smooth_sweep<T, true>
            <<<grid, block, 0, st>>>(l, r, s, cd, cr, f, u, d_in, d_out, unew, partials);
      else
        smooth_sweep<T, false>
            <<<grid, block, 0, st>>>(l, r, s, cd, cr, f, u, d_in, d_out, unew, nullptr);
    });
  }

  template <class T>
  void restrict_t(const Transfer& t, const T* fine, T* coarse) {
    const Layout& l = t.coarse;
    if (l.interior_size() == 0) return;
    restrict_box<T>
        <<<box_grid(l.nx, l.ny, l.nz), box_block(), 0, interior_.get()>>>(t, fine, coarse);
    HALO3D_CUDA_CHECK_LAUNCH();
  }
  template <class T>
  void prolong_t(const Transfer& t, const T* coarse, T* fine) {
    const Layout& l = t.fine;
    if (l.interior_size() == 0) return;
    prolong_box<T>
        <<<box_grid(l.nx, l.ny, l.nz), box_block(), 0, interior_.get()>>>(t, coarse, fine);
    HALO3D_CUDA_CHECK_LAUNCH();
  }
  template <class In, class Out>
  void convert_t(const Layout& l, const In* in, Out* out) {
    if (l.interior_size() == 0) return;
    convert_box<In, Out>
        <<<box_grid(l.nx, l.ny, l.nz), box_block(), 0, interior_.get()>>>(l, in, out);
    HALO3D_CUDA_CHECK_LAUNCH();
  }

  template <class T>
  void pack_t(const Layout& l, Face f, const T* u, T* buf, Lane lane) {
    int na = 0, nb = 0;
    ops::face_dims(l, f, na, nb);
    if (na <= 0 || nb <= 0) return;
    const RowsLaunch g = face_launch(na, nb);
    resident_blocks(pack_face<T>);
    pack_face<T><<<to_dim3(g.grid), to_dim3(g.block), 0, stream(lane)>>>(l, f, na, nb, u, buf);
    HALO3D_CUDA_CHECK_LAUNCH();
  }
  template <class T>
  void unpack_t(const Layout& l, Face f, const T* buf, T* u, Lane lane) {
    int na = 0, nb = 0;
    ops::face_dims(l, f, na, nb);
    if (na <= 0 || nb <= 0) return;
    const RowsLaunch g = face_launch(na, nb);
    resident_blocks(unpack_face<T>);
    unpack_face<T><<<to_dim3(g.grid), to_dim3(g.block), 0, stream(lane)>>>(l, f, na, nb, buf, u);
    HALO3D_CUDA_CHECK_LAUNCH();
  }

  template <class T>
  void pack_boxes_t(const Layout& l, const BoxList& b, const T* u, T* buf, Lane lane) {
    launch_move_boxes<T, true>(l, b, u, buf, lane);
  }
  template <class T>
  void unpack_boxes_t(const Layout& l, const BoxList& b, const T* buf, T* u, Lane lane) {
    launch_move_boxes<T, false>(l, b, buf, u, lane);
  }
  template <class T, bool kPack>
  void launch_move_boxes(const Layout& l, const BoxList& b, const T* from, T* to, Lane lane) {
    if (b.points() == 0) return;
    resident_blocks(move_boxes<T, kPack>);  // sets its L1 preference, as for every kernel
    move_boxes<T, kPack>
        <<<boxes_blocks(b.points()), kBlockThreads, 0, stream(lane)>>>(l, b, from, to);
    HALO3D_CUDA_CHECK_LAUNCH();
  }

  // Reserves `blocks` partials in a slot; the launch writes them at the returned address.
  double2* reserve(int slot, long long blocks) {
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
  void sweep(const Layout& l, const Region& r, const Op& op, int slot, Lane lane) {
    check_slot(slot);
    if (r.empty()) return;
    check_region(l, r);
    if (slot == kNoReduction)
      launch_sweep<Op, false>(l, r, op, slot, stream(lane));
    else
      launch_sweep<Op, true>(l, r, op, slot, stream(lane));
  }

  // The variant asked for, or (fastest) the one measured fastest for this kind of sweep on
  // an H200 at 512^3 (docs/performance-log.md, version 7): tile3d without a reduction, smem
  // with one.
  template <class Op, bool kReduce>
  void launch_sweep(const Layout& l, const Region& r, const Op& op, int slot, cudaStream_t st) {
    SweepVariant v =
        auto_variant_ ? (kReduce ? SweepVariant::smem : SweepVariant::tile3d) : variant_;
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
      auto* naive = naive_sweep<Op, kReduce>;
      resident_blocks(naive);  // sets its L1 preference
      naive<<<grid, block, 0, st>>>(l, r, op, partials);
    }
    HALO3D_CUDA_CHECK_LAUNCH();
  }

  template <class Op>
  void rows(const Layout& l, const Op& op, int slot) {
    check_slot(slot);
    if (l.nx <= 0 || l.ny <= 0 || l.nz <= 0) return;
    if ((long long)l.ny * l.nz > INT_MAX) throw CudaError("ny*nz exceeds the row index range");
    if (slot == kNoReduction)
      launch_rows<Op, false>(l, op, slot);
    else
      launch_rows<Op, true>(l, op, slot);
  }

  template <class Op, bool kReduce>
  void launch_rows(const Layout& l, const Op& op, int slot) {
    RowsVariant v = rows_variant_;
    // vec2 needs every array 16-byte aligned (cudaMalloc's are); else it runs as flat.
    if (v == RowsVariant::vec2 && !op_aligned16(op)) v = RowsVariant::flat;
    cudaStream_t st = interior_.get();
    const bool pairs = v == RowsVariant::vec2;
    const long long units = pairs ? vec2_units(l) : l.nx;
    const RowsLaunch g = flat_launch(l, units, pairs ? kVec2X : kFlatX, Op::kFlatRows, kReduce);
    double2* partials = kReduce ? reserve(slot, g.grid.count()) : nullptr;
    auto* kernel = pairs ? flat_kernel<Op, kReduce, true> : flat_kernel<Op, kReduce, false>;
    resident_blocks(kernel);  // sets its L1 preference
    kernel<<<to_dim3(g.grid), to_dim3(g.block), 0, st>>>(l, units, op, partials);
    HALO3D_CUDA_CHECK_LAUNCH();
  }

  int device_;
  std::string device_name_;
  int sms_ = 0;
  SweepVariant variant_ = SweepVariant::smem;
  bool auto_variant_ = true;
  RowsVariant rows_variant_ = RowsVariant::vec2;
  Stream interior_, boundary_;
  Event fence_[2];  // indexed by the `before` lane
  Event join_, start_, stop_;
  DeviceMemory scratch_;   // kReductionSlots x kSlotCapacity block partials
  PinnedMemory results_;   // one total per slot, written by finish_slots
  DeviceMemory max_word_;  // max_abs's result
  double2* results_dev_ = nullptr;
  long long offset_[kReductionSlots] = {};
  std::unordered_map<const void*, long long> resident_;
};

}  // namespace
}  // namespace cuda

std::unique_ptr<Kernels> make_cuda_kernels(int device, const CudaVariants& variants) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky: leave no error behind for later calls
    throw BackendUnavailable(std::string("--backend cuda: no usable CUDA device (") +
                             cudaGetErrorString(e) + ")");
  }
  if (count == 0) throw BackendUnavailable("--backend cuda: no CUDA device visible");
  if (device < 0 || device >= count)
    throw BackendUnavailable("--backend cuda: device " + std::to_string(device) +
                             " out of range (" + std::to_string(count) + " visible)");
  try {
    return std::make_unique<cuda::CudaKernels>(device, variants);
  } catch (const CudaError& e) {
    // E.g. a GPU in exclusive-process mode held by another process, or out of memory.
    throw BackendUnavailable("--backend cuda: GPU " + std::to_string(device) +
                             " cannot be used: " + e.what());
  }
}

}  // namespace halo3d
