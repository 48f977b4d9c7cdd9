#include "runtime.hpp"

#include "errors.hpp"

#ifndef HALO3D_VERSION
#define HALO3D_VERSION "unknown"
#endif

namespace halo3d {

std::string version_string() { return HALO3D_VERSION; }

std::unique_ptr<Kernels> make_kernels(const std::string& backend, const HostMap& hosts,
                                      MPI_Comm world, int& gpu, std::string& warnings) {
  if (backend == "host") return make_host_kernels();
  const auto gpus = cuda_devices();
  // Every rank must take the same decision, or the job would mix backends.
  int visible = int(gpus.size()), min_visible = 0;
  HALO3D_MPI_CHECK(MPI_Allreduce(&visible, &min_visible, 1, MPI_INT, MPI_MIN, world));
  if (backend == "auto" && (!cuda_compiled() || min_visible == 0)) return make_host_kernels();
  if (!cuda_compiled()) make_cuda_kernels(0);  // throws the "not compiled" message
  if (min_visible == 0)
    throw Error(kExitUnavailable, "--backend cuda: no CUDA GPU is visible on " +
                                      std::string(visible == 0 ? "this host" : "some host") +
                                      " (check CUDA_VISIBLE_DEVICES and the driver)");
  gpu = hosts.local_rank % visible;
  if (hosts.local_size > visible)
    warnings += "warning: " + std::to_string(hosts.local_size) + " ranks share " +
                std::to_string(visible) + " GPU(s) on a host; expect lower speed\n";
  return make_cuda_kernels(gpu);
}

std::unique_ptr<Runtime> make_runtime(const RuntimeOptions& o, MPI_Comm world) {
  auto rt = std::make_unique<Runtime>();
  rt->hosts = HostMap::build(world);
  rt->decomp = decompose(world, o.grid, o.procs, rt->cart);
  rt->kernels = make_kernels(o.backend, rt->hosts, world, rt->gpu, rt->warnings);
  const HaloPlan plan = HaloPlan::build(rt->decomp);
  // The Cartesian communicator keeps the ranks of `world` (no reordering), so the host
  // map indexes its ranks too.
  rt->peer = peer_policy(o.peer_access, world);
  const TransportContext tc{*rt->kernels, plan, rt->cart.get(), rt->hosts, rt->peer};
  auto transport = select_transport(o.halo, tc, rt->halo_selection);
  rt->op = std::make_unique<DistributedOperator>(*rt->kernels, rt->decomp, o.stencil,
                                                 std::move(transport), o.overlap, rt->timers);
  return rt;
}

Buffer upload(Kernels& k, const std::vector<double>& host) {
  Buffer b(k, host.size());
  k.copy(b.data(), host.data(), host.size(), Lane::interior);
  k.synchronize(Lane::interior);
  return b;
}

std::vector<double> download(Kernels& k, const Buffer& b) {
  std::vector<double> host(b.size());
  k.synchronize();
  k.copy(host.data(), b.data(), b.size(), Lane::interior);
  k.synchronize(Lane::interior);
  return host;
}

}  // namespace halo3d
