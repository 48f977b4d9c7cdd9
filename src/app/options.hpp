// Everything a run is configured with; filled from the command line or a TOML config.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "choices.hpp"
#include "decomposition.hpp"
#include "field_spec.hpp"
#include "parallel_options.hpp"
#include "problem_spec.hpp"
#include "provenance.hpp"

namespace halo3d {

// The problem (grid, equation, fields, heat's time stepping) is the ProblemSpec base.
struct SolveOptions : ParallelOptions, ProblemSpec {
  // Solver
  SolverKind solver = SolverKind::cg;  // poisson
  Precond precond = Precond::mg;       // cg's preconditioner
  int mg_levels = 0;                   // 0: automatic (to the first level of <= 125 points)
  int mg_smooth = 2;                   // smoothing steps before and after the coarse correction
  Smoother mg_smoother = Smoother::chebyshev;
  MgInterp mg_interp = MgInterp::trilinear;  // with a variable operator: trilinear or from it
  long long mg_gather = kMgGatherAuto;       // coarse levels of at most this many points gathered
  Precision precision = Precision::double_;  // mixed: the multigrid V-cycle in float
  bool fmg = false;  // MG-PCG's first iterate from a full-multigrid F-cycle (fmg.hpp)
  double tol = 1e-8;
  long max_iters = 10000;
  long iters = 0;  // --iters N: exactly N iterations, tol ignored (0: not given)
  // Output
  int monitor = 0;
  double progress = 5;  // rank 0's progress line every this many seconds of a solve (0: none)
  bool quiet = false;   // the summary's essentials only (no header, phases or progress lines)
  bool verify = true;   // off: no errors against the exact answer, no overlap measurement
  std::string output = "solution.h5";  // "none" for no file
  long output_every = 0;               // heat: a snapshot of u every N steps (0: none)
  int compress = 0;                    // deflate level of the output's /u (1-9); 0: none
  std::string report;                  // JSON report path, empty for none
  // Checkpoint / restart
  std::string checkpoint;
  long checkpoint_every = 0;
  std::string restart;
  // The config file given with --config, recorded in reports.
  std::string config_file;
  // --dry-run: print the configuration, decomposition, hierarchy, memory and files; no solve.
  bool dry_run = false;
  // Every option with its value and source, and the command line as given (for --dry-run
  // and the report); filled by parse_command_line.
  std::vector<OptionSource> sources;
  std::vector<std::string> command_line;
};

struct BenchOptions : ParallelOptions {
  Int3 grid{256, 256, 256};
  int reps = 20;
  int warmup = 3;
  long long mg_gather = kMgGatherAuto;       // as solve's --mg-gather
  MgInterp mg_interp = MgInterp::trilinear;  // as solve's --mg-interp (the _var rows)
  std::string report;
  // --coefficient: k as solve takes it; empty: none. Given, the operator and multigrid rows
  // run again on that variable operator (names ending _var) in the same run.
  std::string coefficient;
  // --shift: sigma as solve takes it, for the _var rows' operator (k 1 without
  // --coefficient); empty: none.
  std::string shift;
  // --bc: the _var rows' operator's face kinds as solve takes them (Neumann faces make it
  // variable); empty: every face Dirichlet.
  std::string bc;
  // --io: time writing the grid's field as solve --output does, against a raw write.
  bool io = false;
  std::string io_dir = ".";  // where the temporary files go
  int io_reps = 5;
  bool io_sync = true;  // fsync inside the timed writes (both of them)
};

// halo3d probe: pairwise peer access, latency and bandwidth of each transport.
struct ProbeOptions {
  Backend backend = Backend::auto_;
  PeerAccess peer_access = PeerAccess::auto_;
  std::vector<std::size_t> sizes;  // bytes; empty: 8 B to 64 MiB (powers of 4, and 64 MiB)
  int reps = 20;
  int warmup = 3;
  bool topology = false;
  Int3 grid{0, 0, 0};  // optional: the "communication wall" estimate for this grid
  Int3 procs{0, 0, 0};
  std::string report;
  // --model: the scaling model's tables instead of measurements (docs/SCALING_MODEL.md).
  bool model = false;
  std::string model_bench;               // a one-rank bench --report (empty: built-in H200)
  std::vector<std::string> model_links;  // NAME=LAT_US,GBPS[,COLLECTIVE_LAT_US] overrides
  long long mg_gather = kGpuMgGather;    // the --mg-gather rule the model applies (GPUs)
  double model_launch_us = -1;           // >= 0: replaces the measured launch floor
};

// Throws BadInput for values that are each well-formed but impossible together.
void validate(const SolveOptions& o);
// Every size of `grid` in [1, kMaxGridAxis], and all its points (with ghost layers) within
// 2^58: BadInput naming `option` otherwise (before any size arithmetic can overflow).
inline constexpr int kMaxGridAxis = 1 << 30;
// Limits of what the output and checkpoints store as attributes, checked by validate().
inline constexpr std::size_t kMaxModes = 2000;
inline constexpr std::size_t kMaxSpecBytes = 32768;
void check_grid_size(const Int3& grid, const std::string& option);

// A Poisson run of a fixed iteration count (--iters N, or --tol 0): running out of
// iterations is the plan, not a failure (exit code 0).
inline bool fixed_iterations(const SolveOptions& o) {
  return o.problem != ProblemKind::heat && o.tol == 0;
}

}  // namespace halo3d
