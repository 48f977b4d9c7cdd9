#include "errors.hpp"

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

}  // namespace halo3d
