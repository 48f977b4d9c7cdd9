#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

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

namespace halo3d {
namespace {

struct Errors {
  double l2 = NAN, max = NAN;            // against the exact discrete solution
  double l2_cont = NAN, max_cont = NAN;  // against the continuous solution
};

// Discrete L2 norms (sqrt(h^3 sum e^2)) and max norms of the error, reduced reproducibly.
Errors solution_errors(const Problem& p, const Decomposition& d, const std::vector<double>& u,
                       MPI_Comm comm) {
  const Layout l = d.layout();
  DD s{}, sc{};
  double mx = 0, mxc = 0;
  for (int k = 0; k < l.nz; ++k)
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i) {
        const int gi = d.offset[0] + i, gj = d.offset[1] + j, gk = d.offset[2] + k;
        const double v = u[l.at(i, j, k)];
        const double e = v - p.exact_discrete(gi, gj, gk);
        const double ec = v - p.exact_continuous(gi, gj, gk);
        s = ops::dd_add(s, e * e);
        sc = ops::dd_add(sc, ec * ec);
        mx = std::max(mx, std::abs(e));
        mxc = std::max(mxc, std::abs(ec));
      }
  DD sums[2] = {s, sc};
  double g[2];
  global_sums(comm, sums, 2, g);
  double m[2] = {mx, mxc};
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, m, 2, MPI_DOUBLE, MPI_MAX, comm));
  const double vol = p.h()[0] * p.h()[1] * p.h()[2];
  return {std::sqrt(vol * g[0]), m[0], std::sqrt(vol * g[1]), m[1]};
}

// Where the solve's time went on the slowest rank (largest solve time): the timers' growth
// during the solve, disjoint parts, and "other" (loop, vote, waits outside the timers) as the
// remainder, so the parts add up to the whole.
struct SolveSplit {
  int rank = 0;
  double solve = 0, compute = 0, halo = 0, reduction = 0, checkpoint = 0, monitor = 0, other = 0;
};
SolveSplit solve_split(double solve_s, const Timers& before, const Timers& after, MPI_Comm comm) {
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
  HALO3D_MPI_CHECK(MPI_Bcast(v, 6, MPI_DOUBLE, slowest.rank, comm));
  SolveSplit sp{slowest.rank, v[0], v[1], v[2], v[3], v[4], v[5], 0};
  sp.other = sp.solve - (sp.compute + sp.halo + sp.reduction + sp.checkpoint + sp.monitor);
  return sp;
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
  const bool pc = uses_preconditioner(o) || (implicit && o.precond == "mg");
  const double method = implicit                                      ? 2 + (pc ? 5 : 4)
                        : o.problem == "heat" || o.solver == "jacobi" ? 2
                                                                      : (pc ? 5 : 4);
  MemoryNeed m;
  m.device = (2 + method) * field;
  if (pc) m.device += mg_memory_bytes(mg_plan(d, mg_options(o), cart));
  m.host = 2 * field;
  if (has_boundary_values(o)) m.host += field;  // the boundary values, while lifted
  return m;
}

int run_solve(const SolveOptions& o, MPI_Comm world) {
  if (o.dry_run) return run_dry_run(o, world);
  const bool root = comm_rank(world) == 0;
  // Start-up (MPI, threads, options) ran before this; the phases follow back to back.
  PhaseClock phases(root && !o.quiet);
  phases.end("start-up");
  const bool heat = o.problem == "heat";
  const std::string solver = heat ? (uses_implicit_heat(o) ? o.time_scheme : "euler") : o.solver;

  const Problem prob(o);
  const double dt = prob.dt();
  RuntimeOptions ro = runtime_options(o, prob.stencil());
  ro.memory = [&](const Decomposition& d, MPI_Comm cart) { return solve_memory(o, d, cart); };
  auto rt = make_runtime(ro, world);
  MPI_Comm comm = rt->cart.get();
  Kernels& k = *rt->kernels;
  const Decomposition& d = rt->decomp;
  if (root && !rt->warnings.empty()) std::fputs(rt->warnings.c_str(), stderr);

  // Fail before solving, not after hours of it.
  const bool write_output = o.output != "none";
  check_planned_files(planned_files(o), comm);
  phases.end("set-up");

  std::vector<double> source;
  fill_fields(o, prob, d, comm, source);
  Buffer b = upload(k, source);
  phases.end("right-hand side");

  // The preconditioner's set-up (the multigrid hierarchy) is timed on its own.
  const double t_setup = now_seconds();
  const std::unique_ptr<Preconditioner> pc = make_preconditioner(o, *rt);
  const auto* mg = dynamic_cast<const Multigrid*>(pc.get());
  const double setup_s = now_seconds() - t_setup;
  const std::string precond = pc ? pc->name() : (uses_implicit_heat(o) ? o.precond : "none");
  std::unique_ptr<Method> method = uses_implicit_heat(o)
                                       ? make_implicit_heat(*rt, o, dt, b)
                                       : make_method(o, dt, *rt->op, comm, rt->timers, b, pc.get());

  // A checkpoint continues only under the same preconditioner (it shapes the iterates).
  // An implicit step's answer depends on the inner solve: its tolerance and preconditioner.
  const std::string solver_id =
      uses_implicit_heat(o)
          ? solver + "(tol=" + nlohmann::json(o.tol).dump() + ",precond=" + o.precond + ")"
      : mg ? solver + "+mg(levels=" + std::to_string(o.mg_levels) +
                 ",smooth=" + std::to_string(o.mg_smooth) + "," + o.mg_smoother + ")"
           : solver;
  const RunIdentity id = RunIdentity::of(o, solver_id, dt);
  long first = 0;
  std::vector<double> history;
  if (!o.restart.empty()) {
    ScopedTimer t(rt->timers.io);
    first = read_checkpoint(o.restart, comm, d, k, *method, id, history);
    if (root) std::printf("restarted from %s at iteration %ld\n", o.restart.c_str(), first);
  } else {
    method->start();
  }

  if (root) {
    std::printf(
        "halo3d %s: %s/%s on grid %s, %d %s as %s, backend %s (%s), %d thread(s)/rank (%s), "
        "halo %s, overlap %s\n",
        version_string().c_str(), o.problem.c_str(), solver.c_str(), to_string(o.grid).c_str(),
        d.ranks, d.ranks == 1 ? "rank" : "ranks", to_string(d.procs).c_str(), k.name().c_str(),
        k.device_name().c_str(), thread_setup().threads,
        thread_setup().from_env ? "OMP_NUM_THREADS" : "auto", rt->op->transport().name().c_str(),
        o.overlap ? "on" : "off");
    print_halo_selection(rt->halo_selection);
    if (mg)
      std::printf("preconditioner: multigrid V-cycle, %s; set-up %.4f s\n", mg->describe().c_str(),
                  setup_s);
    std::fflush(stdout);
  }
  phases.end("solver start");

  DriveOptions dro;
  dro.max_iters = heat ? o.steps : o.max_iters;
  dro.monitor = o.monitor;
  dro.checkpoint_every = o.checkpoint_every;
  if (!o.checkpoint.empty())
    dro.checkpoint = [&](long it, const std::vector<double>& h) {
      ScopedTimer t(rt->timers.io);
      write_checkpoint(o.checkpoint, comm, d, k, *method, id, it, h);
    };
  // Heat progress lines: the physical time, and the error against the exact answer.
  if (heat)
    dro.progress = [&](long it) {
      ScopedTimer t(rt->timers.monitor);
      char line[128];
      std::snprintf(line, sizeof line, "t %.6e  ", dt * double(it));
      std::string s = line;
      if (prob.has_exact()) {
        SolveOptions at = o;  // the exact answer after `it` steps, not after --steps
        at.steps = it;
        const Errors e = solution_errors(Problem(at), d, download(k, method->solution()), comm);
        std::snprintf(line, sizeof line, "max error %.3e  ", e.max);
        s += line;
      }
      return s;
    };
  const Timers before_solve = rt->timers;
  const DriveResult res = drive(*method, comm, dro, first, std::move(history));
  const Timers after_solve = rt->timers;
  phases.end("solve");

  if (res.stopped_by_signal) {
    // 75 promises a checkpoint to restart from (batch scripts requeue on it); without
    // --checkpoint nothing was saved, which is a code of its own.
    const int code = o.checkpoint.empty() ? kExitStoppedUnsaved : kExitCheckpointed;
    if (root)
      std::fprintf(stderr, "halo3d: stopped by signal %d at iteration %ld; %s; exit code %d\n",
                   res.stop_signal, res.iterations,
                   o.checkpoint.empty() ? "no --checkpoint given, state not saved"
                                        : ("checkpoint written to " + o.checkpoint).c_str(),
                   code);
    return code;
  }

  // Self-checks: the true residual recomputed from scratch, and the error against the
  // exact answers where they are known.
  double true_rel = NAN;
  if (!heat) {
    Buffer r(k, b.size());
    rt->op->residual(b.data(), method->solution().data(), r.data(), 0);
    k.dot(d.layout(), b.data(), b.data(), 1);
    DD parts[2];
    k.read_slots(2, parts);
    double g[2];
    global_sums(comm, parts, 2, g);
    true_rel = g[1] > 0 ? std::sqrt(g[0] / g[1]) : 0.0;
  }
  // No iteration ran (--max-iters 0): the residual is the starting iterate's, recomputed.
  const double rel_res = res.history.empty() && !heat ? true_rel : res.relative_residual;
  const std::vector<double> u = download(k, method->solution());
  // A NaN/Inf answer is a breakdown on every rank, never a success.
  if (!all_finite(d.layout(), u, comm))
    throw Error(kExitBreakdown, "the solution holds NaN or Inf after " +
                                    std::to_string(res.iterations) +
                                    " iterations: the solve diverged; nothing written");
  Errors err;
  if (prob.has_exact()) err = solution_errors(prob, d, u, comm);
  // How much of the halo the overlap hides, measured on the real faces after the solve.
  DistributedOperator::OverlapTimes ov;
  const bool has_halo = d.ranks > 1;
  if (has_halo) {
    Buffer scratch(k, b.size());
    ov = rt->op->measure_overlap(method->solution().data(), scratch.data(), 5, comm);
  }
  phases.end("verification");
  const double t_end = dt * double(res.iterations);  // heat: the physical time reached

  double out_s = 0;  // the HDF5 file's write, from creation to its rename
  long long out_bytes = 0;
  if (write_output) {
    ScopedTimer t(rt->timers.io);
    const double t0 = now_seconds();
    out_bytes = 8 * (d.global_points() + (long long)res.history.size());  // /u, /residual_history
    AtomicH5File f(o.output, comm);
    h5_write_field(f.get(), "u", d, u.data(), o.compress);
    h5_write_vector(f.get(), "residual_history", res.history, comm);
    const hid_t g = f.get();
    h5_attr(g, "grid", std::vector<long long>{o.grid[0], o.grid[1], o.grid[2]});
    h5_attr(g, "procs", std::vector<long long>{d.procs[0], d.procs[1], d.procs[2]});
    h5_attr(g, "spacing", std::vector<double>{prob.h()[0], prob.h()[1], prob.h()[2]});
    h5_attr_matrix(g, "mode", o.modes);
    h5_attr(g, "problem", o.problem);
    h5_attr(g, "solver", solver);
    h5_attr(g, "precond", precond);
    if (mg) {  // the hierarchy: each level's grid, and its set-up time
      std::vector<Int3> grids;
      for (const MgLevelInfo& l : mg->levels()) grids.push_back(l.grid);
      h5_attr_matrix(g, "mg_level_grids", grids);
      h5_attr(g, "mg_setup_s", std::vector<double>{setup_s});
    }
    if (heat) h5_attr(g, "time_scheme", o.time_scheme);
    h5_attr(g, "rhs", source_spec(o));  // heat: where its initial state came from
    if (heat) h5_attr(g, "initial", source_spec(o));
    h5_attr(g, "boundary", o.boundary);
    h5_attr(g, "iterations", std::vector<long long>{res.iterations});
    h5_attr(g, "relative_residual", std::vector<double>{heat ? NAN : rel_res});
    h5_attr(g, "true_relative_residual", std::vector<double>{true_rel});
    h5_attr(g, "converged", std::vector<long long>{res.converged ? 1 : 0});
    h5_attr(g, "fixed_iterations",
            std::vector<long long>{fixed_iterations(o) && !res.converged ? 1 : 0});
    h5_attr(g, "l2_error", std::vector<double>{err.l2});
    h5_attr(g, "max_error", std::vector<double>{err.max});
    h5_attr(g, "l2_error_continuous", std::vector<double>{err.l2_cont});
    h5_attr(g, "max_error_continuous", std::vector<double>{err.max_cont});
    h5_attr(g, "backend", k.name());
    h5_attr(g, "halo", rt->op->transport().name());
    h5_attr(g, "version", version_string());
    if (heat) {
      h5_attr(g, "t", std::vector<double>{t_end});
      h5_attr(g, "dt", std::vector<double>{dt});
      h5_attr(g, "alpha", std::vector<double>{o.alpha});
      h5_attr(g, "time", std::vector<double>{t_end, dt, o.alpha});  // older readers: t, dt, alpha
    }
    f.commit();
    out_s = max_over_ranks(now_seconds() - t0, comm);
    write_xdmf(o.output, o.grid, prob.h(), comm);
  }

  const SolveSplit sp = solve_split(res.solve_seconds, before_solve, after_solve, comm);
  const double io_s = max_over_ranks(rt->timers.io, comm);
  // --iters N / --tol 0: the iteration count is the plan; stopping there is success.
  const bool fixed = fixed_iterations(o) && !res.converged;
  const long done = res.iterations - first;
  const double per_iter = done > 0 ? sp.solve / double(done) : 0.0;
  const double gbs = per_iter > 0 ? method->bytes_per_iteration() / per_iter / 1e9 : 0.0;
  const double gpts = per_iter > 0 ? rt->op->global_points() / per_iter / 1e9 : 0.0;

  if (root) {
    if (heat) {
      std::printf("heat: %ld steps done, t = %.6e (dt %.6e, alpha %g)\n", res.iterations, t_end, dt,
                  o.alpha);
      if (uses_implicit_heat(o) && done > 0)
        std::printf("%s steps: %ld CG iterations (%s), %.2f per step\n", o.time_scheme.c_str(),
                    method->inner_iterations(),
                    o.precond == "mg" ? "multigrid-preconditioned" : "plain",
                    double(method->inner_iterations()) / double(done));
    } else {
      std::printf("%s after %ld iterations: relative residual %.3e (true %.3e)\n",
                  res.converged ? "converged" : (fixed ? "fixed iterations done" : "NOT converged"),
                  res.iterations, rel_res, true_rel);
    }
    if (prob.has_exact())
      std::printf("error%s vs exact discrete: l2 %.3e max %.3e; vs continuous: l2 %.3e max %.3e\n",
                  heat ? " at t" : "", err.l2, err.max, err.l2_cont, err.max_cont);
    else if (heat)
      std::printf("error: no exact answer for %s %s\n", source_option(o), source_spec(o).c_str());
    std::printf("throughput: %.2f GB/s of vector traffic, %.3f Gpoints/s\n", gbs, gpts);
    if (has_halo)
      std::printf(
          "overlap: operator %.3e s compute-only, %.3e s halo-only, %.3e s overlapped, %.3e s "
          "sequential: %.0f%% of halo hidden\n",
          ov.compute_s, ov.halo_s, ov.overlapped_s, ov.sequential_s, 100 * ov.hidden_fraction);
    std::fflush(stdout);
  }

  std::string report_text;
  if (!o.report.empty() && root) {
    nlohmann::json j;
    j["halo3d_version"] = version_string();
    j["command"] = "solve";
    add_provenance(j, o, rt->hosts);
    j["config"] = {{"grid", to_json(o.grid)},
                   {"problem", o.problem},
                   {"solver", solver},
                   {"precond", precond},
                   {"time_scheme", o.time_scheme},
                   {"mg_levels", o.mg_levels},
                   {"mg_smooth", o.mg_smooth},
                   {"mg_smoother", o.mg_smoother},
                   {"rhs", source_spec(o)},
                   {"initial", heat ? nlohmann::json(source_spec(o)) : nlohmann::json()},
                   {"boundary", o.boundary},
                   {"seed", o.seed},
                   {"tol", o.tol},
                   {"max_iters", o.max_iters},
                   {"iters", o.iters > 0 ? nlohmann::json(o.iters) : nlohmann::json()},
                   {"steps", o.steps},
                   {"alpha", o.alpha},
                   {"dt", dt},
                   {"backend", k.name()},
                   {"halo", rt->op->transport().name()},
                   {"overlap", o.overlap},
                   {"output", o.output},
                   {"config_file", o.config_file}};
    nlohmann::json modes = nlohmann::json::array();
    for (const auto& m : o.modes) modes.push_back(to_json(m));
    j["config"]["modes"] = modes;
    j["fields"] = fields_json(o);
    j["ranks"] = d.ranks;
    j["procs"] = to_json(d.procs);
    j["hosts"] = rt->hosts.hosts.size();
    j["device"] = k.device_name();
    const ThreadSetup& th = thread_setup();
    j["threads"] = {{"per_rank", th.threads},
                    {"source", th.from_env ? "OMP_NUM_THREADS" : "auto"},
                    {"host_cpus", th.host_cpus},
                    {"ranks_on_host", th.ranks_on_host},
                    {"oversubscribed", th.oversubscribed}};
    j["result"] = {
        {"iterations", res.iterations},
        {"iterations_this_run", done},
        {"restarted_from", first},
        {"converged", heat ? nlohmann::json() : nlohmann::json(res.converged)},
        {"fixed_iterations", fixed},
        {"stop_reason", res.converged ? (heat ? "steps done" : "converged")
                        : fixed       ? "fixed iterations"
                                      : "iteration limit"},
        {"relative_residual", heat ? nlohmann::json() : nlohmann::json(rel_res)},
        {"true_relative_residual", heat ? nlohmann::json() : nlohmann::json(true_rel)},
        {"l2_error", prob.has_exact() ? nlohmann::json(err.l2) : nlohmann::json()},
        {"max_error", prob.has_exact() ? nlohmann::json(err.max) : nlohmann::json()},
        {"l2_error_continuous", prob.has_exact() ? nlohmann::json(err.l2_cont) : nlohmann::json()}};
    if (heat) {
      j["result"]["steps"] = res.iterations;
      j["result"]["t"] = t_end;
      j["result"]["dt"] = dt;
      j["result"]["alpha"] = o.alpha;
      j["result"]["time_scheme"] = o.time_scheme;
      if (uses_implicit_heat(o)) {
        j["result"]["cg_iterations"] = method->inner_iterations();
        j["result"]["cg_iterations_per_step"] =
            done > 0 ? double(method->inner_iterations()) / double(done) : 0.0;
      }
    }
    // Phases of the whole run on rank 0 (output: until this report is written), and the
    // solve split on the slowest rank; each list of parts adds up to its whole.
    nlohmann::json ph = nlohmann::json::array();
    double total = 0;
    for (const auto& [name, sec] : phases.phases()) {
      ph.push_back({{"name", name}, {"seconds", sec}});
      total += sec;
    }
    const double output_so_far = now_seconds() - process_start_seconds() - phases.total();
    ph.push_back({{"name", "output"}, {"seconds", output_so_far}});
    total += output_so_far;
    j["timing"] = {{"total_s", total},
                   {"phases", ph},
                   {"setup_s", setup_s},
                   {"solve_s", sp.solve},
                   {"per_iteration_s", per_iter},
                   {"compute_s", sp.compute},
                   {"halo_s", sp.halo},
                   {"reduction_s", sp.reduction},
                   {"checkpoint_s", sp.checkpoint},
                   {"monitor_s", sp.monitor},
                   {"other_s", sp.other},
                   {"split_rank", sp.rank},
                   {"io_s", io_s}};
    const bool wrote = write_output && out_s > 0;  // null without --output
    j["timing"]["output_s"] = wrote ? nlohmann::json(out_s) : nlohmann::json();
    j["timing"]["output_bytes"] = wrote ? nlohmann::json(out_bytes) : nlohmann::json();
    j["timing"]["output_gbytes_per_s"] =
        wrote ? nlohmann::json(double(out_bytes) / out_s / 1e9) : nlohmann::json();
    j["throughput"] = {{"bytes_per_iteration", method->bytes_per_iteration()},
                       {"gbytes_per_s", gbs},
                       {"gpoints_per_s", gpts}};
    if (mg) {
      nlohmann::json levels = nlohmann::json::array();
      for (const MgLevelInfo& l : mg->levels())
        levels.push_back({{"grid", to_json(l.grid)}, {"distributed", l.distributed}});
      j["multigrid"] = {{"levels", levels}, {"describe", mg->describe()}};
    }
    j["halo_bytes_per_exchange_rank0"] = rt->op->plan().bytes_per_exchange();
    const HaloSelection& hs = rt->halo_selection;
    nlohmann::json cand = nlohmann::json::object(), skipped = nlohmann::json::object();
    for (const auto& [n, s] : hs.candidates) cand[n] = s;
    for (const auto& [n, why] : hs.skipped) skipped[n] = why;
    j["halo_selection"] = {{"requested", hs.requested}, {"chosen", hs.chosen},
                           {"candidates", cand},        {"skipped", skipped},
                           {"reason", hs.reason},       {"ranks", hs.details}};
    if (has_halo)
      j["overlap"] = {{"compute_only_s", ov.compute_s},
                      {"halo_only_s", ov.halo_s},
                      {"overlapped_s", ov.overlapped_s},
                      {"sequential_s", ov.sequential_s},
                      {"hidden_fraction", ov.hidden_fraction},
                      {"what", "one operator application, median of 5, slowest rank"}};
    else
      j["overlap"] = nullptr;
    report_text = j.dump(2) + "\n";
  }
  if (!o.report.empty()) write_file_atomically(o.report, report_text, comm);
  phases.end("output");

  if (root) {
    std::printf(
        "time: solve %.4f s on the slowest rank (%d), %.3e s/iteration = compute %.4f + halo %.4f "
        "+ reductions %.4f + checkpoints %.4f + monitor %.4f + other %.4f s\n",
        sp.solve, sp.rank, per_iter, sp.compute, sp.halo, sp.reduction, sp.checkpoint, sp.monitor,
        sp.other);
    std::printf("phases (rank 0):");
    const char* sep = " ";
    for (const auto& [name, sec] : phases.phases()) {
      std::printf("%s%s %.4f", sep, name.c_str(), sec);
      sep = " + ";
    }
    std::printf(" = total %.4f s\n", phases.total());
    std::string files;
    if (write_output) {
      const auto dot = o.output.rfind('.');
      files = o.output + ", " + o.output.substr(0, dot) + ".xdmf";
    }
    if (!o.report.empty()) files += (files.empty() ? "" : ", ") + o.report;
    if (write_output && out_s > 0)
      std::printf("output: %.4g bytes (/u, /residual_history) in %.4f s = %.3f GB/s\n",
                  double(out_bytes), out_s, double(out_bytes) / out_s / 1e9);
    if (!files.empty()) std::printf("wrote %s\n", files.c_str());
    std::fflush(stdout);
  }

  if (!res.converged && !fixed) {
    if (root)
      std::fprintf(
          stderr,
          "halo3d: warning: not converged to --tol %.3e within --max-iters %ld (residual %.3e)\n",
          o.tol, o.max_iters, rel_res);
    return kExitNotConverged;
  }
  return kExitOk;
}

}  // namespace halo3d
