// Heat's time series (--output-every N): snapshots of u written into the solution file as
// the run goes, carried by checkpoints so that a restart continues the series, and listed in
// the XDMF sidecar as a temporal collection for ParaView and VisIt.
//
// Crash safety: the snapshots go into the solution file's temporary (AtomicH5File), which
// is renamed into place only when the run ends; a crash leaves the previous file (or none),
// never a half series. A checkpoint holds a copy of the series so far, so a restart from it
// loses no snapshot: its size grows by one field per snapshot.
#pragma once
#include <hdf5.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "decomposition.hpp"

namespace halo3d {

struct Snapshot {
  long step = 0;
  double t = 0;  // dt * step
};

// The dataset of the snapshot after `step`: "series/" and the step, zero-padded to at least
// 6 digits so that names sort by step.
std::string snapshot_dataset(long step);

// The snapshots of a fresh run of `steps` steps: after 0, every, 2 every, ... and the last.
inline long planned_snapshots(long steps, long every) {
  return steps / every + 1 + (steps % every != 0 ? 1 : 0);
}

class TimeSeries {
 public:
  // Snapshots every `every` steps of size `dt` into `file` (open for writing), under /series.
  TimeSeries(hid_t file, const Decomposition& d, MPI_Comm comm, long every, double dt);
  bool due(long step) const { return step % every_ == 0; }
  // Collective: `u` (the rank's padded field) as the snapshot after `step`; nothing when
  // the last snapshot is that step's already.
  void write(long step, const std::vector<double>& u);
  // Collective: continues the series of the checkpoint `path`, taken after `iteration`
  // steps, by copying its snapshots. Throws BadInput (the same on every rank) when the
  // checkpoint holds no series to continue (iteration > 0) or one of another spacing.
  void restore(const std::string& path, long iteration);
  // Collective: the series so far and its spacing into the checkpoint being written.
  void save(hid_t checkpoint) const;
  // Collective: the group's attributes (output_every, steps, t); after the last write.
  void finish();
  const std::vector<Snapshot>& snapshots() const { return snaps_; }
  long every() const { return every_; }

 private:
  void write_dataset(hid_t file, long step, const double* u) const;
  hid_t file_;
  const Decomposition& d_;
  MPI_Comm comm_;
  long every_;
  double dt_;
  std::vector<Snapshot> snaps_;
};

}  // namespace halo3d
