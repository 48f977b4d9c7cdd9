// Copies between host vectors and backend memory (io, the solvers, the problem and the
// tests move whole fields with these).
#pragma once
#include <vector>

#include "kernels.hpp"

namespace halo3d {

// Copies n elements of backend memory to `host` (resized), after all work queued before;
// and a host array into backend memory at dst. Both wait for their copy.
template <class T>
void download_to(Kernels& k, const T* src, std::size_t n, std::vector<T>& host) {
  host.resize(n);
  k.synchronize();
  k.copy(host.data(), src, n, Lane::interior);
  k.synchronize(Lane::interior);
}
template <class T>
void upload_to(Kernels& k, const std::vector<T>& host, T* dst) {
  k.copy(dst, host.data(), host.size(), Lane::interior);
  k.synchronize(Lane::interior);
}
// The same into a new backend buffer, and out of a whole one.
template <class T>
BasicBuffer<T> upload(Kernels& k, const std::vector<T>& host) {
  BasicBuffer<T> b(k, host.size());
  upload_to(k, host, b.data());
  return b;
}
template <class T>
std::vector<T> download(Kernels& k, const BasicBuffer<T>& b) {
  std::vector<T> host;
  download_to(k, b.data(), b.size(), host);
  return host;
}

// A box's interior without ghosts (x fastest: an embedding code's layout, include/halo3d/)
// into a padded host array of layout l (ghosts 0), and back out of one. `box` may be in host
// or backend memory: it is copied through host memory once, with k, either way.
std::vector<double> padded_from_box(Kernels& k, const Layout& l, const double* box);
void box_from_padded(Kernels& k, const Layout& l, const std::vector<double>& padded, double* box);

}  // namespace halo3d
