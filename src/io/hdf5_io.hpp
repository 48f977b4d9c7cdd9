// Parallel HDF5: collective writes of distributed fields (each rank its hyperslab), the
// solution file with its XDMF sidecar, and checkpoints.
#pragma once
#include <hdf5.h>
#include <mpi.h>

#include <array>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "decomposition.hpp"
#include "mpi_env.hpp"

namespace halo3d {

class OutputSet;  // files.hpp

// The innermost message on HDF5's error stack (which it then clears); empty if none.
std::string hdf5_error_cause();
[[noreturn]] void throw_hdf5_error(const char* expr, const char* file, int line);

// Owns one HDF5 identifier and closes it with the matching H5*close.
class H5Id {
 public:
  using Closer = herr_t (*)(hid_t);
  H5Id() = default;
  H5Id(hid_t id, Closer c);
  H5Id(H5Id&& o) noexcept : id_(std::exchange(o.id_, -1)), close_(o.close_) {}
  H5Id& operator=(H5Id&& o) noexcept {
    std::swap(id_, o.id_);
    std::swap(close_, o.close_);
    return *this;
  }
  H5Id(const H5Id&) = delete;
  H5Id& operator=(const H5Id&) = delete;
  ~H5Id() {
    if (id_ >= 0) close_(id_);
  }
  hid_t get() const { return id_; }
  void close();  // closes now, reporting failure (a destructor cannot)

 private:
  hid_t id_ = -1;
  Closer close_ = nullptr;
};

// HDF5 prints nothing while one of these lives (errors it would print are reported by
// halo3d in one line).
class QuietHdf5 {
 public:
  QuietHdf5() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }
  QuietHdf5(const QuietHdf5&) = delete;
  QuietHdf5& operator=(const QuietHdf5&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// A file opened collectively on `comm` with the MPI-IO driver.
H5Id h5_create(const std::string& path, MPI_Comm comm);
H5Id h5_open_read(const std::string& path, MPI_Comm comm);
// Before h5_open_read of an input: check_input_file (files.hpp: exit 5 when it cannot be
// opened, 2 when it is not a regular file, e.g. a FIFO, never a hang), then rank 0 asks HDF5
// whether it is an HDF5 file; BadInput "`what`: `not_hdf5`" on every rank when it is not.
void check_input_h5(const std::string& what, const std::string& path, MPI_Comm comm,
                    const std::string& not_hdf5);
// Why /name of `file` cannot be read as a floating-point dataset of shape `dims` (a 0 in dims:
// any length on that axis), or "" when it can: missing, a soft or external link, a group, not
// floating-point, another rank or shape, or data in external files each give a reason that
// starts "dataset /name". Checked before any read, so a damaged file never reaches H5Dread.
std::string h5_dataset_problem(hid_t file, const std::string& name,
                               const std::vector<hsize_t>& dims);
// The first component of path `name` (e.g. "/a" of "/a/b") that is an external link, or "".
// h5_open_read's files never follow one; readers refuse them with this name.
std::string h5_external_link(hid_t file, const std::string& name);
// BadInput "`what`: ..." when dataset `dset` keeps its data in external files or is a virtual
// dataset (paths HDF5 would open by name, perhaps a FIFO): inputs must hold their data.
void refuse_external_storage(hid_t dset, const std::string& what);

// /name as float64 [NZ][NY][NX]; `local` is the rank's padded array (ghosts skipped).
// deflate 1-9: compressed in chunks of up to 64^3 points (parallel filtered writes), after
// checking (collectively) that the uncompressed size is free; 0: contiguous, uncompressed.
void h5_write_field(hid_t file, const std::string& name, const Decomposition& d,
                    const double* local, int deflate = 0);
// Whether this HDF5 library can write deflate-compressed datasets.
bool h5_deflate_available();
// Reading converts any floating-point dataset (float32 too) to double. ghost = 1 reads a
// ghost-inclusive [NZ+2][NY+2][NX+2] dataset: the rank's box with its ghost layer.
void h5_read_field(hid_t file, const std::string& name, const Decomposition& d, double* local,
                   int ghost = 0);
// A small 1D dataset every rank holds identically (rank 0 writes it).
void h5_write_vector(hid_t file, const std::string& name, const std::vector<double>& v,
                     MPI_Comm comm);
std::vector<double> h5_read_vector(hid_t file, const std::string& name);
bool h5_exists(hid_t file, const std::string& name);

// Attributes as halo3d's own readers expect them (checkpoints): fixed-length strings and
// 1-D numeric arrays, whatever their length.
void h5_attr(hid_t obj, const std::string& name, const std::string& value);
void h5_attr(hid_t obj, const std::string& name, const std::vector<long long>& value);
void h5_attr(hid_t obj, const std::string& name, const std::vector<double>& value);
void h5_attr_matrix(hid_t obj, const std::string& name, const std::vector<Int3>& rows);
// Attributes of the files users read (the solution file, its series): scalars in a scalar
// dataspace (h5py gives a number, not a 1-element array) and text as a variable-length
// UTF-8 string (h5py gives str, not bytes); text that is not valid UTF-8 (a path's raw
// bytes) is stored as a fixed-length byte string instead, unchanged.
void h5_attr_int(hid_t obj, const std::string& name, long long value);
void h5_attr_real(hid_t obj, const std::string& name, double value);
void h5_attr_text(hid_t obj, const std::string& name, const std::string& value);
std::string h5_attr_string(hid_t obj, const std::string& name);
std::vector<long long> h5_attr_ints(hid_t obj, const std::string& name);
std::vector<double> h5_attr_doubles(hid_t obj, const std::string& name);
bool h5_has_attr(hid_t obj, const std::string& name);

// Collective, crash-safe creation of the HDF5 file `path` (or, through a symbolic link, of
// the file it points to): everything is written to a temporary name unique to this write
// (files.hpp), beside the target, which rank 0 renames to the target only after every rank
// has written and closed it successfully. Not committed (an exception), or any failure: the
// temporary is removed and the previous file kept; commit() throws the same IoError, naming
// `path` and the cause, on every rank. The data are flushed to the disk before the rename
// and the directory after it (durable_rename); `durable` false skips both (bench --io
// --io-sync off, which compares page-cache writes).
class AtomicH5File {
 public:
  // With `set`, the file is one of a run's output set: commit() closes it and the set's
  // commit() renames it, with the others.
  AtomicH5File(const std::string& path, MPI_Comm comm, bool durable = true,
               OutputSet* set = nullptr);
  ~AtomicH5File();
  AtomicH5File(const AtomicH5File&) = delete;
  AtomicH5File& operator=(const AtomicH5File&) = delete;
  hid_t get() const { return file_.get(); }
  void commit();

 private:
  std::string path_, target_, tmp_;
  MPI_Comm comm_;
  bool durable_ = true;
  OutputSet* set_ = nullptr;
  H5Id file_;
  bool done_ = false;
};

// The same for a file written by `body` in one go.
void write_h5_atomically(const std::string& path, MPI_Comm comm,
                         const std::function<void(hid_t)>& body, bool durable = true);

// The XDMF sidecar (xdmf_path(h5_path)) that lets ParaView/VisIt open /u of `h5_path`
// directly; collective, written atomically by rank 0. origin: the first point's
// coordinates (Problem::origin); h: the spacing.
// With `set`, staged in it (renamed by its commit()).
void write_xdmf(const std::string& h5_path, const Int3& grid, const std::array<double, 3>& origin,
                const std::array<double, 3>& h, MPI_Comm comm, OutputSet* set = nullptr);

// One time step of a series: a [NZ][NY][NX] dataset of the HDF5 file and its time.
struct XdmfStep {
  std::string dataset;  // e.g. "series/000010" (no leading slash)
  double t = 0;
};
// The sidecar as a temporal collection (CollectionType="Temporal"): one uniform grid per
// step, each with its <Time> and its dataset as attribute "u", so ParaView and VisIt play
// the series; collective, written atomically by rank 0.
void write_xdmf_series(const std::string& h5_path, const Int3& grid,
                       const std::array<double, 3>& origin, const std::array<double, 3>& h,
                       const std::vector<XdmfStep>& steps, MPI_Comm comm, OutputSet* set = nullptr);

}  // namespace halo3d

// HDF5 calls return a negative value on failure.
#define HALO3D_H5_CHECK(expr)                                                 \
  ([&]() {                                                                    \
    auto halo3d_v_ = (expr);                                                  \
    if (halo3d_v_ < 0) ::halo3d::throw_hdf5_error(#expr, __FILE__, __LINE__); \
    return halo3d_v_;                                                         \
  }())
