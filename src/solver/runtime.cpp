#include "runtime.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>

#include "cuda_variants.hpp"
#include "errors.hpp"

#ifndef HALO3D_VERSION
#define HALO3D_VERSION "unknown"
#endif

namespace halo3d {

bool cuda_mps_running() {
  const char* dir = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  const std::string pipe = std::string(dir && *dir ? dir : "/tmp/nvidia-mps") + "/control";
  struct stat st {};
  return stat(pipe.c_str(), &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

std::string shared_gpu_warning(int ranks, int gpus, bool mps) {
  if (ranks <= gpus) return "";
  const std::string share =
      std::to_string(ranks) + " ranks share " + std::to_string(gpus) + " GPU(s) on a host";
  if (mps) return "note: " + share + " through CUDA MPS (they run concurrently)\n";
  return "warning: " + share +
         " without CUDA MPS: their contexts take turns on the GPU, several times slower "
         "(docs/PERFORMANCE.md); start MPS first (nvidia-cuda-mps-control -d) or run one rank "
         "per GPU\n";
}

bool picks_cuda(Backend backend, int min_visible) {
  return backend == Backend::cuda ||
         (backend == Backend::auto_ && cuda_compiled() && min_visible > 0);
}

int fewest_gpus(int visible, MPI_Comm comm) {
  int fewest = 0;
  HALO3D_MPI_CHECK(MPI_Allreduce(&visible, &fewest, 1, MPI_INT, MPI_MIN, comm));
  return fewest;
}

std::unique_ptr<Kernels> make_kernels(Backend backend, const HostMap& hosts, MPI_Comm world,
                                      int& gpu, std::string& warnings) {
  if (backend == Backend::host) return make_host_kernels();
  // Read whether or not a GPU is used, so a bad value is an error on every machine.
  const CudaVariants variants = cuda_variants_from_env();
  const int visible = int(cuda_devices().size()), min_visible = fewest_gpus(visible, world);
  if (!picks_cuda(backend, min_visible)) return make_host_kernels();
  if (!cuda_compiled()) make_cuda_kernels(0);  // throws the "not compiled" message
  if (min_visible == 0)
    throw Error(kExitUnavailable, "--backend cuda: no CUDA GPU is visible on " +
                                      std::string(visible == 0 ? "this host" : "some host") +
                                      " (check CUDA_VISIBLE_DEVICES and the driver)");
  gpu = hosts.local_rank % visible;
  warnings += shared_gpu_warning(hosts.local_size, visible, cuda_mps_running());
  return make_cuda_kernels(gpu, variants);
}

namespace {

std::string gib(double bytes) {
  char s[32];
  std::snprintf(s, sizeof s, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  return s;
}

constexpr double kUnlimited = std::numeric_limits<double>::infinity();

// Bytes this process may still map under its address-space limit (ulimit -v, RLIMIT_AS).
double address_space_left() {
  struct rlimit lim {};
  if (::getrlimit(RLIMIT_AS, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return kUnlimited;
  std::ifstream statm("/proc/self/statm");
  double pages = 0;
  statm >> pages;  // the address space in use, in pages
  return std::max(0.0, double(lim.rlim_cur) - pages * double(::sysconf(_SC_PAGESIZE)));
}

// Bytes the memory cgroup of this process still allows: memory.max - memory.current (v2), or
// memory.limit_in_bytes - memory.usage_in_bytes (v1); unlimited where neither is set.
double cgroup_memory_left() {
  std::ifstream cg("/proc/self/cgroup");
  std::string line, v2, v1;
  while (std::getline(cg, line)) {
    if (line.rfind("0::", 0) == 0) v2 = "/sys/fs/cgroup" + line.substr(3);
    const auto at = line.find(":memory:");
    if (at != std::string::npos) v1 = "/sys/fs/cgroup/memory" + line.substr(at + 8);
  }
  const auto left = [](const std::string& max_file, const std::string& cur_file) {
    std::ifstream max_in(max_file), cur_in(cur_file);
    std::string max_text;
    double current = 0;
    if (!(max_in >> max_text) || max_text == "max" || !(cur_in >> current)) return kUnlimited;
    const double max = std::strtod(max_text.c_str(), nullptr);
    return max >= 0x1p62 ? kUnlimited : std::max(0.0, max - current);  // v1: 2^63 - page
  };
  double room = kUnlimited;
  if (!v2.empty()) room = std::min(room, left(v2 + "/memory.max", v2 + "/memory.current"));
  if (!v1.empty())
    room = std::min(room, left(v1 + "/memory.limit_in_bytes", v1 + "/memory.usage_in_bytes"));
  return room;
}

// Refuses (BadInput on every rank alike) a run whose allocations exceed what is free: per
// GPU, the ranks that share it; per host, the ranks on it (MemAvailable, or less where the
// memory cgroup allows less); per rank, its address-space limit (ulimit -v).
void check_memory(const Runtime& rt, MemoryNeed need, MPI_Comm comm) {
  const bool host_backend = rt.gpu < 0;
  if (host_backend) need.host += need.device, need.device = 0;
  double mine[5] = {double(rt.hosts.host_index), double(rt.gpu), need.device, need.host, 0};
  const double free_device = host_backend ? 0.0 : double(rt.kernels->available_memory());
  const int ranks = comm_size(comm);
  std::vector<double> all(7 * std::size_t(ranks));
  double host_free = double(host_available_memory());
  host_free = host_free > 0 ? std::min(host_free, cgroup_memory_left()) : 0.0;
  // A rank's own limit covers its host memory (on the host backend, the fields too).
  const double as_left = std::min(address_space_left(), 1e300);
  const double row[7] = {mine[0], mine[1], mine[2], mine[3], free_device, host_free, as_left};
  HALO3D_MPI_CHECK(MPI_Allgather(row, 7, MPI_DOUBLE, all.data(), 7, MPI_DOUBLE, comm));
  for (int r = 0; r < ranks; ++r) {
    const double* a = &all[7 * std::size_t(r)];
    if (a[3] > a[6])
      throw BadInput("not enough address space: rank " + std::to_string(r) + " needs " + gib(a[3]) +
                     " but its limit (ulimit -v) leaves " + gib(a[6]) +
                     "; raise the limit, use more ranks or a smaller --grid");
    double dev = 0, host = 0, free_dev = a[4], free_host = a[5];
    int on_gpu = 0, on_host = 0;
    for (int q = 0; q < ranks; ++q) {
      const double* b = &all[7 * std::size_t(q)];
      if (b[0] != a[0]) continue;
      ++on_host, host += b[3], free_host = std::min(free_host, b[5]);
      if (b[1] == a[1] && a[1] >= 0) ++on_gpu, dev += b[2], free_dev = std::min(free_dev, b[4]);
    }
    const std::string where = rt.hosts.hosts.at(std::size_t(a[0]));
    if (a[1] >= 0 && dev > free_dev)
      throw BadInput("not enough GPU memory: " + std::to_string(on_gpu) + " rank(s) on GPU " +
                     std::to_string(int(a[1])) + " of " + where + " need " + gib(dev) + " but " +
                     gib(free_dev) + " is free; use more GPUs or a smaller --grid");
    if (free_host > 0 && host > free_host)
      throw BadInput("not enough memory: " + std::to_string(on_host) + " rank(s) on " + where +
                     " need " + gib(host) + " but " + gib(free_host) +
                     " is available; use more hosts or a smaller --grid");
  }
}

// --overlap auto: overlapped sweeps where they are faster than exchange-then-sweep here,
// timed on scratch fields like --halo auto (medians of the slowest rank, so every rank
// makes the same choice). Either gives the same bits. On ranks sharing one GPU under MPS
// sequential sweeps measured faster (512^3 on 2 ranks of an H200: 15.9 ms against 17.0 ms
// per MG-PCG iteration), where a link to another GPU can be hidden behind the interior.
void choose_overlap(Runtime& rt) {
  if (comm_size(rt.cart.get()) == 1) {
    rt.op->set_overlap(false);
    rt.overlap_choice = "off (one rank: no halo)";
    return;
  }
  const Layout l = rt.decomp.layout();
  Buffer u(*rt.kernels, l.padded_size()), out(*rt.kernels, l.padded_size());
  const auto t = rt.op->measure_overlap(u.data(), out.data(), 5, rt.cart.get());
  rt.op->set_overlap(t.overlapped_s < t.sequential_s);
  char line[160];
  std::snprintf(line, sizeof line, "%s (auto: overlapped %.3g ms, sequential %.3g ms a sweep)",
                rt.op->overlap() ? "on" : "off", 1e3 * t.overlapped_s, 1e3 * t.sequential_s);
  rt.overlap_choice = line;
}

}  // namespace

MemoryNeed halo_memory(const HaloPlan& plan, bool device_is_remote) {
  // The face buffers and the one-round exchange's boxes, send and receive.
  const double faces = 2.0 * double(plan.bytes_per_exchange() + plan.bytes_all_ghosts());
  return {(device_is_remote ? faces : 0.0) + double(plan.bytes_wrapped()), faces};
}

double device_bytes_used(const Runtime& rt) {
  if (rt.device_free_at_check < 0) return -1;
  return rt.device_free_at_check - double(rt.kernels->available_memory());
}

CountedMemory counted_memory(const Runtime& rt) {
  if (!rt.planned_checked) return {};
  const Kernels::MemoryUse u = rt.kernels->memory_use(Memory::device), &c = rt.counted_at_check;
  return {double(u.held) - double(c.held), double(u.peak) - double(c.held),
          (long long)u.buffers - (long long)c.buffers};
}

std::unique_ptr<Runtime> make_runtime(const RuntimeOptions& o, MPI_Comm world) {
  auto rt = std::make_unique<Runtime>();
  rt->hosts = HostMap::build(world);
  rt->decomp = decompose(world, o.grid, o.procs, rt->cart, o.periodic);
  rt->decomp.neumann = o.neumann;
  rt->kernels = make_kernels(o.backend, rt->hosts, world, rt->gpu, rt->warnings);
  const HaloPlan plan = HaloPlan::build(rt->decomp);
  if (o.memory) {
    MemoryNeed need = o.memory(rt->decomp, rt->cart.get(), rt->gpu >= 0);
    const MemoryNeed halo = halo_memory(plan, rt->kernels->device_memory_is_remote());
    need.device += halo.device, need.host += halo.host;
    rt->planned = need;
    rt->planned_checked = true;
    if (rt->gpu >= 0) rt->device_free_at_check = double(rt->kernels->available_memory());
    rt->kernels->reset_peak();
    rt->counted_at_check = rt->kernels->memory_use(Memory::device);
    check_memory(*rt, need, rt->cart.get());
  }
  // The Cartesian communicator keeps the ranks of `world` (no reordering), so the host
  // map indexes its ranks too.
  rt->peer = peer_policy(o.peer_access);
  const TransportContext tc{*rt->kernels, plan, rt->cart.get(), rt->hosts, rt->peer};
  auto transport = select_transport(o.halo, tc, rt->halo_selection);
  Stencil stencil = o.stencil;
  if (o.kappa) {
    std::vector<double> kappa = o.kappa(rt->decomp, rt->cart.get());
    std::vector<double> sigma;
    if (o.sigma) sigma = o.sigma(rt->decomp, rt->cart.get());
    rt->coefficients = std::make_unique<LevelCoefficients>(
        *rt->kernels, rt->decomp.layout(), o.stencil, std::move(kappa), std::move(sigma),
        neumann_planes(rt->decomp));
    stencil = rt->coefficients->attach(o.stencil);
  }
  rt->op =
      std::make_unique<DistributedOperator>(*rt->kernels, rt->decomp, stencil, std::move(transport),
                                            o.overlap != OverlapMode::off, rt->timers);
  if (o.overlap == OverlapMode::auto_) choose_overlap(*rt);
  return rt;
}

std::unique_ptr<DistributedOperator> make_operator(Runtime& rt, const Decomposition& d,
                                                   const Stencil& s, bool distributed,
                                                   bool overlap) {
  Kernels& k = *rt.kernels;
  const HaloPlan plan = HaloPlan::build(d);
  std::unique_ptr<HaloTransport> t =
      distributed
          ? make_named_transport(rt.op->transport().kind(),
                                 TransportContext{k, plan, rt.cart.get(), rt.hosts, rt.peer})
          : make_mpi_transport(k, plan, MPI_COMM_SELF);
  return std::make_unique<DistributedOperator>(k, d, s, std::move(t), overlap && rt.op->overlap(),
                                               rt.timers);
}

}  // namespace halo3d
