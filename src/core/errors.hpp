// MPI's check macro (error.hpp has the exit codes and the error type; the CUDA, NCCL and
// HDF5 macros sit with the code that calls those libraries).
#pragma once
#include <string>

#include "error.hpp"

namespace halo3d {

[[noreturn]] void throw_mpi_error(int rc, const char* expr, const char* file, int line);

}  // namespace halo3d

#define HALO3D_MPI_CHECK(expr)                                          \
  do {                                                                  \
    const int halo3d_rc_ = (expr);                                      \
    if (halo3d_rc_ != MPI_SUCCESS)                                      \
      ::halo3d::throw_mpi_error(halo3d_rc_, #expr, __FILE__, __LINE__); \
  } while (0)
