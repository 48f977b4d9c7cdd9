#include "hdf5_io.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "checks.hpp"
#include "errors.hpp"
#include "files.hpp"

namespace halo3d {

namespace {

// Whether every rank of comm runs on one host (one shared-memory node): the same answer on
// every rank. Collective.
bool one_host(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  HALO3D_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int on_node = 0, all = 0;
  MPI_Comm_size(node, &on_node);
  MPI_Comm_size(comm, &all);
  MPI_Comm_free(&node);
  return on_node == all;
}

H5Id fapl(MPI_Comm comm) {
  H5Id p(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  // On one host, ROMIO's collective buffering only adds a shuffle between ranks that share
  // one page cache: each rank writing its own rows (ROMIO's data sieving, under its file
  // locks) measured 1.5-3x faster for x-split process grids and no slower for z-splits
  // (docs/PERFORMANCE.md, "Output I/O"). Across hosts collective buffering is what parallel
  // file systems want, so ROMIO's default stays there. ompio ignores the hint.
  MPI_Info info = MPI_INFO_NULL;
  HALO3D_MPI_CHECK(MPI_Info_create(&info));
  if (one_host(comm)) MPI_Info_set(info, "romio_cb_write", "disable");
  const herr_t set = H5Pset_fapl_mpio(p.get(), comm, info);  // keeps its own copy
  MPI_Info_free(&info);
  HALO3D_H5_CHECK(set);
  // HDF5 1.10's format (version 2 object headers): all metadata carries checksums HDF5 checks
  // as it reads, so a damaged file is an error where the older format's unchecked headers
  // crashed the reader (tests/fuzz_files.py). Readers need HDF5 1.10 or later.
  HALO3D_H5_CHECK(H5Pset_libver_bounds(p.get(), H5F_LIBVER_V110, H5F_LIBVER_LATEST));
  // Attribute and metadata writes are collective too, so rank 0 need not be special.
  HALO3D_H5_CHECK(H5Pset_all_coll_metadata_ops(p.get(), true));
  HALO3D_H5_CHECK(H5Pset_coll_metadata_write(p.get(), true));
  return p;
}

H5Id collective_xfer() {
  H5Id p(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
  HALO3D_H5_CHECK(H5Pset_dxpl_mpio(p.get(), H5FD_MPIO_COLLECTIVE));
  return p;
}

// The rank's box as a hyperslab of [NZ][NY][NX], and a memory space picking the
// interior out of the padded array. ghost = 1: the box with its ghost layer, of a
// ghost-inclusive [NZ+2][NY+2][NX+2] dataset, into the whole padded box.
void select_box(const Decomposition& d, H5Id& file_space, H5Id& mem_space, hid_t dset,
                int ghost = 0) {
  file_space = H5Id(H5Dget_space(dset), H5Sclose);
  hsize_t gdims[3];
  HALO3D_H5_CHECK(H5Sget_simple_extent_dims(file_space.get(), gdims, nullptr));
  const hsize_t g2 = hsize_t(2 * ghost);
  if (gdims[0] != hsize_t(d.grid[2]) + g2 || gdims[1] != hsize_t(d.grid[1]) + g2 ||
      gdims[2] != hsize_t(d.grid[0]) + g2)
    throw IoError("dataset shape [" + std::to_string(gdims[0]) + "][" + std::to_string(gdims[1]) +
                  "][" + std::to_string(gdims[2]) + "] does not match grid " + to_string(d.grid));
  const hsize_t start[3] = {hsize_t(d.offset[2]), hsize_t(d.offset[1]), hsize_t(d.offset[0])};
  const hsize_t count[3] = {hsize_t(d.count[2]) + g2, hsize_t(d.count[1]) + g2,
                            hsize_t(d.count[0]) + g2};
  HALO3D_H5_CHECK(
      H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr));
  const Layout l = d.layout();
  const hsize_t pdims[3] = {hsize_t(d.count[2]) + 2, hsize_t(d.count[1]) + 2, hsize_t(l.sy())};
  mem_space = H5Id(H5Screate_simple(3, pdims, nullptr), H5Sclose);
  const hsize_t first[3] = {hsize_t(1 - ghost), hsize_t(1 - ghost),
                            hsize_t(Layout::kRowOffset - ghost)};
  HALO3D_H5_CHECK(
      H5Sselect_hyperslab(mem_space.get(), H5S_SELECT_SET, first, nullptr, count, nullptr));
}

// The communicator a file was opened on (HDF5 hands out a duplicate, freed here): private
// to this file's collective calls, so messages sent on it meet no others.
class FileComm {
 public:
  explicit FileComm(hid_t file) {
    H5Id fa(H5Fget_access_plist(file), H5Pclose);
    HALO3D_H5_CHECK(H5Pget_fapl_mpio(fa.get(), &comm_, &info_));
  }
  ~FileComm() {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    if (info_ != MPI_INFO_NULL) MPI_Info_free(&info_);
  }
  FileComm(const FileComm&) = delete;
  FileComm& operator=(const FileComm&) = delete;
  MPI_Comm get() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Info info_ = MPI_INFO_NULL;
};

// The name of the file being written: the temporary's target, not the temporary.
std::string target_name(hid_t file) {
  std::string name(std::size_t(std::max<ssize_t>(H5Fget_name(file, nullptr, 0), 0)), '\0');
  if (!name.empty()) H5Fget_name(file, name.data(), name.size() + 1);
  const auto cut = name.rfind(".partial.");
  if (cut != std::string::npos) name.resize(cut);
  return name;
}

// Every rank learns whether a collective write worked everywhere: a write that failed on
// some ranks only (a full disk) must not leave the others waiting in the next collective
// call. Throws the same IoError on every rank.
void agree_write(hid_t file, herr_t status, const std::string& what) {
  const int err = errno;  // what the failed system call left (MPI-IO does not report it)
  // Before any other HDF5 call, which would clear HDF5's error stack.
  std::string why = status < 0 ? hdf5_error_cause() : std::string();
  if (status < 0) {
    if (err == ENOSPC || err == EDQUOT || err == EFBIG || err == EIO || err == EROFS)
      why += std::string(why.empty() ? "" : ", ") + std::strerror(err);
    why = "writing " + what + " failed" + (why.empty() ? "" : ": " + why);
  }
  why = first_error(why, FileComm(file).get());
  if (!why.empty())
    throw IoError("cannot write " + target_name(file) + ": " + why +
                  " (the previous file, if any, is kept)");
}

// Room HDF5's metadata may take past the data (attributes, object headers, B-trees: about
// 6 KiB in a solution file), reserved with the data.
constexpr off_t kMetadataRoom = 16 << 10;

// Rank 0 allocates the disk blocks the next `bytes` of `file` (and its metadata) will take,
// without changing its size (FALLOC_FL_KEEP_SIZE): a disk too full for them fails here, on
// rank 0, agreed, instead of inside a collective write, where a rank that fails under
// ROMIO's data-sieving lock never releases it and the others wait forever. Empty, or why
// not; a file system without fallocate (EOPNOTSUPP) is left to the statvfs check.
std::string reserve_blocks(hid_t file, double bytes) {
  std::string path(std::size_t(std::max<ssize_t>(H5Fget_name(file, nullptr, 0), 0)), '\0');
  if (!path.empty()) H5Fget_name(file, path.data(), path.size() + 1);
  hsize_t size = 0;
  if (path.empty() || H5Fget_filesize(file, &size) < 0) return std::string();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return std::string();
  const off_t len = off_t(size) + off_t(bytes) + kMetadataRoom;
  int rc;
  while ((rc = ::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, len)) != 0 && errno == EINTR) {
  }
  const int err = errno;
  ::close(fd);
  if (rc == 0 || (err != ENOSPC && err != EDQUOT && err != EFBIG)) return std::string();
  char buf[200];
  std::snprintf(buf, sizeof buf, ": %.3g MB (the data and its metadata) cannot be allocated: %s",
                double(len) / 1e6, std::strerror(err));
  return "cannot write " + target_name(file) + buf + " (the previous file, if any, is kept)";
}

// Collective: throws the same IoError on every rank when the file system holding `file`
// has less than `bytes` free, or cannot allocate them.
void check_room(hid_t file, double bytes, bool root) {
  std::string why;
  if (root) {
    const std::string name = target_name(file);
    why = reserve_blocks(file, bytes);
    struct statvfs v;
    if (why.empty() && ::statvfs(parent_dir(name).c_str(), &v) == 0) {
      const double free_bytes = double(v.f_bavail) * double(v.f_frsize);
      if (free_bytes < bytes) {
        char buf[160];
        std::snprintf(buf, sizeof buf, ": %.3g MB free, up to %.3g MB needed", free_bytes / 1e6,
                      bytes / 1e6);
        why = "cannot write " + name + buf + " (the previous file, if any, is kept)";
      }
    }
  }
  why = bcast_string(why, FileComm(file).get());
  // Each rank's own file-size limit (ulimit -f): a write past it fails on that rank alone,
  // which hangs the collective write as a full disk does. Checked on every rank, agreed.
  struct rlimit lim {};
  hsize_t size = 0;
  if (why.empty() && ::getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY &&
      H5Fget_filesize(file, &size) >= 0 &&
      double(lim.rlim_cur) < double(size) + bytes + (1 << 20)) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  ": the file-size limit of rank %d (ulimit -f) is %.3g MB, up to %.3g MB needed",
                  comm_rank(FileComm(file).get()), double(lim.rlim_cur) / 1e6,
                  (double(size) + bytes + (1 << 20)) / 1e6);
    why = "cannot write " + target_name(file) + buf + " (the previous file, if any, is kept)";
  }
  why = first_error(why, FileComm(file).get());
  if (!why.empty()) throw IoError(why);
}

}  // namespace

H5Id h5_create(const std::string& path, MPI_Comm comm) {
  auto p = fapl(comm);
  const hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, p.get());
  if (f < 0) throw IoError("cannot create HDF5 file " + path);
  return H5Id(f, H5Fclose);
}

void check_input_h5(const std::string& what, const std::string& path, MPI_Comm comm,
                    const std::string& not_hdf5) {
  check_input_file(what, path, comm);
  int hdf5 = 0;
  if (comm_rank(comm) == 0) {
    QuietHdf5 quiet;
    hdf5 = H5Fis_hdf5(path.c_str()) > 0 ? 1 : 0;
  }
  HALO3D_MPI_CHECK(MPI_Bcast(&hdf5, 1, MPI_INT, 0, comm));
  if (!hdf5) throw BadInput(what + ": " + not_hdf5);
}

namespace {

std::string shape_text(const std::vector<hsize_t>& dims) {
  if (dims.empty()) return "[] (a scalar or empty dataspace)";
  std::string s;
  for (const hsize_t n : dims) s += "[" + (n ? std::to_string(n) : std::string("any")) + "]";
  return s;
}

// Whether dataset `dset`'s data live in other files: external storage or a virtual dataset
// (HDF5 would open the files they name by path, perhaps a FIFO).
bool data_elsewhere(hid_t dset) {
  H5Id dcpl(H5Dget_create_plist(dset), H5Pclose);
  return dcpl.get() < 0 || H5Pget_external_count(dcpl.get()) != 0 ||
         H5Pget_layout(dcpl.get()) == H5D_VIRTUAL;
}

// The kind of link `name` is (hard, soft, external) and of the object it names.
bool hard_link(hid_t file, const std::string& name) {
#if H5_VERSION_GE(1, 12, 0)
  H5L_info2_t li;
  if (H5Lget_info2(file, name.c_str(), &li, H5P_DEFAULT) < 0) return false;
#else
  H5L_info_t li;
  if (H5Lget_info(file, name.c_str(), &li, H5P_DEFAULT) < 0) return false;
#endif
  return li.type == H5L_TYPE_HARD;
}
bool is_dataset(hid_t file, const std::string& name) {
#if H5_VERSION_GE(1, 12, 0)
  H5O_info2_t info;
  const herr_t got = H5Oget_info_by_name3(file, name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT);
#else
  H5O_info_t info;
  const herr_t got = H5Oget_info_by_name(file, name.c_str(), &info, H5P_DEFAULT);
#endif
  return got >= 0 && info.type == H5O_TYPE_DATASET;
}

}  // namespace

std::string h5_external_link(hid_t file, const std::string& name) {
  QuietHdf5 quiet;
  for (std::size_t at = name.find('/', 1);; at = name.find('/', at + 1)) {
    const std::string prefix = name.substr(0, at);
#if H5_VERSION_GE(1, 12, 0)
    H5L_info2_t li;
    const herr_t got = H5Lget_info2(file, prefix.c_str(), &li, H5P_DEFAULT);
#else
    H5L_info_t li;
    const herr_t got = H5Lget_info(file, prefix.c_str(), &li, H5P_DEFAULT);
#endif
    if (got >= 0 && li.type == H5L_TYPE_EXTERNAL) return prefix;
    if (got < 0 || at == std::string::npos) return std::string();
  }
}

std::string h5_dataset_problem(hid_t file, const std::string& name,
                               const std::vector<hsize_t>& dims) {
  QuietHdf5 quiet;
  const std::string what = "dataset /" + name;
  const std::string link = h5_external_link(file, name);
  if (!link.empty()) return what + ": " + link + " is an external link into another file";
  if (H5Lexists(file, name.c_str(), H5P_DEFAULT) <= 0) return what + " is missing";
  if (!hard_link(file, name)) return what + " is a soft or external link, not a dataset";
  if (!is_dataset(file, name)) return what + " is not a dataset (a group?)";
  H5Id dset(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (dset.get() < 0) return what + " cannot be opened";
  H5Id type(H5Dget_type(dset.get()), H5Tclose);
  if (type.get() < 0 || H5Tget_class(type.get()) != H5T_FLOAT)
    return what + " does not hold floating-point numbers";
  H5Id space(H5Dget_space(dset.get()), H5Sclose);
  const int nd = space.get() < 0 ? -1 : H5Sget_simple_extent_ndims(space.get());
  if (nd < 0) return what + " has no readable shape";
  std::vector<hsize_t> got(std::size_t(nd), 0);
  if (nd > 0 && H5Sget_simple_extent_dims(space.get(), got.data(), nullptr) < 0)
    return what + " has no readable shape";
  bool same = got.size() == dims.size();
  for (std::size_t i = 0; same && i < dims.size(); ++i) same = dims[i] == 0 || dims[i] == got[i];
  if (!same) return what + " has shape " + shape_text(got) + ", expected " + shape_text(dims);
  if (data_elsewhere(dset.get())) return what + " keeps its data in external files";
  return std::string();
}

void refuse_external_storage(hid_t dset, const std::string& what) {
  if (data_elsewhere(dset))
    throw BadInput(what +
                   ": the dataset keeps its data in external files (not supported: "
                   "copy it into the HDF5 file)");
}

H5Id h5_open_read(const std::string& path, MPI_Comm comm) {
  // External links are never followed: HDF5 would open the file they name, which may be a
  // FIFO (the reading rank hangs in open while the others wait) or one of this run's outputs
  // (which the same-file check never sees). Without the class, traversing one fails; the
  // link itself stays visible, so readers can name it in their error (h5_external_link).
  if (H5Lis_registered(H5L_TYPE_EXTERNAL) > 0) H5Lunregister(H5L_TYPE_EXTERNAL);
  auto p = fapl(comm);
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, p.get());
  if (f < 0) throw IoError("cannot open HDF5 file " + path + " for reading");
  return H5Id(f, H5Fclose);
}

bool h5_deflate_available() {
  unsigned int info = 0;
  return H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0 &&
         H5Zget_filter_info(H5Z_FILTER_DEFLATE, &info) >= 0 &&
         (info & H5Z_FILTER_CONFIG_ENCODE_ENABLED) != 0;
}

void h5_write_field(hid_t file, const std::string& name, const Decomposition& d,
                    const double* local, int deflate) {
  const hsize_t gdims[3] = {hsize_t(d.grid[2]), hsize_t(d.grid[1]), hsize_t(d.grid[0])};
  H5Id space(H5Screate_simple(3, gdims, nullptr), H5Sclose);
  // A collective write that fails on some ranks only (a full disk) can hang HDF5 1.10.8:
  // its chunked I/O, and its contiguous I/O through ROMIO (one rank leaves H5Dwrite early,
  // the others wait in MPI_File_set_view; measured: mpirun never returns). So make sure there
  // is room for the data first (and, with --compress, for chunk indexes); agree_write still
  // catches what a disk filling meanwhile does to ompio, and HDF5's few KiB of metadata are
  // written at close, where commit() agrees on a failure.
  check_room(file, 8.0 * double(d.global_points()) + (deflate > 0 ? 1 << 20 : 0), d.rank == 0);
  H5Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (deflate > 0) {
    // Filters need chunks. Up to 64^3 points (2 MiB) each, fixed by the grid alone, so the
    // file does not depend on the process grid; HDF5 gives each chunk one writing rank.
    hsize_t chunk[3];
    for (int a = 0; a < 3; ++a) chunk[a] = std::min<hsize_t>(gdims[a], 64);
    HALO3D_H5_CHECK(H5Pset_chunk(dcpl.get(), 3, chunk));
    HALO3D_H5_CHECK(H5Pset_deflate(dcpl.get(), unsigned(deflate)));
  }
  H5Id dset(H5Dcreate2(file, name.c_str(), H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, dcpl.get(),
                       H5P_DEFAULT),
            H5Dclose);
  H5Id fs, ms;
  select_box(d, fs, ms, dset.get());
  auto xfer = collective_xfer();
  agree_write(file, H5Dwrite(dset.get(), H5T_NATIVE_DOUBLE, ms.get(), fs.get(), xfer.get(), local),
              "/" + name);
}

void h5_read_field(hid_t file, const std::string& name, const Decomposition& d, double* local,
                   int ghost) {
  if (!h5_exists(file, name)) throw IoError("dataset /" + name + " is missing");
  H5Id dset(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  H5Id fs, ms;
  select_box(d, fs, ms, dset.get(), ghost);
  auto xfer = collective_xfer();
  HALO3D_H5_CHECK(H5Dread(dset.get(), H5T_NATIVE_DOUBLE, ms.get(), fs.get(), xfer.get(), local));
}

void h5_write_vector(hid_t file, const std::string& name, const std::vector<double>& v,
                     MPI_Comm comm) {
  const hsize_t n = v.size();
  H5Id space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  H5Id dset(H5Dcreate2(file, name.c_str(), H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT,
                       H5P_DEFAULT),
            H5Dclose);
  if (n == 0) return;  // same on every rank: an empty dataset needs no write
  H5Id fs(H5Dget_space(dset.get()), H5Sclose);
  H5Id ms(H5Screate_simple(1, &n, nullptr), H5Sclose);
  // Every rank holds the same values; rank 0 alone writes them, inside a collective call.
  if (comm_rank(comm) != 0) {
    HALO3D_H5_CHECK(H5Sselect_none(fs.get()));
    HALO3D_H5_CHECK(H5Sselect_none(ms.get()));
  }
  auto xfer = collective_xfer();
  agree_write(file,
              H5Dwrite(dset.get(), H5T_NATIVE_DOUBLE, ms.get(), fs.get(), xfer.get(), v.data()),
              "/" + name);
}

std::vector<double> h5_read_vector(hid_t file, const std::string& name) {
  if (!h5_exists(file, name)) throw IoError("dataset /" + name + " is missing");
  H5Id dset(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  H5Id fs(H5Dget_space(dset.get()), H5Sclose);
  hsize_t n = 0;
  if (H5Sget_simple_extent_ndims(fs.get()) != 1)  // more would write past n
    throw IoError("dataset /" + name + " is not one-dimensional");
  HALO3D_H5_CHECK(H5Sget_simple_extent_dims(fs.get(), &n, nullptr));
  std::vector<double> v(n);
  if (n)
    HALO3D_H5_CHECK(
        H5Dread(dset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()));
  return v;
}

bool h5_exists(hid_t file, const std::string& name) {
  return H5Lexists(file, name.c_str(), H5P_DEFAULT) > 0;
}

AtomicH5File::AtomicH5File(const std::string& path, MPI_Comm comm, bool durable, OutputSet* set)
    : path_(path), comm_(comm), durable_(durable), set_(set) {
  if (set) {
    tmp_ = set->stage(path);
  } else {
    // Every rank must open the same temporary: rank 0 names it.
    target_ = bcast_string(comm_rank(comm) == 0 ? write_target(path) : std::string(), comm);
    tmp_ = temp_name(target_, unique_suffix(comm));
  }
  file_ = h5_create(tmp_, comm);
}

AtomicH5File::~AtomicH5File() {
  if (done_) return;
  file_ = H5Id();  // collective close (every rank unwinds the same agreed error)
  if (comm_rank(comm_) == 0) std::remove(tmp_.c_str());
}

void AtomicH5File::commit() {
  const bool root = comm_rank(comm_) == 0;
  std::string why;
  try {
    file_.close();  // collective: every rank's data is on disk once this returns everywhere
  } catch (const std::exception& e) {
    why = e.what();
  }
  why = first_error(why, comm_);
  if (set_ && why.empty()) {  // the set renames it (and removes it if never committed)
    done_ = true;
    return;
  }
  int renamed = 0;
  if (why.empty()) {  // the same on every rank, so all take this branch or none
    bool moved = false;
    if (root) why = durable_rename(tmp_, target_, moved, durable_);
    renamed = moved;
    HALO3D_MPI_CHECK(MPI_Bcast(&renamed, 1, MPI_INT, 0, comm_));
    why = bcast_string(why, comm_);
  }
  done_ = true;
  if (why.empty()) return;
  if (root && !renamed) std::remove(tmp_.c_str());
  throw IoError("cannot write " + path_ + ": " + why +
                (renamed ? "" : " (the previous file, if any, is kept)"));
}

void write_h5_atomically(const std::string& path, MPI_Comm comm,
                         const std::function<void(hid_t)>& body, bool durable) {
  AtomicH5File f(path, comm, durable);
  body(f.get());
  f.commit();
}

}  // namespace halo3d
