// The input machinery of the fields a run reads (see field_inputs.hpp).
#include "field_inputs.hpp"

#include <cmath>
#include <cstdio>
#include <functional>

#include "checks.hpp"
#include "errors.hpp"
#include "files.hpp"
#include "hdf5_io.hpp"
#include "point_ops.hpp"

namespace halo3d {

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

double coord(const Decomposition& d, int a, int g, double L) {
  const int n = d.grid[a];
  if (d.periodic[a]) return L * double((g + n) % n) / double(n);  // a ghost: where it wraps to
  const bool lo = d.neumann_face(a, 0), hi = d.neumann_face(a, 1);
  if (!lo && !hi) return g == n ? L : L * double(g + 1) / double(n + 1);
  if (g < 0 && lo) g = 0;  // beyond a Neumann face: the boundary node, on the face
  if (g >= n && hi) g = n - 1;
  const int m = ops::axis_intervals(n, false, lo, hi), at = g + ops::axis_first(false, lo);
  return at == m ? L : L * double(at) / double(m);
}

void agree(const std::string& why, MPI_Comm comm) {
  const std::string first = first_error(why, comm);
  if (!first.empty()) throw BadInput(first);
}

namespace {

std::string shape_text(const hsize_t* dims, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += "[" + std::to_string(dims[i]) + "]";
  return s.empty() ? "a scalar" : s;
}

}  // namespace

H5Id open_file_field(const std::string& what, const FieldSpec& f, const Decomposition& d, int ghost,
                     MPI_Comm comm) {
  check_input_h5(what, f.file, comm, "not an HDF5 file");  // rank 0 looks, all agree
  QuietHdf5 quiet;
  H5Id file = h5_open_read(f.file, comm);
  const std::string link = h5_external_link(file.get(), f.dataset);
  if (!link.empty())
    throw BadInput(what + ": " + link +
                   " is an external link into another file (not supported: inputs must hold "
                   "their data in the named file)");
  // Each group on the way must exist, and the object must be a dataset.
  for (std::size_t at = f.dataset.find('/', 1);; at = f.dataset.find('/', at + 1)) {
    const std::string prefix = f.dataset.substr(0, at);
    if (H5Lexists(file.get(), prefix.c_str(), H5P_DEFAULT) <= 0)
      throw BadInput(what + ": no " + prefix + " in the file");
    if (at == std::string::npos) break;
  }
#if H5_VERSION_GE(1, 12, 0)
  H5O_info2_t info;
  const herr_t got =
      H5Oget_info_by_name3(file.get(), f.dataset.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT);
#else
  H5O_info_t info;
  const herr_t got = H5Oget_info_by_name(file.get(), f.dataset.c_str(), &info, H5P_DEFAULT);
#endif
  if (got < 0 || info.type != H5O_TYPE_DATASET) throw BadInput(what + ": not a dataset");
  H5Id dset(H5Dopen2(file.get(), f.dataset.c_str(), H5P_DEFAULT), H5Dclose);
  refuse_external_storage(dset.get(), what);
  H5Id type(H5Dget_type(dset.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_FLOAT)
    throw BadInput(what + ": holds no floating-point numbers (float64 or float32 expected)");
  H5Id space(H5Dget_space(dset.get()), H5Sclose);
  hsize_t dims[8] = {};
  const int nd = H5Sget_simple_extent_ndims(space.get());
  if (nd < 0 || nd > 8) throw BadInput(what + ": cannot read the dataset's shape");
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  const hsize_t want[3] = {hsize_t(d.grid[2] + 2 * ghost), hsize_t(d.grid[1] + 2 * ghost),
                           hsize_t(d.grid[0] + 2 * ghost)};
  if (nd != 3 || dims[0] != want[0] || dims[1] != want[1] || dims[2] != want[2])
    throw BadInput(what + ": shape " + shape_text(dims, nd) + " does not match " +
                   shape_text(want, 3) + (ghost ? " ([NZ+2][NY+2][NX+2], ghosts included)" : "") +
                   " of --grid " + to_string(d.grid));
  return file;
}

void read_file_field(const std::string& option, const FieldSpec& f, const Decomposition& d,
                     int ghost, MPI_Comm comm, std::vector<double>& padded) {
  const std::string what = option + " " + printable("file:" + f.file + ":" + f.dataset, 160);
  H5Id file = open_file_field(what, f, d, ghost, comm);
  QuietHdf5 quiet;
  padded.assign(d.layout().padded_size(), 0.0);
  h5_read_field(file.get(), f.dataset, d, padded.data(), ghost);
}

void for_boundary_ghosts(const Decomposition& d, const std::function<void(int, int, int)>& fn) {
  const Layout l = d.layout();
  const int n[3] = {l.nx, l.ny, l.nz};
  for (int a = 0; a < 3; ++a)
    for (int side = 0; side < 2; ++side) {
      if (d.periodic[a]) continue;  // no boundary there: nothing to lift
      const bool on = side == 0 ? d.offset[a] == 0 : d.offset[a] + d.count[a] == d.grid[a];
      if (!on) continue;
      const int b = (a + 1) % 3, c = (a + 2) % 3;
      for (int q = 0; q < n[c]; ++q)
        for (int p = 0; p < n[b]; ++p) {
          int idx[3];
          idx[a] = side == 0 ? -1 : n[a];
          idx[b] = p;
          idx[c] = q;
          fn(idx[0], idx[1], idx[2]);
        }
    }
}

}  // namespace halo3d
