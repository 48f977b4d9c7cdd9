// The report of a `halo3d solve`: its lines on stdout and stderr (solve_lines.cpp), the
// solution file's attributes and the --report JSON (docs/REPORT.md; solve_report.cpp), all
// written from a plain record of the run, so they depend on what ran, not on how the run is
// held together.
#pragma once
#include <hdf5.h>
#include <mpi.h>

#include <array>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "multigrid.hpp"
#include "options.hpp"
#include "plan.hpp"
#include "problem.hpp"
#include "runtime.hpp"
#include "session.hpp"
#include "solvers.hpp"
#include "timers.hpp"
#include "transports/transports.hpp"

namespace halo3d {

// What a solve was and did, as its report needs it: copied out of the run once it is done
// (the options as given, the plan, and the numbers the pieces measured).
struct SolveRecord {
  SolveRecord(const SolveOptions& options, RunPlan run_plan)
      : o(options), plan(std::move(run_plan)) {}
  const SolveOptions& o;
  RunPlan plan;
  std::string solver, precond, precision;
  bool heat = false, implicit = false;
  double dt = 0;
  std::array<double, 3> h{};
  bool has_exact = false;
  int ranks = 1;
  Int3 procs{};
  std::string backend, device, halo;  // names
  bool gpu = false;                   // the kernels ran on a GPU
  bool overlap = false;  // the overlap the run uses (--overlap auto: as timed at start-up)
  HaloSelection halo_selection;
  HostMap hosts;
  long long halo_bytes_rank0 = 0;
  // Rank 0's memory check count (its device part), the device memory the run holds once
  // solved (-1: the host backend), Runtime::planned and device_bytes_used; and what the
  // kernels counted allocated since the check, held once solved and at its peak
  // (counted_memory).
  double planned_device_bytes = 0, device_bytes_used = -1;
  CountedMemory counted;
  bool mg = false;  // CG's multigrid preconditioner ran
  std::vector<MgLevelInfo> mg_levels;
  std::string mg_describe;
  double setup_s = 0;
  double start_s = 0;   // the method's start (--fmg: the F-cycle, the first residual)
  bool series = false;  // heat's --output-every
  long output_every = 0;
  std::size_t snapshots = 0;
  double out_s = 0;  // the --output file's final write, and its bytes
  long long out_bytes = 0;
  double bytes_per_iteration = 0;
  long inner_iterations = 0;
  std::vector<std::pair<std::string, double>> phases;  // rank 0's, so far
  double phases_total = 0;
  long first = 0;  // the restart's iteration (0: none)
  // The singular case (no Dirichlet face, no shift): b's mean, removed (SolveSession).
  bool singular = false;
  MeanRemoved mean_removed;
};

// Where the solve's time went on the slowest rank (largest solve time): the timers' growth
// during the solve, disjoint parts, and "other" (loop, vote, waits outside the timers) as the
// remainder, so the parts add up to the whole.
struct SolveSplit {
  int rank = 0;
  double solve = 0, compute = 0, halo = 0, reduction = 0, checkpoint = 0, monitor = 0, other = 0;
};

// The run's numbers reduced for the summary lines and the report.
struct Summary {
  SolveSplit sp;
  nlohmann::json per_rank;  // min and max over the ranks of each part of the solve
  double io_s = 0;
  bool fixed = false;  // a fixed iteration count ran out (success)
  long done = 0;       // iterations of this run (not counting a restart's)
  double per_iter = 0, gbs = 0, gpts = 0;
};

// A rank with no neighbour exchanges nothing: what its halo timer holds is waiting for
// compute (the fence after queued kernels), counted as compute (no_halo). Collective.
SolveSplit solve_split(double solve_s, const Timers& before, const Timers& after, bool no_halo,
                       MPI_Comm comm);
// Each rank's solve time and its parts (as the split counts them, before the no-neighbour
// rule), and all its file I/O: the smallest and largest over the ranks, to show imbalance.
nlohmann::json per_rank_spread(double solve_s, const Timers& before, const Timers& after,
                               double io_s, MPI_Comm comm);
double max_over_ranks(double x, MPI_Comm comm);

// The run's description as attributes of the solution file's root group.
void write_solution_attributes(const SolveRecord& r, hid_t g, const DriveResult& res,
                               const Verification& v);
// Rank 0's lines on the outcome: steps or convergence, errors; unless --quiet, the implicit
// steps' inner iterations, the series, throughput and overlap.
void print_results(const SolveRecord& r, const DriveResult& res, const Verification& v,
                   const Summary& m);
// The --report JSON (docs/REPORT.md), made on rank 0.
std::string report_text(const SolveRecord& r, const DriveResult& res, const Verification& v,
                        const Summary& m);
// Rank 0's closing lines: where the solve's time went (--quiet: the solve and the total),
// the output's write, the files written. The phases were printed as they ended.
void print_timing(const SolveRecord& r, const Summary& m);
// The header: what is solved, where and how; printed as soon as set-up has chosen the
// decomposition, backend and halo transport, before any phase line.
void print_header(const SolveOptions& o, const std::string& solver, const Runtime& rt);
// Rank 0's lines once the method has started: a restart's iteration; the singular case's
// removed mean (singular: null when A is not singular; printed with --quiet too, since the
// problem solved is not quite the one given); unless --quiet, the multigrid hierarchy (mg:
// null without one) and --fmg's start.
void print_start(const SolveOptions& o, long first, const MeanRemoved* singular,
                 const Multigrid* mg, double setup_s, double start_s);
// "SIGINT", "SIGTERM", "SIGUSR1" (or "?").
const char* signal_name(int sig);
// Rank 0's line as the ranks stop on a signal, before the checkpoint's write (`saved`: what
// the checkpoint file holds, as SolveRun::saved).
void announce_stop(const std::string& checkpoint, long saved, long it, int sig);
// A run stopped by a signal: its exit code; on rank 0 the line saying so, and --report
// replaced by a short "stopped" one (status, exit code, signal, iteration, checkpoint).
int stopped_by_signal(const SolveOptions& o, const HostMap& hosts, bool root,
                      const DriveResult& res);
// A run that fails after its files were checked replaces its --report with one that says
// so (status "failed", the exit code and the error), so no earlier run's report, which may
// say converged, is left beside this failure. An error that only this rank saw (the job is
// then aborted) cannot be agreed on: this rank removes the old report.
void replace_report_after_failure(const SolveOptions& o, const HostMap& hosts, bool root,
                                  const Error& e);
// Rank 0's warning of a Poisson run that did not converge (exit 3): the true residual above
// --tol although the recurrence met it, or --max-iters reached.
void warn_not_converged(const SolveOptions& o, const Verification& v);
}  // namespace halo3d
