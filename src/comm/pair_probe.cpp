#include "pair_probe.hpp"

#include "errors.hpp"
#include "point_ops.hpp"

#ifdef HALO3D_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "cuda/cuda_check.hpp"
#include "transports/ipc_channel.hpp"
#endif

namespace halo3d {

HaloPlan one_face_plan(std::size_t points, int peer, bool low) {
  if (points == 0 || points > (std::size_t(1) << 30))
    throw Error(kExitFailure, "one_face_plan: " + std::to_string(points) + " points");
  std::size_t a = 1;  // the largest factor <= sqrt(points): the face is a x b, b >= a
  for (std::size_t f = 1; f * f <= points; ++f)
    if (points % f == 0) a = f;
  const std::size_t b = points / a;
  HaloPlan p;
  p.layout = Layout{int(b) - 2, int(a) - 2, 1};  // x (contiguous) along the longer side
  HaloFace f;
  f.face = Face{2, low ? 1 : 0};
  f.neighbor = peer;
  int na = 0, nb = 0;
  ops::face_dims(p.layout, f.face, na, nb);
  f.points = std::size_t(na) * std::size_t(nb);  // == points, as the transports size it
  p.faces.push_back(f);
  return p;
}

int gpu_can_access_peer(const std::string& mine, const std::string& theirs) {
#ifdef HALO3D_HAVE_CUDA
  const int a = ipc::device_by_bus_id(mine), b = ipc::device_by_bus_id(theirs);
  if (a < 0 || b < 0) return -1;
  int can = 0;
  HALO3D_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b));
  return can ? 1 : 0;
#else
  (void)mine, (void)theirs;
  return -1;
#endif
}

std::vector<P2PLink> local_p2p_links(int& visible) {
  std::vector<P2PLink> links;
  visible = 0;
#ifdef HALO3D_HAVE_CUDA
  if (cudaGetDeviceCount(&visible) != cudaSuccess) (void)cudaGetLastError(), visible = 0;
  for (int a = 0; a < visible; ++a)
    for (int b = 0; b < visible; ++b) {
      if (a == b) continue;
      int access = 0, rank = 0, atomics = 0;
      HALO3D_CUDA_CHECK(cudaDeviceGetP2PAttribute(&access, cudaDevP2PAttrAccessSupported, a, b));
      HALO3D_CUDA_CHECK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, a, b));
      HALO3D_CUDA_CHECK(
          cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, a, b));
      links.push_back(
          {a, b, ipc::bus_id_of(a), ipc::bus_id_of(b), access != 0, atomics != 0, rank});
    }
#endif
  return links;
}

}  // namespace halo3d
