#include <cstdio>

#include "app.hpp"
#include "checkpoint.hpp"
#include "checks.hpp"
#include "coefficient.hpp"
#include "dry_run.hpp"
#include "errors.hpp"
#include "fields.hpp"
#include "files.hpp"
#include "hdf5_io.hpp"
#include "multigrid.hpp"
#include "plan.hpp"
#include "problem.hpp"
#include "runtime.hpp"
#include "session.hpp"
#include "solve_report.hpp"
#include "solvers.hpp"
#include "time_series.hpp"

namespace halo3d {

namespace {

// One `halo3d solve` as it is built, phase by phase. Members are declared in the order they
// are made, so they are destroyed in reverse: the method uses the source and the
// preconditioner, both use the runtime.
struct SolveRun {
  SolveRun(const SolveOptions& opts, MPI_Comm world)
      : o(opts),
        plan(make_plan(o)),
        root(comm_rank(world) == 0),
        heat(plan.heat),
        solver(plan.solver),
        phases(root && !o.quiet, true) {}
  const SolveOptions& o;
  const RunPlan plan;
  const bool root, heat;
  const std::string solver;
  PhaseClock phases;
  // The run itself; the pointers below are views into it.
  std::unique_ptr<SolveSession> session;
  const Problem* prob = nullptr;
  double dt = 0;
  Runtime* rt = nullptr;
  MPI_Comm comm = MPI_COMM_NULL;
  Kernels* k = nullptr;
  const Decomposition* d = nullptr;
  const Buffer* b = nullptr;         // the right-hand side (heat: the initial state)
  const Buffer* boundary = nullptr;  // heat's boundary values: a source term B g of every step
  double setup_s = 0;
  double start_s = 0;  // the method's start (--fmg: the F-cycle, the first residual)
  const Multigrid* mg = nullptr;
  std::string precond;
  Method* method = nullptr;
  RunIdentity id;
  long first = 0;
  std::vector<double> history;  // a restart's residuals so far
  // --output, its sidecar and --report, committed together at the end (files.hpp); made
  // before `out`, which is one of them, so destroyed after it.
  std::unique_ptr<OutputSet> outputs;
  OutputSet& output_set() {
    if (!outputs) outputs = std::make_unique<OutputSet>(comm);
    return *outputs;
  }
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
  r.session = std::make_unique<SolveSession>(r.plan.problem, r.plan.parallel, r.plan.method, world,
                                             [&o](const Decomposition& d, MPI_Comm cart, bool gpu) {
                                               return solve_memory(o, d, cart, gpu);
                                             });
  r.prob = &r.session->problem();
  r.dt = r.session->dt();
  r.rt = &r.session->runtime();
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
  r.session->fill_source();
  r.b = &r.session->source();
  r.boundary = r.session->boundary();
}

// --output-every: the solution file's temporary, opened now, and the series' first snapshot
// (the initial state, or a restart's series so far copied from its checkpoint).
void start_series(SolveRun& r) {
  ScopedTimer t(r.rt->timers.io);
  r.out = std::make_unique<AtomicH5File>(r.o.output, r.comm, true, &r.output_set());
  r.series = std::make_unique<TimeSeries>(r.out->get(), *r.d, r.comm, r.o.output_every, r.dt);
  if (!r.o.restart.empty()) r.series->restore(r.o.restart, r.first);
  if (r.series->due(r.first)) r.series->write(r.first, download(*r.k, r.method->solution()));
}

// The checksum of the problem's data as filled (b; heat: u0 and B g) and of a variable k
// and shift (their boundary layers too), which a checkpoint records and a restart compares: a file:
// input whose contents changed is refused.
std::uint64_t data_checksum(SolveRun& r) {
  std::uint64_t c = field_checksum(*r.d, download(*r.k, *r.b), r.comm);
  if (r.boundary) c = c * 31 + field_checksum(*r.d, download(*r.k, *r.boundary), r.comm);
  if (r.rt->coefficients)
    c = c * 31 + coefficient_checksum(*r.d, r.rt->coefficients->kappa(), r.comm);
  if (r.rt->coefficients && !r.rt->coefficients->sigma().empty())  // a variable shift
    c = c * 31 + coefficient_checksum(*r.d, r.rt->coefficients->sigma(), r.comm);
  return c;
}

// The preconditioner, the method, and its state: fresh or from --restart.
void start_solver(SolveRun& r) {
  const SolveOptions& o = r.o;
  // The hierarchy's set-up time is the slowest rank's: every rank writes the same value
  // (the HDF5 attribute, which every rank writes, agrees with the report and the header).
  r.session->build_method();
  r.mg = r.session->multigrid();
  r.setup_s = r.session->setup_seconds();
  const Preconditioner* pc = r.session->preconditioner();
  r.precond = pc ? pc->name() : (r.plan.method.implicit() ? to_string(o.precond) : "none");
  r.method = &r.session->method();
  r.id = RunIdentity::of(o, r.plan.identity, r.dt);
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
  r.saved = checkpoint_held(o.checkpoint, o.restart, r.first);
  if (r.root)
    print_start(o, r.first, r.session->singular() ? &r.session->mean_removed() : nullptr, r.mg,
                r.setup_s, r.start_s);
  std::fflush(stdout);
}

// Heat progress lines: the physical time, and the error against the exact answer.
std::string heat_progress(SolveRun& r, long it) {
  ScopedTimer t(r.rt->timers.monitor);
  char line[128];
  std::snprintf(line, sizeof line, "t %.6e  ", r.dt * double(it));
  std::string s = line;
  if (r.prob->has_exact()) {
    ProblemSpec at = r.plan.problem;  // the exact answer after `it` steps, not after --steps
    at.steps = it;
    const Problem::Errors e = Problem(at).errors(*r.k, *r.d, r.method->solution().data(),
                                                 r.method->spare().data(), r.comm);
    std::snprintf(line, sizeof line, "max error %.3e  ", e.max);
    s += line;
  }
  return s;
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
  dro.stopping = [&r](long it, int sig) {
    if (r.root) announce_stop(r.o.checkpoint, r.saved, it, sig);
  };
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
  out.res = r.session->drive(dro, r.first, std::move(r.history));
  out.after = r.rt->timers;
  return out;
}

// The record the report is written from: what ran and what it measured.
SolveRecord record_of(const SolveRun& r) {
  SolveRecord c(r.o, r.plan);
  c.solver = r.solver;
  c.precond = r.precond;
  c.precision = r.plan.precision;
  c.heat = r.heat;
  c.implicit = r.plan.method.implicit();
  c.dt = r.dt;
  c.h = r.prob->h();
  c.has_exact = r.prob->has_exact();
  c.ranks = r.d->ranks;
  c.procs = r.d->procs;
  c.backend = r.k->name(), c.gpu = r.k->on_gpu();
  c.device = r.k->device_name();
  c.halo = r.rt->op->transport().name();
  c.overlap = r.rt->op->overlap();
  c.halo_selection = r.rt->halo_selection;
  c.hosts = r.rt->hosts;
  c.halo_bytes_rank0 = r.rt->op->plan().bytes_per_exchange();
  c.planned_device_bytes = r.rt->planned.device;
  c.device_bytes_used = device_bytes_used(*r.rt);
  c.counted = counted_memory(*r.rt);
  c.mg = r.mg != nullptr;
  if (r.mg) c.mg_levels = r.mg->levels(), c.mg_describe = r.mg->describe();
  c.setup_s = r.setup_s;
  c.start_s = r.start_s;
  c.series = r.series != nullptr;
  if (r.series) c.output_every = r.series->every(), c.snapshots = r.series->snapshots().size();
  c.out_s = r.out_s;
  c.out_bytes = r.out_bytes;
  c.bytes_per_iteration = r.method->bytes_per_iteration();
  c.inner_iterations = r.method->inner_iterations();
  c.phases = r.phases.phases();
  c.phases_total = r.phases.total();
  c.first = r.first;
  c.singular = r.session->singular();
  c.mean_removed = r.session->mean_removed();
  return c;
}

// --output: the solution file and its XDMF sidecar. With a series the file is the one open
// since the start; the final state is always its last snapshot (when the steps are not a
// multiple of --output-every, an extra one), and the sidecar plays the series.
void write_solution(SolveRun& r, const DriveResult& res, const Verification& v) {
  ScopedTimer t(r.rt->timers.io);
  const std::vector<double> u = download(*r.k, r.method->solution());
  const double t0 = now_seconds();
  r.out_bytes = 8 * (r.d->global_points() + (long long)res.history.size());
  if (!r.out) r.out = std::make_unique<AtomicH5File>(r.o.output, r.comm, true, &r.output_set());
  const hid_t f = r.out->get();
  h5_write_field(f, "u", *r.d, u.data(), r.o.compress);
  h5_write_vector(f, "residual_history", res.history, r.comm);
  if (r.series) {
    r.series->write(res.iterations, u);
    r.series->finish();
  }
  write_solution_attributes(record_of(r), f, res, v);
  r.out->commit();
  r.out_s = max_over_ranks(now_seconds() - t0, r.comm);
  if (!r.series)
    return write_xdmf(r.o.output, r.o.grid, r.prob->origin(), r.prob->h(), r.comm, &r.output_set());
  std::vector<XdmfStep> steps;
  for (const Snapshot& s : r.series->snapshots()) steps.push_back({snapshot_dataset(s.step), s.t});
  write_xdmf_series(r.o.output, r.o.grid, r.prob->origin(), r.prob->h(), steps, r.comm,
                    &r.output_set());
}

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

int solve_and_write(SolveRun& r) {
  const SolveOptions& o = r.o;
  check_free_space(o, r.comm);  // fail before solving, not after hours of it
  if (r.root && !o.quiet) print_header(o, r.solver, *r.rt);
  r.phases.release();
  fill_source(r);
  r.phases.end("right-hand side");
  start_solver(r);
  r.phases.end("solver start");
  SolveOutcome s = solve(r);
  DriveResult& res = s.res;
  r.phases.end("solve");
  if (res.stopped_by_signal) return stopped_by_signal(o, r.rt->hosts, r.root, res);

  const Verification v = r.session->verify(res, o.tol, o.verify);
  r.phases.end("verification");
  if (o.output != "none") write_solution(r, res, v);
  const Summary m = summarize(r, s);
  if (r.root) print_results(record_of(r), res, v, m);
  if (!o.report.empty())
    r.output_set().stage_text(o.report,
                              r.root ? report_text(record_of(r), res, v, m) : std::string());
  r.output_set().commit();
  r.phases.end("output");
  if (r.root) print_timing(record_of(r), m);

  if (!res.converged && !m.fixed) {
    if (r.root) warn_not_converged(o, v);
    return kExitNotConverged;
  }
  return kExitOk;
}

}  // namespace

int run_solve(const SolveOptions& o, MPI_Comm world) {
  if (o.dry_run) return run_dry_run(o, world);
  // Start-up (MPI, threads, options) ran before this; the phases follow back to back.
  SolveRun r(o, world);
  r.phases.end("start-up");
  set_up(r, world);
  r.phases.end("set-up");
  try {
    return solve_and_write(r);
  } catch (const Error& e) {
    replace_report_after_failure(o, r.rt->hosts, r.root, e);
    throw;
  }
}

}  // namespace halo3d
