#include "time_series.hpp"

#include <cstdio>

#include "checks.hpp"
#include "errors.hpp"
#include "hdf5_io.hpp"

namespace halo3d {
namespace {

H5Id make_group(hid_t file, const char* name) {
  return H5Id(H5Gcreate2(file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
}

// Rank 0 alone could see the checkpoint's attributes; every rank reads them (collective
// metadata reads), so all throw the same error or none.
long checkpoint_every(hid_t f) {
  if (!h5_has_attr(f, "output_every")) return 0;  // written without a series, or before it
  const std::vector<long long> v = h5_attr_ints(f, "output_every");
  return v.size() == 1 ? long(v[0]) : -1;
}

}  // namespace

std::string snapshot_dataset(long step) {
  char name[32];
  std::snprintf(name, sizeof name, "series/%06ld", step);
  return name;
}

TimeSeries::TimeSeries(hid_t file, const Decomposition& d, MPI_Comm comm, long every, double dt)
    : file_(file), d_(d), comm_(comm), every_(every), dt_(dt) {
  make_group(file_, "series");
}

void TimeSeries::write_dataset(hid_t file, long step, const double* u) const {
  const std::string name = snapshot_dataset(step);
  h5_write_field(file, name, d_, u);
  H5Id dset(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  h5_attr_int(dset.get(), "step", step);
  h5_attr_real(dset.get(), "t", dt_ * double(step));
}

void TimeSeries::write(long step, const std::vector<double>& u) {
  if (!snaps_.empty() && snaps_.back().step == step) return;  // the final step on a multiple
  write_dataset(file_, step, u.data());
  snaps_.push_back({step, dt_ * double(step)});
}

void TimeSeries::restore(const std::string& path, long iteration) {
  QuietHdf5 quiet;
  H5Id f = h5_open_read(path, comm_);
  const long had = checkpoint_every(f.get());
  const std::string where = "--restart " + path + ": ";
  if (had == 0) {
    if (iteration == 0) return;  // nothing before it to lose
    throw BadInput(where + "the checkpoint holds no time series (written without " +
                   "--output-every, or by an older halo3d), so the snapshots before step " +
                   std::to_string(iteration) +
                   " cannot be restored; restart without --output-every, or from the start");
  }
  if (had != every_)
    throw BadInput(where + "the checkpoint's series has a snapshot every " + std::to_string(had) +
                   " steps but --output-every is " + std::to_string(every_));
  // Exactly the steps 0, N, 2N, ... up to the checkpoint's: anything else is a damaged file.
  std::vector<long long> want;
  for (long s = 0; s <= iteration; s += every_) want.push_back(s);
  hid_t gid = -1;  // /series: a group of this file; anything else is a damaged checkpoint
  if (h5_exists(f.get(), "series") && h5_external_link(f.get(), "series").empty()) {
    QuietHdf5 quiet;
    gid = H5Gopen2(f.get(), "series", H5P_DEFAULT);
  }
  H5Id g = gid >= 0 ? H5Id(gid, H5Gclose) : H5Id();
  if (gid < 0 || !h5_has_attr(g.get(), "steps") || h5_attr_ints(g.get(), "steps") != want)
    throw BadInput(where + "damaged checkpoint: its series does not hold the snapshots 0, " +
                   std::to_string(every_) + ", ... up to step " + std::to_string(iteration));
  std::vector<double> u(d_.layout().padded_size(), 0.0);
  for (const long long s : want) {
    const std::string name = snapshot_dataset(long(s));
    const std::string why = h5_dataset_problem(
        f.get(), name, {hsize_t(d_.grid[2]), hsize_t(d_.grid[1]), hsize_t(d_.grid[0])});
    if (!why.empty()) throw BadInput(where + "damaged checkpoint: " + why);
    h5_read_field(f.get(), name, d_, u.data());
    if (!all_finite(d_.layout(), u, comm_))  // copied into the output as it is: never NaN
      throw Error(kExitBreakdown, where + "the checkpoint's snapshot /" + name +
                                      " holds NaN or Inf; refusing to continue from it");
    write(long(s), u);
  }
}

void TimeSeries::save(hid_t checkpoint) const {
  h5_attr(checkpoint, "output_every", std::vector<long long>{every_});
  H5Id g = make_group(checkpoint, "series");
  std::vector<long long> steps;
  if (!snaps_.empty()) {
    // Every rank's collective writes of the snapshots are on disk before any reads them back.
    HALO3D_H5_CHECK(H5Fflush(file_, H5F_SCOPE_GLOBAL));
    std::vector<double> u(d_.layout().padded_size(), 0.0);
    for (const Snapshot& s : snaps_) {
      h5_read_field(file_, snapshot_dataset(s.step), d_, u.data());
      write_dataset(checkpoint, s.step, u.data());
      steps.push_back(s.step);
    }
  }
  h5_attr(g.get(), "steps", steps);
}

void TimeSeries::finish() {
  H5Id g(H5Gopen2(file_, "series", H5P_DEFAULT), H5Gclose);
  std::vector<long long> steps;
  std::vector<double> t;
  for (const Snapshot& s : snaps_) {
    steps.push_back(s.step);
    t.push_back(s.t);
  }
  h5_attr_int(g.get(), "output_every", every_);
  h5_attr(g.get(), "steps", steps);
  h5_attr(g.get(), "t", t);
}

}  // namespace halo3d
