#include "dry_run.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "checkpoint.hpp"
#include "checks.hpp"
#include "coefficient.hpp"
#include "errors.hpp"
#include "fields.hpp"
#include "files.hpp"
#include "halo.hpp"
#include "multigrid.hpp"
#include "plan.hpp"
#include "problem.hpp"
#include "solvers.hpp"
#include "threads.hpp"
#include "time_series.hpp"

namespace halo3d {
namespace {

std::string mib(double bytes) {
  char s[32];
  std::snprintf(s, sizeof s, "%.1f MiB", bytes / (1024.0 * 1024.0));
  return s;
}

std::string box(const double* r) {  // offset x3, count x3
  char s[96];
  std::snprintf(s, sizeof s, "offset %.0f,%.0f,%.0f size %.0fx%.0fx%.0f", r[0], r[1], r[2], r[3],
                r[4], r[5]);
  return s;
}

void print_configuration(const SolveOptions& o) {
  std::printf("configuration (option, value, source):\n");
  std::size_t w = 0;
  for (const OptionSource& s : o.sources) w = std::max(w, s.name.size());
  for (const OptionSource& s : o.sources)
    std::printf("  %-*s  %-20s  %s\n", int(w), s.name.c_str(),
                s.value.empty() ? "(none)" : s.value.c_str(), s.source.c_str());
}

void print_time_step(const Problem& prob) {
  std::printf("time step dt = %s\n", exact_text(prob.dt()).c_str());  // reads back exactly
}

// `all`: every rank's row of the gather (offset x3, count x3, device bytes, host bytes).
void print_decomposition(const SolveOptions& o, const Decomposition& d,
                         const std::vector<double>& all) {
  const int ranks = d.ranks;
  std::printf("decomposition: grid %s on %d %s as process grid %s\n", to_string(o.grid).c_str(),
              ranks, ranks == 1 ? "rank" : "ranks", to_string(d.procs).c_str());
  const auto volume = [&](int r) {
    const double* a = &all[8 * std::size_t(r)];
    return a[3] * a[4] * a[5];
  };
  if (ranks <= 16) {
    for (int r = 0; r < ranks; ++r)
      std::printf("  rank %d: %s\n", r, box(&all[8 * std::size_t(r)]).c_str());
  } else {
    int lo = 0, hi = 0;
    for (int r = 1; r < ranks; ++r) {
      if (volume(r) < volume(lo)) lo = r;
      if (volume(r) > volume(hi)) hi = r;
    }
    std::printf("  smallest box: rank %d, %s\n", lo, box(&all[8 * std::size_t(lo)]).c_str());
    std::printf("  largest box: rank %d, %s\n", hi, box(&all[8 * std::size_t(hi)]).c_str());
  }
}

void print_multigrid(const SolveOptions& o, bool mg, const std::vector<MgLevelPlan>& plan) {
  if (mg) {
    std::printf("multigrid: %zu %s:", plan.size(), plan.size() == 1 ? "level" : "levels");
    for (const MgLevelPlan& l : plan)
      std::printf(" %dx%dx%d%s", l.grid[0], l.grid[1], l.grid[2],
                  l.distributed ? "" : " (gathered)");
    std::printf("\n");
  } else {
    std::printf("multigrid: none (%s)\n",
                method_plan(o).kind == MethodKind::euler
                    ? "explicit heat"
                    : (o.solver == SolverKind::jacobi ? "--solver jacobi" : "--precond none"));
  }
}

void print_memory(const std::vector<double>& all, int ranks) {
  int dmax = 0, hmax = 0;
  for (int r = 1; r < ranks; ++r) {
    if (all[8 * std::size_t(r) + 6] > all[8 * std::size_t(dmax) + 6]) dmax = r;
    if (all[8 * std::size_t(r) + 7] > all[8 * std::size_t(hmax) + 7]) hmax = r;
  }
  std::printf(
      "memory per rank (largest): %s of backend memory (the GPU's, or host RAM on the host "
      "backend) on rank %d, %s of host RAM on rank %d\n",
      mib(all[8 * std::size_t(dmax) + 6]).c_str(), dmax,
      mib(all[8 * std::size_t(hmax) + 7]).c_str(), hmax);
}

void print_files(const std::vector<PlannedFile>& files) {
  if (files.empty()) {
    std::printf("files: none\n");
  } else {
    std::printf("files:");
    const char* sep = " ";
    for (const PlannedFile& f : files) {
      std::printf("%s%s (%s)", sep, f.path.c_str(), f.option.c_str());
      sep = ", ";
    }
    std::printf("\n");
  }
}

}  // namespace

int run_dry_run(const SolveOptions& o, MPI_Comm world) {
  const bool root = comm_rank(world) == 0;
  Problem prob(o);  // the same checks as a run (e.g. --dt above the stability limit)
  Comm cart;
  // Periodic axes as a run has them: their halo faces and the multigrid's levels differ.
  Decomposition d = decompose(world, o.grid, o.procs, cart, periodic_axes(o));
  d.neumann = neumann_mask(o);
  MPI_Comm comm = cart.get();
  // Heat with a variable k: its step's limit needs k (read or computed, as a run does).
  if (o.problem == ProblemKind::heat && variable_operator(o)) {
    const std::vector<double> sigma =
        point_shift(o) ? fill_shift(o, d, comm) : std::vector<double>();
    prob = Problem(
        o, max_diagonal(operator_stencil(spacing(o), o.shift), d, fill_coefficient(o, d, comm),
                        sigma.empty() ? nullptr : &sigma, comm));
  }

  // Memory as run_solve and the runtime count it: the solve's fields and the halo buffers
  // (halo_memory: staged on the device too when a GPU runs the kernels).
  const bool gpu = runs_on_gpu(o.backend, comm);
  const MemoryNeed need = solve_memory(o, d, comm, gpu);
  const MemoryNeed halo = halo_memory(HaloPlan::build(d), gpu);
  const int ranks = d.ranks;
  const double row[8] = {double(d.offset[0]),       double(d.offset[1]),  double(d.offset[2]),
                         double(d.count[0]),        double(d.count[1]),   double(d.count[2]),
                         need.device + halo.device, need.host + halo.host};
  std::vector<double> all(8 * std::size_t(ranks));
  HALO3D_MPI_CHECK(MPI_Gather(row, 8, MPI_DOUBLE, all.data(), 8, MPI_DOUBLE, 0, comm));

  const MethodPlan method = method_plan(o);
  const bool mg = method.multigrid;
  std::vector<MgLevelPlan> plan;
  if (mg) plan = mg_plan(d, operator_stencil(spacing(o), o.shift), method.mg, gpu, comm);

  // The files a run would write, checked as a run checks them (nothing is left behind).
  const std::vector<PlannedFile> files = planned_files(o);
  check_planned_files(files, comm, planned_inputs(o));
  // Inputs as a run reads them at once: file: fields (file, dataset, type, shape) and the
  // --restart checkpoint (format, identity, iteration); nothing large is read.
  check_file_fields(o, d, comm);
  if (!o.restart.empty())
    check_checkpoint(o.restart, comm, RunIdentity::of(o, solver_identity(o), prob.dt()));

  if (!root) return kExitOk;
  std::printf("halo3d solve --dry-run: nothing allocated, solved or written\n");
  print_configuration(o);
  if (o.problem == ProblemKind::heat) print_time_step(prob);
  print_decomposition(o, d, all);
  print_multigrid(o, mg, plan);
  print_memory(all, ranks);
  print_files(files);
  if (o.problem == ProblemKind::heat && o.output_every > 0 && o.output != "none")
    std::printf("time series: %ld snapshots of u in %s:/series (after steps 0, %ld, ... and %ld)\n",
                planned_snapshots(o.steps, o.output_every), o.output.c_str(), o.output_every,
                o.steps);
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace halo3d
