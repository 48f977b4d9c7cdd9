// PETSc peer: KSPCG on a DMDA assembly of halo3d's system (see README.md), preconditioned by
//   --solver mg       PCMG, Galerkin coarse operators (P^T A P), trilinear interpolation built
//                     here for any N (nested for odd N, by position for even N, as halo3d's
//                     hierarchy), levels until the coarsest grid has at most 8 points an axis
//                     (or --levels L); PETSc's default level smoothers and coarse solver
//   --solver mg-dmda  PCMG on the DMDA's own hierarchy (Q1 interpolation, Galerkin); PETSc's
//                     DMDA coarsening needs N-1 divisible by 2 on every level (odd N only)
//   --solver gamg     PCGAMG with PETSc's defaults
//   --solver none     plain CG (PCNONE)
// Any PETSc option (-ksp_view, -mg_levels_ksp_type ...) may follow; KSPSetFromOptions reads it.
#include <petscdmda.h>
#include <petscksp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "common.hpp"

namespace {

// 1D linear interpolation weights of fine point i (position (i+1)/(n+1)) from the coarse
// grid of nc points (positions (I+1)/(nc+1)), zero beyond both ends.
int weights_1d(int n, int nc, int i, int cols[2], double w[2]) {
  // s = (i+1)(nc+1)/(n+1) - 1 = q + f/(n+1), in integers.
  const long num = long(i + 1) * (nc + 1) - (n + 1);
  const long q = num >= 0 ? num / (n + 1) : -((-num + n) / (n + 1));
  const double f = double(num - q * (n + 1)) / (n + 1);
  int m = 0;
  if (q >= 0 && q < nc && 1 - f > 0) cols[m] = int(q), w[m++] = 1 - f;
  if (q + 1 >= 0 && q + 1 < nc && f > 0) cols[m] = int(q + 1), w[m++] = f;
  return m;
}

int coarsen(int n) { return n < 4 ? n : (n % 2 ? (n - 1) / 2 : n / 2); }

// Interpolation from grid gc (coarse) to grid gf (fine), both z-slabs over the ranks.
Mat interpolation(MPI_Comm comm, int rank, int size, const int gf[3], const int gc[3]) {
  const peers::Span zf = peers::split_axis(gf[2], size, rank);
  const peers::Span zc = peers::split_axis(gc[2], size, rank);
  const PetscInt mf = PetscInt(gf[0]) * gf[1] * zf.count, mc = PetscInt(gc[0]) * gc[1] * zc.count;
  Mat P;
  MatCreateAIJ(comm, mf, mc, PETSC_DETERMINE, PETSC_DETERMINE, 8, nullptr, 8, nullptr, &P);
  const PetscInt row0 = PetscInt(gf[0]) * gf[1] * zf.offset;
  for (int k = 0; k < zf.count; ++k)
    for (int j = 0; j < gf[1]; ++j)
      for (int i = 0; i < gf[0]; ++i) {
        int ci[2], cj[2], ck[2];
        double wi[2], wj[2], wk[2];
        const int ni = weights_1d(gf[0], gc[0], i, ci, wi);
        const int nj = weights_1d(gf[1], gc[1], j, cj, wj);
        const int nk = weights_1d(gf[2], gc[2], zf.offset + k, ck, wk);
        PetscInt cols[8];
        PetscScalar vals[8];
        int m = 0;
        for (int c = 0; c < nk; ++c)
          for (int b = 0; b < nj; ++b)
            for (int a = 0; a < ni; ++a) {
              cols[m] = ci[a] + PetscInt(gc[0]) * (cj[b] + PetscInt(gc[1]) * ck[c]);
              vals[m++] = wi[a] * wj[b] * wk[c];
            }
        const PetscInt row = row0 + i + PetscInt(gf[0]) * (j + PetscInt(gf[1]) * k);
        MatSetValues(P, 1, &row, m, cols, vals, INSERT_VALUES);
      }
  MatAssemblyBegin(P, MAT_FINAL_ASSEMBLY);
  MatAssemblyEnd(P, MAT_FINAL_ASSEMBLY);
  return P;
}

}  // namespace

int main(int argc, char** argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, nullptr));
  const MPI_Comm comm = PETSC_COMM_WORLD;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const char* solvers = "mg|mg-dmda|gamg|none";
  const peers::Options o = peers::parse(argc, argv, solvers, "mg");
  if (o.solver != "mg" && o.solver != "mg-dmda" && o.solver != "gamg" && o.solver != "none")
    peers::usage(argv[0], solvers);
  if (!o.coefficient.empty()) {  // this driver assembles the Laplacian only: refuse, not ignore
    if (rank == 0)
      std::fprintf(stderr, "%s: --coefficient: only the hypre driver takes it\n", argv[0]);
    PetscCall(PetscFinalize());
    return 2;
  }
  const int nx = o.grid[0], ny = o.grid[1], nz = o.grid[2];
  const double hx = 1.0 / (nx + 1), hy = 1.0 / (ny + 1), hz = 1.0 / (nz + 1);
  const double cx = 1 / (hx * hx), cy = 1 / (hy * hy), cz = 1 / (hz * hz);
  const double diag = 2 * (cx + cy + cz);
  // z-slabs, as halo3d's --procs 1,1,P; with a 1x1xP process grid PETSc's global numbering
  // is halo3d's natural one, gi + NX*(gj + NY*gk).
  std::vector<PetscInt> lz(size);
  for (int r = 0; r < size; ++r) lz[r] = peers::split_axis(nz, size, r).count;
  if (*std::min_element(lz.begin(), lz.end()) < 1) {
    if (rank == 0) std::fprintf(stderr, "every rank needs at least one z-plane\n");
    MPI_Abort(comm, 2);
  }
  const peers::Span zs = peers::split_axis(nz, size, rank);

  MPI_Barrier(comm);
  const double t0 = MPI_Wtime();
  DM da;
  PetscCall(DMDACreate3d(comm, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE,
                         DMDA_STENCIL_STAR, nx, ny, nz, 1, 1, size, 1, 1, nullptr, nullptr,
                         lz.data(), &da));
  PetscCall(DMSetFromOptions(da));
  PetscCall(DMSetUp(da));
  Mat A;
  PetscCall(DMCreateMatrix(da, &A));
  Vec b, x;
  PetscCall(DMCreateGlobalVector(da, &b));
  PetscCall(VecDuplicate(b, &x));
  PetscInt xs, ys, zs0, xm, ym, zm;
  PetscCall(DMDAGetCorners(da, &xs, &ys, &zs0, &xm, &ym, &zm));
  for (PetscInt k = zs0; k < zs0 + zm; ++k)
    for (PetscInt j = ys; j < ys + ym; ++j)
      for (PetscInt i = xs; i < xs + xm; ++i) {
        MatStencil row = {0}, cols[7];
        PetscScalar v[7];
        int m = 0;
        row.i = i, row.j = j, row.k = k;
        cols[m] = row, v[m++] = diag;
        // Homogeneous Dirichlet: neighbours outside [0,N) are zero ghosts, left out.
        if (i > 0) cols[m] = row, cols[m].i = i - 1, v[m++] = -cx;
        if (i < nx - 1) cols[m] = row, cols[m].i = i + 1, v[m++] = -cx;
        if (j > 0) cols[m] = row, cols[m].j = j - 1, v[m++] = -cy;
        if (j < ny - 1) cols[m] = row, cols[m].j = j + 1, v[m++] = -cy;
        if (k > 0) cols[m] = row, cols[m].k = k - 1, v[m++] = -cz;
        if (k < nz - 1) cols[m] = row, cols[m].k = k + 1, v[m++] = -cz;
        PetscCall(MatSetValuesStencil(A, 1, &row, m, cols, v, INSERT_VALUES));
      }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  {
    PetscScalar*** bv;
    PetscCall(DMDAVecGetArray(da, b, &bv));
    for (PetscInt k = zs0; k < zs0 + zm; ++k)
      for (PetscInt j = ys; j < ys + ym; ++j)
        for (PetscInt i = xs; i < xs + xm; ++i) bv[k][j][i] = peers::rhs_value(o, i, j, k);
    PetscCall(DMDAVecRestoreArray(da, b, &bv));
  }
  PetscCall(VecSet(x, 0.0));

  KSP ksp;
  PetscCall(KSPCreate(comm, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
  PetscCall(KSPSetTolerances(ksp, o.tol, 0.0, 1e30, o.max_iters));
  PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_FALSE));
  PC pc;
  PetscCall(KSPGetPC(ksp, &pc));
  std::vector<Mat> interps;
  int levels = 1;
  if (o.solver == "none") {
    PetscCall(PCSetType(pc, PCNONE));
  } else if (o.solver == "gamg") {
    PetscCall(PCSetType(pc, PCGAMG));
  } else {
    // Levels: halve every axis until the coarsest has at most 8 points an axis.
    std::vector<std::array<int, 3>> grids = {{nx, ny, nz}};
    while ((o.levels > 0 ? int(grids.size()) < o.levels
                         : std::max({grids.back()[0], grids.back()[1], grids.back()[2]}) > 8)) {
      const auto& g = grids.back();
      const std::array<int, 3> c = {coarsen(g[0]), coarsen(g[1]), coarsen(g[2])};
      if (c == g) break;
      grids.push_back(c);
    }
    levels = int(grids.size());
    if (o.solver == "mg-dmda" && o.levels == 0) {
      // DMDA coarsening keeps the end points: n -> (n-1)/2 + 1, defined while n-1 is even.
      std::array<int, 3> g = {nx, ny, nz};
      levels = 1;
      while (std::max({g[0], g[1], g[2]}) > 8 && (g[0] - 1) % 2 == 0 && (g[1] - 1) % 2 == 0 &&
             (g[2] - 1) % 2 == 0) {
        for (int& n : g) n = (n - 1) / 2 + 1;
        ++levels;
      }
      if (levels == 1) {
        if (rank == 0)
          std::fprintf(stderr,
                       "--solver mg-dmda: DMDA's Q1 hierarchy needs N-1 even on "
                       "every axis (odd N); use --solver mg for this grid\n");
        MPI_Abort(comm, 2);
      }
    }
    PetscCall(PCSetType(pc, PCMG));
    PetscCall(PCMGSetLevels(pc, levels, nullptr));
    PetscCall(PCMGSetGalerkin(pc, PC_MG_GALERKIN_BOTH));
    if (o.solver == "mg-dmda") {
      PetscCall(KSPSetDM(ksp, da));
      PetscCall(KSPSetDMActive(ksp, PETSC_FALSE));
    } else {
      for (int m = 0; m + 1 < levels; ++m) {
        interps.push_back(interpolation(comm, rank, size, grids[m].data(), grids[m + 1].data()));
        PetscCall(PCMGSetInterpolation(pc, levels - 1 - m, interps.back()));
      }
    }
  }
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSetUp(ksp));
  const double setup_s = peers::max_over_ranks(MPI_Wtime() - t0, comm);

  MPI_Barrier(comm);
  const double t1 = MPI_Wtime();
  PetscCall(KSPSolve(ksp, b, x));
  const double solve_s = peers::max_over_ranks(MPI_Wtime() - t1, comm);

  PetscInt its = 0;
  PetscCall(KSPGetIterationNumber(ksp, &its));
  KSPConvergedReason reason;
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  // The true residual, apart from the solver.
  Vec r;
  PetscCall(VecDuplicate(b, &r));
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscReal rn, bn;
  PetscCall(VecNorm(r, NORM_2, &rn));
  PetscCall(VecNorm(b, NORM_2, &bn));
  const double relres = bn > 0 ? rn / bn : 0.0;
  std::string name = "petsc-" + (o.solver == "none" ? std::string("cg") : o.solver + "-cg");
  if (rank == 0) {
    if (levels > 1) std::printf("# %s: %d levels\n", name.c_str(), levels);
    peers::print_peer(name.c_str(), o, size, int(its), setup_s, solve_s, relres, reason > 0);
  }
  (void)zs;

  PetscCall(VecDestroy(&r));
  for (Mat& P : interps) PetscCall(MatDestroy(&P));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
