// Shared by the peer drivers: the options, halo3d's right-hand side and its z-slab split.
// Each driver solves exactly the system that `halo3d solve --rhs random --seed S --tol T`
// solves (see README.md in this folder) and prints one PEER line.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace peers {

struct Options {
  int grid[3] = {128, 128, 128};
  std::uint64_t seed = 1;
  double tol = 1e-8;
  int max_iters = 100000;
  std::string solver;       // driver-specific: pfmg | none (hypre); mg | gamg | none (PETSc)
  int levels = 0;           // PETSc mg: 0 = chosen from the grid
  std::string coefficient;  // --coefficient (hypre): k as halo3d's; empty: the Laplacian
};

// halo3d's --rhs random value (src/problem/problem.cpp, kernels/point_ops.hpp random_point), bit
// for bit.
inline double random_value(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + index + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 11) * 0x1.0p-52 - 1.0;
}

inline double rhs_value(const Options& o, int gi, int gj, int gk) {
  const std::uint64_t index =
      std::uint64_t(gi) + std::uint64_t(o.grid[0]) * (gj + std::uint64_t(o.grid[1]) * gk);
  return random_value(o.seed, index);
}

// halo3d's split of n points over p ranks (src/core/decomposition.cpp): the first n % p ranks
// get one more.
struct Span {
  int offset, count;
};
inline Span split_axis(int n, int p, int coord) {
  const int base = n / p, extra = n % p;
  return {coord * base + (coord < extra ? coord : extra), base + (coord < extra ? 1 : 0)};
}

[[noreturn]] inline void usage(const char* prog, const char* solvers) {
  std::fprintf(stderr,
               "usage: %s [--grid NX,NY,NZ] [--seed S] [--tol T] [--max-iters N] "
               "[--solver %s] [--levels L] [--coefficient file:PATH.h5:/DATASET|VALUE]\n",
               prog, solvers);
  MPI_Abort(MPI_COMM_WORLD, 2);
  std::exit(2);
}

// Parses the options; unknown ones (e.g. PETSc's -ksp_view) are left for the library.
inline Options parse(int argc, char** argv, const char* solvers, const char* default_solver) {
  Options o;
  o.solver = default_solver;
  for (int a = 1; a < argc; ++a) {
    const std::string s = argv[a];
    auto next = [&]() -> const char* {
      if (a + 1 >= argc) usage(argv[0], solvers);
      return argv[++a];
    };
    if (s == "--grid") {
      if (std::sscanf(next(), "%d,%d,%d", &o.grid[0], &o.grid[1], &o.grid[2]) != 3)
        usage(argv[0], solvers);
    } else if (s == "--seed") {
      o.seed = std::strtoull(next(), nullptr, 10);
    } else if (s == "--tol") {
      o.tol = std::atof(next());
    } else if (s == "--max-iters") {
      o.max_iters = std::atoi(next());
    } else if (s == "--solver") {
      o.solver = next();
    } else if (s == "--levels") {
      o.levels = std::atoi(next());
    } else if (s == "--coefficient") {
      o.coefficient = next();
    } else if (s == "--help" || s == "-h") {
      usage(argv[0], solvers);
    }
  }
  for (int d = 0; d < 3; ++d)
    if (o.grid[d] < 1) usage(argv[0], solvers);
  return o;
}

// Max over ranks of a local duration.
inline double max_over_ranks(double local, MPI_Comm comm) {
  double m = 0;
  MPI_Allreduce(&local, &m, 1, MPI_DOUBLE, MPI_MAX, comm);
  return m;
}

inline void print_peer(const char* name, const Options& o, int ranks, int iterations,
                       double setup_s, double solve_s, double relres, bool converged) {
  std::printf(
      "PEER name=%s grid=%d,%d,%d ranks=%d tol=%g iterations=%d setup_s=%.6f solve_s=%.6f "
      "total_s=%.6f relres=%.6e converged=%s\n",
      name, o.grid[0], o.grid[1], o.grid[2], ranks, o.tol, iterations, setup_s, solve_s,
      setup_s + solve_s, relres, converged ? "true" : "false");
  std::fflush(stdout);
}

}  // namespace peers
