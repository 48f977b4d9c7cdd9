// What `halo3d probe` needs from this layer to measure the solver's own transports between
// two ranks, and to say what the GPUs between them allow. Only the probe uses it; the
// solve path never does.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "halo.hpp"

namespace halo3d {

// A plan of one face of exactly `points` values, rim included, between this rank and
// `peer`: `low` is the pair's low end (its face z+), the other end has the matching z-.
// Why: a transport moves the faces of a plan and nothing else, so timing it on a message
// of a given size needs a plan whose one face has that size. The box is one plane thick
// and its face (nx+2) x (ny+2) is the factor pair of `points` nearest a square; for a
// `points` with no factor >= 3 (1, 2, 4 = 8, 16, 32 bytes, or a prime) nx or ny is 0 or
// -1, a box thinner than its rim. That is safe: pack and unpack address only the face
// and its ghost layer (ops::face_point), which lie inside the padded box.
HaloPlan one_face_plan(std::size_t points, int peer, bool low);

// Whether the GPU with PCI bus id `mine` can access the one with bus id `theirs`
// (cudaDeviceCanAccessPeer): 1 yes, 0 no, -1 one of them is not visible to this process
// (or no CUDA in this build).
int gpu_can_access_peer(const std::string& mine, const std::string& theirs);

// The CUDA P2P attributes of one ordered pair of this process's visible GPUs.
struct P2PLink {
  int from = 0, to = 0;
  std::string from_bus, to_bus;
  bool access_supported = false, native_atomics = false;
  int performance_rank = 0;
};
// Every ordered pair of visible GPUs (none without CUDA); `visible` gets their count.
std::vector<P2PLink> local_p2p_links(int& visible);

}  // namespace halo3d
