// --coefficient for the peer drivers: k of -div(k grad u) read as halo3d reads it, and the
// face weights halo3d makes of it (src/solver/coefficients.hpp, kernels/point_ops.hpp), the
// same expressions in the same order so that the matrices agree bit for bit.
#pragma once

#include <hdf5.h>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common.hpp"

namespace peers {

// One line on stderr from rank 0 and exit 2 on every rank (all ranks reach it together).
[[noreturn]] inline void refuse(const std::string& why) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::fprintf(stderr, "peer: --coefficient %s\n", why.c_str());
  MPI_Finalize();
  std::exit(2);
}

// k over this rank's z-slab and a one-point ring around it: [count+2][NY+2][NX+2], plane 0
// is global plane offset-1 (the boundary layer below the domain, or the rank below's). spec:
// "file:PATH.h5:/DATASET", the dataset [NZ+2][NY+2][NX+2] including the boundary layer, or
// a constant. Every value must be finite and > 0.
inline std::vector<double> read_kappa(const std::string& spec, const int grid[3], Span zs) {
  const int nx = grid[0] + 2, ny = grid[1] + 2, planes = zs.count + 2;
  std::vector<double> k(std::size_t(planes) * ny * nx, 1.0);
  char* end = nullptr;
  const double value = std::strtod(spec.c_str(), &end);
  if (!spec.empty() && *end == '\0') {
    k.assign(k.size(), value);
  } else {
    const std::size_t cut = spec.rfind(":/");
    if (spec.rfind("file:", 0) != 0 || cut == std::string::npos || cut < 5)
      refuse(spec + ": expected VALUE or file:PATH.h5:/DATASET");
    const std::string path = spec.substr(5, cut - 5), dataset = spec.substr(cut + 1);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // our own one-line errors
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) refuse(spec + ": cannot open " + path);
    const hid_t d = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
    if (d < 0) refuse(spec + ": no dataset " + dataset);
    const hid_t space = H5Dget_space(d);
    hsize_t dims[3] = {0, 0, 0};
    if (H5Sget_simple_extent_ndims(space) != 3 ||
        H5Sget_simple_extent_dims(space, dims, nullptr) != 3 || dims[0] != hsize_t(grid[2] + 2) ||
        dims[1] != hsize_t(ny) || dims[2] != hsize_t(nx))
      refuse(spec + ": the dataset must be [NZ+2][NY+2][NX+2] = [" + std::to_string(grid[2] + 2) +
             "][" + std::to_string(ny) + "][" + std::to_string(nx) + "]");
    const hsize_t start[3] = {hsize_t(zs.offset), 0, 0},
                  count[3] = {hsize_t(planes), hsize_t(ny), hsize_t(nx)};
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr);
    const hid_t mem = H5Screate_simple(3, count, nullptr);
    const herr_t rc = H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, k.data());
    H5Sclose(mem);
    H5Sclose(space);
    H5Dclose(d);
    H5Fclose(f);
    if (rc < 0) refuse(spec + ": cannot read " + dataset);
  }
  int bad = 0;
  for (double v : k) bad |= !(std::isfinite(v) && v > 0);
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (bad) refuse(spec + ": k must be a finite number > 0 at every point");
  return k;
}

// halo3d's face weight (coefficients.hpp face_weight): the harmonic mean over 1/h^2.
inline double face_weight(double k_low, double k_high, double inv_h2) {
  return 2.0 * k_low * (k_high / (k_low + k_high)) * inv_h2;
}

// The 7 matrix entries of every point of the slab, in the drivers' stencil order (centre,
// -x, +x, -y, +y, -z, +z): the off-diagonals -w of each face, the diagonal the six weights
// summed in point_diag's order. Faces to the boundary keep their weight in the diagonal;
// the caller drops the couplings out of the domain.
inline std::vector<double> variable_entries(const std::vector<double>& k, const int grid[3],
                                            Span zs, const double inv_h2[3]) {
  const long sx = 1, sy = grid[0] + 2, sz = long(sy) * (grid[1] + 2);
  const long step[3] = {sx, sy, sz};
  std::vector<double> e(std::size_t(grid[0]) * grid[1] * zs.count * 7);
  std::size_t p = 0;
  for (int z = 0; z < zs.count; ++z)
    for (int y = 0; y < grid[1]; ++y)
      for (int x = 0; x < grid[0]; ++x, p += 7) {
        const long c = (x + 1) + sy * (y + 1) + sz * (z + 1);
        double w[3][2];  // axis, low/high face
        for (int a = 0; a < 3; ++a) {
          w[a][0] = face_weight(k[c - step[a]], k[c], inv_h2[a]);
          w[a][1] = face_weight(k[c], k[c + step[a]], inv_h2[a]);
        }
        e[p] = ((w[0][0] + w[0][1]) + (w[1][0] + w[1][1])) + (w[2][0] + w[2][1]);
        for (int a = 0; a < 3; ++a) e[p + 1 + 2 * a] = -w[a][0], e[p + 2 + 2 * a] = -w[a][1];
      }
  return e;
}

}  // namespace peers
