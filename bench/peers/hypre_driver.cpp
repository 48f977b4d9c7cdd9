// hypre Struct peer: StructPCG, preconditioned by one PFMG V-cycle (--solver pfmg, the
// default) or plain (--solver none), on halo3d's system (see README.md).
#include <HYPRE_struct_ls.h>
#include <HYPRE_struct_mv.h>

#include <cmath>
#include <vector>

#include "coefficient.hpp"
#include "common.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const peers::Options o = peers::parse(argc, argv, "pfmg|none", "pfmg");
  if (o.solver != "pfmg" && o.solver != "none") peers::usage(argv[0], "pfmg|none");
  const MPI_Comm comm = MPI_COMM_WORLD;
  const int nx = o.grid[0], ny = o.grid[1], nz = o.grid[2];
  // z-slabs, as halo3d's --procs 1,1,P.
  const peers::Span zs = peers::split_axis(nz, size, rank);
  const bool empty = zs.count == 0;
  HYPRE_Int ilower[3] = {0, 0, zs.offset}, iupper[3] = {nx - 1, ny - 1, zs.offset + zs.count - 1};
  const long local = long(nx) * ny * zs.count;

  const double hx = 1.0 / (nx + 1), hy = 1.0 / (ny + 1), hz = 1.0 / (nz + 1);
  const double cx = 1 / (hx * hx), cy = 1 / (hy * hy), cz = 1 / (hz * hz);
  const double diag = 2 * (cx + cy + cz);

  // b outside the timed region: it is the problem's data, as halo3d's fill_source.
  std::vector<double> bvals(local);
  for (int k = 0; k < zs.count; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i)
        bvals[i + long(nx) * (j + long(ny) * k)] = peers::rhs_value(o, i, j, zs.offset + k);

  // k over the slab and its ring, read before the timer as halo3d reads it before its own.
  const std::vector<double> kappa =
      o.coefficient.empty() ? std::vector<double>() : peers::read_kappa(o.coefficient, o.grid, zs);

  MPI_Barrier(comm);
  const double t0 = MPI_Wtime();
  HYPRE_StructGrid grid;
  HYPRE_StructGridCreate(comm, 3, &grid);
  if (!empty) HYPRE_StructGridSetExtents(grid, ilower, iupper);
  HYPRE_StructGridAssemble(grid);

  HYPRE_StructStencil stencil;
  HYPRE_StructStencilCreate(3, 7, &stencil);
  const HYPRE_Int offsets[7][3] = {{0, 0, 0}, {-1, 0, 0}, {1, 0, 0}, {0, -1, 0},
                                   {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};
  for (int e = 0; e < 7; ++e)
    HYPRE_StructStencilSetElement(stencil, e, const_cast<HYPRE_Int*>(offsets[e]));

  HYPRE_StructMatrix A;
  HYPRE_StructMatrixCreate(comm, grid, stencil, &A);
  HYPRE_StructMatrixInitialize(A);
  if (!empty) {
    HYPRE_Int entries[7] = {0, 1, 2, 3, 4, 5, 6};
    const double inv_h2[3] = {cx, cy, cz};
    std::vector<double> vals =  // k: halo3d's face weights (coefficient.hpp)
        kappa.empty() ? std::vector<double>(local * 7)
                      : peers::variable_entries(kappa, o.grid, zs, inv_h2);
    for (long p = 0; kappa.empty() && p < local; ++p) {
      double* v = &vals[p * 7];
      v[0] = diag;
      v[1] = v[2] = -cx;
      v[3] = v[4] = -cy;
      v[5] = v[6] = -cz;
    }
    HYPRE_StructMatrixSetBoxValues(A, ilower, iupper, 7, entries, vals.data());
    // Homogeneous Dirichlet: the couplings to the zero ghosts outside [0,N) are dropped.
    for (int d = 0; d < 3; ++d)
      for (int side = 0; side < 2; ++side) {
        const int bound = side == 0 ? 0 : o.grid[d] - 1;
        HYPRE_Int lo[3] = {ilower[0], ilower[1], ilower[2]},
                  hi[3] = {iupper[0], iupper[1], iupper[2]};
        if (bound < lo[d] || bound > hi[d]) continue;  // this rank has no such face
        lo[d] = hi[d] = bound;
        const long n = long(hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1);
        std::vector<double> zeros(n, 0.0);
        HYPRE_Int e = 1 + 2 * d + side;
        HYPRE_StructMatrixSetBoxValues(A, lo, hi, 1, &e, zeros.data());
      }
  }
  HYPRE_StructMatrixAssemble(A);

  HYPRE_StructVector b, x;
  HYPRE_StructVectorCreate(comm, grid, &b);
  HYPRE_StructVectorCreate(comm, grid, &x);
  HYPRE_StructVectorInitialize(b);
  HYPRE_StructVectorInitialize(x);
  if (!empty) {
    HYPRE_StructVectorSetBoxValues(b, ilower, iupper, bvals.data());
    std::vector<double> zeros(local, 0.0);
    HYPRE_StructVectorSetBoxValues(x, ilower, iupper, zeros.data());
  }
  HYPRE_StructVectorAssemble(b);
  HYPRE_StructVectorAssemble(x);

  HYPRE_StructSolver pcg, pfmg = nullptr;
  HYPRE_StructPCGCreate(comm, &pcg);
  HYPRE_StructPCGSetMaxIter(pcg, o.max_iters);
  HYPRE_StructPCGSetTol(pcg, o.tol);  // ||r||_2 / ||b||_2 < tol with two-norm on
  HYPRE_StructPCGSetAbsoluteTol(pcg, 0.0);
  HYPRE_StructPCGSetTwoNorm(pcg, 1);  // the unpreconditioned 2-norm of the residual
  HYPRE_StructPCGSetRelChange(pcg, 0);
  HYPRE_StructPCGSetLogging(pcg, 1);
  if (o.solver == "pfmg") {
    HYPRE_StructPFMGCreate(comm, &pfmg);
    HYPRE_StructPFMGSetMaxIter(pfmg, 1);  // one V-cycle per application
    HYPRE_StructPFMGSetTol(pfmg, 0.0);
    HYPRE_StructPFMGSetZeroGuess(pfmg);
    HYPRE_StructPFMGSetRAPType(pfmg, 0);    // Galerkin coarse operators
    HYPRE_StructPFMGSetRelaxType(pfmg, 2);  // red/black Gauss-Seidel (symmetric)
    HYPRE_StructPFMGSetNumPreRelax(pfmg, 1);
    HYPRE_StructPFMGSetNumPostRelax(pfmg, 1);
    HYPRE_StructPFMGSetSkipRelax(pfmg, 1);
    HYPRE_StructPFMGSetLogging(pfmg, 0);
    HYPRE_StructPCGSetPrecond(pcg, HYPRE_StructPFMGSolve, HYPRE_StructPFMGSetup, pfmg);
  }
  HYPRE_StructPCGSetup(pcg, A, b, x);
  const double setup_s = peers::max_over_ranks(MPI_Wtime() - t0, comm);

  MPI_Barrier(comm);
  const double t1 = MPI_Wtime();
  HYPRE_StructPCGSolve(pcg, A, b, x);
  const double solve_s = peers::max_over_ranks(MPI_Wtime() - t1, comm);

  HYPRE_Int iters = 0;
  HYPRE_StructPCGGetNumIterations(pcg, &iters);

  // The true residual ||b - A x|| / ||b||, computed apart from the solver.
  HYPRE_StructVector r;
  HYPRE_StructVectorCreate(comm, grid, &r);
  HYPRE_StructVectorInitialize(r);
  if (!empty) HYPRE_StructVectorSetBoxValues(r, ilower, iupper, bvals.data());
  HYPRE_StructVectorAssemble(r);
  HYPRE_StructMatrixMatvec(-1.0, A, x, 1.0, r);
  std::vector<double> rvals(local);
  if (!empty) HYPRE_StructVectorGetBoxValues(r, ilower, iupper, rvals.data());
  double sums[2] = {0, 0}, tot[2];
  for (long p = 0; p < local; ++p) {
    sums[0] += rvals[p] * rvals[p];
    sums[1] += bvals[p] * bvals[p];
  }
  MPI_Allreduce(sums, tot, 2, MPI_DOUBLE, MPI_SUM, comm);
  const double relres = tot[1] > 0 ? std::sqrt(tot[0] / tot[1]) : 0.0;

  if (rank == 0)
    peers::print_peer(o.solver == "pfmg" ? "hypre-pfmg-pcg" : "hypre-pcg", o, size, iters, setup_s,
                      solve_s, relres, relres <= o.tol * (1 + 1e-6));

  HYPRE_StructPCGDestroy(pcg);
  if (pfmg) HYPRE_StructPFMGDestroy(pfmg);
  HYPRE_StructVectorDestroy(r);
  HYPRE_StructVectorDestroy(x);
  HYPRE_StructVectorDestroy(b);
  HYPRE_StructMatrixDestroy(A);
  HYPRE_StructStencilDestroy(stencil);
  HYPRE_StructGridDestroy(grid);
  MPI_Finalize();
  return 0;
}
