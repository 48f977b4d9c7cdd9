// halo3d solve's options, by --help group: a new option goes in its group's function.
#include <string>

#include "cli_parts.hpp"

namespace halo3d::cli {
namespace {

// solve's options by --help group (a new option goes in its group's function): --config,
// Problem and the process grid.
void add_solve_problem_options(CLI::App* solve, SolveOptions& o, SolveArgs& a) {
  solve->add_option("--config", a.config,
                    "Read options from this TOML file (keys = long option names)");
  add_grid_options(*solve, a.grid, a.procs);
  add_choice(*solve, "--problem", o.problem, "poisson: -lap u = f; heat: u_t = alpha lap u")
      ->group("Problem");
  solve
      ->add_option("--rhs", o.rhs,
                   "Poisson right-hand side: modes, random, file:PATH.h5:/DATASET or "
                   "expr:FORMULA (heat: its initial state when --initial is not given)")
      ->group("Problem");
  solve
      ->add_option("--initial", o.initial,
                   "Heat initial state: modes, random, file:PATH.h5:/DATASET or expr:FORMULA")
      ->group("Problem");
  solve
      ->add_option("--boundary", o.boundary,
                   "Dirichlet boundary values (Poisson and heat; on Neumann faces the outward flux "
                   "k du/dn): VALUE, x0=V,x1=V,y0=V,... (others 0), "
                   "expr:FORMULA or file:PATH.h5:/DATASET ([NZ+2][NY+2][NX+2])")
      ->group("Problem");
  solve
      ->add_option("--box", a.box,
                   "The domain [0,LX]x[0,LY]x[0,LZ]: LX,LY,LZ (spacing LX/(NX+1), ...)")
      ->delimiter(',')
      ->expected(3)
      ->group("Problem");
  solve
      ->add_option("--shift", a.shift,
                   "sigma >= 0 in -lap u + sigma u = f (heat: u_t = alpha (lap u - sigma u)): "
                   "VALUE, expr:FORMULA or file:PATH.h5:/DATASET ([NZ+2][NY+2][NX+2])")
      ->group("Problem");
  solve
      ->add_option("--coefficient", o.coefficient,
                   "k > 0 in -div(k grad u) + sigma u = f (heat: u_t = alpha (div(k grad u) - "
                   "sigma u)): VALUE, expr:FORMULA or file:PATH.h5:/DATASET ([NZ+2][NY+2][NX+2])")
      ->group("Problem");
  solve
      ->add_option("--bc", a.bc,
                   "Boundary kinds FACE=KIND,...: FACE x0,x1,y0,y1,z0,z1 or x,y,z; KIND dirichlet, "
                   "periodic (both faces of an axis) or neumann (--boundary: the outward flux)")
      ->group("Problem");
  solve->add_option("--mode", a.modes, "Manufactured mode KX,KY,KZ (repeatable; summed)")
      ->group("Problem");
  solve->add_option("--seed", o.seed, "Seed of --rhs random")
      ->check(whole_number<std::uint64_t>())
      ->group("Problem");
}

// Solver (Poisson and heat).
void add_solve_solver_options(CLI::App* solve, SolveOptions& o) {
  add_choice(*solve, "--solver", o.solver, "Poisson solver")->group("Solver");
  add_choice(*solve, "--precond", o.precond, "CG's preconditioner: multigrid V-cycle, or none")
      ->group("Solver");
  solve
      ->add_option(
          "--mg-levels", o.mg_levels,
          "Multigrid levels (0: down to the first level of at most 125 points, solved exactly)")
      ->check(whole_number<int>())
      ->check(non_negative())
      ->group("Solver");
  solve->add_option("--mg-smooth", o.mg_smooth, "Multigrid smoothing steps before and after")
      ->check(whole_number<int>())
      ->check(CLI::Range(1, 32))
      ->group("Solver");
  add_choice(*solve, "--mg-smoother", o.mg_smoother, "Multigrid smoother")->group("Solver");
  add_choice(*solve, "--mg-interp", o.mg_interp,
             "Multigrid interpolation with a variable operator: trilinear, or operator (weights "
             "from the coefficients: fewer iterations across jumps in k, a costlier set-up)")
      ->group("Solver");
  solve
      ->add_option("--mg-gather", o.mg_gather,
                   "Multigrid: coarse levels of at most this many points are gathered and run "
                   "on every rank (auto: 262144 with CUDA, 4096 on the host)")
      ->check(non_negative())
      ->default_str("auto")
      ->group("Solver");
  add_choice(*solve, "--precision", o.precision,
             "double, or mixed: the multigrid V-cycle in float, CG in double")
      ->group("Solver");
  solve
      ->add_flag("--fmg", o.fmg,
                 "MG-PCG starts from a full-multigrid F-cycle's answer instead of 0 (Poisson)")
      ->group("Solver");
  solve->add_option("--tol", o.tol, "Stop at this relative residual ||r||/||b||")
      ->check(tolerance())
      ->group("Solver");
  solve->add_option("--max-iters", o.max_iters, "Iteration limit")
      ->check(whole_number<long>() & non_negative())
      ->group("Solver");
  solve->get_option("--tol")->description(
      "Stop at this relative residual ||r||/||b|| (0: run --max-iters iterations)");
  solve
      ->add_option("--iters", o.iters,
                   "Run exactly N iterations whatever the residual (timing runs; exit code 0)")
      ->check(whole_number<long>())
      ->check(positive())
      ->excludes("--tol")
      ->excludes("--max-iters")
      ->group("Solver");
  solve->add_option("--steps", o.steps, "Heat: explicit Euler steps")
      ->check(whole_number<long>() & non_negative())
      ->group("Solver");
  solve->add_option("--alpha", o.alpha, "Heat: diffusivity")
      ->check(no_underflow())
      ->check(positive())
      ->group("Solver");
  add_choice(*solve, "--time-scheme", o.time_scheme,
             "Heat: explicit (Euler), implicit (backward Euler) or crank-nicolson; the "
             "implicit ones take any --dt and solve each step with CG (--precond, --tol)")
      ->group("Solver");
  solve->add_option("--dt", o.dt, "Heat: time step (0 = 0.9 of the stability limit)")
      ->check(no_underflow())
      ->check(non_negative())
      ->group("Solver");
}

// Parallel, Output and Checkpoint.
void add_solve_output_options(CLI::App* solve, SolveOptions& o, SolveArgs& a) {
  add_parallel_options(*solve, o.backend, o.halo, o.overlap, o.peer_access);
  solve->add_option("--monitor", o.monitor, "Progress line every N iterations (0: none)")
      ->check(whole_number<int>() & non_negative())
      ->group("Output");
  solve
      ->add_option("--progress", o.progress,
                   "Progress line (iteration, residual, time) every this many seconds of a solve "
                   "(0: none; with --quiet, none unless given)")
      ->check(non_negative())
      ->group("Output");
  solve
      ->add_flag("--quiet", o.quiet,
                 "Print only the result, the error, the time and the files written (no header, "
                 "phase or progress lines)")
      ->group("Output");
  add_switch(*solve, "--verify", o.verify,
             "Measure the error against the exact answer and the halo overlap after the solve "
             "(off: production runs; the true residual is still recomputed)")
      ->group("Output");
  solve
      ->add_flag("--dry-run", o.dry_run,
                 "Print the configuration (each value and its source), decomposition, multigrid "
                 "hierarchy, memory per rank and files, then exit 0 without solving")
      ->group("Output");
  solve->add_option("--output", a.output, "Solution file (HDF5), or 'none'")->group("Output");
  solve
      ->add_option("--output-every", o.output_every,
                   "Heat: also a snapshot of u every N steps (and the last step) in --output's "
                   "/series, played by the .xdmf sidecar")
      ->check(whole_number<long>() & positive())
      ->group("Output");
  solve
      ->add_option("--compress", o.compress,
                   "Deflate /u of --output at this level, 1-9 (chunked; slower to write); 0: off")
      ->check(whole_number<int>())
      ->check(CLI::Range(0, 9))
      ->group("Output");
  solve->add_option("--report", o.report, "JSON report of the run, or 'none'")->group("Output");
  solve->add_option("--checkpoint", o.checkpoint, "Checkpoint file (HDF5), or 'none'")
      ->group("Checkpoint");
  solve
      ->add_option("--checkpoint-every", o.checkpoint_every,
                   "Checkpoint every N iterations (0: only on a signal)")
      ->check(whole_number<long>() & non_negative())
      ->group("Checkpoint");
  solve->add_option("--restart", o.restart, "Continue from this checkpoint")->group("Checkpoint");
}

}  // namespace

// The options' order here is the order of --help and of --dry-run's configuration.
CLI::App* add_solve_command(CLI::App& app, SolveOptions& o, SolveArgs& a) {
  CLI::App* solve = app.add_subcommand("solve", "Solve a Poisson or heat problem");
  solve->option_defaults()->always_capture_default();
  add_solve_problem_options(solve, o, a);
  add_solve_solver_options(solve, o);
  add_solve_output_options(solve, o, a);
  solve->footer(
      "Stopping a run and keeping its work: Ctrl-C (SIGINT), SIGTERM or SIGUSR1 to halo3d or to\n"
      "any one rank stops every rank at the next iteration; with --checkpoint FILE that is\n"
      "written first (exit code 75; continue with --restart FILE), without it nothing is saved\n"
      "(exit code 76). Under mpirun, Ctrl-C makes mpirun send SIGTERM and then SIGKILL 1 s\n"
      "later, which can cut a large checkpoint off (the previous one stays complete, and the\n"
      "stop line names the iteration it holds). To give the checkpoint the time it needs,\n"
      "signal mpirun with SIGUSR1, which it forwards to every rank:\n"
      "    kill -USR1 <mpirun pid>        (e.g. kill -USR1 $(pgrep -n mpirun))\n");
  return solve;
}

}  // namespace halo3d::cli
