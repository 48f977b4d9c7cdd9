// HDF5 attributes: halo3d's own (checkpoints: fixed-length strings, 1-D arrays) and those
// of the files users read (scalars, UTF-8 text), and their readers.
#include <cstring>

#include "checks.hpp"
#include "errors.hpp"
#include "hdf5_io.hpp"

namespace halo3d {

void h5_attr(hid_t obj, const std::string& name, const std::string& value) {
  H5Id type(H5Tcopy(H5T_C_S1), H5Tclose);
  HALO3D_H5_CHECK(H5Tset_size(type.get(), value.empty() ? 1 : value.size()));
  HALO3D_H5_CHECK(H5Tset_strpad(type.get(), H5T_STR_NULLPAD));
  H5Id space(H5Screate(H5S_SCALAR), H5Sclose);
  H5Id a(H5Acreate2(obj, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
         H5Aclose);
  HALO3D_H5_CHECK(H5Awrite(a.get(), type.get(), value.empty() ? "" : value.data()));
}

namespace {
// A numeric attribute of `rank` dimensions `dims`: stored as `file_type` (fixed, so files
// read the same everywhere), written from memory of `mem_type`.
// rank 0: a scalar.
void h5_numeric_attr(hid_t obj, const std::string& name, int rank, const hsize_t* dims,
                     hid_t file_type, hid_t mem_type, const void* data) {
  H5Id space(rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(rank, dims, nullptr), H5Sclose);
  H5Id a(H5Acreate2(obj, name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  HALO3D_H5_CHECK(H5Awrite(a.get(), mem_type, data));
}
}  // namespace

void h5_attr(hid_t obj, const std::string& name, const std::vector<long long>& value) {
  const hsize_t n = value.size();
  h5_numeric_attr(obj, name, 1, &n, H5T_STD_I64LE, H5T_NATIVE_LLONG, value.data());
}

void h5_attr(hid_t obj, const std::string& name, const std::vector<double>& value) {
  const hsize_t n = value.size();
  h5_numeric_attr(obj, name, 1, &n, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, value.data());
}

void h5_attr_matrix(hid_t obj, const std::string& name, const std::vector<Int3>& rows) {
  const hsize_t dims[2] = {rows.size(), 3};
  std::vector<long long> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  h5_numeric_attr(obj, name, 2, dims, H5T_STD_I64LE, H5T_NATIVE_LLONG, flat.data());
}

void h5_attr_int(hid_t obj, const std::string& name, long long value) {
  h5_numeric_attr(obj, name, 0, nullptr, H5T_STD_I64LE, H5T_NATIVE_LLONG, &value);
}

void h5_attr_real(hid_t obj, const std::string& name, double value) {
  h5_numeric_attr(obj, name, 0, nullptr, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

void h5_attr_text(hid_t obj, const std::string& name, const std::string& value) {
  if (!valid_utf8(value) || value.find('\0') != std::string::npos) return h5_attr(obj, name, value);
  H5Id type(H5Tcopy(H5T_C_S1), H5Tclose);
  HALO3D_H5_CHECK(H5Tset_size(type.get(), H5T_VARIABLE));
  HALO3D_H5_CHECK(H5Tset_cset(type.get(), H5T_CSET_UTF8));
  H5Id space(H5Screate(H5S_SCALAR), H5Sclose);
  H5Id a(H5Acreate2(obj, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
         H5Aclose);
  const char* p = value.c_str();
  HALO3D_H5_CHECK(H5Awrite(a.get(), type.get(), &p));
}

bool h5_has_attr(hid_t obj, const std::string& name) { return H5Aexists(obj, name.c_str()) > 0; }

std::string h5_attr_string(hid_t obj, const std::string& name) {
  if (!h5_has_attr(obj, name)) throw IoError("attribute " + name + " is missing");
  H5Id a(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose);
  H5Id type(H5Aget_type(a.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING)
    throw IoError("attribute " + name + " is not a string");
  if (H5Tis_variable_str(type.get()) > 0) {  // h5_attr_text's (the solution file's)
    H5Id space(H5Aget_space(a.get()), H5Sclose);
    if (H5Sget_simple_extent_npoints(space.get()) != 1)
      throw IoError("attribute " + name + " is not a single string");
    char* p = nullptr;
    HALO3D_H5_CHECK(H5Aread(a.get(), type.get(), &p));
    std::string s = p ? p : "";
    H5free_memory(p);
    return s;
  }
  std::string s(H5Tget_size(type.get()), '\0');
  HALO3D_H5_CHECK(H5Aread(a.get(), type.get(), s.data()));
  s.resize(std::strlen(s.c_str()));
  return s;
}

namespace {
template <class T>
std::vector<T> read_numeric_attr(hid_t obj, const std::string& name, hid_t mem_type) {
  if (!h5_has_attr(obj, name)) throw IoError("attribute " + name + " is missing");
  H5Id a(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose);
  H5Id space(H5Aget_space(a.get()), H5Sclose);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  std::vector<T> v(n < 0 ? 0 : std::size_t(n));
  if (!v.empty()) HALO3D_H5_CHECK(H5Aread(a.get(), mem_type, v.data()));
  return v;
}
}  // namespace

std::vector<long long> h5_attr_ints(hid_t obj, const std::string& name) {
  return read_numeric_attr<long long>(obj, name, H5T_NATIVE_LLONG);
}
std::vector<double> h5_attr_doubles(hid_t obj, const std::string& name) {
  return read_numeric_attr<double>(obj, name, H5T_NATIVE_DOUBLE);
}

}  // namespace halo3d
