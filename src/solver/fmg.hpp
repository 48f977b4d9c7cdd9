// Full multigrid (--fmg): MG-PCG's first iterate from one F-cycle instead of x = 0.
//
// The right-hand side is restricted down the hierarchy once (the V-cycle's full-weighting
// restriction R, rows summing to 1, so every level holds the problem rediscretised), the
// coarsest level is solved by its Chebyshev polynomial, and then on each finer level the
// coarser solution, interpolated trilinearly, is the initial guess of kFmgCycles V-cycles
// (from that guess: pre-smoothing starts from it, so the residual is taken first). The
// fine level's result is within the discretisation error of the continuous solution
// (O(h^2), as the converged answer is), so CG needs one iteration to reach --tol 1e-3
// (and the converged run's error against the continuous solution), against five from 0.
//
// Every step is one the V-cycle already takes (Multigrid's levels, transfers, gathers and
// cycle, through MgLevelView), in the V-cycle's scalar type (float with --precision mixed:
// the right-hand side is rounded on the fine level and the result widened), so the result
// is the same bits on every process grid and backend. It is not a symmetric linear map
// of b like the V-cycle (M^{-1}): it only chooses x0, and CG's recurrences start from the
// true residual b - A x0 as they would from any x0.
#pragma once

namespace halo3d {

// V-cycles per level of the F-cycle. Measured on 31^3-127^3 (two modes, double): with one,
// the F-cycle's algebraic error is 2.4-3.7x the discretisation error (growing with the
// grid: trilinear interpolation of the solution is only second order) and CG then needs two
// iterations to 1e-3; with two it is 0.27-0.30x at every size and one iteration reaches
// 1e-5 (the converged run's continuous error to 1e-4 relative); three (0.04x) cost more
// than the iteration they save.
constexpr int kFmgCycles = 2;

}  // namespace halo3d
