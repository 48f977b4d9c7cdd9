// Wall-clock accounting of where a run's time goes, for the summary and the report.
#pragma once
#include <chrono>

namespace halo3d {

struct Timers {
  double compute = 0, halo = 0, reduction = 0, io = 0;  // seconds
};

// Adds the scope's duration to one Timers field.
class ScopedTimer {
 public:
  explicit ScopedTimer(double& into) : into_(into), t0_(std::chrono::steady_clock::now()) {}
  ~ScopedTimer() {
    into_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  double& into_;
  std::chrono::steady_clock::time_point t0_;
};

inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace halo3d
