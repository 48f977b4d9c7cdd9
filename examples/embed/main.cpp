// An application that solves its own Poisson problem with halo3d: it picks a discrete
// solution u*, computes f = A u* itself on its own arrays (A: the 7-point -Laplace with
// zero boundary values on the unit cube, as halo3d discretizes it), asks halo3d for u, and
// checks max |u - u*| <= 1e-8 max |u*| on every rank. Exit 0 when every rank agrees, 1 if not.
//   mpirun -np 2 ./embed [N]      (an N^3 grid, default 40)
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <halo3d/halo3d.hpp>
#include <vector>

namespace {

// u* at global point g of a grid of n points per axis: a smooth field, zero on the boundary
// (g = -1 and g = n), that is no eigenvector of A (so the solver has work to do).
double exact(const std::array<int, 3>& n, int gi, int gj, int gk) {
  const double x = (gi + 1.0) / (n[0] + 1), y = (gj + 1.0) / (n[1] + 1),
               z = (gk + 1.0) / (n[2] + 1);
  return x * (1 - x) * y * (1 - y) * z * (1 - z) * (1 + x + 2 * y + 3 * z) * 64;
}

// f = A u* on this rank's box. u* is a formula, so the neighbours' values (the ghost points)
// are evaluated here: no halo exchange is needed.
std::vector<double> source(const std::array<int, 3>& n, const halo3d::Box& b) {
  std::vector<double> f(b.points());
  const double cx = (n[0] + 1.0) * (n[0] + 1), cy = (n[1] + 1.0) * (n[1] + 1),
               cz = (n[2] + 1.0) * (n[2] + 1);
  std::size_t at = 0;
  for (int k = 0; k < b.size[2]; ++k)
    for (int j = 0; j < b.size[1]; ++j)
      for (int i = 0; i < b.size[0]; ++i) {
        const int gi = b.offset[0] + i, gj = b.offset[1] + j, gk = b.offset[2] + k;
        const double c = exact(n, gi, gj, gk);
        f[at++] = cx * (2 * c - exact(n, gi - 1, gj, gk) - exact(n, gi + 1, gj, gk)) +
                  cy * (2 * c - exact(n, gi, gj - 1, gk) - exact(n, gi, gj + 1, gk)) +
                  cz * (2 * c - exact(n, gi, gj, gk - 1) - exact(n, gi, gj, gk + 1));
      }
  return f;
}

// 0 when u matches u* on every rank, 1 otherwise (printed by rank 0).
int check(const std::array<int, 3>& n, const halo3d::Box& b, const std::vector<double>& u,
          const halo3d::Result& r, int rank) {
  double err = 0, scale = 0;
  std::size_t at = 0;
  for (int k = 0; k < b.size[2]; ++k)
    for (int j = 0; j < b.size[1]; ++j)
      for (int i = 0; i < b.size[0]; ++i) {
        const double e = exact(n, b.offset[0] + i, b.offset[1] + j, b.offset[2] + k);
        err = std::max(err, std::abs(u[at++] - e));
        scale = std::max(scale, std::abs(e));
      }
  MPI_Allreduce(MPI_IN_PLACE, &scale, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  // NaN fails too: the comparison is false.
  int bad = !(err <= 1e-8 * scale) || !r.converged;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("embed: %s, %ld iterations, residual %.3g, max|u - u*| = %.3g (max|u*| %.3g)\n",
                bad ? "FAILED" : "ok", r.iterations, r.relative_residual, err, scale);
  return bad;
}

int run(int argc, char** argv, int rank) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 40;
  halo3d::Grid grid;
  grid.points = {n, n + 3, n - 2};  // unequal axes, so a transposed layout would show
  halo3d::Settings settings;
  settings.tol = 1e-12;  // the error is at most about cond(A) x tol
  halo3d::Solver solver(MPI_COMM_WORLD, grid, settings);
  const halo3d::Box box = solver.local_box();
  if (rank == 0)
    std::printf("embed: halo3d %s, grid %dx%dx%d on %dx%dx%d ranks\n", halo3d::version(),
                grid.points[0], grid.points[1], grid.points[2], solver.process_grid()[0],
                solver.process_grid()[1], solver.process_grid()[2]);
  const std::vector<double> f = source(grid.points, box);
  std::vector<double> u(box.points());
  const halo3d::Result r = solver.solve(f.data(), u.data());
  return check(grid.points, box, u, r, rank);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int rc = 1;
  try {
    rc = run(argc, argv, rank);
  } catch (const halo3d::Error& e) {
    std::fprintf(stderr, "embed: %s\n", e.what());
    if (!e.collective()) MPI_Abort(MPI_COMM_WORLD, e.code());
    rc = e.code();
  }
  MPI_Finalize();
  return rc;
}
