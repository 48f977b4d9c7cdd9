#include "host_copy.hpp"

#include <algorithm>

namespace halo3d {

std::vector<double> padded_from_box(Kernels& k, const Layout& l, const double* box) {
  std::vector<double> packed(l.interior_size()), padded(l.padded_size(), 0.0);
  k.copy(packed.data(), box, packed.size(), Lane::interior);
  k.synchronize(Lane::interior);
  const double* row = packed.data();
  for (int kz = 0; kz < l.nz; ++kz)
    for (int j = 0; j < l.ny; ++j, row += l.nx) std::copy(row, row + l.nx, &padded[l.at(0, j, kz)]);
  return padded;
}

void box_from_padded(Kernels& k, const Layout& l, const std::vector<double>& padded, double* box) {
  std::vector<double> packed(l.interior_size());
  double* row = packed.data();
  for (int kz = 0; kz < l.nz; ++kz)
    for (int j = 0; j < l.ny; ++j, row += l.nx) {
      const double* from = &padded[l.at(0, j, kz)];
      std::copy(from, from + l.nx, row);
    }
  k.copy(box, packed.data(), packed.size(), Lane::interior);
  k.synchronize(Lane::interior);
}

}  // namespace halo3d
