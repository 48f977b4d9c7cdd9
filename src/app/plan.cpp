#include "plan.hpp"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "dry_run.hpp"
#include "fields.hpp"
#include "fmg.hpp"
#include "problem.hpp"
#include "runtime.hpp"

namespace halo3d {

MgOptions mg_options(const SolveOptions& o) {
  MgOptions m;
  m.levels = o.mg_levels;
  m.smooth = o.mg_smooth;
  m.smoother = o.mg_smoother;
  m.interp = o.mg_interp;
  m.gather_points = o.mg_gather;
  m.precision = o.precision;
  // The Poisson solve only (the command line refuses --fmg for heat: an implicit step
  // starts from the last one).
  m.fmg_cycles = o.fmg ? kFmgCycles : 0;
  return m;
}

MethodPlan method_plan(const SolveOptions& o) {
  MethodPlan m;
  const bool heat = o.problem == ProblemKind::heat;
  m.theta = heat ? time_scheme_theta(o.time_scheme) : 0.0;
  m.kind = heat ? (m.theta > 0 ? MethodKind::implicit_heat : MethodKind::euler)
           : o.solver == SolverKind::jacobi ? MethodKind::jacobi
                                            : MethodKind::cg;
  m.tol = o.tol;
  m.max_iters = o.max_iters;
  m.alpha = o.alpha;
  m.time_scheme = o.time_scheme;
  // A hierarchy is built for CG's preconditioner, or for the implicit steps' inner CG.
  m.multigrid =
      (m.kind == MethodKind::cg || m.kind == MethodKind::implicit_heat) && o.precond == Precond::mg;
  m.mg = mg_options(o);
  return m;
}

namespace {

std::string solver_name(const SolveOptions& o, const MethodPlan& m) {
  if (o.problem != ProblemKind::heat) return to_string(o.solver);
  return m.implicit() ? to_string(o.time_scheme) : "euler";
}

}  // namespace

// A checkpoint continues only under the same preconditioner (it shapes the iterates).
// An implicit step's answer depends on the inner solve: its tolerance and preconditioner.
std::string solver_identity(const SolveOptions& o) {
  const MethodPlan m = method_plan(o);
  const std::string solver = solver_name(o, m);
  const bool mixed = o.precision == Precision::mixed && m.multigrid;
  if (m.implicit())
    return solver + "(tol=" + nlohmann::json(o.tol).dump() + ",precond=" + to_string(o.precond) +
           (mixed ? ",mixed" : "") + ")";
  if (m.preconditioned())  // the multigrid V-cycle CG runs with
    return solver + "+mg(levels=" + std::to_string(o.mg_levels) +
           ",smooth=" + std::to_string(o.mg_smooth) + "," + to_string(o.mg_smoother) +
           // The option changes only a variable operator's transfers (a constant one's
           // weights are the trilinear ones): a restart may drop it there.
           (o.mg_interp == MgInterp::operator_ && variable_operator(o) ? ",operator" : "") +
           (o.precision == Precision::mixed ? ",mixed" : "") + ")";
  return solver;
}

RunPlan make_plan(const SolveOptions& o) {
  RunPlan p;
  p.problem = o;
  p.parallel = o;
  p.method = method_plan(o);
  p.heat = o.problem == ProblemKind::heat;
  p.solver = solver_name(o, p.method);
  p.identity = solver_identity(o);
  p.precision = o.precision == Precision::mixed && p.method.multigrid ? "mixed" : "double";
  p.max_iters = p.heat ? o.steps : o.max_iters;
  p.tol = p.heat ? 0.0 : o.tol;
  return p;
}

bool runs_on_gpu(Backend backend, MPI_Comm comm) {
  // Only auto depends on the devices (as in make_kernels).
  if (backend != Backend::auto_) return backend == Backend::cuda;
  return picks_cuda(backend, fewest_gpus(int(cuda_devices().size()), comm));
}

// What run_solve allocates beyond the runtime, per rank: the source and the method's vectors
// in backend memory (the true residual, the errors and the overlap measurement use the
// method's own vectors: Method::spare), and the multigrid hierarchy; in host memory the
// source as filled and the solution as written.
MemoryNeed solve_memory(const SolveOptions& o, const Decomposition& d, MPI_Comm cart, bool gpu) {
  const double field = 8.0 * double(d.layout().padded_size());
  // Implicit heat: u and the right-hand side of a step, and the inner CG's vectors.
  const MethodPlan mp = method_plan(o);
  const bool implicit = mp.implicit();
  const bool pc = mp.multigrid;
  // The singular case (no Dirichlet face, no shift): CG's vector of ones for its projection.
  const bool singular = singular_operator(o);
  const bool variable = variable_operator(o), mixed = o.precision == Precision::mixed;
  // PCG's z: none with a float V-cycle (z stays in float), except for the singular case's
  // projection (never implicit heat's I + c A); with --fmg, whose F-cycle has no z to borrow,
  // the hierarchy's own fine vector in its place.
  const bool z = pc && (!mixed || (singular && !implicit) || mp.mg.fmg_cycles > 0);
  const double method = implicit ? 2 + 4 + z
                        : o.problem == ProblemKind::heat || o.solver == SolverKind::jacobi
                            ? 2
                            : 4 + z + (pc && singular);
  MemoryNeed m;
  m.device = (1 + method) * field;
  m.host = 2 * field;
  // A shift per point (variable, or a constant one with Neumann faces): sigma is one more
  // array beside the three weights, and one more point field kept on the host beside k.
  const double arrays = point_shift(o) ? 4 : 3, points = point_shift(o) ? 2 : 1;
  if (variable) {  // the fine face weights, made in backend memory; k kept on the host
    m.device += arrays * field;
    m.host += points * field;
    // Implicit heat: I + c A's own weights, and its copy of k.
    if (implicit) m.device += arrays * field, m.host += points * field;
  }
  if (pc) {
    const Stencil op = operator_stencil(spacing(o), o.shift);
    const std::vector<MgLevelPlan> plan = mg_plan(d, op, mp.mg, gpu, cart);
    m.device += mg_memory_bytes(plan, mixed, variable, point_shift(o),
                                variable && o.mg_interp == MgInterp::operator_);
  }
  // k (and sigma) are also in backend memory while weights are made from them, briefly: the
  // fine level's (1-2 fields) before its weights (3-4 fields) exist, a coarse level's (with
  // the fine or level above's) before CG's vectors (4 or more fields) are made. So the peak
  // is what is held once set up, which this counts (the memory count test holds the two
  // equal on the host backend).
  if (has_boundary_values(o)) m.host += field;  // the boundary values, while lifted
  if (has_boundary_values(o) && o.problem == ProblemKind::heat) m.device += field;  // heat's B g
  return m;
}

std::vector<PlannedFile> planned_files(const SolveOptions& o) {
  std::vector<PlannedFile> f;
  if (o.output != "none") {
    f.push_back({"--output", o.output});
    f.push_back({"the --output sidecar", xdmf_path(o.output)});
  }
  if (!o.report.empty()) f.push_back({"--report", o.report});
  if (!o.checkpoint.empty()) f.push_back({"--checkpoint", o.checkpoint});
  return f;
}

std::vector<PlannedFile> planned_inputs(const SolveOptions& o) {
  std::vector<PlannedFile> f;
  if (!o.config_file.empty()) f.push_back({"--config", o.config_file});
  const FieldSpec src = source_field(o);
  if (src.kind == FieldSpec::kFile) f.push_back({source_option(o), src.file});
  const FieldSpec b = parse_boundary_spec(o.boundary);
  if (b.kind == FieldSpec::kFile) f.push_back({"--boundary", b.file});
  if (!o.restart.empty()) f.push_back({"--restart", o.restart});
  return f;
}

namespace {
// What each planned file will take at least: --output /u (with heat's series, the first and
// last snapshots too: a series run may be meant to end by a signal, so its length is not
// counted), --checkpoint its solution vector, each plus 16 KiB of HDF5 metadata; the sidecar
// 4 KiB, the report 16 KiB. A lower bound: each write reserves what it needs (hdf5_io.cpp).
double planned_bytes(const PlannedFile& f, const SolveOptions& o) {
  const double field = 8.0 * double(o.grid[0]) * double(o.grid[1]) * double(o.grid[2]);
  const double meta = 16 << 10;
  if (f.option == "--output") {
    const bool series = o.problem == ProblemKind::heat && o.output_every > 0;
    return field * (series ? 3.0 : 1.0) + meta;
  }
  if (f.option == "--checkpoint") return field + meta;
  return f.option == "--report" ? meta : 4 << 10;
}
}  // namespace

void check_free_space(const SolveOptions& o, MPI_Comm comm) {
  std::string why;
  if (comm_rank(comm) == 0) {
    // Per file system (the device of each file's folder): its files and their needs.
    struct FileSystem {
      dev_t dev;
      std::string dir, names;
      double need = 0;
    };
    std::vector<FileSystem> systems;
    for (const PlannedFile& f : planned_files(o)) {
      struct stat st;
      const std::string dir = parent_dir(f.path);
      if (::stat(dir.c_str(), &st) != 0) continue;
      auto it = std::find_if(systems.begin(), systems.end(),
                             [&](const FileSystem& s) { return s.dev == st.st_dev; });
      if (it == systems.end()) it = systems.insert(systems.end(), {st.st_dev, dir, "", 0.0});
      it->names += (it->names.empty() ? "" : ", ") + f.path;
      it->need += planned_bytes(f, o);
    }
    for (const FileSystem& s : systems) {
      struct statvfs v;
      if (::statvfs(s.dir.c_str(), &v) != 0) continue;
      const double free_bytes = double(v.f_bavail) * double(v.f_frsize);
      if (free_bytes >= s.need) continue;
      char buf[200];
      std::snprintf(buf, sizeof buf, "%.3g MB free, at least %.3g MB needed", free_bytes / 1e6,
                    s.need / 1e6);
      why = "not enough free space for " + s.names + " in " + s.dir + ": " + buf +
            " (checked before solving)";
      break;
    }
  }
  agree_verdict(why.empty() ? 0 : kExitIo, why, comm);
}

}  // namespace halo3d
