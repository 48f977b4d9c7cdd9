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
#include "cuda_launches.cuh"
#include "device_kernels.cuh"
#include "device_setup_kernels.cuh"
#include "device_vector_kernels.cuh"
#include "kernels.hpp"
#include "launch_config.hpp"
#include "timing.hpp"

namespace halo3d {
namespace cuda {
namespace {

class CudaKernels final : public CudaSetupKernels<TypedKernels<CudaKernels>>,
                          public DeviceTimer,
                          Launches {
 public:
  CudaKernels(int device, const CudaVariants& variants)
      : Launches(variants), device_(device), graphs_(variants.graphs) {
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
    this->word_ = make_device_memory(sizeof(unsigned long long));
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

  void* raw_allocate(std::size_t n, Memory where) override {
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

  void raw_deallocate(void* p, Memory where) noexcept override {
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
    sweep(l, r, ApplyOp{{u, nullptr, out, s}}, slot, stream(lane));
  }
  void jacobi(const Layout& l, const Stencil& s, const Region& r, const double* f, const double* u,
              double* unew, int slot, Lane lane) override {
    // Divided on the host, as the host backend does, so the factor is bitwise the same.
    sweep(l, r, JacobiOp{{u, f, unew, s}, 1.0 / s.diag}, slot, stream(lane));
  }
  void heat(const Layout& l, const Stencil& s, const Region& r, double alpha_dt, const double* u,
            double* unew, Lane lane) override {
    sweep(l, r, HeatOp{{u, nullptr, unew, s}, alpha_dt}, kNoReduction, stream(lane));
  }

  void convert(const Layout& l, const double* in, float* out) override { convert_t(l, in, out); }
  void convert(const Layout& l, const float* in, double* out, const double* with,
               int slot) override {
    check_slot(slot);
    if (slot == kNoReduction) return convert_t(l, in, out);
    const Region r = Region::whole(l);
    if (r.empty()) return;
    box_sweep(r, slot, interior_.get(),
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
    dim3 grid = box_grid(l.nx, l.ny, l.nz);
    grid.z = max_word_planes((long long)grid.x * grid.y, l.nz);
    return largest_word(0, l.interior_size() != 0, [&](unsigned long long* word) {
      max_abs_box<<<grid, box_block(), 0, interior_.get()>>>(l, x, word);
    });
  }

  void cg_update(const Layout& l, double alpha, const double* p, const double* ap, double* x,
                 double* r, int slot, float* r_float) override {
    rows(l, CgUpdateOp{alpha, p, ap, x, r, r_float}, slot, interior_.get());
  }

  void fence(Lane before, Lane after) override {
    if (before == after) return;  // one stream is already ordered
    if (capturing_) {
      // record() fenced the boundary lane before capturing, and a capture puts nothing on it.
      if (before == Lane::boundary) return;
      throw NotRecordable{};
    }
    cudaEvent_t e = fence_[int(before)].get();
    HALO3D_CUDA_CHECK(cudaEventRecord(e, stream(before)));
    HALO3D_CUDA_CHECK(cudaStreamWaitEvent(stream(after), e, 0));
  }
  void synchronize(Lane lane) override {
    if (capturing_) throw NotRecordable{};
    HALO3D_CUDA_CHECK(cudaStreamSynchronize(stream(lane)));
  }
  void synchronize() override {
    synchronize(Lane::boundary);
    synchronize(Lane::interior);
  }
  void wait_for_caller() override {
    // The whole device (this process's work on it), on this backend's GPU whatever device
    // the caller has made current since.
    int current = -1;
    HALO3D_CUDA_CHECK(cudaGetDevice(&current));
    if (current != device_) HALO3D_CUDA_CHECK(cudaSetDevice(device_));
    HALO3D_CUDA_CHECK(cudaDeviceSynchronize());
    if (current != device_) HALO3D_CUDA_CHECK(cudaSetDevice(current));
  }

  std::unique_ptr<Recording> record(const std::function<void()>& work) override {
    if (!graphs_) return Kernels::record(work);
    return capture(work);
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
    if (lane == Lane::interior) return interior_.get();
    if (capturing_) throw NotRecordable{};  // a capture holds the interior lane's work only
    return boundary_.get();
  }

  // A CUDA graph and what launches it.
  class GraphRecording final : public Recording {
   public:
    GraphRecording(GraphExec exec, cudaStream_t stream) : exec_(std::move(exec)), stream_(stream) {}
    void replay() override { HALO3D_CUDA_CHECK(cudaGraphLaunch(exec_.get(), stream_)); }

   private:
    GraphExec exec_;
    cudaStream_t stream_;
  };

  // Captures the interior stream while `work` runs (this thread only: MPI's or NCCL's own
  // threads are not captured). A capture runs nothing, so the graph is launched once here.
  // Whatever ends the capture early (NotRecordable, or a CUDA call that a capture refuses)
  // leaves no trace but the discarded graph: the work then runs as usual, and a genuine
  // error surfaces there.
  std::unique_ptr<Recording> capture(const std::function<void()>& work) {
    fence(Lane::boundary, Lane::interior);  // what the boundary lane holds comes first
    if (cudaStreamBeginCapture(interior_.get(), cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
      (void)cudaGetLastError();
      work();
      return nullptr;
    }
    capturing_ = true;
    bool whole = true;
    try {
      work();
    } catch (const NotRecordable&) {
      whole = false;
    } catch (const CudaError&) {
      whole = false;
    }
    capturing_ = false;
    cudaGraph_t g = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(interior_.get(), &g);
    Graph graph(g);
    cudaGraphExec_t exec = nullptr;
    if (whole && ended == cudaSuccess && g && cudaGraphInstantiate(&exec, g, 0) == cudaSuccess) {
      auto r = std::make_unique<GraphRecording>(GraphExec(exec), interior_.get());
      r->replay();
      return r;
    }
    (void)cudaGetLastError();  // a refused capture's error is not sticky: leave none behind
    work();
    return nullptr;
  }

  // One implementation per operation for both scalar types (see Kernels).

  template <class T>
  void residual_t(const Layout& l, const Stencil& s, const Region& r, const T* f, const T* u,
                  T* res, int slot, Lane lane) {
    if constexpr (std::is_same_v<T, double>) {
      sweep(l, r, ResidualOp{{u, f, res, s}}, slot, stream(lane));  // the tuned double sweeps
    } else {
      check_slot(slot);
      if (r.empty()) return;
      check_region(l, r);
      box_sweep(
          r, slot, stream(lane), [&](dim3 grid, dim3 block, cudaStream_t st, double2* partials) {
            with_coefficients(s, [&](auto kind) {
              constexpr Coefficients C = decltype(kind)::value;
              if (partials)
                residual_box<T, true, C><<<grid, block, 0, st>>>(l, r, s, f, u, res, partials);
              else
                residual_box<T, false, C><<<grid, block, 0, st>>>(l, r, s, f, u, res, nullptr);
            });
          });
    }
  }
  template <class T>
  void smooth_start_t(const Layout& l, const Stencil& s, double cr, const T* b, T* x) {
    const Region r = Region::whole(l);
    if (r.empty()) return;
    box_sweep(r, kNoReduction, interior_.get(),
              [&](dim3 grid, dim3 block, cudaStream_t st, double2*) {
                smooth_start_box<T><<<grid, block, 0, st>>>(l, r, s, cr, b, x);
              });
  }
  template <class X, class T>
  void axpby_t(const Layout& l, double a, const X* x, double b, T* y) {
    // a and b rounded to T here, as the host backend does.
    rows(l, AxpbyOp<X, T>{T(a), T(b), x, y}, kNoReduction, interior_.get());
  }
  template <class T>
  void dense_solve_t(const Layout& l, const T* m, const T* b, T* x) {
    const int n = int(l.interior_size());
    if (n == 0) return;
    dense_rows<T><<<(n + kBlockThreads - 1) / kBlockThreads, kBlockThreads, 0, interior_.get()>>>(
        l, m, b, x);
    HALO3D_CUDA_CHECK_LAUNCH();
  }
  template <class X, class Y>
  void dot_t(const Layout& l, const X* x, const Y* y, int slot) {
    check_slot(slot);
    if (slot != kNoReduction) rows(l, DotOp<X, Y>{x, y}, slot, interior_.get());
  }

  template <class T, class U>
  void smooth_t(const Layout& l, const Stencil& s, const Region& r, double cd, double cr,
                const T* f, U u, U d_in, T* d_out, T* unew, int slot, Lane lane) {
    check_slot(slot);
    if (r.empty()) return;
    check_region(l, r);
    constexpr int X = kSmoothPointsX<T>;
    box_sweep(
        r, slot, stream(lane),
        [&](dim3 grid, dim3 block, cudaStream_t st, double2* partials) {
          with_coefficients(s, [&](auto kind) {
            constexpr Coefficients C = decltype(kind)::value;
            if (partials)
              smooth_sweep<T, true, X, U, C>
                  <<<grid, block, 0, st>>>(l, r, s, cd, cr, f, u, d_in, d_out, unew, partials);
            else
              smooth_sweep<T, false, X, U, C>
                  <<<grid, block, 0, st>>>(l, r, s, cd, cr, f, u, d_in, d_out, unew, nullptr);
          });
        },
        X);
  }

  template <class T>
  void restrict_t(const Transfer& t, const T* fine, T* coarse) {
    const Layout& l = t.coarse;
    if (l.interior_size() == 0) return;
    if (t.od) {
      const dim3 grid = box_grid(l.nx, l.ny, l.nz);
      if (t.span == 4)
        restrict_od_box<T, 4><<<grid, box_block(), 0, interior_.get()>>>(t, fine, coarse);
      else
        restrict_od_box<T, 3><<<grid, box_block(), 0, interior_.get()>>>(t, fine, coarse);
      HALO3D_CUDA_CHECK_LAUNCH();
      return;
    }
    const dim3 grid = box_grid(l.nx, l.ny, blocks(l.nz, kRestrictPlanes));
    if (t.span == 4)
      restrict_march<T, 4><<<grid, box_block(), 0, interior_.get()>>>(t, fine, coarse);
    else
      restrict_march<T, 3><<<grid, box_block(), 0, interior_.get()>>>(t, fine, coarse);
    HALO3D_CUDA_CHECK_LAUNCH();
  }
  template <class T>
  void prolong_t(const Transfer& t, const T* coarse, T* fine) {
    const Layout& l = t.fine;
    if (l.interior_size() == 0) return;
    if (t.od)
      prolong_box<T, true>
          <<<box_grid(l.nx, l.ny, l.nz), box_block(), 0, interior_.get()>>>(t, coarse, fine);
    else if (aligned16(fine))
      prolong_pairs<T><<<box_grid((l.nx + 1) / 2, l.ny, l.nz), box_block(), 0, interior_.get()>>>(
          t, coarse, fine);
    else
      prolong_box<T, false>
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

  int device_;
  bool graphs_;  // record() captures CUDA graphs
  std::string device_name_;
  Stream interior_, boundary_;
  Event fence_[2];  // indexed by the `before` lane
  Event join_, start_, stop_;
  PinnedMemory results_;  // one total per slot, written by finish_slots
  double2* results_dev_ = nullptr;
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
