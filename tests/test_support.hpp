// Helpers shared by the multi-rank tests.
#pragma once
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "decomposition.hpp"
#include "implicit_heat.hpp"
#include "mpi_env.hpp"
#include "multigrid.hpp"
#include "plan.hpp"
#include "problem.hpp"
#include "runtime.hpp"
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
inline std::vector<Int3> process_grids(int n) {
  std::vector<Int3> out;
  for (int a = 1; a <= n; ++a)
    for (int b = 1; b <= n; ++b)
      if (n % (a * b) == 0) out.push_back({a, b, n / (a * b)});
  return out;
}

// The solver path of `halo3d solve`, in-process, on any communicator, without files.
// Members in this order so the method goes before its source, and both before the runtime;
// all on the heap, since the method refers to its source and the source to the kernels,
// and the struct itself is moved around.
struct InProcessSolve {
  std::unique_ptr<Runtime> rt;
  std::unique_ptr<Buffer> source;
  std::unique_ptr<Preconditioner> pc;
  std::unique_ptr<Method> method;
  DriveResult result;
  std::vector<double> solution() { return download(*rt->kernels, method->solution()); }
};

inline InProcessSolve solve_in_process(const SolveOptions& o, MPI_Comm comm) {
  const Problem prob(o);
  InProcessSolve s;
  s.rt = make_runtime(runtime_options(o, prob.stencil()), comm);
  std::vector<double> src;
  prob.fill_source(s.rt->decomp, src);
  s.source = std::make_unique<Buffer>(upload(*s.rt->kernels, src));
  const MethodPlan mp = method_plan(o);
  s.pc = make_preconditioner(mp, *s.rt);
  s.method = mp.implicit() ? make_implicit_heat(*s.rt, mp, prob.dt(), *s.source)
                           : make_method(mp, prob.dt(), *s.rt->op, s.rt->cart.get(), s.rt->timers,
                                         *s.source, s.pc.get());
  s.method->start();
  DriveOptions dro;
  dro.max_iters = o.problem == ProblemKind::heat ? o.steps : o.max_iters;
  s.result = drive(*s.method, s.rt->cart.get(), dro, 0, {});
  return s;
}

}  // namespace halo3d::test
