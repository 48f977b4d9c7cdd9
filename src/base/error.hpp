// The one exception type of halo3d and the exit codes it carries. Header-only and free of
// any library, so every layer throws it, the kernels included (halo3d_base, below them all).
#pragma once
#include <stdexcept>
#include <string>

namespace halo3d {

// Documented in README.md ("Exit codes"); scripts rely on them.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,          // unexpected runtime failure (a bug, a crashed rank, MPI error)
  kExitBadInput = 2,         // malformed or impossible options or config
  kExitNotConverged = 3,     // ran to --max-iters without reaching --tol (results written)
  kExitBreakdown = 4,        // NaN/Inf or a solver breakdown
  kExitIo = 5,               // output, report or checkpoint could not be written or read
  kExitUnavailable = 6,      // backend or transport asked for is not available here
  kExitCheckpointed = 75,    // stopped by SIGTERM/SIGUSR1 after writing a checkpoint: requeue
  kExitStoppedUnsaved = 76,  // stopped by SIGTERM/SIGUSR1 without --checkpoint: nothing saved
};

// An error with the exit code it maps to. `collective` means every rank detects it
// identically, so ranks can exit cleanly instead of aborting the job.
class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& what, bool collective = true)
      : std::runtime_error(what), code_(code), collective_(collective) {}
  ExitCode code() const { return code_; }
  bool collective() const { return collective_; }

 private:
  ExitCode code_;
  bool collective_;
};

struct BadInput : Error {
  explicit BadInput(const std::string& w) : Error(kExitBadInput, w) {}
};
struct IoError : Error {
  explicit IoError(const std::string& w, bool collective = true) : Error(kExitIo, w, collective) {}
};
// A backend or transport asked for that this build or machine cannot provide.
struct BackendUnavailable : Error {
  explicit BackendUnavailable(const std::string& w) : Error(kExitUnavailable, w) {}
};

}  // namespace halo3d
