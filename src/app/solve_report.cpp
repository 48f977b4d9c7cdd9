#include "solve_report.hpp"

#include <unistd.h>

#include <cstdio>

#include "app.hpp"
#include "build_info.hpp"
#include "checks.hpp"
#include "errors.hpp"
#include "fields.hpp"
#include "files.hpp"
#include "hdf5_io.hpp"
#include "provenance.hpp"
#include "threads.hpp"

namespace halo3d {

// docs/report.schema.json's version: raised when a field changes meaning or goes.
constexpr int kReportSchemaVersion = 1;

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

namespace {

nlohmann::json to_json(const Int3& v) { return nlohmann::json::array({v[0], v[1], v[2]}); }

}  // namespace

// The run's description as attributes of the solution file's root group.
void write_solution_attributes(const SolveRecord& r, hid_t g, const DriveResult& res,
                               const Verification& v) {
  const SolveOptions& o = r.o;
  h5_attr(g, "grid", std::vector<long long>{o.grid[0], o.grid[1], o.grid[2]});
  h5_attr(g, "procs", std::vector<long long>{r.procs[0], r.procs[1], r.procs[2]});
  h5_attr(g, "spacing", std::vector<double>{r.h[0], r.h[1], r.h[2]});
  h5_attr(g, "box", std::vector<double>{o.box[0], o.box[1], o.box[2]});
  if (variable_shift(o))  // the spec as given, as `coefficient` is
    h5_attr_text(g, "shift", o.shift_field);
  else
    h5_attr_real(g, "shift", o.shift);
  h5_attr_text(g, "coefficient", o.coefficient);
  h5_attr_text(g, "bc", bc_text(o.bc));
  h5_attr_matrix(g, "mode", o.modes);
  h5_attr_text(g, "problem", to_string(o.problem));
  h5_attr_text(g, "solver", r.solver);
  h5_attr_text(g, "precond", r.precond);
  h5_attr_text(g, "precision", r.precision);
  if (r.mg) {  // the hierarchy: each level's grid, and its set-up time
    std::vector<Int3> grids;
    for (const MgLevelInfo& l : r.mg_levels) grids.push_back(l.grid);
    h5_attr_matrix(g, "mg_level_grids", grids);
    h5_attr_real(g, "mg_setup_s", r.setup_s);
  }
  if (r.heat) h5_attr_text(g, "time_scheme", to_string(o.time_scheme));
  h5_attr_text(g, "rhs", source_spec(o));  // heat: where its initial state came from
  if (r.heat) h5_attr_text(g, "initial", source_spec(o));
  h5_attr_text(g, "boundary", o.boundary);
  h5_attr_int(g, "compress", o.compress);  // deflate level of /u; 0: none
  h5_attr_int(g, "iterations", res.iterations);
  h5_attr_real(g, "relative_residual", r.heat ? NAN : v.rel_res);
  h5_attr_real(g, "true_relative_residual", v.true_rel);
  h5_attr_int(g, "converged", res.converged ? 1 : 0);
  h5_attr_int(g, "fixed_iterations", fixed_iterations(o) && !res.converged ? 1 : 0);
  h5_attr_real(g, "l2_error", v.err.l2);
  h5_attr_real(g, "max_error", v.err.max);
  h5_attr_real(g, "l2_error_continuous", v.err.l2_cont);
  h5_attr_real(g, "max_error_continuous", v.err.max_cont);
  h5_attr_text(g, "backend", r.backend);
  h5_attr_text(g, "halo", r.halo);
  h5_attr_text(g, "version", version_string());
  if (r.heat) {
    const double t_end = r.dt * double(res.iterations);  // the physical time reached
    h5_attr_real(g, "t", t_end);
    h5_attr_real(g, "dt", r.dt);
    h5_attr_real(g, "alpha", o.alpha);
    h5_attr(g, "time", std::vector<double>{t_end, r.dt, o.alpha});  // older readers: t, dt, alpha
  }
  if (r.series) {
    h5_attr_int(g, "output_every", r.output_every);
    h5_attr_int(g, "snapshots", (long long)r.snapshots);
  }
}

namespace {

// The report's "config": the options that shape the run, and where they came from.
nlohmann::json config_json(const SolveRecord& r) {
  const SolveOptions& o = r.o;
  nlohmann::json c = {
      {"grid", to_json(o.grid)},
      {"box", {o.box[0], o.box[1], o.box[2]}},
      {"shift", variable_shift(o) ? nlohmann::json(o.shift_field) : nlohmann::json(o.shift)},
      {"coefficient", o.coefficient},
      {"bc", bc_text(o.bc)},
      {"problem", to_string(o.problem)},
      {"solver", r.solver},
      {"precond", r.precond},
      {"time_scheme", to_string(o.time_scheme)},
      {"mg_levels", o.mg_levels},
      {"mg_smooth", o.mg_smooth},
      {"mg_smoother", to_string(o.mg_smoother)},
      {"mg_interp", to_string(o.mg_interp)},
      {"mg_gather", mg_gather_points(o.mg_gather, r.gpu)},
      {"fmg", o.fmg},
      {"precision", r.precision},
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
      {"backend", r.backend},
      {"halo", r.halo},
      {"overlap", r.overlap},
      {"output", o.output},
      {"compress", o.compress},
      {"output_every", r.series ? nlohmann::json(r.output_every) : nlohmann::json()},
      {"verify", o.verify},
      {"progress_s", o.progress},
      {"config_file", o.config_file}};
  nlohmann::json modes = nlohmann::json::array();
  for (const auto& m : o.modes) modes.push_back(to_json(m));
  c["modes"] = modes;
  return c;
}

// The report's "result": iterations, residuals, errors; heat's time reached.
nlohmann::json result_json(const SolveRecord& r, const DriveResult& res, const Verification& v,
                           const Summary& m) {
  const bool heat = r.heat, exact = r.has_exact;
  const auto num = [](bool has, double x) { return has ? nlohmann::json(x) : nlohmann::json(); };
  nlohmann::json j = {{"iterations", res.iterations},
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
                      {"snapshots", r.series ? nlohmann::json(r.snapshots) : nlohmann::json()}};
  // Singular (A 1 = 0): what of b was removed to make it solvable; the answer has zero mean.
  j["source_mean_removed"] = r.singular ? nlohmann::json{{"mean", r.mean_removed.mean},
                                                         {"norm", r.mean_removed.norm},
                                                         {"relative", r.mean_removed.relative}}
                                        : nlohmann::json();
  if (heat) {
    j["steps"] = res.iterations;
    j["t"] = r.dt * double(res.iterations);
    j["dt"] = r.dt;
    j["alpha"] = r.o.alpha;
    j["time_scheme"] = to_string(r.o.time_scheme);
    if (r.implicit) {
      const long inner = r.inner_iterations;
      j["cg_iterations"] = inner;
      j["cg_iterations_per_step"] = m.done > 0 ? double(inner) / double(m.done) : 0.0;
    }
  }
  return j;
}

// Phases of the whole run on rank 0 (output: until this report is written), and the
// solve split on the slowest rank; each list of parts adds up to its whole.
nlohmann::json timing_json(const SolveRecord& r, const Summary& m) {
  nlohmann::json ph = nlohmann::json::array();
  double total = 0;
  for (const auto& [name, sec] : r.phases) {
    ph.push_back({{"name", name}, {"seconds", sec}});
    total += sec;
  }
  const double output_so_far = now_seconds() - process_start_seconds() - r.phases_total;
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
void add_halo_json(nlohmann::json& j, const SolveRecord& r, const Verification& v) {
  j["halo_bytes_per_exchange_rank0"] = r.halo_bytes_rank0;
  const HaloSelection& hs = r.halo_selection;
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

}  // namespace

// The --report JSON (docs/REPORT.md), made on rank 0.
std::string report_text(const SolveRecord& r, const DriveResult& res, const Verification& v,
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
  add_provenance(j, o.command_line, o.sources, r.hosts);
  j["config"] = config_json(r);
  j["fields"] = fields_json(o);
  j["ranks"] = r.ranks;
  j["procs"] = to_json(r.procs);
  j["hosts"] = r.hosts.hosts.size();
  j["device"] = r.device;
  const ThreadSetup& th = thread_setup();
  j["threads"] = {{"per_rank", th.threads},
                  {"source", th.from_env ? "OMP_NUM_THREADS" : "auto"},
                  {"host_cpus", th.host_cpus},
                  {"ranks_on_host", th.ranks_on_host},
                  {"oversubscribed", th.oversubscribed}};
  j["result"] = result_json(r, res, v, m);
  j["timing"] = timing_json(r, m);
  j["throughput"] = {{"bytes_per_iteration", r.bytes_per_iteration},
                     {"gbytes_per_s", m.gbs},
                     {"gpoints_per_s", m.gpts}};
  if (r.mg) {
    nlohmann::json levels = nlohmann::json::array();
    for (const MgLevelInfo& l : r.mg_levels)
      levels.push_back({{"grid", to_json(l.grid)}, {"distributed", l.distributed}});
    j["multigrid"] = {{"levels", levels}, {"describe", r.mg_describe}};
  }
  add_halo_json(j, r, v);
  const auto known = [](double b) { return b >= 0 ? nlohmann::json(b) : nlohmann::json(); };
  j["memory"] = {{"planned_device_bytes", r.planned_device_bytes},
                 {"device_bytes_used", known(r.device_bytes_used)},
                 {"counted_bytes_held", known(r.counted.held)},
                 {"counted_bytes_peak", known(r.counted.peak)},
                 {"counted_buffers_held",
                  r.counted.buffers >= 0 ? nlohmann::json(r.counted.buffers) : nlohmann::json()}};
  // Paths and specifications are bytes: invalid UTF-8 is replaced (U+FFFD), never an exception.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

namespace {
// The short report of a run that ended without a result: status, exit code, provenance.
nlohmann::json short_report(const SolveOptions& o, const HostMap& hosts, const char* status,
                            int exit_code) {
  nlohmann::json j;
  j["schema_version"] = kReportSchemaVersion;
  j["halo3d_version"] = version_string();
  j["command"] = "solve";
  j["status"] = status;
  j["exit_code"] = exit_code;
  add_provenance(j, o.command_line, o.sources, hosts);
  return j;
}

std::string dump(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}
}  // namespace

namespace {
std::string stopped_report_text(const SolveOptions& o, const HostMap& hosts, int exit_code,
                                const DriveResult& res) {
  nlohmann::json j = short_report(o, hosts, "stopped", exit_code);
  j["stop"] = {
      {"signal", res.stop_signal},
      {"signal_name", signal_name(res.stop_signal)},
      {"iteration", res.iterations},
      {"checkpoint", o.checkpoint.empty() ? nlohmann::json() : nlohmann::json(o.checkpoint)}};
  return dump(j);
}
}  // namespace

int stopped_by_signal(const SolveOptions& o, const HostMap& hosts, bool root,
                      const DriveResult& res) {
  // 75 promises a checkpoint to restart from (batch scripts requeue on it); without
  // --checkpoint nothing was saved, which is a code of its own.
  const int code = o.checkpoint.empty() ? kExitStoppedUnsaved : kExitCheckpointed;
  if (!root) return code;
  std::fprintf(stderr, "halo3d: stopped by signal %d (%s) at iteration %ld; %s; exit code %d\n",
               res.stop_signal, signal_name(res.stop_signal), res.iterations,
               o.checkpoint.empty() ? "no --checkpoint given, state not saved"
                                    : ("checkpoint written to " + o.checkpoint).c_str(),
               code);
  // No earlier run's report, which may say converged, is left beside a stopped run.
  if (!o.report.empty())
    write_file_atomically_local(o.report, stopped_report_text(o, hosts, code, res));
  return code;
}

namespace {
std::string failure_report_text(const SolveOptions& o, const HostMap& hosts, int exit_code,
                                const std::string& error) {
  nlohmann::json j = short_report(o, hosts, "failed", exit_code);
  j["error"] = printable(error, 2000);
  return dump(j);
}
}  // namespace

void replace_report_after_failure(const SolveOptions& o, const HostMap& hosts, bool root,
                                  const Error& e) {
  if (o.report.empty()) return;
  if (!e.collective()) {
    ::unlink(o.report.c_str());
    return;
  }
  if (!root) return;
  try {
    write_file_atomically_local(o.report, failure_report_text(o, hosts, e.code(), e.what()));
  } catch (const Error&) {
    ::unlink(o.report.c_str());  // not even this: at least no stale report
  }
}

}  // namespace halo3d
