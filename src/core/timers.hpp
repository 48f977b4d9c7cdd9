// Wall-clock accounting of where a run's time goes, for the summary and the report.
#pragma once
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace halo3d {

struct Timers {
  double compute = 0, halo = 0, reduction = 0, io = 0;  // seconds
  double monitor = 0;  // progress-line checks (heat: the error against the exact answer)
};

// Adds the scope's duration to one Timers field. Timers nest without double counting: a
// scope's time goes to its own field minus what scopes inside it (on this thread) took,
// which go to theirs, so the fields stay disjoint.
class ScopedTimer {
 public:
  explicit ScopedTimer(double& into)
      : into_(into), parent_(current()), t0_(std::chrono::steady_clock::now()) {
    current() = this;
  }
  ~ScopedTimer() {
    const double total =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    into_ += total - children_;
    if (parent_) parent_->children_ += total;
    current() = parent_;
  }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  static ScopedTimer*& current() {
    static thread_local ScopedTimer* c = nullptr;
    return c;
  }
  double& into_;
  ScopedTimer* parent_;
  double children_ = 0;
  std::chrono::steady_clock::time_point t0_;
};

inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// When the process started: main() calls this first; later calls return that time.
inline double process_start_seconds() {
  static const double t = now_seconds();
  return t;
}

// Back-to-back phases of a run, from the process start: end(name) closes the current phase.
// Rank 0 prints a line as each phase ends unless quiet; with `hold`, the lines of phases that
// end before release() wait for it (so that the run's header line comes first).
class PhaseClock {
 public:
  explicit PhaseClock(bool print, bool hold = false)
      : print_(print), hold_(hold), start_(process_start_seconds()), last_(start_) {}
  void end(const std::string& name) {
    const double t = now_seconds();
    phases_.emplace_back(name, t - last_);
    last_ = t;
    if (!print_) return;
    char line[160];
    std::snprintf(line, sizeof line, "phase %-16s %9.4f s  (%.4f s since start)\n",
                  (name + ":").c_str(), phases_.back().second, t - start_);
    held_ += line;
    if (!hold_) release();
  }
  // Prints the held lines; later ones are printed as their phases end.
  void release() {
    hold_ = false;
    if (held_.empty()) return;
    std::fputs(held_.c_str(), stdout);
    std::fflush(stdout);
    held_.clear();
  }
  const std::vector<std::pair<std::string, double>>& phases() const { return phases_; }
  double total() const { return last_ - start_; }  // the sum of the phases so far

 private:
  bool print_, hold_;
  double start_, last_;
  std::string held_;
  std::vector<std::pair<std::string, double>> phases_;
};

}  // namespace halo3d
