#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>

#include "app.hpp"
#include "checkpoint.hpp"
#include "checks.hpp"
#include "dry_run.hpp"
#include "errors.hpp"
#include "fields.hpp"
#include "files.hpp"
#include "hdf5_io.hpp"
#include "implicit_heat.hpp"
#include "multigrid.hpp"
#include "point_ops.hpp"
#include "problem.hpp"
#include "provenance.hpp"
#include "reduction.hpp"
#include "runtime.hpp"
#include "solvers.hpp"
#include "threads.hpp"
#include "time_series.hpp"

namespace halo3d {

// docs/report.schema.json's version: raised when a field changes meaning or goes.
constexpr int kReportSchemaVersion = 1;
namespace {

// Where the solve's time went on the slowest rank (largest solve time): the timers' growth
// during the solve, disjoint parts, and "other" (loop, vote, waits outside the timers) as the
// remainder, so the parts add up to the whole.
struct SolveSplit {
  int rank = 0;
  double solve = 0, compute = 0, halo = 0, reduction = 0, checkpoint = 0, monitor = 0, other = 0;
};
// A rank with no neighbour exchanges nothing: what its halo timer holds is waiting for
// compute (the fence after queued kernels), counted as compute (no_halo).
SolveSplit solve_split(double solve_s, const Timers& before, const Timers& after, bool no_halo,
                       MPI_Comm comm) {
  struct {
    double v;
    int rank;
  } in{solve_s, comm_rank(comm)}, slowest{};
  HALO3D_MPI_CHECK(MPI_Allreduce(&in, &slowest, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm));
  double v[6] = {solve_s,
                 after.compute - before.compute,
                 after.halo - before.halo,
                 after.reduction - before.reduction,
                 after.io - before.io,
                 after.monitor - before.monitor};
  if (no_halo) v[1] += v[2], v[2] = 0;
  HALO3D_MPI_CHECK(MPI_Bcast(v, 6, MPI_DOUBLE, slowest.rank, comm));
  SolveSplit sp{slowest.rank, v[0], v[1], v[2], v[3], v[4], v[5], 0};
  sp.other = sp.solve - (sp.compute + sp.halo + sp.reduction + sp.checkpoint + sp.monitor);
  return sp;
}

// Each rank's solve time and its parts (as the split counts them, before the no-neighbour
// rule), and all its file I/O: the smallest and largest over the ranks, to show imbalance.
nlohmann::json per_rank_spread(double solve_s, const Timers& before, const Timers& after,
                               double io_s, MPI_Comm comm) {
  const char* names[6] = {"solve_s", "compute_s", "halo_s", "reduction_s", "checkpoint_s", "io_s"};
  double lo[6] = {solve_s,
                  after.compute - before.compute,
                  after.halo - before.halo,
                  after.reduction - before.reduction,
                  after.io - before.io,
                  io_s};
  double hi[6];
  std::copy(lo, lo + 6, hi);
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, lo, 6, MPI_DOUBLE, MPI_MIN, comm));
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, hi, 6, MPI_DOUBLE, MPI_MAX, comm));
  nlohmann::json j = nlohmann::json::object();
  for (int i = 0; i < 6; ++i) j[names[i]] = {{"min", lo[i]}, {"max", hi[i]}};
  return j;
}

double max_over_ranks(double x, MPI_Comm comm) {
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_MAX, comm));
  return x;
}

nlohmann::json to_json(const Int3& v) { return nlohmann::json::array({v[0], v[1], v[2]}); }

}  // namespace

// What run_solve allocates beyond the runtime, per rank: the source, the method's vectors
// and one scratch vector (the true residual) in backend memory, and the multigrid
// hierarchy; in host memory the source as filled and the solution as written.
MemoryNeed solve_memory(const SolveOptions& o, const Decomposition& d, MPI_Comm cart) {
  const double field = 8.0 * double(d.layout().padded_size());
  // Implicit heat: u and the right-hand side of a step, and the inner CG's vectors.
  const bool implicit = uses_implicit_heat(o);
  const bool pc = uses_multigrid(o);
  const double method = implicit ? 2 + (pc ? 5 : 4)
                        : o.problem == ProblemKind::heat || o.solver == SolverKind::jacobi
                            ? 2
                            : (pc ? 5 : 4);
  MemoryNeed m;
  m.device = (2 + method) * field;
  if (pc)
    m.device += mg_memory_bytes(mg_plan(d, mg_options(o), cart), o.precision == Precision::mixed);
  m.host = 2 * field;
  if (has_boundary_values(o)) m.host += field;  // the boundary values, while lifted
  if (has_boundary_values(o) && o.problem == ProblemKind::heat) m.device += field;  // heat's B g
  return m;
}

namespace {

// One `halo3d solve` as it is built, phase by phase. Members are declared in the order they
// are made, so they are destroyed in reverse: the method uses the source and the
// preconditioner, both use the runtime.
struct SolveRun {
  SolveRun(const SolveOptions& opts, MPI_Comm world)
      : o(opts),
        root(comm_rank(world) == 0),
        heat(o.problem == ProblemKind::heat),
        solver(heat ? (uses_implicit_heat(o) ? to_string(o.time_scheme) : "euler")
                    : to_string(o.solver)),
        phases(root && !o.quiet, true) {}
  const SolveOptions& o;
  const bool root, heat;
  const std::string solver;
  PhaseClock phases;
  std::unique_ptr<Problem> prob;
  double dt = 0;
  std::unique_ptr<Runtime> rt;
  MPI_Comm comm = MPI_COMM_NULL;
  Kernels* k = nullptr;
  const Decomposition* d = nullptr;
  Buffer b;                        // the right-hand side (heat: the initial state)
  std::optional<Buffer> boundary;  // heat's boundary values: a source term B g of every step
  double setup_s = 0;
  double start_s = 0;  // the method's start (--fmg: the F-cycle, the first residual)
  std::unique_ptr<Preconditioner> pc;
  const Multigrid* mg = nullptr;
  std::string precond;
  std::unique_ptr<Method> method;
  RunIdentity id;
  long first = 0;
  std::vector<double> history;  // a restart's residuals so far
  // Heat's --output-every: the solution file is open (as its temporary) for the whole run.
  std::unique_ptr<AtomicH5File> out;
  std::unique_ptr<TimeSeries> series;
  // The --output file's final write (from its creation, or with a series from this write's
  // start, to its rename; slowest rank) and the bytes of /u and /residual_history.
  double out_s = 0;
  long long out_bytes = 0;
  // What --checkpoint holds (rank 0's view): the iteration of the last complete checkpoint
  // in it (this run's, or the restart's when --restart is the same file); -1 none yet; -2
  // a file from before this run.
  long saved = -1;
  bool wants_series() const { return heat && o.output_every > 0 && o.output != "none"; }
};

// The problem, the runtime (decomposition, backend, transport) and the file checks.
void set_up(SolveRun& r, MPI_Comm world) {
  const SolveOptions& o = r.o;
  r.prob = std::make_unique<Problem>(o);
  r.dt = r.prob->dt();
  RuntimeOptions ro = runtime_options(o, r.prob->stencil());
  ro.memory = [&o](const Decomposition& d, MPI_Comm cart) { return solve_memory(o, d, cart); };
  r.rt = make_runtime(ro, world);
  r.comm = r.rt->cart.get();
  r.k = r.rt->kernels.get();
  r.d = &r.rt->decomp;
  if (r.root && !r.rt->warnings.empty()) std::fputs(r.rt->warnings.c_str(), stderr);
  // Fail before solving, not after hours of it.
  check_planned_files(planned_files(o), r.comm, planned_inputs(o));
  // Temporaries that runs killed mid-write (Ctrl-C under mpirun, a crash) left.
  const std::string stale = clean_stale_temporaries(planned_files(o), o.restart, r.comm);
  if (!stale.empty()) std::fputs(stale.c_str(), stderr);
}

void fill_source(SolveRun& r) {
  r.b = fill_fields(*r.k, r.o, *r.prob, *r.d, r.comm);
  // Poisson's boundary values are in b; heat's are added by every step.
  if (r.heat && has_boundary_values(r.o))
    r.boundary = upload(*r.k, boundary_source(r.o, *r.prob, *r.d, r.comm));
}

// The precision the run used: mixed only where a multigrid V-cycle ran in float (CG's or
// the implicit heat steps' inner CG's preconditioner).
std::string precision(const SolveRun& r) {
  return r.o.precision == Precision::mixed && uses_multigrid(r.o) ? "mixed" : "double";
}

}  // namespace

// A checkpoint continues only under the same preconditioner (it shapes the iterates).
// An implicit step's answer depends on the inner solve: its tolerance and preconditioner.
std::string solver_identity(const SolveOptions& o) {
  const bool heat = o.problem == ProblemKind::heat;
  const std::string solver =
      heat ? (uses_implicit_heat(o) ? to_string(o.time_scheme) : "euler") : to_string(o.solver);
  const bool mixed = o.precision == Precision::mixed && uses_multigrid(o);
  if (uses_implicit_heat(o))
    return solver + "(tol=" + nlohmann::json(o.tol).dump() + ",precond=" + to_string(o.precond) +
           (mixed ? ",mixed" : "") + ")";
  if (uses_preconditioner(o))  // the multigrid V-cycle CG runs with
    return solver + "+mg(levels=" + std::to_string(o.mg_levels) +
           ",smooth=" + std::to_string(o.mg_smooth) + "," + to_string(o.mg_smoother) +
           (o.precision == Precision::mixed ? ",mixed" : "") + ")";
  return solver;
}

namespace {

// The header: what is solved, where and how; printed as soon as set-up has chosen the
// decomposition, backend and halo transport, before any phase line.
void print_header(const SolveRun& r) {
  const SolveOptions& o = r.o;
  const Decomposition& d = *r.d;
  std::printf(
      "halo3d %s: %s/%s on grid %s, %d %s as %s, backend %s (%s), %d thread(s)/rank (%s), "
      "halo %s, overlap %s\n",
      version_string().c_str(), to_string(o.problem).c_str(), r.solver.c_str(),
      to_string(o.grid).c_str(), d.ranks, d.ranks == 1 ? "rank" : "ranks",
      to_string(d.procs).c_str(), r.k->name().c_str(), r.k->device_name().c_str(),
      thread_setup().threads, thread_setup().from_env ? "OMP_NUM_THREADS" : "auto",
      r.rt->op->transport().name().c_str(), o.overlap ? "on" : "off");
  print_halo_selection(r.rt->halo_selection);
  std::fflush(stdout);
}

// --output-every: the solution file's temporary, opened now, and the series' first snapshot
// (the initial state, or a restart's series so far copied from its checkpoint).
void start_series(SolveRun& r) {
  ScopedTimer t(r.rt->timers.io);
  r.out = std::make_unique<AtomicH5File>(r.o.output, r.comm);
  r.series = std::make_unique<TimeSeries>(r.out->get(), *r.d, r.comm, r.o.output_every, r.dt);
  if (!r.o.restart.empty()) r.series->restore(r.o.restart, r.first);
  if (r.series->due(r.first)) r.series->write(r.first, download(*r.k, r.method->solution()));
}

// What --checkpoint holds as the solve starts (SolveRun::saved): the restart's iteration
// when --restart is that same file, else -2 if the file exists, -1 if not.
long checkpoint_held(const SolveOptions& o, long first) {
  struct stat ck, rs;
  if (o.checkpoint.empty() || ::stat(o.checkpoint.c_str(), &ck) != 0) return -1;
  if (!o.restart.empty() && ::stat(o.restart.c_str(), &rs) == 0 && ck.st_dev == rs.st_dev &&
      ck.st_ino == rs.st_ino)
    return first;
  return -2;
}

// The checksum of the problem's data as filled (b; heat: u0 and B g), which a checkpoint
// records and a restart compares: a file: input whose contents changed is refused.
std::uint64_t data_checksum(SolveRun& r) {
  std::uint64_t c = field_checksum(*r.d, download(*r.k, r.b), r.comm);
  if (r.boundary) c = c * 31 + field_checksum(*r.d, download(*r.k, *r.boundary), r.comm);
  return c;
}

// The preconditioner, the method, and its state: fresh or from --restart.
void start_solver(SolveRun& r) {
  const SolveOptions& o = r.o;
  // The preconditioner's set-up (the multigrid hierarchy) is timed on its own.
  const double t_setup = now_seconds();
  r.pc = make_preconditioner(o, *r.rt);
  r.mg = dynamic_cast<const Multigrid*>(r.pc.get());
  // The slowest rank's: the set-up is collective, and every rank then writes the same value
  // (the HDF5 attribute, which every rank writes, agrees with the report and the header).
  r.setup_s = max_over_ranks(now_seconds() - t_setup, r.comm);
  r.precond = r.pc ? r.pc->name() : (uses_implicit_heat(o) ? to_string(o.precond) : "none");
  const Buffer* bg = r.boundary ? &*r.boundary : nullptr;
  r.method = uses_implicit_heat(o)
                 ? make_implicit_heat(*r.rt, o, r.dt, r.b, bg)
                 : make_method(o, r.dt, *r.rt->op, r.comm, r.rt->timers, r.b, r.pc.get(), bg);
  r.id = RunIdentity::of(o, solver_identity(o), r.dt);
  if (!o.checkpoint.empty() || !o.restart.empty()) r.id.data = data_checksum(r);
  if (!o.restart.empty()) {
    ScopedTimer t(r.rt->timers.io);
    r.first = read_checkpoint(o.restart, r.comm, *r.d, *r.k, *r.method, r.id, r.history);
  } else {
    const double t_start = now_seconds();  // with --fmg: the F-cycle (not in solve_s)
    r.method->start();
    r.start_s = max_over_ranks(now_seconds() - t_start, r.comm);
  }
  if (r.wants_series()) start_series(r);  // refuses a checkpoint whose series cannot go on
  r.saved = checkpoint_held(o, r.first);
  if (r.root && !o.restart.empty())
    std::printf("restarted from %s at iteration %ld\n", o.restart.c_str(), r.first);
  if (r.root && !o.quiet && r.mg)
    std::printf("preconditioner: multigrid V-cycle, %s; set-up %.4f s\n", r.mg->describe().c_str(),
                r.setup_s);
  if (r.root && !o.quiet && r.mg && o.fmg && o.restart.empty())
    std::printf("first iterate: full-multigrid F-cycle; CG's start %.4f s\n", r.start_s);
  std::fflush(stdout);
}

// Heat progress lines: the physical time, and the error against the exact answer.
std::string heat_progress(SolveRun& r, long it) {
  ScopedTimer t(r.rt->timers.monitor);
  char line[128];
  std::snprintf(line, sizeof line, "t %.6e  ", r.dt * double(it));
  std::string s = line;
  if (r.prob->has_exact()) {
    SolveOptions at = r.o;  // the exact answer after `it` steps, not after --steps
    at.steps = it;
    const Problem::Errors e = Problem(at).errors(*r.k, *r.d, r.method->solution().data(), r.comm);
    std::snprintf(line, sizeof line, "max error %.3e  ", e.max);
    s += line;
  }
  return s;
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGUSR1:
      return "SIGUSR1";
    default:
      return "?";
  }
}

// Rank 0's line as the ranks stop on a signal, before the checkpoint's write: under mpirun,
// Ctrl-C (mpirun's SIGTERM, then SIGKILL 1 s later) may kill the ranks during that write,
// and then the file still holds what this line says.
void announce_stop(const SolveRun& r, long it, int sig) {
  if (!r.root || r.o.checkpoint.empty()) return;
  const std::string& ck = r.o.checkpoint;
  const std::string held =
      r.saved >= 0    ? ck + " still holds iteration " + std::to_string(r.saved)
      : r.saved == -2 ? ck + " keeps the file it held before this run"
                      : "nothing is saved (no earlier checkpoint; --checkpoint-every N keeps one)";
  std::fprintf(stderr,
               "halo3d: %s at iteration %ld: writing checkpoint %s (iteration %ld); if the "
               "write is cut off, %s\n",
               signal_name(sig), it, ck.c_str(), it, held.c_str());
  std::fflush(stderr);
}

struct SolveOutcome {
  DriveResult res;
  Timers before, after;  // the timers as the solve began and ended
};

SolveOutcome solve(SolveRun& r) {
  const SolveOptions& o = r.o;
  DriveOptions dro;
  dro.max_iters = r.heat ? o.steps : o.max_iters;
  dro.monitor = o.monitor;
  dro.progress_s = o.progress;
  dro.tol = r.heat ? 0.0 : o.tol;
  dro.dt = r.dt;
  dro.checkpoint_every = o.checkpoint_every;
  TimeSeries* series = r.series.get();
  if (!o.checkpoint.empty())
    dro.checkpoint = [&r, series](long it, const std::vector<double>& h) {
      ScopedTimer t(r.rt->timers.io);
      std::function<void(hid_t)> extra;
      if (series) extra = [series](hid_t f) { series->save(f); };
      write_checkpoint(r.o.checkpoint, r.comm, *r.d, *r.k, *r.method, r.id, it, h, extra);
      r.saved = it;
    };
  dro.stopping = [&r](long it, int sig) { announce_stop(r, it, sig); };
  if (r.heat) dro.progress = [&r](long it) { return heat_progress(r, it); };
  if (series) {
    dro.snapshot_every = series->every();
    dro.snapshot = [&r, series](long it) {
      ScopedTimer t(r.rt->timers.io);
      series->write(it, download(*r.k, r.method->solution()));
    };
  }
  SolveOutcome out;
  out.before = r.rt->timers;
  out.res = drive(*r.method, r.comm, dro, r.first, std::move(r.history));
  out.after = r.rt->timers;
  return out;
}

// A run stopped by a signal: the line saying so, and its exit code.
int stopped_by_signal(const SolveRun& r, const DriveResult& res) {
  const SolveOptions& o = r.o;
  // 75 promises a checkpoint to restart from (batch scripts requeue on it); without
  // --checkpoint nothing was saved, which is a code of its own.
  const int code = o.checkpoint.empty() ? kExitStoppedUnsaved : kExitCheckpointed;
  if (r.root)
    std::fprintf(stderr, "halo3d: stopped by signal %d (%s) at iteration %ld; %s; exit code %d\n",
                 res.stop_signal, signal_name(res.stop_signal), res.iterations,
                 o.checkpoint.empty() ? "no --checkpoint given, state not saved"
                                      : ("checkpoint written to " + o.checkpoint).c_str(),
                 code);
  return code;
}

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

// ||b - A x|| / ||b|| recomputed from scratch by the method, from its scaled vectors (b and
// x times a power of two: the ratio is the same, and no square overflows or underflows
// whatever the magnitude of b). NaN or Inf is a breakdown, never a success.
double true_relative_residual(SolveRun& r) {
  const double rel = r.method->true_relative_residual();
  if (!std::isfinite(rel))
    throw Error(kExitBreakdown, "the true residual ||b - A x|| / ||b|| is " + std::to_string(rel) +
                                    ": the solve diverged or the data holds NaN/Inf; nothing "
                                    "written");
  return rel;
}

// Self-checks: the true residual recomputed from scratch (a converged recurrence is
// converged only when it meets --tol too: otherwise res.converged is withdrawn) and the
// answer checked finite (always: cheap), and with --verify on the error against the exact
// answers where they are known and the overlap measurement (most of the phase's time).
Verification verify(SolveRun& r, DriveResult& res) {
  Verification v;
  if (!r.heat) v.true_rel = true_relative_residual(r);
  if (!r.heat && res.converged && !(v.true_rel <= kTrueResidualSlack * r.o.tol)) {
    res.converged = false;
    v.unconfirmed = true;
  }
  // No iteration ran (--max-iters 0): the residual is the starting iterate's, recomputed.
  v.rel_res = res.history.empty() && !r.heat ? v.true_rel : res.relative_residual;
  // A NaN/Inf answer is a breakdown on every rank, never a success. Checked where u lives.
  if (!all_finite(*r.k, r.d->layout(), r.method->solution().data(), r.comm))
    throw Error(kExitBreakdown, "the solution holds NaN or Inf after " +
                                    std::to_string(res.iterations) +
                                    " iterations: the solve diverged; nothing written");
  v.verified = r.o.verify;
  if (!v.verified) return v;
  if (r.prob->has_exact()) v.err = r.prob->errors(*r.k, *r.d, r.method->solution().data(), r.comm);
  // How much of the halo the overlap hides, measured on the real faces after the solve.
  v.has_halo = r.d->ranks > 1;
  if (v.has_halo) {
    Buffer scratch(*r.k, r.b.size());
    v.ov = r.rt->op->measure_overlap(r.method->solution().data(), scratch.data(), 5, r.comm);
  }
  return v;
}

// The run's description as attributes of the solution file's root group.
void write_solution_attributes(const SolveRun& r, hid_t g, const DriveResult& res,
                               const Verification& v) {
  const SolveOptions& o = r.o;
  const Decomposition& d = *r.d;
  h5_attr(g, "grid", std::vector<long long>{o.grid[0], o.grid[1], o.grid[2]});
  h5_attr(g, "procs", std::vector<long long>{d.procs[0], d.procs[1], d.procs[2]});
  h5_attr(g, "spacing", std::vector<double>{r.prob->h()[0], r.prob->h()[1], r.prob->h()[2]});
  h5_attr_matrix(g, "mode", o.modes);
  h5_attr(g, "problem", to_string(o.problem));
  h5_attr(g, "solver", r.solver);
  h5_attr(g, "precond", r.precond);
  h5_attr(g, "precision", precision(r));
  if (r.mg) {  // the hierarchy: each level's grid, and its set-up time
    std::vector<Int3> grids;
    for (const MgLevelInfo& l : r.mg->levels()) grids.push_back(l.grid);
    h5_attr_matrix(g, "mg_level_grids", grids);
    h5_attr(g, "mg_setup_s", std::vector<double>{r.setup_s});
  }
  if (r.heat) h5_attr(g, "time_scheme", to_string(o.time_scheme));
  h5_attr(g, "rhs", source_spec(o));  // heat: where its initial state came from
  if (r.heat) h5_attr(g, "initial", source_spec(o));
  h5_attr(g, "boundary", o.boundary);
  h5_attr(g, "compress", std::vector<long long>{o.compress});  // deflate level of /u; 0: none
  h5_attr(g, "iterations", std::vector<long long>{res.iterations});
  h5_attr(g, "relative_residual", std::vector<double>{r.heat ? NAN : v.rel_res});
  h5_attr(g, "true_relative_residual", std::vector<double>{v.true_rel});
  h5_attr(g, "converged", std::vector<long long>{res.converged ? 1 : 0});
  h5_attr(g, "fixed_iterations",
          std::vector<long long>{fixed_iterations(o) && !res.converged ? 1 : 0});
  h5_attr(g, "l2_error", std::vector<double>{v.err.l2});
  h5_attr(g, "max_error", std::vector<double>{v.err.max});
  h5_attr(g, "l2_error_continuous", std::vector<double>{v.err.l2_cont});
  h5_attr(g, "max_error_continuous", std::vector<double>{v.err.max_cont});
  h5_attr(g, "backend", r.k->name());
  h5_attr(g, "halo", r.rt->op->transport().name());
  h5_attr(g, "version", version_string());
  if (r.heat) {
    const double t_end = r.dt * double(res.iterations);  // the physical time reached
    h5_attr(g, "t", std::vector<double>{t_end});
    h5_attr(g, "dt", std::vector<double>{r.dt});
    h5_attr(g, "alpha", std::vector<double>{o.alpha});
    h5_attr(g, "time", std::vector<double>{t_end, r.dt, o.alpha});  // older readers: t, dt, alpha
  }
  if (r.series) {
    h5_attr(g, "output_every", std::vector<long long>{r.series->every()});
    h5_attr(g, "snapshots", std::vector<long long>{(long long)r.series->snapshots().size()});
  }
}

// --output: the solution file and its XDMF sidecar. With a series the file is the one open
// since the start; the final state is always its last snapshot (when the steps are not a
// multiple of --output-every, an extra one), and the sidecar plays the series.
void write_solution(SolveRun& r, const DriveResult& res, const Verification& v) {
  ScopedTimer t(r.rt->timers.io);
  const std::vector<double> u = download(*r.k, r.method->solution());
  const double t0 = now_seconds();
  r.out_bytes = 8 * (r.d->global_points() + (long long)res.history.size());
  if (!r.out) r.out = std::make_unique<AtomicH5File>(r.o.output, r.comm);
  const hid_t f = r.out->get();
  h5_write_field(f, "u", *r.d, u.data(), r.o.compress);
  h5_write_vector(f, "residual_history", res.history, r.comm);
  if (r.series) {
    r.series->write(res.iterations, u);
    r.series->finish();
  }
  write_solution_attributes(r, f, res, v);
  r.out->commit();
  r.out_s = max_over_ranks(now_seconds() - t0, r.comm);
  if (!r.series) return write_xdmf(r.o.output, r.o.grid, r.prob->h(), r.comm);
  std::vector<XdmfStep> steps;
  for (const Snapshot& s : r.series->snapshots()) steps.push_back({snapshot_dataset(s.step), s.t});
  write_xdmf_series(r.o.output, r.o.grid, r.prob->h(), steps, r.comm);
}

// The run's numbers reduced for the summary lines and the report.
struct Summary {
  SolveSplit sp;
  nlohmann::json per_rank;  // min and max over the ranks of each part of the solve
  double io_s = 0;
  bool fixed = false;  // a fixed iteration count ran out (success)
  long done = 0;       // iterations of this run (not counting a restart's)
  double per_iter = 0, gbs = 0, gpts = 0;
};

Summary summarize(SolveRun& r, const SolveOutcome& s) {
  Summary m;
  m.sp =
      solve_split(s.res.solve_seconds, s.before, s.after, r.rt->op->plan().faces.empty(), r.comm);
  m.io_s = max_over_ranks(r.rt->timers.io, r.comm);
  m.per_rank = per_rank_spread(s.res.solve_seconds, s.before, s.after, r.rt->timers.io, r.comm);
  // --iters N / --tol 0: the iteration count is the plan; stopping there is success.
  m.fixed = fixed_iterations(r.o) && !s.res.converged;
  m.done = s.res.iterations - r.first;
  m.per_iter = m.done > 0 ? m.sp.solve / double(m.done) : 0.0;
  m.gbs = m.per_iter > 0 ? r.method->bytes_per_iteration() / m.per_iter / 1e9 : 0.0;
  m.gpts = m.per_iter > 0 ? r.rt->op->global_points() / m.per_iter / 1e9 : 0.0;
  return m;
}

// The error line: against the exact answer, or why there is none.
void print_error(const SolveRun& r, const Verification& v) {
  const SolveOptions& o = r.o;
  if (!r.prob->has_exact())
    std::printf("error vs exact: none (no exact answer for %s %s%s%s)\n", source_option(o),
                source_spec(o).c_str(), has_boundary_values(o) ? " with --boundary " : "",
                has_boundary_values(o) ? o.boundary.c_str() : "");
  else if (!v.verified)
    std::printf("error vs exact: not measured (--verify off)\n");
  else
    std::printf("error%s vs exact discrete: l2 %.3e max %.3e; vs continuous: l2 %.3e max %.3e\n",
                r.heat ? " at t" : "", v.err.l2, v.err.max, v.err.l2_cont, v.err.max_cont);
}

// The overlap line only where its numbers mean something: not on the host backend (its
// "halo" is a memory copy between ranks sharing the CPU cores that also compute), and not
// when they cannot be right (the sequential application faster than its compute alone).
bool overlap_shown(const SolveRun& r, const Verification& v) {
  return v.has_halo && r.k->name() != to_string(Backend::host) &&
         v.ov.sequential_s >= v.ov.compute_s;
}

// Rank 0's lines on the outcome: steps or convergence, errors; unless --quiet, the implicit
// steps' inner iterations, the series, throughput and overlap.
void print_results(const SolveRun& r, const DriveResult& res, const Verification& v,
                   const Summary& m) {
  const SolveOptions& o = r.o;
  if (r.heat) {
    std::printf("heat: %ld steps done, t = %.6e (dt %.6e, alpha %g)\n", res.iterations,
                r.dt * double(res.iterations), r.dt, o.alpha);
    if (!o.quiet && uses_implicit_heat(o) && m.done > 0)
      std::printf("%s steps: %ld CG iterations (%s), %.2f per step\n",
                  to_string(o.time_scheme).c_str(), r.method->inner_iterations(),
                  o.precond == Precond::mg ? "multigrid-preconditioned" : "plain",
                  double(r.method->inner_iterations()) / double(m.done));
    if (!o.quiet && r.series)
      std::printf("series: %zu snapshots of u (every %ld steps, and the last) in %s:/series\n",
                  r.series->snapshots().size(), r.series->every(), o.output.c_str());
  } else {
    std::printf("%s after %ld iterations: relative residual %.3e (true %.3e)\n",
                res.converged ? "converged" : (m.fixed ? "fixed iterations done" : "NOT converged"),
                res.iterations, v.rel_res, v.true_rel);
  }
  print_error(r, v);
  if (!o.quiet) {
    std::printf("throughput: %.2f GB/s of vector traffic, %.3f Gpoints/s\n", m.gbs, m.gpts);
    if (overlap_shown(r, v))
      std::printf(
          "overlap: operator %.3e s compute-only, %.3e s halo-only, %.3e s overlapped, %.3e s "
          "sequential: %.0f%% of halo hidden\n",
          v.ov.compute_s, v.ov.halo_s, v.ov.overlapped_s, v.ov.sequential_s,
          100 * v.ov.hidden_fraction);
  }
  std::fflush(stdout);
}

// The report's "config": the options that shape the run, and where they came from.
nlohmann::json config_json(const SolveRun& r) {
  const SolveOptions& o = r.o;
  nlohmann::json c = {
      {"grid", to_json(o.grid)},
      {"problem", to_string(o.problem)},
      {"solver", r.solver},
      {"precond", r.precond},
      {"time_scheme", to_string(o.time_scheme)},
      {"mg_levels", o.mg_levels},
      {"mg_smooth", o.mg_smooth},
      {"mg_smoother", to_string(o.mg_smoother)},
      {"mg_gather", o.mg_gather},
      {"fmg", o.fmg},
      {"precision", precision(r)},
      {"rhs", source_spec(o)},
      {"initial", r.heat ? nlohmann::json(source_spec(o)) : nlohmann::json()},
      {"boundary", o.boundary},
      {"seed", o.seed},
      {"tol", o.tol},
      {"max_iters", o.max_iters},
      {"iters", o.iters > 0 ? nlohmann::json(o.iters) : nlohmann::json()},
      {"steps", o.steps},
      {"alpha", o.alpha},
      {"dt", r.dt},
      {"backend", r.k->name()},
      {"halo", r.rt->op->transport().name()},
      {"overlap", o.overlap},
      {"output", o.output},
      {"compress", o.compress},
      {"output_every", r.series ? nlohmann::json(r.series->every()) : nlohmann::json()},
      {"verify", o.verify},
      {"progress_s", o.progress},
      {"config_file", o.config_file}};
  nlohmann::json modes = nlohmann::json::array();
  for (const auto& m : o.modes) modes.push_back(to_json(m));
  c["modes"] = modes;
  return c;
}

// The report's "result": iterations, residuals, errors; heat's time reached.
nlohmann::json result_json(const SolveRun& r, const DriveResult& res, const Verification& v,
                           const Summary& m) {
  const bool heat = r.heat, exact = r.prob->has_exact();
  const auto num = [](bool has, double x) { return has ? nlohmann::json(x) : nlohmann::json(); };
  nlohmann::json j = {
      {"iterations", res.iterations},
      {"iterations_this_run", m.done},
      {"restarted_from", r.first},
      {"converged", heat ? nlohmann::json() : nlohmann::json(res.converged)},
      {"fixed_iterations", m.fixed},
      {"verified", v.verified},
      {"stop_reason", res.converged   ? (heat ? "steps done" : "converged")
                      : m.fixed       ? "fixed iterations"
                      : v.unconfirmed ? "true residual above tol"
                                      : "iteration limit"},
      {"relative_residual", num(!heat, v.rel_res)},
      {"true_relative_residual", num(!heat, v.true_rel)},
      {"l2_error", num(exact, v.err.l2)},
      {"max_error", num(exact, v.err.max)},
      {"l2_error_continuous", num(exact, v.err.l2_cont)},
      {"snapshots", r.series ? nlohmann::json(r.series->snapshots().size()) : nlohmann::json()}};
  if (heat) {
    j["steps"] = res.iterations;
    j["t"] = r.dt * double(res.iterations);
    j["dt"] = r.dt;
    j["alpha"] = r.o.alpha;
    j["time_scheme"] = to_string(r.o.time_scheme);
    if (uses_implicit_heat(r.o)) {
      const long inner = r.method->inner_iterations();
      j["cg_iterations"] = inner;
      j["cg_iterations_per_step"] = m.done > 0 ? double(inner) / double(m.done) : 0.0;
    }
  }
  return j;
}

// Phases of the whole run on rank 0 (output: until this report is written), and the
// solve split on the slowest rank; each list of parts adds up to its whole.
nlohmann::json timing_json(const SolveRun& r, const Summary& m) {
  nlohmann::json ph = nlohmann::json::array();
  double total = 0;
  for (const auto& [name, sec] : r.phases.phases()) {
    ph.push_back({{"name", name}, {"seconds", sec}});
    total += sec;
  }
  const double output_so_far = now_seconds() - process_start_seconds() - r.phases.total();
  ph.push_back({{"name", "output"}, {"seconds", output_so_far}});
  total += output_so_far;
  const SolveSplit& sp = m.sp;
  return {{"total_s", total},
          {"phases", ph},
          {"setup_s", r.setup_s},
          {"start_s", r.start_s},
          {"solve_s", sp.solve},
          {"per_iteration_s", m.per_iter},
          {"compute_s", sp.compute},
          {"halo_s", sp.halo},
          {"reduction_s", sp.reduction},
          {"checkpoint_s", sp.checkpoint},
          {"monitor_s", sp.monitor},
          {"other_s", sp.other},
          {"split_rank", sp.rank},
          {"io_s", m.io_s},
          {"per_rank", m.per_rank},
          {"output_s", r.out_s > 0 ? nlohmann::json(r.out_s) : nlohmann::json()},
          {"output_bytes", r.out_s > 0 ? nlohmann::json(r.out_bytes) : nlohmann::json()},
          {"output_gbytes_per_s",
           r.out_s > 0 ? nlohmann::json(double(r.out_bytes) / r.out_s / 1e9) : nlohmann::json()}};
}

// The report's halo parts: the transport chosen and why, and the overlap measured.
void add_halo_json(nlohmann::json& j, const SolveRun& r, const Verification& v) {
  j["halo_bytes_per_exchange_rank0"] = r.rt->op->plan().bytes_per_exchange();
  const HaloSelection& hs = r.rt->halo_selection;
  nlohmann::json cand = nlohmann::json::object(), skipped = nlohmann::json::object();
  for (const auto& [n, s] : hs.candidates) cand[to_string(n)] = s;
  for (const auto& [n, why] : hs.skipped) skipped[to_string(n)] = why;
  j["halo_selection"] = {{"requested", to_string(hs.requested)},
                         {"chosen", to_string(hs.chosen)},
                         {"candidates", cand},
                         {"skipped", skipped},
                         {"reason", hs.reason},
                         {"ranks", hs.details}};
  if (v.has_halo)
    j["overlap"] = {{"compute_only_s", v.ov.compute_s},
                    {"halo_only_s", v.ov.halo_s},
                    {"overlapped_s", v.ov.overlapped_s},
                    {"sequential_s", v.ov.sequential_s},
                    {"hidden_fraction", v.ov.hidden_fraction},
                    {"what", "one operator application, median of 5, slowest rank"}};
  else
    j["overlap"] = nullptr;
}

// The --report JSON (docs/REPORT.md), made on rank 0.
std::string report_text(const SolveRun& r, const DriveResult& res, const Verification& v,
                        const Summary& m) {
  const SolveOptions& o = r.o;
  nlohmann::json j;
  j["schema_version"] = kReportSchemaVersion;
  j["halo3d_version"] = version_string();
  j["command"] = "solve";
  const LibraryVersions lib = library_versions();
  j["libraries"] = {{"mpi", lib.mpi},
                    {"hdf5", lib.hdf5},
                    {"cuda_runtime", lib.cuda_runtime},
                    {"cuda_driver", lib.cuda_driver},
                    {"nccl", lib.nccl},
                    {"cuda_aware_mpi", lib.cuda_aware_mpi}};
  add_provenance(j, o, r.rt->hosts);
  j["config"] = config_json(r);
  j["fields"] = fields_json(o);
  j["ranks"] = r.d->ranks;
  j["procs"] = to_json(r.d->procs);
  j["hosts"] = r.rt->hosts.hosts.size();
  j["device"] = r.k->device_name();
  const ThreadSetup& th = thread_setup();
  j["threads"] = {{"per_rank", th.threads},
                  {"source", th.from_env ? "OMP_NUM_THREADS" : "auto"},
                  {"host_cpus", th.host_cpus},
                  {"ranks_on_host", th.ranks_on_host},
                  {"oversubscribed", th.oversubscribed}};
  j["result"] = result_json(r, res, v, m);
  j["timing"] = timing_json(r, m);
  j["throughput"] = {{"bytes_per_iteration", r.method->bytes_per_iteration()},
                     {"gbytes_per_s", m.gbs},
                     {"gpoints_per_s", m.gpts}};
  if (r.mg) {
    nlohmann::json levels = nlohmann::json::array();
    for (const MgLevelInfo& l : r.mg->levels())
      levels.push_back({{"grid", to_json(l.grid)}, {"distributed", l.distributed}});
    j["multigrid"] = {{"levels", levels}, {"describe", r.mg->describe()}};
  }
  add_halo_json(j, r, v);
  // Paths and specifications are bytes: invalid UTF-8 is replaced (U+FFFD), never an exception.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// Rank 0's closing lines: where the solve's time went (--quiet: the solve and the total),
// the output's write, the files written. The phases were printed as they ended.
void print_timing(const SolveRun& r, const Summary& m) {
  const SolveOptions& o = r.o;
  const SolveSplit& sp = m.sp;
  if (o.quiet)
    std::printf("time: solve %.4f s (%.3e s/iteration), total %.4f s\n", sp.solve, m.per_iter,
                r.phases.total());
  else
    std::printf(
        "time: solve %.4f s on the slowest rank (%d), %.3e s/iteration = compute %.4f + halo "
        "%.4f + reductions %.4f + checkpoints %.4f + monitor %.4f + other %.4f s\n",
        sp.solve, sp.rank, m.per_iter, sp.compute, sp.halo, sp.reduction, sp.checkpoint, sp.monitor,
        sp.other);
  std::string files;
  if (o.output != "none") files = o.output + ", " + xdmf_path(o.output);  // ./sol: ./sol.xdmf
  if (!o.report.empty()) files += (files.empty() ? "" : ", ") + o.report;
  if (r.out_s > 0 && !o.quiet)
    std::printf("output: %.4g bytes (/u, /residual_history) in %.4f s = %.3f GB/s\n",
                double(r.out_bytes), r.out_s, double(r.out_bytes) / r.out_s / 1e9);
  if (!files.empty()) std::printf("wrote %s\n", files.c_str());
  std::fflush(stdout);
}

}  // namespace

int run_solve(const SolveOptions& o, MPI_Comm world) {
  if (o.dry_run) return run_dry_run(o, world);
  // Start-up (MPI, threads, options) ran before this; the phases follow back to back.
  SolveRun r(o, world);
  r.phases.end("start-up");
  set_up(r, world);
  r.phases.end("set-up");
  if (r.root && !o.quiet) print_header(r);
  r.phases.release();
  fill_source(r);
  r.phases.end("right-hand side");
  start_solver(r);
  r.phases.end("solver start");
  SolveOutcome s = solve(r);
  DriveResult& res = s.res;
  r.phases.end("solve");
  if (res.stopped_by_signal) return stopped_by_signal(r, res);

  const Verification v = verify(r, res);
  r.phases.end("verification");
  if (o.output != "none") write_solution(r, res, v);
  const Summary m = summarize(r, s);
  if (r.root) print_results(r, res, v, m);
  if (!o.report.empty())
    write_file_atomically(o.report, r.root ? report_text(r, res, v, m) : std::string(), r.comm);
  r.phases.end("output");
  if (r.root) print_timing(r, m);

  if (!res.converged && !m.fixed) {
    if (r.root && v.unconfirmed)
      std::fprintf(stderr,
                   "halo3d: warning: not converged: the recurrence residual %.3e met --tol %.3e "
                   "but the true residual %.3e is above %g x --tol (double precision does "
                   "not reach --tol for this problem)\n",
                   v.rel_res, o.tol, v.true_rel, kTrueResidualSlack);
    else if (r.root)
      std::fprintf(
          stderr,
          "halo3d: warning: not converged to --tol %.3e within --max-iters %ld (residual %.3e)\n",
          o.tol, o.max_iters, v.rel_res);
    return kExitNotConverged;
  }
  return kExitOk;
}

}  // namespace halo3d
