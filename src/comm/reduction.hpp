// Global sums that do not depend on the decomposition, and the job-wide stop flag.
#pragma once
#include <mpi.h>

#include <vector>

#include "layout.hpp"
#include "mpi_env.hpp"

namespace halo3d {

// Each rank's double-double partial sums are gathered and added on every rank in rank
// order, in double-double, then rounded once. Every rank gets bitwise the same value,
// and the value is the exact sum of the per-point rounded products to ~2^-100 relative,
// so it does not change with the process grid (unless that exact sum lies within 2^-100
// of a rounding boundary of a double).
void global_sums(MPI_Comm comm, const DD* local, int n, double* out);

// The same sums split in two, so the all-gather can run under other work (a pipelined CG
// overlaps it with the next operator application): start() copies the partials and posts a
// non-blocking all-gather, finish() waits for it and adds the ranks' partials in rank order,
// giving global_sums' values bit for bit. One sum in flight at a time; collective (every
// rank calls start and finish in the same order). A pending sum is waited for by the
// destructor (collectives cannot be cancelled).
class GlobalSums {
 public:
  explicit GlobalSums(MPI_Comm comm);
  void start(const DD* local, int n);
  void finish(double* out);  // n values, n as given to start()

 private:
  MPI_Comm comm_;
  int ranks_, n_ = 0;
  std::vector<double> mine_, all_;
  Request req_;
};

// Signals (SIGTERM, SIGUSR1) only set a flag; ranks agree on it with a non-blocking
// all-reduce started before an iteration's work and completed after it, so a signal
// delivered to any one rank stops all ranks at the same iteration.
void install_stop_signal_handlers();
int stop_signal_number();  // the last signal received here, 0 if none

class StopVote {
 public:
  explicit StopVote(MPI_Comm comm) : comm_(comm) {}
  void begin();
  bool end();  // true when any rank had received a stop signal at begin()
  int signal() const { return global_; }  // after end(): the largest signal number seen
 private:
  MPI_Comm comm_;
  Request req_;  // a pending vote is waited for by ~Request (collectives cannot be cancelled)
  int local_ = 0, global_ = 0;
};

}  // namespace halo3d
