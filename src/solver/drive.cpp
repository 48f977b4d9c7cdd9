// drive(): the loop every method runs under (iterations or steps, stopping rules, monitor
// and progress lines, checkpoints, snapshots and stop signals); the methods are cg.cpp's and
// solvers.cpp's.
#include <cmath>
#include <cstdio>
#include <limits>

#include "errors.hpp"
#include "nvtx.hpp"
#include "reduction.hpp"
#include "solvers.hpp"

namespace halo3d {

namespace {

// Rank 0's time-based progress line (DriveOptions::progress_s): iteration or step, residual,
// the solve's time so far and an estimate of the time left. Nothing but rank 0's clock
// decides it, so no rank waits for it and the iterates are those of a run without it.
class ProgressLine {
 public:
  ProgressLine(const DriveOptions& o, bool root, long first, double t0)
      : o_(o), on_(root && o.progress_s > 0), first_(first), t0_(t0), last_(t0) {}
  void printed_other(double now) { last_ = now; }  // a --monitor line was just printed
  void after(const Method& m, long it, double rel) {
    if (!on_) return;
    if (m.has_residual() && rel0_ < 0) rel0_ = rel, it0_ = it;
    const double now = now_seconds();
    if (now - last_ < o_.progress_s) return;
    last_ = now;
    const double elapsed = now - t0_, per_it = elapsed / double(it - first_);
    long left = o_.max_iters - it;  // a fixed count, heat's steps, or --max-iters at most
    if (m.has_residual() && o_.tol > 0) left = std::min(left, iterations_to_tol(it, rel));
    char eta[64] = "";
    if (left >= 0) std::snprintf(eta, sizeof eta, "; about %.0f s left", double(left) * per_it);
    if (m.has_residual())
      std::printf("progress: iteration %ld, relative residual %.3e, %.1f s into the solve%s\n", it,
                  rel, elapsed, eta);
    else
      std::printf("progress: step %ld of %ld, t = %.6e, %.1f s into the solve%s\n", it,
                  o_.max_iters, o_.dt * double(it), elapsed, eta);
    std::fflush(stdout);
  }

 private:
  // At the mean rate since this run's first iteration (-1: nothing to go by yet).
  long iterations_to_tol(long it, double rel) const {
    if (rel <= o_.tol) return 0;
    if (it <= it0_ || !(rel < rel0_) || !(rel > 0)) return -1;
    const double per = std::log(rel / rel0_) / double(it - it0_);  // < 0
    return long(std::ceil(std::log(o_.tol / rel) / per));
  }
  const DriveOptions& o_;
  bool on_;
  long first_, it0_ = 0;
  double t0_, last_, rel0_ = -1;
};

// After an iteration that advanced: the progress line every --monitor iterations, the
// time-based one, and the time-series snapshot every --output-every.
void after_advance(const Method& m, const DriveOptions& o, long it, double rel, double t0,
                   bool root, ProgressLine& progress) {
  if (o.monitor > 0 && it % o.monitor == 0) {
    const std::string extra = o.progress ? o.progress(it) : std::string();
    if (root) {
      if (m.has_residual())
        std::printf("iter %8ld  rel_residual %.6e  time %10.4f s%s\n", it, rel, now_seconds() - t0,
                    extra.c_str());
      else
        std::printf("step %8ld  %swall %10.4f s\n", it, extra.c_str(), now_seconds() - t0);
      std::fflush(stdout);
      progress.printed_other(now_seconds());
    }
  }
  progress.after(m, it, rel);
  if (o.snapshot && o.snapshot_every > 0 && it % o.snapshot_every == 0) o.snapshot(it);
}

}  // namespace

DriveResult drive(Method& m, MPI_Comm comm, const DriveOptions& o, long first,
                  std::vector<double> history) {
  DriveResult res;
  res.history = std::move(history);
  res.iterations = first;
  res.relative_residual =
      res.history.empty() ? std::numeric_limits<double>::quiet_NaN() : res.history.back();
  const bool root = comm_rank(comm) == 0;
  StopVote vote(comm);
  const double t0 = now_seconds();
  ProgressLine progress(o, root, first, t0);
  while (res.iterations < o.max_iters) {
    vote.begin();
    const Method::Step s = m.step();
    const bool stop = vote.end();
    if (m.has_residual() && !std::isfinite(s.relative_residual))
      throw Error(kExitBreakdown, "residual became " + std::to_string(s.relative_residual) +
                                      " at iteration " + std::to_string(res.iterations + 1) +
                                      ": the solve diverged or the input holds NaN/Inf");
    if (m.has_residual()) res.relative_residual = s.relative_residual;
    if (s.advanced) {
      ++res.iterations;
      if (m.has_residual()) res.history.push_back(s.relative_residual);
      after_advance(m, o, res.iterations, s.relative_residual, t0, root, progress);
    }
    if (s.converged) {
      res.converged = true;
      break;
    }
    if (stop && o.stopping) o.stopping(res.iterations, vote.signal());
    const bool periodic = o.checkpoint_every > 0 && res.iterations % o.checkpoint_every == 0;
    if (o.checkpoint && (periodic || stop)) o.checkpoint(res.iterations, res.history);
    if (stop) {
      res.stopped_by_signal = true;
      res.stop_signal = vote.signal();
      break;
    }
  }
  // Heat runs a fixed number of steps: reaching them is success.
  if (!m.has_residual()) res.converged = res.iterations >= o.max_iters;
  res.solve_seconds = now_seconds() - t0;
  return res;
}

}  // namespace halo3d
