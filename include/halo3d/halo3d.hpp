// halo3d as a library: solve -div(k grad u) + shift u = f on a 3D grid distributed over the
// caller's MPI ranks (Dirichlet, periodic or Neumann faces), from the caller's own arrays. This
// header, error.hpp and version.hpp are the whole public interface (docs/LIBRARY.md): nothing
// internal is reachable from here, so the solver's internals can change without breaking an
// embedding code.
//
//   halo3d::Solver s(MPI_COMM_WORLD, {{128, 128, 128}});   // collective
//   halo3d::Box b = s.local_box();                         // this rank's piece
//   std::vector<double> f(b.points()), u(b.points());      // x fastest, no ghosts
//   ... fill f at global points b.offset + (i, j, k) ...
//   halo3d::Result r = s.solve(f.data(), u.data());       // collective
//
// Errors: every function here throws halo3d::Error (error.hpp: a std::runtime_error whose
// what() is the one-line message and code() the exit code halo3d's program would return,
// e.g. kExitBadInput for an impossible grid, kExitUnavailable for --backend cuda without a
// GPU, kExitBreakdown for NaN/Inf). An error with collective() true is thrown on every rank
// alike and the caller may continue; otherwise one rank failed alone and the caller should
// MPI_Abort.
#pragma once
#include <mpi.h>

#include <array>
#include <memory>
#include <string>

// error.hpp sits beside this header once installed (the build tree finds it on the layers'
// include path: src/base).
#include "error.hpp"
#include "halo3d/version.hpp"

namespace halo3d {

// The library's version, "MAJOR.MINOR.PATCH" (HALO3D_VERSION_STRING of the headers it was
// built with). Stable: this header within a MAJOR.MINOR (0.x: minor versions may break it).
const char* version();

// The global grid: points per axis (interior points; the boundary is not stored) and the
// process grid (ranks per axis; 0 on an axis: halo3d chooses, as MPI_Dims_create does).
// The product of a given procs must be the communicator's size.
struct Grid {
  std::array<int, 3> points{64, 64, 64};
  std::array<int, 3> procs{0, 0, 0};
};

// The operator: -div(k grad u) + shift u = f on the box [0,box[0]]x[0,box[1]]x[0,box[2]],
// discretized with the 7-point stencil on the grid's points (spacing h = box / (points + 1)
// per axis; the weight of the face between two points is the harmonic mean of their k over
// h^2), u = `boundary_value` on the boundary. Only 0 exists today (a nonzero value is
// refused with kExitBadInput), as do a box side that is not finite and > 0 and a shift that
// is not finite and >= 0. `coefficient` is k in the forms of `halo3d solve --coefficient`
// (docs/OPTIONS.md): a number ("1": -Laplace), "expr:FORMULA" of x, y, z in the box's
// coordinates, or "file:PATH.h5:/DATASET" ([NZ+2][NY+2][NX+2], the boundary layer
// included); a malformed spec, or k not finite and > 0 anywhere, is refused with
// kExitBadInput. `shift_field` is a variable shift in the forms of `halo3d solve --shift`:
// "expr:FORMULA" or "file:PATH.h5:/DATASET" (sigma >= 0 at the points, the boundary layer
// included), each point's own sigma on the diagonal; empty: the constant `shift` (giving
// both a field and a nonzero `shift`, or sigma not finite and >= 0 anywhere, is refused with
// kExitBadInput). `bc` is the boundary kind of each face in the form of `halo3d solve --bc`
// (docs/OPTIONS.md): "dirichlet" (every face, the default), or e.g.
// "x=periodic,y0=neumann,z=neumann": a periodic axis has N points at x_i = i L/N (h = L/N)
// whose neighbours wrap; an axis with a Neumann face is node-centred (its boundary nodes are
// unknowns: h = L/(N-1) between two Neumann faces, L/N with a Dirichlet one at the other
// end), with zero outward flux there (boundary_value 0). f is given at the points as for
// Dirichlet faces: the solver multiplies it by each point's control-volume fraction V_p (1/2
// in a Neumann plane, 1/4 on an edge, 1/8 at a corner) as the program does. No Dirichlet face
// and no shift (neither `shift` nor `shift_field`) is singular (A 1 = 0): f loses its mean
// (V-weighted with Neumann faces; Result says how much) and u is the answer of zero mean
// (sum V_p u_p = 0). A malformed `bc`, a periodic axis with one face only, a Neumann axis of
// one point, or a `shift_field` that is 0 at every point with no Dirichlet face is refused
// with kExitBadInput. A struct so that further boundary conditions can be added later
// without breaking callers.
struct Operator {
  double boundary_value = 0.0;
  std::array<double, 3> box{1.0, 1.0, 1.0};
  double shift = 0.0;
  std::string coefficient = "1";
  std::string shift_field;       // since 0.3
  std::string bc = "dirichlet";  // since 0.4
};

// How to solve.
struct Settings {
  // mg_pcg: CG preconditioned by a multigrid V-cycle (the default); cg: plain CG; jacobi:
  // weighted Jacobi (slow: tests and comparisons).
  enum class Method { mg_pcg, cg, jacobi };
  // host: OpenMP on the CPU; cuda: one GPU per rank (bound by node-local rank); auto: cuda
  // when compiled in and a GPU is visible, else host.
  enum class Backend { auto_, host, cuda };
  // mixed: the multigrid V-cycle in float (mg_pcg only; the answer is still double).
  enum class Precision { double_, mixed };
  Method method = Method::mg_pcg;
  double tol = 1e-8;       // relative residual ||f - A u|| / ||f|| to stop at
  long max_iters = 10000;  // iterations at most
  Backend backend = Backend::auto_;
  Precision precision = Precision::double_;
};

// This rank's piece of the grid: `size` points per axis starting at global point `offset`.
// Arrays given to and returned by the solver hold it x fastest: point (i, j, k) of the box
// (global point offset + (i, j, k)) is element i + size[0] * (j + size[1] * k).
struct Box {
  std::array<int, 3> offset{}, size{};
  long long points() const { return 1LL * size[0] * size[1] * size[2]; }
};

struct Result {
  long iterations = 0;
  // The true relative residual ||f - A u|| / ||f|| (recomputed, not the recurrence's) is at
  // most 2 tol: what halo3d's program calls converged.
  bool converged = false;
  double relative_residual = 0;  // that true relative residual
  // The singular case (Operator: no Dirichlet face, no shift): f's mean that was removed
  // before solving (with Neumann faces its mean over the control volumes, sum V f / sum V),
  // and the residual above is the one of f less it. 0 and false otherwise. Since 0.4.
  bool singular = false;
  double source_mean_removed = 0;
};

class Solver {
 public:
  // Collective over comm (which must outlive nothing: halo3d makes its own communicators
  // from it): decomposes the grid, picks the backend (binding a GPU by node-local rank) and
  // builds the operator. Rank r of comm owns the box local_box() reports there: the one at
  // process coordinates (cx, cy, cz) with r = cx + px (cy + py cz) (x fastest), each axis
  // split into blocks, the first (points mod procs) one point larger.
  Solver(MPI_Comm comm, const Grid& grid, const Settings& settings = {}, const Operator& op = {});
  Solver(Solver&&) noexcept;
  Solver& operator=(Solver&&) noexcept;
  ~Solver();

  Box local_box() const;
  std::array<int, 3> process_grid() const;
  // "host" or "cuda": where the solve runs, and so where solve()'s pointers may point.
  std::string backend() const;
  // Notes for the caller to print once (e.g. ranks sharing a GPU without MPS), "" if none.
  std::string warnings() const;

  // Collective. f and u: local_box().points() doubles each, in the Box layout, in host
  // memory or, with the cuda backend, in host or device memory (of the GPU this rank is
  // bound to; CUDA's unified addressing tells them apart). Starts from u = 0 (u's contents
  // are not read); writes the answer into u whether or not it converged (see Result). The
  // multigrid hierarchy is built at the first call and reused. f and u travel through one
  // host-memory copy each. Device memory is read after all work queued on the GPU before the
  // call (any stream, e.g. the kernel that wrote f), and u is complete when solve returns.
  // The same f gives bitwise the same u on any process grid and either backend.
  Result solve(const double* f, double* u);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace halo3d
