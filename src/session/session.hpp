// One solve assembled from its plan: the problem, the runtime (decomposition, backend, halo
// transport, fine operator), the source fields, the preconditioner (multigrid hierarchy)
// and the method. `halo3d solve`, the tests and the embedding API (include/halo3d/) build
// a run only through this; what is done with it (files, reports) is the caller's.
#pragma once
#include <mpi.h>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "host_copy.hpp"
#include "method_plan.hpp"
#include "multigrid.hpp"
#include "parallel_options.hpp"
#include "problem.hpp"
#include "problem_spec.hpp"
#include "runtime.hpp"
#include "solvers.hpp"

namespace halo3d {

// "Converged" means the true relative residual meets --tol with this slack, whatever the
// recurrence said (CG's recurrence residual drifts from the true one near the precision floor).
constexpr double kTrueResidualSlack = 2.0;

struct Verification {
  bool verified = false;  // the errors and the overlap were measured (--verify on)
  double true_rel = NAN;  // Poisson: the true relative residual, recomputed
  // The recurrence reached --tol but the true residual is above kTrueResidualSlack x --tol:
  // not converged.
  bool unconfirmed = false;
  double rel_res = NAN;  // the relative residual reported
  Problem::Errors err;
  bool has_halo = false;
  DistributedOperator::OverlapTimes ov;
};

// The singular case (Poisson, no Dirichlet face, no shift: A 1 = 0, A x = b solvable only
// for b of zero sum): the mean of b that build_method removed, the norm of the removed part
// (|mean| sqrt(N); with Neumann faces b = V f, f's V-weighted mean: |mean| ||V||) and that
// relative to ||b||.
struct MeanRemoved {
  double mean = 0, norm = 0, relative = 0;
};

class SolveSession {
 public:
  // The problem and the runtime: collective over world. `memory`, when set, is what the
  // caller will allocate beyond the runtime (checked against free memory before anything
  // large is allocated). Throws BadInput for an impossible problem (e.g. --dt above the
  // explicit stability limit).
  SolveSession(const ProblemSpec& problem, const ParallelOptions& parallel,
               const MethodPlan& method, MPI_Comm world,
               std::function<MemoryNeed(const Decomposition&, MPI_Comm, bool)> memory = nullptr);
  SolveSession(const SolveSession&) = delete;
  SolveSession& operator=(const SolveSession&) = delete;
  ~SolveSession();

  // The source as the problem defines it (fields.hpp's fill_fields: built-in, file or
  // formula; Poisson's boundary values lifted into it, heat's kept as B g). Collective.
  void fill_source();
  // A source given by the caller (the embedding API): this rank's box, padded.
  void set_source(Buffer b);
  // The same from the caller's array of f: this rank's box without ghosts, x fastest, in host
  // or backend memory (host_copy.hpp's padded_from_box), multiplied by each point's control
  // volume's fraction V_p where the grid has Neumann faces (b = V f, as fill_fields makes
  // it). Written into the source already made, if any, so a method built on it stays valid
  // until build_method() is called again.
  void set_source(const double* box);

  // The preconditioner (timed: setup_seconds(), the slowest rank's) and the method on the
  // source; not started. Collective. Called again (a new source), it keeps the
  // preconditioner (it depends on the operator alone) and rebuilds the method. Singular:
  // the source's mean is removed first (mean_removed()), and CG keeps z of zero sum.
  void build_method();
  // Runs the method (started, or restored from a checkpoint by the caller) from iteration
  // `first` with `history` so far (a restart's). Singular: the answer is then made the
  // zero-mean one (A's null space is the constants).
  DriveResult drive(const DriveOptions& o, long first = 0, std::vector<double> history = {});

  // Self-checks: the true residual recomputed from scratch (a converged recurrence is
  // converged only when it meets tol too: otherwise res.converged is withdrawn) and the
  // answer checked finite (always: cheap), and with `measure` the error against the exact
  // answers where they are known and the overlap measurement (most of the time it takes).
  // Throws Error(kExitBreakdown) on NaN/Inf. Collective.
  Verification verify(DriveResult& res, double tol, bool measure);

  const ProblemSpec& spec() const { return spec_; }
  const MethodPlan& plan() const { return plan_; }
  const Problem& problem() const { return *problem_; }
  double dt() const { return problem_->dt(); }
  Runtime& runtime() { return *rt_; }
  Kernels& kernels() { return *rt_->kernels; }
  const Decomposition& decomp() const { return rt_->decomp; }
  MPI_Comm comm() const { return rt_->cart.get(); }
  const Buffer& source() const { return b_; }
  const Buffer* boundary() const { return boundary_ ? &*boundary_ : nullptr; }
  Preconditioner* preconditioner() const { return pc_.get(); }
  // CG's multigrid preconditioner, if the plan built one (implicit heat's is its own).
  const Multigrid* multigrid() const { return dynamic_cast<const Multigrid*>(pc_.get()); }
  double setup_seconds() const { return setup_s_; }
  bool singular() const { return singular_; }
  const MeanRemoved& mean_removed() const { return removed_; }
  Method& method() { return *method_; }
  std::vector<double> solution() { return download(kernels(), method_->solution()); }
  // The solution into the caller's array, laid out as set_source(const double*) takes it.
  void solution_to(double* box) { box_from_padded(kernels(), decomp().layout(), solution(), box); }

 private:
  void remove_source_mean();
  // The singular case's means are V-weighted (V_p the control volumes): V_p, or 1, at the
  // interior points of `out` (ghosts 0), and sum_p V_p over the grid.
  void fill_interior(double* out, bool volumes);
  double total_volume() const;
  // Declared in the order they are made, so destroyed in reverse: the method uses the
  // source and the preconditioner, all use the runtime.
  ProblemSpec spec_;
  MethodPlan plan_;
  std::unique_ptr<Problem> problem_;
  std::unique_ptr<Runtime> rt_;
  Buffer b_;                        // the right-hand side (heat: the initial state)
  std::optional<Buffer> boundary_;  // heat's boundary values: a source term B g of every step
  std::unique_ptr<Preconditioner> pc_;
  bool pc_built_ = false;  // pc_ may be null when built: the plan asks for none
  double setup_s_ = 0;
  bool singular_ = false;  // see MeanRemoved
  MeanRemoved removed_;
  std::unique_ptr<Method> method_;
};

}  // namespace halo3d
