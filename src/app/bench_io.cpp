// halo3d bench --io: the write of a grid's field as `halo3d solve --output` does it (HDF5,
// collective, through the atomic temporary + rename), next to a raw write of the same bytes
// measured in the same run as the ceiling: each rank pwrite()s its contiguous share of one
// file. Both are timed the same way: from a barrier before the file is created to a
// barrier after it is closed (and, with --io-sync on, fsync'ed), so the ratio compares
// what the file system was asked to do, not the page cache against the disk.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app.hpp"
#include "errors.hpp"
#include "files.hpp"
#include "hdf5_io.hpp"
#include "problem.hpp"
#include "runtime.hpp"

namespace halo3d {

namespace {

std::string errno_text() { return std::strerror(errno); }

// Rank 0 removes the benchmark's files however the run ends (each write removes its own
// temporary on failure; these are the finished files).
class Cleanup {
 public:
  Cleanup(std::vector<std::string> paths, bool root) : paths_(std::move(paths)), root_(root) {}
  ~Cleanup() { remove(); }
  Cleanup(const Cleanup&) = delete;
  Cleanup& operator=(const Cleanup&) = delete;
  void remove() const {
    if (root_)
      for (const auto& p : paths_) ::unlink(p.c_str());
  }

 private:
  std::vector<std::string> paths_;
  bool root_;
};

// Collective, before any writing: --io-dir is a directory we can create files in, with room
// for one field and some to spare (the two files never exist at the same time).
void check_io_dir(const std::string& dir, double bytes, MPI_Comm comm) {
  std::string bad, io;
  if (comm_rank(comm) == 0) {
    struct stat s;
    struct statvfs v;
    if (::stat(dir.c_str(), &s) != 0)
      bad = "--io-dir " + dir + ": " + errno_text();
    else if (!S_ISDIR(s.st_mode))
      bad = "--io-dir " + dir + ": not a directory";
    else if (::access(dir.c_str(), W_OK | X_OK) != 0)
      io = "cannot write in --io-dir " + dir + ": " + errno_text();
    else if (::statvfs(dir.c_str(), &v) == 0) {
      const double free_bytes = double(v.f_bavail) * double(v.f_frsize);
      const double need = 1.05 * bytes + 64.0 * (1 << 20);
      if (free_bytes < need) {
        char buf[200];
        std::snprintf(buf, sizeof buf,
                      "--io-dir %s: %.3g GB free, the benchmark needs %.3g GB; give a smaller "
                      "--grid or another --io-dir",
                      dir.c_str(), free_bytes / 1e9, need / 1e9);
        io = buf;
      }
    }
  }
  bad = bcast_string(bad, comm);
  io = bcast_string(io, comm);
  if (!bad.empty()) throw BadInput(bad);
  if (!io.empty()) throw IoError(io);
}

// Every rank writes `bytes` of `data` at `offset` of `path` (rank 0 created it) and closes
// it; every rank throws the same IoError on any failure.
void raw_write(const std::string& path, const char* data, std::size_t bytes, std::size_t offset,
               MPI_Comm comm) {
  std::string why;
  if (comm_rank(comm) == 0) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 || ::close(fd) != 0) why = "cannot create " + path + ": " + errno_text();
  }
  why = first_error(why, comm);  // also the barrier that lets the others open it
  if (why.empty()) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      why = "cannot open " + path + ": " + errno_text();
    } else {
      std::size_t done = 0;
      while (done < bytes && why.empty()) {
        // 2 MiB a call, as the MPI-IO layer under HDF5 writes here (pwritev of 2 MiB):
        // one pwrite of a whole 1 GiB share, or 8 MiB calls, measured slower and noisier.
        const std::size_t n = std::min<std::size_t>(bytes - done, std::size_t(2) << 20);
        const ssize_t w = ::pwrite(fd, data + done, n, off_t(offset + done));
        if (w < 0 && errno != EINTR) why = "cannot write " + path + ": " + errno_text();
        if (w > 0) done += std::size_t(w);
      }
      if (::close(fd) != 0 && why.empty()) why = "cannot close " + path + ": " + errno_text();
    }
  }
  why = first_error(why, comm);
  if (!why.empty()) throw IoError(why);
}

// Rank 0 flushes the finished raw file and its directory to the disk once every rank has
// closed it, as the HDF5 write's commit does before and after its rename (durable_rename):
// no rank's fsync runs while another rank still writes the file.
void sync_file(const std::string& path, MPI_Comm comm) {
  std::string why;
  if (comm_rank(comm) == 0) {
    why = fsync_path(path);
    if (why.empty()) why = fsync_parent(path);
  }
  why = first_error(why, comm);
  if (!why.empty()) throw IoError(why);
}

// Random data (as the kernel benchmark): the padded array solve writes from, and the same
// interior packed, which the raw write sends as it is, with this rank's offset in the raw
// file (the previous ranks' shares come first).
struct IoData {
  std::vector<double> field, packed;
  unsigned long long bytes = 0, offset = 0;
};
IoData random_io_data(const Decomposition& d, MPI_Comm comm) {
  const Layout l = d.layout();
  IoData io;
  io.field = random_box(d, 7);
  io.packed.reserve(std::size_t(l.interior_size()));
  for (int kk = 0; kk < l.nz; ++kk)
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i) io.packed.push_back(io.field[l.at(i, j, kk)]);
  io.bytes = 8ULL * io.packed.size();
  HALO3D_MPI_CHECK(MPI_Exscan(&io.bytes, &io.offset, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm));
  if (d.rank == 0) io.offset = 0;  // MPI_Exscan leaves rank 0's undefined
  return io;
}

struct IoRow {
  std::string name, what;
  double median_s, min_s;
  std::vector<double> all_s;  // in the order measured
};
IoRow io_row(std::string name, std::string what, const std::vector<double>& all) {
  std::vector<double> t = all;
  std::sort(t.begin(), t.end());
  return IoRow{std::move(name), std::move(what), t[t.size() / 2], t.front(), all};
}

// The table on rank 0 and the JSON report (--report).
void report_io(const BenchOptions& o, const Decomposition& d, double bytes, const IoRow (&rows)[2],
               MPI_Comm world) {
  const bool root = d.rank == 0;
  const double raw_gbs = bytes / rows[0].median_s / 1e9;
  nlohmann::json j;
  j["halo3d_version"] = version_string();
  j["command"] = "bench";
  j["mode"] = "io";
  j["grid"] = {o.grid[0], o.grid[1], o.grid[2]};
  j["procs"] = {d.procs[0], d.procs[1], d.procs[2]};
  j["ranks"] = d.ranks;
  j["io_dir"] = o.io_dir;
  j["io_reps"] = o.io_reps;
  j["io_sync"] = o.io_sync;
  j["raw_gbytes_per_s"] = raw_gbs;
  if (root) {
    std::printf(
        "halo3d bench --io %s: grid %s on %d rank(s) as %s, %d reps (median) after 1 untimed, "
        "fsync %s, in %s\n",
        version_string().c_str(), to_string(o.grid).c_str(), d.ranks, to_string(d.procs).c_str(),
        o.io_reps, o.io_sync ? "included" : "excluded", o.io_dir.c_str());
    std::printf("%-14s %12s %12s %10s %9s  %s\n", "write", "bytes", "median ms", "GB/s", "of raw",
                "what");
  }
  for (const IoRow& r : rows) {
    const double gbs = bytes / r.median_s / 1e9;
    std::vector<double> ms;
    for (double t : r.all_s) ms.push_back(t * 1e3);
    if (root)
      std::printf("%-14s %12.4g %12.4f %10.3f %8.1f%%  %s\n", r.name.c_str(), bytes,
                  r.median_s * 1e3, gbs, 100.0 * gbs / raw_gbs, r.what.c_str());
    j["results"].push_back({{"name", r.name},
                            {"what", r.what},
                            {"bytes", bytes},
                            {"median_ms", r.median_s * 1e3},
                            {"min_ms", r.min_s * 1e3},
                            {"all_ms", ms},
                            {"gbytes_per_s", gbs},
                            {"fraction_of_raw", gbs / raw_gbs}});
  }
  if (root) std::fflush(stdout);
  if (!o.report.empty())
    write_file_atomically(
        o.report,
        root ? j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n" : "", world);
}

}  // namespace

int run_bench_io(const BenchOptions& o, MPI_Comm world) {
  Comm cart;
  const Decomposition d = decompose(world, o.grid, o.procs, cart);
  MPI_Comm comm = cart.get();
  const bool root = d.rank == 0;
  const double bytes = 8.0 * double(d.global_points());  // the payload of /u, in both files
  check_io_dir(o.io_dir, bytes, comm);
  if (!o.report.empty()) check_planned_files({{"--report", o.report}}, comm);

  const IoData io = random_io_data(d, comm);

  std::string base = o.io_dir;
  if (!base.empty() && base.back() != '/') base += '/';
  base += "halo3d-bench-io." + unique_suffix(comm);
  const std::string h5_path = base + ".h5", raw_path = base + ".raw";
  Cleanup cleanup({h5_path, raw_path}, root);

  // One untimed round first, then --io-reps rounds alternating the two writes, so a
  // change in the file system's state (other jobs, write-back) hits both alike.
  auto timed = [&](const std::function<void()>& write) {
    HALO3D_MPI_CHECK(MPI_Barrier(comm));
    const double t0 = MPI_Wtime();
    write();
    HALO3D_MPI_CHECK(MPI_Barrier(comm));
    double t = MPI_Wtime() - t0;
    HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm));
    cleanup.remove();
    HALO3D_MPI_CHECK(MPI_Barrier(comm));  // removed before the next write starts
    return t;
  };
  auto hdf5 = [&] {  // with --io-sync on, flushed as solve's is: inside the commit
    write_h5_atomically(
        h5_path, comm, [&](hid_t f) { h5_write_field(f, "u", d, io.field.data()); }, o.io_sync);
  };
  auto raw = [&] {
    raw_write(raw_path, reinterpret_cast<const char*>(io.packed.data()), io.bytes, io.offset, comm);
    if (o.io_sync) sync_file(raw_path, comm);
  };
  std::vector<double> t_h5, t_raw;
  for (int rep = 0; rep <= o.io_reps; ++rep) {
    const double a = timed(raw), b = timed(hdf5);
    if (rep == 0) continue;
    t_raw.push_back(a);
    t_h5.push_back(b);
  }

  const std::string fsync_note = o.io_sync ? ", fsync" : ", no fsync";
  const IoRow rows[2] = {
      io_row("io_raw", "pwrite of each rank's contiguous share into one file" + fsync_note, t_raw),
      io_row("io_hdf5",
             "/u as solve --output writes it (HDF5 collective, temporary + rename)" + fsync_note,
             t_h5)};
  report_io(o, d, bytes, rows, world);
  return kExitOk;
}

}  // namespace halo3d
