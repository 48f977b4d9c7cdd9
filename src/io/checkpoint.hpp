// Checkpoint / restart of a solver's state with parallel HDF5 (crash-safe: written to a
// temporary name and renamed).
#pragma once
#include <hdf5.h>
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "checkpointable.hpp"
#include "decomposition.hpp"
#include "kernels.hpp"
#include "problem_spec.hpp"

namespace halo3d {

// The identity of a run: a checkpoint is only accepted by a run with the same identity.
struct RunIdentity {
  std::string problem, solver, rhs;      // rhs: --rhs (heat: --initial) as given
  std::string boundary = "0";            // --boundary as given
  std::string op = "box=1,1,1 shift=0";  // operator_text: --box and --shift
  Int3 grid{};
  std::vector<Int3> modes;
  long long seed = 0;
  double alpha = 0, dt = 0;
  long steps = -1;  // heat: --steps (a checkpoint beyond it is refused); -1 otherwise
  // field_checksum of the problem's data as filled (Poisson: b = f + B g; heat: u0 and B g;
  // a variable k, boundary layer included):
  // a restart after a file: input changed (same name, new contents) is refused. 0: unknown.
  std::uint64_t data = 0;
  static RunIdentity of(const ProblemSpec& o, const std::string& solver, double dt);
};

// A checksum of a distributed field's interior values: the sum over points (mod 2^64) of a
// hash of each point's global index and value bits, so it is the same on any process grid,
// and any changed value (a flipped bit) changes it. Collective.
std::uint64_t field_checksum(const Decomposition& d, const std::vector<double>& padded,
                             MPI_Comm comm);

// `extra`, if given, adds to the file being written (heat's time series so far).
void write_checkpoint(const std::string& path, MPI_Comm comm, const Decomposition& d, Kernels& k,
                      Checkpointable& m, const RunIdentity& id, long iteration,
                      const std::vector<double>& history,
                      const std::function<void(hid_t)>& extra = nullptr);

// What `checkpoint` holds as a solve starts: the restart's iteration `first` when `restart`
// is that same file, -2 if the file exists (from before this run), -1 if not (or none).
long checkpoint_held(const std::string& checkpoint, const std::string& restart, long first);

// The checks of read_checkpoint that need no state (collective): the file, its format, the
// run's identity (the data checksum only when id.data is not 0) and iteration. --dry-run.
void check_checkpoint(const std::string& path, MPI_Comm comm, const RunIdentity& id);

// Restores the method's state; returns the iteration to continue from and fills
// history. Throws BadInput when the checkpoint belongs to another run or version.
long read_checkpoint(const std::string& path, MPI_Comm comm, const Decomposition& d, Kernels& k,
                     Checkpointable& m, const RunIdentity& id, std::vector<double>& history);

}  // namespace halo3d
