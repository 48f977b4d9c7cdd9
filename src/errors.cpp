#include "errors.hpp"

#include <hdf5.h>
#include <mpi.h>

#include <string>

namespace halo3d {

void throw_mpi_error(int rc, const char* expr, const char* file, int line) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  // An MPI failure may be seen by one rank only: not collective, the job is aborted.
  throw Error(kExitFailure,
              std::string("MPI error in ") + expr + " (" + file + ":" + std::to_string(line) +
                  "): " + std::string(msg, len),
              false);
}

// The innermost description on HDF5's error stack (e.g. the system call and errno that
// failed), so that a failed write says why; empty when the stack is empty.
std::string hdf5_error_cause() {
  std::string cause;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned n, const H5E_error2_t* e, void* out) -> herr_t {
        if (n == 0 && e && e->desc) *static_cast<std::string*>(out) = e->desc;
        return 0;
      },
      &cause);
  H5Eclear2(H5E_DEFAULT);
  for (char& c : cause)
    if (c == '\n' || c == '\r') c = ' ';
  return cause;
}

void throw_hdf5_error(const char* expr, const char* file, int line) {
  const std::string cause = hdf5_error_cause();
  throw IoError(std::string("HDF5 call failed: ") + expr + " (" + file + ":" +
                    std::to_string(line) + ")" + (cause.empty() ? "" : ": " + cause),
                false);
}

}  // namespace halo3d
