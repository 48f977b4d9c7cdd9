// CG, Jacobi and explicit-Euler heat on the distributed operator, with one driver loop
// for monitoring, stopping, signals and checkpoints.
#pragma once
#include <mpi.h>

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "checkpointable.hpp"
#include "method_plan.hpp"
#include "operator.hpp"
#include "precond.hpp"
#include "timers.hpp"

namespace halo3d {

// A method's state() and scalars() are what a checkpoint saves (checkpointable.hpp).
class Method : public Checkpointable {
 public:
  virtual std::string name() const = 0;
  // From a fresh start (x = 0, or u = u0 for heat).
  virtual void start() = 0;
  struct Step {
    double relative_residual;  // of the iterate the method now holds; NaN for heat
    bool advanced;             // a new iterate was made (counted as an iteration)
    bool converged;            // reached tol: the held iterate is the answer
  };
  // ||b - A x|| / ||b|| of the iterate held (x as solution() returns it), recomputed from scratch
  // (not the recurrence's), from vectors scaled as the method scales them (no square overflows or
  // underflows); NaN for methods without a residual. Collective. CG starts over from it if stepped
  // again.
  virtual double true_relative_residual() { return std::numeric_limits<double>::quiet_NaN(); }
  virtual Step step() = 0;
  // The solution vector (x for CG, u for Jacobi/heat).
  virtual Buffer& solution() = 0;
  // A vector of the solution's layout that the method writes before it reads it (CG's A p,
  // Jacobi's and heat's next iterate, implicit heat's step right-hand side): scratch for a
  // measurement between steps or after the run, so that nothing else allocates one.
  virtual Buffer& spare() = 0;
  // Global bytes moved per iteration through device memory (for GB/s).
  virtual double bytes_per_iteration() const = 0;
  // Iterations of an inner solver over the run (implicit time steps' CG), 0 if none.
  virtual long inner_iterations() const { return 0; }
};

// Source is the right-hand side (Poisson) or initial condition (heat), interior filled.
// pc: the preconditioner (nullptr: plain CG); it must outlive the method. zero_mean: the
// singular case (A 1 = 0, b of zero sum: no Dirichlet face, no shift): z = M^{-1} r is
// projected to zero sum each iteration (without pc, z is r, of zero sum already).
std::unique_ptr<Method> make_cg(DistributedOperator& op, MPI_Comm comm, Timers& t, const Buffer& b,
                                double tol, Preconditioner* pc = nullptr, bool zero_mean = false);
// x.y over the whole grid (the backend's partial sums and global_sums: the same bits on every
// process grid). Collective.
double global_dot(Kernels& k, const Layout& l, const double* x, const double* y, MPI_Comm comm);
// A vector of n ones (its ghosts too), for the zero-sum projections.
Buffer ones_like(Kernels& k, std::size_t n);
std::unique_ptr<Method> make_jacobi(DistributedOperator& op, MPI_Comm comm, Timers& t,
                                    const Buffer& f, double tol);
// boundary: heat's B g (fields.hpp's boundary_source), or null for zero boundary values;
// each step is then u_new = u - alpha dt (A u - B g). It must outlive the method.
std::unique_ptr<Method> make_heat(DistributedOperator& op, Timers& t, const Buffer& u0,
                                  double alpha_dt, const Buffer* boundary = nullptr);

// The method the plan asks for (CG, Jacobi, or explicit Euler with the problem's dt; implicit
// heat is make_implicit_heat's).
std::unique_ptr<Method> make_method(const MethodPlan& m, double dt, DistributedOperator& op,
                                    MPI_Comm comm, Timers& t, const Buffer& source,
                                    Preconditioner* pc = nullptr, const Buffer* boundary = nullptr,
                                    bool zero_mean = false);
// The power of two s that puts max|b s| over all ranks in [1, 2) (1 when b = 0; at most
// 2^1022): dot products of b s cannot overflow or underflow. Collective; throws
// Error(kExitBreakdown) on every rank when b holds NaN or Inf.
double norm_scale(Kernels& k, const Layout& l, const double* b, MPI_Comm comm);

struct DriveOptions {
  long max_iters = 0;  // iterations (or steps) to run at most, counted from 0
  int monitor = 0;     // progress line every N iterations on rank 0 (0: none)
  // Rank 0's progress line every progress_s seconds of the solve (0: none), decided on rank
  // 0's clock alone: no communication, so iterates and iteration counts are unchanged. tol
  // (Poisson; 0 for a fixed count) lets it estimate the time left.
  double progress_s = 0;
  double tol = 0;
  double dt = 0;  // heat: the time step, for the line's physical time
  long checkpoint_every = 0;
  std::function<void(long iteration, const std::vector<double>& history)> checkpoint;
  // Called on every rank once the ranks agree to stop on a signal, before that iteration's
  // checkpoint is written (a launcher may kill the ranks during that write).
  std::function<void(long iteration, int signal)> stopping;
  // Extra text for a progress line (heat: physical time and error); called on every rank.
  std::function<std::string(long iteration)> progress;
  // Heat's --output-every: called on every rank after each iteration that is a multiple of
  // snapshot_every, before that iteration's checkpoint (which then holds the snapshot).
  long snapshot_every = 0;
  std::function<void(long iteration)> snapshot;
};

struct DriveResult {
  long iterations = 0;
  bool converged = false;
  bool stopped_by_signal = false;
  int stop_signal = 0;  // the signal number the ranks agreed on
  double relative_residual = 0;
  std::vector<double> history;  // relative residual after each iteration
  double solve_seconds = 0;
};

// Runs `method` from iteration `first` (0, or a restart's) with `history` so far.
// Throws Error(kExitBreakdown) on NaN/Inf.
DriveResult drive(Method& method, MPI_Comm comm, const DriveOptions& o, long first,
                  std::vector<double> history);

}  // namespace halo3d
