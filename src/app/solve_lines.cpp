// Rank 0's lines of `halo3d solve` on stdout and stderr: the header, the results, the
// timing, the stop and warning lines (the report and the file's attributes: solve_report.cpp).
#include <csignal>
#include <cstdio>
#include <string>

#include "build_info.hpp"
#include "fields.hpp"
#include "files.hpp"
#include "solve_report.hpp"
#include "threads.hpp"

namespace halo3d {

namespace {

// The error line: against the exact answer, or why there is none.
void print_error(const SolveRecord& r, const Verification& v) {
  const SolveOptions& o = r.o;
  if (!r.has_exact)
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
bool overlap_shown(const SolveRecord& r, const Verification& v) {
  return v.has_halo && r.gpu && v.ov.sequential_s >= v.ov.compute_s;
}

}  // namespace

// Rank 0's lines on the outcome: steps or convergence, errors; unless --quiet, the implicit
// steps' inner iterations, the series, throughput and overlap.
void print_results(const SolveRecord& r, const DriveResult& res, const Verification& v,
                   const Summary& m) {
  const SolveOptions& o = r.o;
  if (r.heat) {
    std::printf("heat: %ld steps done, t = %.6e (dt %.6e, alpha %g)\n", res.iterations,
                r.dt * double(res.iterations), r.dt, o.alpha);
    if (!o.quiet && r.implicit && m.done > 0)
      std::printf("%s steps: %ld CG iterations (%s), %.2f per step\n",
                  to_string(o.time_scheme).c_str(), r.inner_iterations,
                  o.precond == Precond::mg ? "multigrid-preconditioned" : "plain",
                  double(r.inner_iterations) / double(m.done));
    if (!o.quiet && r.series)
      std::printf("series: %zu snapshots of u (every %ld steps, and the last) in %s:/series\n",
                  r.snapshots, r.output_every, o.output.c_str());
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

// Rank 0's closing lines: where the solve's time went (--quiet: the solve and the total),
// the output's write, the files written. The phases were printed as they ended.
void print_timing(const SolveRecord& r, const Summary& m) {
  const SolveOptions& o = r.o;
  const SolveSplit& sp = m.sp;
  if (o.quiet)
    std::printf("time: solve %.4f s (%.3e s/iteration), total %.4f s\n", sp.solve, m.per_iter,
                r.phases_total);
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

void print_start(const SolveOptions& o, long first, const MeanRemoved* singular,
                 const Multigrid* mg, double setup_s, double start_s) {
  if (!o.restart.empty())
    std::printf("restarted from %s at iteration %ld\n", o.restart.c_str(), first);
  if (singular)
    std::printf(
        "singular (no Dirichlet face, no shift: A 1 = 0): the source's mean %.6e removed "
        "(norm %.3e, %.3e of ||b||); the answer is the zero-mean solution\n",
        singular->mean, singular->norm, singular->relative);
  if (!o.quiet && mg)
    std::printf("preconditioner: multigrid V-cycle, %s; set-up %.4f s\n", mg->describe().c_str(),
                setup_s);
  if (!o.quiet && mg && o.fmg && o.restart.empty())
    std::printf("first iterate: full-multigrid F-cycle; CG's start %.4f s\n", start_s);
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
void announce_stop(const std::string& ck, long saved, long it, int sig) {
  if (ck.empty()) return;
  const std::string held =
      saved >= 0    ? ck + " still holds iteration " + std::to_string(saved)
      : saved == -2 ? ck + " keeps the file it held before this run"
                    : "nothing is saved (no earlier checkpoint; --checkpoint-every N keeps one)";
  std::fprintf(stderr,
               "halo3d: %s at iteration %ld: writing checkpoint %s (iteration %ld); if the "
               "write is cut off, %s\n",
               signal_name(sig), it, ck.c_str(), it, held.c_str());
  std::fflush(stderr);
}

void warn_not_converged(const SolveOptions& o, const Verification& v) {
  if (v.unconfirmed)
    std::fprintf(stderr,
                 "halo3d: warning: not converged: the recurrence residual %.3e met --tol %.3e "
                 "but the true residual %.3e is above %g x --tol (double precision does "
                 "not reach --tol for this problem)\n",
                 v.rel_res, o.tol, v.true_rel, kTrueResidualSlack);
  else
    std::fprintf(
        stderr,
        "halo3d: warning: not converged to --tol %.3e within --max-iters %ld (residual %.3e)\n",
        o.tol, o.max_iters, v.rel_res);
}

// The header: what is solved, where and how; printed as soon as set-up has chosen the
// decomposition, backend and halo transport, before any phase line.
void print_header(const SolveOptions& o, const std::string& solver, const Runtime& rt) {
  const Decomposition& d = rt.decomp;
  std::printf(
      "halo3d %s: %s/%s on grid %s, %d %s as %s, backend %s (%s), %d thread(s)/rank (%s), "
      "halo %s, overlap %s\n",
      version_string().c_str(), to_string(o.problem).c_str(), solver.c_str(),
      to_string(o.grid).c_str(), d.ranks, d.ranks == 1 ? "rank" : "ranks",
      to_string(d.procs).c_str(), rt.kernels->name().c_str(), rt.kernels->device_name().c_str(),
      thread_setup().threads, thread_setup().from_env ? "OMP_NUM_THREADS" : "auto",
      rt.op->transport().name().c_str(),
      rt.overlap_choice.empty() ? (rt.op->overlap() ? "on" : "off") : rt.overlap_choice.c_str());
  print_halo_selection(rt.halo_selection);
  std::fflush(stdout);
}

}  // namespace halo3d
