// The kernel API: everything the solvers do to grid data, behind one interface with a
// host (OpenMP) and a CUDA implementation. Solvers hold a Kernels& and never see a
// loop over points, a stream or a launch.
#pragma once
#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "error.hpp"
#include "layout.hpp"
#include "point_ops.hpp"

namespace halo3d {

enum class Memory {
  device,      // where the backend computes (host RAM for the host backend)
  host_pinned  // host memory the backend can copy to/from asynchronously (MPI staging)
};

// Independent queues of work. On CUDA: `boundary` is a high-priority stream for halo
// faces and the boundary shell, `interior` a low-priority one for everything else.
enum class Lane { interior, boundary };

// Number of reduction slots a backend keeps (CG needs two at once).
inline constexpr int kReductionSlots = 4;
inline constexpr int kNoReduction = -1;

// Work recorded by Kernels::record, replayed in full on the interior lane.
class Recording {
 public:
  virtual ~Recording() = default;
  virtual void replay() = 0;
};

class Kernels {
 public:
  virtual ~Kernels() = default;
  virtual std::string name() const = 0;  // "host" or "cuda"
  virtual std::string device_name() const = 0;
  // True when Memory::device is not addressable by the host (MPI needs staging).
  virtual bool device_memory_is_remote() const = 0;
  // The device ordinal (-1 on the host) and the lane's native queue (a cudaStream_t on
  // CUDA, nullptr on the host): only halo transports that drive copies themselves use it.
  virtual int device() const { return -1; }
  bool on_gpu() const { return device() >= 0; }
  virtual void* native_stream(Lane) const { return nullptr; }
  // Bytes of Memory::device that can still be allocated (host: the host's MemAvailable).
  virtual std::size_t available_memory() const = 0;

  // Memory: zero-filled on allocation (zero bits: 0.0 in double and float). Prefer Buffer
  // and FloatBuffer, which own it. Every allocation is counted (memory_use), so the memory
  // check's plan can be held against what a run allocates at its peak, on either backend.
  void* allocate_bytes(std::size_t bytes, Memory where) {
    void* p = raw_allocate(bytes, where);
    MemoryUse& u = use_[int(where)];
    u.held += bytes;
    u.peak = std::max(u.peak, u.held);
    ++u.buffers;
    return p;
  }
  void deallocate_bytes(void* p, std::size_t bytes, Memory where) noexcept {
    if (!p) return;
    raw_deallocate(p, where);
    use_[int(where)].held -= bytes;
    --use_[int(where)].buffers;
  }
  // Bytes allocated through allocate_bytes and not yet released, the most held at once
  // since the last reset_peak, and the allocations held (allocations happen on the calling
  // thread, never in a sweep).
  struct MemoryUse {
    std::size_t held = 0, peak = 0, buffers = 0;
  };
  MemoryUse memory_use(Memory where) const { return use_[int(where)]; }
  void reset_peak() {
    for (MemoryUse& u : use_) u.peak = u.held;
  }
  // Copies `bytes` in any direction, asynchronously on `lane`.
  virtual void copy_bytes(void* dst, const void* src, std::size_t bytes, Lane lane) = 0;
  // Copies n doubles (floats) in any direction, asynchronously on `lane`.
  void copy(double* dst, const double* src, std::size_t n, Lane lane) {
    copy_bytes(dst, src, n * sizeof(double), lane);
  }
  void copy(float* dst, const float* src, std::size_t n, Lane lane) {
    copy_bytes(dst, src, n * sizeof(float), lane);
  }

  // Scalar types: the operations a multigrid V-cycle needs (residual, smooth, the
  // transfers, axpby, dot, pack/unpack, copy) exist for double and float, as overloads
  // that each backend forwards to one template, so a float V-cycle is an instantiation of
  // the same code. Coefficients stay double and are rounded to the grid's type inside the
  // point update (point_ops.hpp); reductions are double-double whatever the type.

  // Stencil sweeps over a region of the interior. Reads one ghost layer of the input.
  // Where a slot is given, the sweep adds its local partial sum into that slot.
  // out = A u; slot += u.(A u)
  virtual void apply(const Layout& l, const Stencil& s, const Region& r, const double* u,
                     double* out, int dot_slot, Lane lane) = 0;
  // res = f - A u; slot += res.res
  virtual void residual(const Layout& l, const Stencil& s, const Region& r, const double* f,
                        const double* u, double* res, int rr_slot, Lane lane) = 0;
  virtual void residual(const Layout& l, const Stencil& s, const Region& r, const float* f,
                        const float* u, float* res, int rr_slot, Lane lane) = 0;
  // unew = u + (f - A u)/diag; slot += |f - A u|^2 (residual of the old iterate)
  virtual void jacobi(const Layout& l, const Stencil& s, const Region& r, const double* f,
                      const double* u, double* unew, int rr_slot, Lane lane) = 0;
  // unew = u - alpha_dt * A u
  virtual void heat(const Layout& l, const Stencil& s, const Region& r, double alpha_dt,
                    const double* u, double* unew, Lane lane) = 0;

  // d = cd d_in + cr (f - A u); unew = u + d; d_out = d  (a Chebyshev or damped-Jacobi
  // smoothing step; cr includes 1/diag). d_in may be null (not read) or alias u; d_out may
  // be null (not written) or equal d_in. slot += f.unew
  virtual void smooth(const Layout& l, const Stencil& s, const Region& r, double cd, double cr,
                      const double* f, const double* u, const double* d_in, double* d_out,
                      double* unew, int dot_slot, Lane lane) = 0;
  virtual void smooth(const Layout& l, const Stencil& s, const Region& r, double cd, double cr,
                      const float* f, const float* u, const float* d_in, float* d_out, float* unew,
                      int dot_slot, Lane lane) = 0;

  // x = cr D^{-1} b over the whole interior, on the interior lane: a smoothing step from
  // u = 0 (no sweep, no halo). With variable coefficients D^{-1} is the stencil's stored
  // inverse diagonal (FaceWeights::inv_diag; without it: std::logic_error).
  virtual void smooth_start(const Layout& l, const Stencil& s, double cr, const double* b,
                            double* x) = 0;
  virtual void smooth_start(const Layout& l, const Stencil& s, double cr, const float* b,
                            float* x) = 0;
  // The smoothing step after smooth_start(cr0, f), as smooth with u = d_in = x = cr0 D^{-1}
  // f, computed where it is read instead of stored (the first two steps from zero in one
  // pass: 16 B a point instead of 40; 24 B with variable coefficients, which read D^{-1}).
  // Reads f's ghost layer, and D^{-1}'s: x's ghosts are cr0 D^{-1} times f's, so f's must
  // hold the neighbours' values, and zeros on Dirichlet faces. Bitwise smooth_start then
  // smooth(cd, cr, f, x, x, ...).
  virtual void smooth_from_start(const Layout& l, const Stencil& s, const Region& r, double cr0,
                                 double cd, double cr, const double* f, double* d_out, double* unew,
                                 int dot_slot, Lane lane) = 0;
  virtual void smooth_from_start(const Layout& l, const Stencil& s, const Region& r, double cr0,
                                 double cd, double cr, const float* f, float* d_out, float* unew,
                                 int dot_slot, Lane lane) = 0;

  // Multigrid transfers over the whole local box, on the interior lane (see Transfer).
  // coarse = R fine (reads fine's ghost layer)
  virtual void restrict_to(const Transfer& t, const double* fine, double* coarse) = 0;
  virtual void restrict_to(const Transfer& t, const float* fine, float* coarse) = 0;
  // fine += P coarse (reads coarse's ghost layer)
  virtual void prolong_add(const Transfer& t, const double* coarse, double* fine) = 0;
  virtual void prolong_add(const Transfer& t, const float* coarse, float* fine) = 0;

  // x = M b at the interior points of l (ops::dense_row: M column-major over them, in backend
  // memory), on the interior lane: the coarsest level's exact solve. Ghosts untouched.
  virtual void dense_solve(const Layout& l, const double* m, const double* b, double* x) = 0;
  virtual void dense_solve(const Layout& l, const float* m, const float* b, float* x) = 0;

  // Vector updates over the whole interior, on the interior lane.
  // y = a x + b y; a float x into a double y is widened (exact): mixed PCG's next direction
  // from the float V-cycle's z.
  virtual void axpby(const Layout& l, double a, const double* x, double b, double* y) = 0;
  virtual void axpby(const Layout& l, double a, const float* x, double b, float* y) = 0;
  virtual void axpby(const Layout& l, double a, const float* x, double b, double* y) = 0;
  // x += alpha p; r -= alpha ap; slot += r.r  (CG's update, one pass); and, where r_float is
  // not null, r_float = the new r rounded to float (the float V-cycle's input, in the same pass).
  virtual void cg_update(const Layout& l, double alpha, const double* p, const double* ap,
                         double* x, double* r, int rr_slot, float* r_float) = 0;
  // slot += x.y; a float y is widened (exact) and the product taken in double: mixed PCG's
  // r.z from the float V-cycle's z.
  virtual void dot(const Layout& l, const double* x, const double* y, int slot) = 0;
  virtual void dot(const Layout& l, const float* x, const float* y, int slot) = 0;
  virtual void dot(const Layout& l, const double* x, const float* y, int slot) = 0;
  // out = in over the interior (ghosts untouched), rounded to nearest (double -> float) or
  // exact (float -> double), on the interior lane: the mixed-precision V-cycle's ends.
  // Float -> double with a slot: slot += dot_with.out (PCG's r.z in the same pass).
  virtual void convert(const Layout& l, const double* in, float* out) = 0;
  virtual void convert(const Layout& l, const float* in, double* out, const double* dot_with,
                       int dot_slot) = 0;

  // out = the field g at every interior point (ghosts untouched), on the interior lane.
  virtual void fill(const Layout& l, const FieldGen& g, double* out) = 0;
  // The largest |x| over the interior of this rank (NaN when any point is NaN); waits for
  // the work before it. A self-check, not a solver step: it returns to the host at once.
  virtual double max_abs(const Layout& l, const double* x) = 0;

  // The variable-coefficient set-up (src/solver/coefficients.hpp), on the interior lane:
  // point updates in coefficient_ops.hpp, so both backends make the same bits.
  // w (3 padded arrays of l, zero where not written) = the face weights of k (over the padded
  // box, every ghost filled) for spacing's 1/h^2, times np's Neumann factors
  // (ops::face_weights_point).
  virtual void face_weights(const Layout& l, const Stencil& spacing, const NeumannPlanes& np,
                            const double* k, double* w) = 0;
  // v at each point of l's box times its control volume's fraction under np, or divided by it
  // (ops::volume_scale_point); ghosts untouched.
  virtual void volume_scale(const Layout& l, const NeumannPlanes& np, bool divide, double* v) = 0;
  // out[i] = in[i] rounded to nearest, for i < n (whole arrays, ghosts included).
  virtual void round_to_float(std::size_t n, const double* in, float* out) = 0;
  // coarse = the restriction-weighted mean of fine at each of t.coarse's points
  // (ops::coarsen_point; reads fine's ghost layer).
  virtual void coarsen_mean(const Transfer& t, const double* fine, double* coarse) = 0;
  // od (3 padded float arrays of t.fine) = the operator-dependent interpolation weights
  // (Transfer::od) at the points of t.fine's box, from that level's face weights w
  // (ops::od_weight_point); ghosts untouched (the caller exchanges them).
  virtual void od_weights(const Transfer& t, const double* w, float* od) = 0;
  // Galerkin coarse faces (ops::galerkin_parts_point, galerkin_ops.hpp): parts (6 padded
  // arrays of t.coarse, zero where not written) at its points, with t.od's interpolation
  // (every ghost filled), from the level above's weights w and each fine point's face below (3
  // padded arrays of t.fine each; below is read only where a rank's split needs it, else may be
  // null).
  virtual void galerkin_parts(const Transfer& t, const double* w, const double* below,
                              double* parts) = 0;
  // w (3 padded arrays of l) = the coarse faces from the parts (every ghost filled, zero
  // beyond the domain's boundary), from the ghost layer below (ops::galerkin_faces_point).
  virtual void galerkin_faces(const Layout& l, const double* parts, double* w) = 0;
  // below[a] = w[a] one point down along a, at the points of l's box (ops::faces_below_point).
  virtual void faces_below(const Layout& l, const double* w, double* below) = 0;
  // out (a padded array of l) = D^{-1} of s (face weights attached) at the box's points, 0
  // in the ghost layer (ops::inverse_diagonal_point).
  virtual void inverse_diagonal(const Layout& l, const Stencil& s, double* out) = 0;
  // The ghosts of k beyond the sides in `sides` (bit 2 axis + side) = the box's nearest point.
  virtual void fill_boundary_ghosts(const Layout& l, int sides, double* k) = 0;
  // Max over the interior of ops::spectrum_word (s: face weights attached) as a double, and
  // of ops::diagonal_word (each point's diagonal over its control volume's fraction under
  // np); each waits for the work before it and returns at once.
  virtual double spectrum_bound(const Layout& l, const Stencil& s, const BoxPlace& p) = 0;
  virtual double max_diagonal(const Layout& l, const Stencil& s, const NeumannPlanes& np) = 0;

  // Halo faces, packed contiguously (see ops::face_point for the order).
  virtual void pack(const Layout& l, Face f, const double* u, double* buf, Lane lane) = 0;
  virtual void unpack(const Layout& l, Face f, const double* buf, double* u, Lane lane) = 0;
  virtual void pack(const Layout& l, Face f, const float* u, float* buf, Lane lane) = 0;
  virtual void unpack(const Layout& l, Face f, const float* buf, float* u, Lane lane) = 0;
  // Sub-boxes of u packed one after another into buf, or buf's values unpacked into them
  // (BoxList, ops::box_point): the one-round exchange's messages, in one launch each way.
  virtual void pack_boxes(const Layout& l, const BoxList& b, const double* u, double* buf,
                          Lane lane) = 0;
  virtual void unpack_boxes(const Layout& l, const BoxList& b, const double* buf, double* u,
                            Lane lane) = 0;
  virtual void pack_boxes(const Layout& l, const BoxList& b, const float* u, float* buf,
                          Lane lane) = 0;
  virtual void unpack_boxes(const Layout& l, const BoxList& b, const float* buf, float* u,
                            Lane lane) = 0;

  // Ordering: work put on `after` from now on waits for work already put on `before`.
  virtual void fence(Lane before, Lane after) = 0;
  virtual void synchronize(Lane lane) = 0;
  virtual void synchronize() = 0;
  // Waits for the work a caller put on this backend's device outside its lanes (an embedding
  // code's kernels and copies, on any of its streams) before this backend reads the caller's
  // device memory: the lanes are non-blocking streams, which nothing orders after the legacy
  // default stream.
  virtual void wait_for_caller() {}
  // Waits for all work, returns the local partial sums of slots [0, n) and zeroes them.
  virtual void read_slots(int n, DD* out) = 0;

  // Runs `work` and, where the backend can, records what it puts on the interior lane, so
  // that replay() puts the same launches there again as one unit (a CUDA graph): a V-cycle's
  // coarse levels are hundreds of launches of a few microseconds, each paying the launch
  // latency when issued one by one. Null where nothing was recorded: the host backend, or
  // work that cannot be replayed (it used the boundary lane, waited for the device, or
  // reserved a reduction slot); `work` has then run as it would without recording. The
  // work must put the same launches, with the same arguments, each time it runs.
  virtual std::unique_ptr<Recording> record(const std::function<void()>& work) {
    work();
    return nullptr;
  }

 protected:
  virtual void* raw_allocate(std::size_t bytes, Memory where) = 0;
  virtual void raw_deallocate(void* p, Memory where) noexcept = 0;

 private:
  MemoryUse use_[2];
};

// Base of a backend D: forwards each double/float pair of Kernels overloads to one member
// template of D (residual_t, smooth_t, smooth_start_t, restrict_t, prolong_t, axpby_t, dot_t,
// pack_t, unpack_t, pack_boxes_t, unpack_boxes_t), so a backend writes each of these operations
// once for both scalar types (axpby_t and dot_t also for mixed PCG's float x or y beside a
// double vector). D declares `friend class TypedKernels<D>;`.
template <class D>
class TypedKernels : public Kernels {
 public:
  void residual(const Layout& l, const Stencil& s, const Region& r, const double* f,
                const double* u, double* res, int slot, Lane lane) final {
    self().residual_t(l, s, r, f, u, res, slot, lane);
  }
  void residual(const Layout& l, const Stencil& s, const Region& r, const float* f, const float* u,
                float* res, int slot, Lane lane) final {
    self().residual_t(l, s, r, f, u, res, slot, lane);
  }
  void smooth(const Layout& l, const Stencil& s, const Region& r, double cd, double cr,
              const double* f, const double* u, const double* d_in, double* d_out, double* unew,
              int slot, Lane lane) final {
    self().smooth_t(l, s, r, cd, cr, f, u, d_in, d_out, unew, slot, lane);
  }
  void smooth(const Layout& l, const Stencil& s, const Region& r, double cd, double cr,
              const float* f, const float* u, const float* d_in, float* d_out, float* unew,
              int slot, Lane lane) final {
    self().smooth_t(l, s, r, cd, cr, f, u, d_in, d_out, unew, slot, lane);
  }
  void smooth_start(const Layout& l, const Stencil& s, double cr, const double* b,
                    double* x) final {
    check_start(s, double());
    self().smooth_start_t(l, s, cr, b, x);
  }
  void smooth_start(const Layout& l, const Stencil& s, double cr, const float* b, float* x) final {
    check_start(s, float());
    self().smooth_start_t(l, s, cr, b, x);
  }
  void smooth_from_start(const Layout& l, const Stencil& s, const Region& r, double cr0, double cd,
                         double cr, const double* f, double* d_out, double* unew, int slot,
                         Lane lane) final {
    from_start(l, s, r, cr0, cd, cr, f, d_out, unew, slot, lane);
  }
  void smooth_from_start(const Layout& l, const Stencil& s, const Region& r, double cr0, double cd,
                         double cr, const float* f, float* d_out, float* unew, int slot,
                         Lane lane) final {
    from_start(l, s, r, cr0, cd, cr, f, d_out, unew, slot, lane);
  }
  void restrict_to(const Transfer& t, const double* fine, double* coarse) final {
    self().restrict_t(t, fine, coarse);
  }
  void restrict_to(const Transfer& t, const float* fine, float* coarse) final {
    self().restrict_t(t, fine, coarse);
  }
  void dense_solve(const Layout& l, const double* m, const double* b, double* x) final {
    self().dense_solve_t(l, m, b, x);
  }
  void dense_solve(const Layout& l, const float* m, const float* b, float* x) final {
    self().dense_solve_t(l, m, b, x);
  }
  void prolong_add(const Transfer& t, const double* coarse, double* fine) final {
    self().prolong_t(t, coarse, fine);
  }
  void prolong_add(const Transfer& t, const float* coarse, float* fine) final {
    self().prolong_t(t, coarse, fine);
  }
  void axpby(const Layout& l, double a, const double* x, double b, double* y) final {
    self().axpby_t(l, a, x, b, y);
  }
  void axpby(const Layout& l, double a, const float* x, double b, float* y) final {
    self().axpby_t(l, a, x, b, y);
  }
  void axpby(const Layout& l, double a, const float* x, double b, double* y) final {
    self().axpby_t(l, a, x, b, y);
  }
  void dot(const Layout& l, const double* x, const double* y, int slot) final {
    self().dot_t(l, x, y, slot);
  }
  void dot(const Layout& l, const float* x, const float* y, int slot) final {
    self().dot_t(l, x, y, slot);
  }
  void dot(const Layout& l, const double* x, const float* y, int slot) final {
    self().dot_t(l, x, y, slot);
  }
  void pack(const Layout& l, Face f, const double* u, double* buf, Lane lane) final {
    self().pack_t(l, f, u, buf, lane);
  }
  void pack(const Layout& l, Face f, const float* u, float* buf, Lane lane) final {
    self().pack_t(l, f, u, buf, lane);
  }
  void unpack(const Layout& l, Face f, const double* buf, double* u, Lane lane) final {
    self().unpack_t(l, f, buf, u, lane);
  }
  void unpack(const Layout& l, Face f, const float* buf, float* u, Lane lane) final {
    self().unpack_t(l, f, buf, u, lane);
  }
  void pack_boxes(const Layout& l, const BoxList& b, const double* u, double* buf,
                  Lane lane) final {
    self().pack_boxes_t(l, b, u, buf, lane);
  }
  void pack_boxes(const Layout& l, const BoxList& b, const float* u, float* buf, Lane lane) final {
    self().pack_boxes_t(l, b, u, buf, lane);
  }
  void unpack_boxes(const Layout& l, const BoxList& b, const double* buf, double* u,
                    Lane lane) final {
    self().unpack_boxes_t(l, b, buf, u, lane);
  }
  void unpack_boxes(const Layout& l, const BoxList& b, const float* buf, float* u,
                    Lane lane) final {
    self().unpack_boxes_t(l, b, buf, u, lane);
  }

 private:
  D& self() { return static_cast<D&>(*this); }
  template <class T>
  void from_start(const Layout& l, const Stencil& s, const Region& r, double cr0, double cd,
                  double cr, const T* f, T* d_out, T* unew, int slot, Lane lane) {
    // x = cr0 D^{-1} f: cr0 f where D is the same at every point, else with each point's
    // own D^{-1}, ghosts included (ops::ScaledField).
    check_start(s, T());
    if (s.variable()) {
      const ops::ScaledField<T, true> x{f, T(cr0), faces_of(s, T()).inv_diag};
      self().smooth_t(l, s, r, cd, cr, f, x, x, d_out, unew, slot, lane);
    } else {
      const ops::ScaledField<T> x{f, T(cr0)};
      self().smooth_t(l, s, r, cd, cr, f, x, x, d_out, unew, slot, lane);
    }
  }
  // A start from zero with variable coefficients scales by the stored D^{-1}.
  template <class T>
  static void check_start(const Stencil& s, T) {
    if (s.variable() && !faces_of(s, T()).inv_diag)
      throw std::logic_error("smoothing from zero without the inverse diagonal");
  }
};

// Owner of backend memory: n elements of T (move-only).
template <class T>
class BasicBuffer {
 public:
  using value_type = T;
  BasicBuffer() = default;
  BasicBuffer(Kernels& k, std::size_t n, Memory where = Memory::device)
      : k_(&k),
        p_(static_cast<T*>(k.allocate_bytes(checked_bytes(n), where))),
        n_(n),
        where_(where) {}
  BasicBuffer(BasicBuffer&& o) noexcept { swap(o); }
  BasicBuffer& operator=(BasicBuffer&& o) noexcept {
    BasicBuffer t(std::move(o));
    swap(t);
    return *this;
  }
  BasicBuffer(const BasicBuffer&) = delete;
  BasicBuffer& operator=(const BasicBuffer&) = delete;
  ~BasicBuffer() {
    if (p_) k_->deallocate_bytes(p_, n_ * sizeof(T), where_);
  }
  T* data() { return p_; }
  const T* data() const { return p_; }
  std::size_t size() const { return n_; }
  void swap(BasicBuffer& o) noexcept {
    std::swap(k_, o.k_);
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    std::swap(where_, o.where_);
  }

 private:
  static std::size_t checked_bytes(std::size_t n) {
    if (n > (std::size_t(-1) - 64) / sizeof(T)) throw std::bad_alloc();
    return n * sizeof(T);
  }
  Kernels* k_ = nullptr;
  T* p_ = nullptr;
  std::size_t n_ = 0;
  Memory where_ = Memory::device;
};
using Buffer = BasicBuffer<double>;
using FloatBuffer = BasicBuffer<float>;

struct GpuInfo {
  int ordinal = -1;
  std::string name, pci_bus_id;
  int cc_major = 0, cc_minor = 0;
  std::size_t memory_bytes = 0;
};

std::unique_ptr<Kernels> make_host_kernels();
std::size_t host_available_memory();  // MemAvailable of this host, 0 if unknown
// The CUDA kernel variants to run. The defaults are the product: the variants measured
// fastest (docs/performance-log.md); the tests and measurements force one of the others
// (HALO3D_CUDA_APPLY / HALO3D_CUDA_ROWS, read by cuda_variants_from_env in src/core).
struct CudaVariants {
  // The stencil sweeps; fastest: tile3d without a reduction, smem with one.
  enum class Sweep { fastest, naive, tile3d, smem } sweep = Sweep::fastest;
  // The vector kernels; vec2 runs as flat on arrays that are not 16-byte aligned.
  enum class Rows { vec2, flat } rows = Rows::vec2;
  // Kernels::record with CUDA graphs (off: it runs the work as it comes; docs/ARCHITECTURE.md,
  // "Recorded coarse levels").
  bool graphs = true;
};
// Throws BackendUnavailable when CUDA is not compiled in or no GPU is visible.
std::unique_ptr<Kernels> make_cuda_kernels(int device, const CudaVariants& variants = {});
bool cuda_compiled();
// GPUs visible to this process (empty when CUDA is not compiled or none is present).
std::vector<GpuInfo> cuda_devices();
std::string cuda_runtime_version();  // "" when not compiled
std::string cuda_driver_version();   // "" when not compiled or no driver

}  // namespace halo3d
