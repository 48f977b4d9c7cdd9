// Helpers shared by the multi-rank tests.
#pragma once
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "decomposition.hpp"
#include "mpi_env.hpp"
#include "multigrid.hpp"
#include "plan.hpp"
#include "problem.hpp"
#include "runtime.hpp"
#include "session.hpp"
#include "solvers.hpp"

namespace halo3d::test {

inline int world_size() { return comm_size(MPI_COMM_WORLD); }
inline int world_rank() { return comm_rank(MPI_COMM_WORLD); }

// HALO3D_TEST_BACKEND=cuda runs the same tests on the GPU (CTest label gpu).
// The value of E named `name` (tests loop over names; the table in choices.hpp converts).
template <class E>
E choice(const std::string& name) {
  return parse_choice<E>(name, "test");
}

inline Backend backend_under_test() {
  const char* b = std::getenv("HALO3D_TEST_BACKEND");
  return choice<Backend>(b ? b : "host");
}

// A runtime's options for the plain Laplacian (unit coefficients) on `grid`, on the backend
// under test: what the halo and transport tests build their runtimes from.
inline RuntimeOptions laplacian_runtime(const Int3& grid, const Int3& procs = {0, 0, 0},
                                        Transport halo = Transport::auto_) {
  RuntimeOptions ro;
  ro.grid = grid;
  ro.procs = procs;
  ro.backend = backend_under_test();
  ro.halo = halo;
  ro.stencil = Stencil::laplacian(1, 1, 1);
  return ro;
}

// All factorisations of n into three factors: every process grid of n ranks.
// The points of this rank's box where x (over d's padded layout) differs, bit for bit, from
// `alone` at the same global point: the same problem solved on one rank alone over `whole`.
inline long mismatches_with_whole(const Decomposition& d, const std::vector<double>& x,
                                  const Decomposition& whole, const std::vector<double>& alone) {
  const Layout l = d.layout(), w = whole.layout();
  long mismatches = 0;
  for (int k = 0; k < l.nz; ++k)
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i)
        mismatches += x[std::size_t(l.at(i, j, k))] !=
                      alone[std::size_t(w.at(d.offset[0] + i, d.offset[1] + j, d.offset[2] + k))];
  return mismatches;
}

inline std::vector<Int3> process_grids(int n) {
  std::vector<Int3> out;
  for (int a = 1; a <= n; ++a)
    for (int b = 1; b <= n; ++b)
      if (n % (a * b) == 0) out.push_back({a, b, n / (a * b)});
  return out;
}

// The solver path of `halo3d solve` (its SolveSession, built from the same plan), in-process,
// on any communicator, without files. rt views the session's runtime.
struct InProcessSolve {
  std::unique_ptr<SolveSession> session;
  Runtime* rt = nullptr;
  DriveResult result;
  std::vector<double> solution() { return session->solution(); }
};

inline InProcessSolve solve_in_process(const SolveOptions& o, MPI_Comm comm) {
  const RunPlan plan = make_plan(o);
  InProcessSolve s;
  s.session = std::make_unique<SolveSession>(plan.problem, plan.parallel, plan.method, comm);
  s.rt = &s.session->runtime();
  s.session->fill_source();
  s.session->build_method();
  s.session->method().start();
  DriveOptions dro;
  dro.max_iters = plan.max_iters;
  s.result = s.session->drive(dro);
  return s;
}

}  // namespace halo3d::test
