// Helpers shared by the multi-rank tests.
#pragma once
#include <cstdlib>
#include <string>
#include <vector>

#include "decomposition.hpp"
#include "mpi_env.hpp"

namespace halo3d::test {

inline int world_size() { return comm_size(MPI_COMM_WORLD); }
inline int world_rank() { return comm_rank(MPI_COMM_WORLD); }

// HALO3D_TEST_BACKEND=cuda runs the same tests on the GPU (CTest label gpu).
inline std::string backend_under_test() {
  const char* b = std::getenv("HALO3D_TEST_BACKEND");
  return b ? b : "host";
}

// All factorisations of n into three factors: every process grid of n ranks.
inline std::vector<Int3> process_grids(int n) {
  std::vector<Int3> out;
  for (int a = 1; a <= n; ++a)
    for (int b = 1; b <= n; ++b)
      if (n % (a * b) == 0) out.push_back({a, b, n / (a * b)});
  return out;
}

}  // namespace halo3d::test
