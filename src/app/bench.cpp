// halo3d bench: achieved bandwidth of each kernel and of one CG iteration, next to a
// device-to-device copy measured in the same run as the ceiling.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app.hpp"
#include "checks.hpp"
#include "errors.hpp"
#include "files.hpp"
#include "fmg.hpp"
#include "multigrid.hpp"
#include "problem.hpp"
#include "runtime.hpp"
#include "session.hpp"
#include "solvers.hpp"
#include "timing.hpp"

namespace halo3d {
namespace {

struct Row {
  std::string name, what;
  double bytes;  // all ranks' bytes per call
  double median_ms = 0, min_ms = 0;
};
// Times `work` and adds its row: the name, what it does and this rank's bytes per call.
using Measure = std::function<void(const std::string& name, const std::string& what, double bytes,
                                   const std::function<void()>& work)>;

// `o.warmup` untimed calls of `work`, then `o.reps` timed ones (collective over `comm`).
Row time_work(Kernels& k, const BenchOptions& o, MPI_Comm comm, const std::string& name,
              const std::string& what, double bytes, const std::function<void()>& work) {
  DeviceTimer& timer = device_timer(k);
  for (int i = 0; i < o.warmup; ++i) timer.elapsed_ms(work);
  std::vector<double> t;
  for (int i = 0; i < o.reps; ++i) t.push_back(timer.elapsed_ms(work));
  std::sort(t.begin(), t.end());
  // The slowest rank sets the pace of a parallel run.
  double v[2] = {t[t.size() / 2], t.front()};
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, comm));
  double total_bytes = bytes;
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &total_bytes, 1, MPI_DOUBLE, MPI_SUM, comm));
  return {name, what, total_bytes, v[0], v[1]};
}

// The fields the benchmarks read and write.
struct Fields {
  Fields(Kernels& k, const std::vector<double>& host)
      : u(upload(k, host)),
        b(upload(k, host)),
        x(upload(k, host)),
        y(upload(k, host)),
        out(k, host.size()),
        src(upload(k, host)),
        dst(k, host.size()) {}
  Buffer u, b, x, y, out, src, dst;
};

// The copy ceiling, each kernel, the distributed operator and one CG iteration.
void measure_kernels(Runtime& rt, Fields& f, const Measure& measure) {
  Kernels& k = *rt.kernels;
  const Layout l = rt.decomp.layout();
  const double pts = double(l.interior_size());
  const double w = rt.op->weight_bytes();
  DD sink[kReductionSlots];
  const Region all = Region::whole(l);
  const Stencil s = rt.op->stencil();
  measure("copy", "device-to-device copy of one padded field (ceiling)",
          16.0 * double(l.padded_size()),
          [&] { k.copy(f.dst.data(), f.src.data(), l.padded_size(), Lane::interior); });
  measure("apply", "out = A u, kernel only", (16.0 + w) * pts,
          [&] { k.apply(l, s, all, f.u.data(), f.out.data(), kNoReduction, Lane::interior); });
  measure("apply_dot", "out = A u with u.out, kernel + local reduction", (16.0 + w) * pts, [&] {
    k.apply(l, s, all, f.u.data(), f.out.data(), 0, Lane::interior);
    k.read_slots(1, sink);
  });
  measure("axpby", "y = a x + b y", 24.0 * pts,
          [&] { k.axpby(l, 1.0, f.x.data(), 1e-3, f.y.data()); });
  measure("cg_update", "x += a p; r -= a Ap; r.r", 48.0 * pts, [&] {
    k.cg_update(l, 1e-12, f.u.data(), f.out.data(), f.x.data(), f.y.data(), 0, nullptr);
    k.read_slots(1, sink);
  });
  measure("operator", "out = A u with halo exchange (distributed)", (16.0 + w) * pts,
          [&] { rt.op->apply(f.u.data(), f.out.data()); });
  auto cg = make_cg(*rt.op, rt.cart.get(), rt.timers, f.b, 1e-300);
  cg->start();
  measure("cg_iteration", "one CG iteration: apply+dot, update+dot, p update, 2 all-reduces",
          (88.0 + w) * pts, [&] { cg->step(); });
}

// Multigrid's setup time and each level's share of a V-cycle: time, bytes and shape.
struct MgNumbers {
  double setup_s = 0;
  std::vector<double> ms, bytes;
  std::vector<MgLevelInfo> info;
  std::vector<MgLevelTraffic> traffic;  // the busiest rank's messages and bytes per level
};

// Each level's messages and halo bytes on the rank that sends the most of them.
std::vector<MgLevelTraffic> busiest_traffic(const Multigrid& mg, MPI_Comm comm) {
  std::vector<MgLevelTraffic> t = mg.level_traffic();
  std::vector<double> v;
  for (const MgLevelTraffic& x : t) v.insert(v.end(), {x.messages, x.bytes});
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v.data(), int(v.size()), MPI_DOUBLE, MPI_MAX, comm));
  for (std::size_t l = 0; l < t.size(); ++l) t[l].messages = v[2 * l], t[l].bytes = v[2 * l + 1];
  return t;
}

// Each level's share of a V-cycle of `mg` (in its precision): time (slowest rank), bytes,
// shape and traffic.
MgNumbers level_numbers(Multigrid& mg, Fields& f, int reps, MPI_Comm comm) {
  MgNumbers n;
  n.ms = mg.level_ms(f.u.data(), f.out.data(), reps);
  HALO3D_MPI_CHECK(
      MPI_Allreduce(MPI_IN_PLACE, n.ms.data(), int(n.ms.size()), MPI_DOUBLE, MPI_MAX, comm));
  n.bytes = mg.level_bytes();
  n.info = mg.levels();
  n.traffic = busiest_traffic(mg, comm);
  return n;
}

// The fine level's restriction and prolongation alone, in scalar type T (rows mg_restrict and
// mg_prolong, _f32 in float): the restriction reads the fine points (`fine`, real data) and
// writes the coarse ones; the prolongation reads those and adds into the fine ones. With
// --mg-interp operator both read the interpolation weights too (Transfer::od: 12 B a fine
// point, float in either precision).
template <class T>
void measure_transfers(Kernels& k, const Transfer& t, T* fine, const Measure& measure) {
  const double nf = double(t.fine.interior_size()), nc = double(t.coarse.interior_size());
  const double e = sizeof(T), od = t.od ? 12 * nf : 0.0;
  const std::string sfx = sizeof(T) == 4 ? "_f32" : "";
  BasicBuffer<T> coarse(k, t.coarse.padded_size());
  measure("mg_restrict" + sfx, "the fine level's restriction to the next", e * (nf + nc) + od,
          [&] { k.restrict_to(t, fine, coarse.data()); });
  measure("mg_prolong" + sfx, "the prolongation back, added into the fine level",
          e * (nc + 2 * nf) + od, [&] { k.prolong_add(t, coarse.data(), fine); });
}

// --precision mixed: the float smoothing step (half the bytes of mg_smooth), the float
// V-cycle (with its conversions and r.z in double) and one MG-PCG iteration with it; returns
// the float V-cycle's levels.
MgNumbers measure_mixed(Runtime& rt, Fields& f, MgOptions o, int reps, const Measure& measure) {
  Kernels& k = *rt.kernels;
  const Decomposition& d = rt.decomp;
  const Layout l = d.layout();
  const double pts = double(l.interior_size());
  DD sink[kReductionSlots];
  o.precision = Precision::mixed;
  Multigrid mg(rt, o);  // first: a variable operator's float face weights come with it
  {
    FloatBuffer fb(k, l.padded_size()), fu(k, l.padded_size()), fx(k, l.padded_size()),
        fo(k, l.padded_size());
    k.convert(l, f.b.data(), fb.data());
    k.convert(l, f.u.data(), fu.data());
    measure("mg_smooth_f32", "mg_smooth in float", (20.0 + rt.op->weight_bytes() / 2) * pts, [&] {
      k.smooth(l, rt.op->stencil(), Region::whole(l), 0.5, 1e-3, fb.data(), fu.data(), fx.data(),
               fx.data(), fo.data(), kNoReduction, Lane::interior);
    });
    if (const Transfer* t = mg.fine_transfer()) measure_transfers(k, *t, fu.data(), measure);
  }
  const double share = pts / double(d.global_points());
  measure("mg_vcycle_mixed", "one float V-cycle (--precision mixed), conversions and r.z",
          mg.bytes_per_apply() * share, [&] {
            mg.apply(f.u.data(), f.out.data(), 0);
            k.read_slots(1, sink);
          });
  const MgNumbers levels = level_numbers(mg, f, reps, rt.cart.get());
  auto pcg = make_cg(*rt.op, rt.cart.get(), rt.timers, f.b, 1e-300, &mg);
  pcg->start();
  measure("mg_pcg_iter_mixed", "one MG-PCG iteration with the float V-cycle",
          pcg->bytes_per_iteration() * share, [&] { pcg->step(); });
  return levels;
}

// Multigrid: one smoothing step (f, u, d read; d, unew written), one V-cycle and one
// MG-PCG iteration of the session's solve (its hierarchy, set up and timed as `solve` does),
// with the byte counts of multigrid.cpp's model; the float V-cycle's rows, and its levels in
// `mixed`.
MgNumbers measure_multigrid(SolveSession& session, Fields& f, int reps, const Measure& measure,
                            MgNumbers& mixed) {
  Runtime& rt = session.runtime();
  const MgOptions& o = session.plan().mg;
  Kernels& k = *rt.kernels;
  const Decomposition& d = rt.decomp;
  const Layout l = d.layout();
  const double pts = double(l.interior_size());
  const Region all = Region::whole(l);
  const Stencil s = rt.op->stencil();
  MPI_Comm comm = rt.cart.get();
  measure("mg_smooth", "d = cd d + cr (f - A u); unew = u + d, kernel only",
          (40.0 + rt.op->weight_bytes()) * pts, [&] {
            k.smooth(l, s, all, 0.5, 1e-3, f.b.data(), f.u.data(), f.x.data(), f.x.data(),
                     f.out.data(), kNoReduction, Lane::interior);
          });
  Multigrid& mg = *dynamic_cast<Multigrid*>(session.preconditioner());
  const double share = pts / double(d.global_points());  // this rank's part of global bytes
  measure("mg_vcycle", "one V-cycle, " + mg.describe(), mg.bytes_per_apply() * share,
          [&] { mg.apply(f.u.data(), f.out.data()); });
  if (const Transfer* t = mg.fine_transfer()) measure_transfers(k, *t, f.x.data(), measure);
  if (o.fmg_cycles > 0)  // x (f.out) overwritten: its start does not matter
    measure("mg_fmg", "one full-multigrid F-cycle (--fmg's first iterate)", mg.fmg_bytes() * share,
            [&] { mg.first_iterate(f.u.data(), f.out.data()); });
  // What each level costs, and what bounds it (bytes over the copy rate, or launches).
  MgNumbers n = level_numbers(mg, f, reps, comm);
  n.setup_s = session.setup_seconds();
  Method& pcg = session.method();
  pcg.start();
  measure("mg_pcg_iteration", "one MG-PCG iteration: CG's work, a V-cycle, r.z",
          pcg.bytes_per_iteration() * share, [&] { pcg.step(); });
  mixed = measure_mixed(rt, f, o, reps, measure);
  return n;
}

// The width of the table's first column: its longest name (14 at least, as before the
// --coefficient rows).
int name_width(const std::vector<Row>& rows) {
  std::size_t w = 14;
  for (const Row& r : rows) w = std::max(w, r.name.size());
  return int(w);
}

// The results table (printed on rank 0) and its rows for the report.
nlohmann::json report_rows(const std::vector<Row>& rows, double copy_gbs, bool root) {
  nlohmann::json results;
  for (const Row& r : rows) {
    const double gbs = r.bytes / (r.median_ms * 1e-3) / 1e9;
    if (root)
      std::printf("%-*s %12.4g %12.4f %10.1f %8.1f%%  %s\n", name_width(rows), r.name.c_str(),
                  r.bytes, r.median_ms, gbs, 100.0 * gbs / copy_gbs, r.what.c_str());
    results.push_back({{"name", r.name},
                       {"what", r.what},
                       {"bytes", r.bytes},
                       {"median_ms", r.median_ms},
                       {"min_ms", r.min_ms},
                       {"gbytes_per_s", gbs},
                       {"fraction_of_copy", gbs / copy_gbs}});
  }
  return results;
}

// The multigrid levels table (printed on rank 0) and its rows for the report.
// label: what follows "multigrid levels" in the title.
nlohmann::json report_levels(const MgNumbers& mg, double copy_gbs, bool root,
                             const std::string& label) {
  if (root)
    std::printf(
        "multigrid levels%s (own share of one V-cycle; ms = difference of cycles from "
        "that level down; exchanges, messages and halo bytes sent per V-cycle by the busiest "
        "rank):\n%-6s %-14s %12s %12s %10s %9s %5s %6s %10s\n",
        label.c_str(), "level", "grid", "bytes", "ms", "GB/s", "of copy", "exch", "msgs", "halo B");
  nlohmann::json levels;
  for (std::size_t i = 0; i < mg.ms.size(); ++i) {
    const Int3& g = mg.info[i].grid;
    const double gbs = mg.ms[i] > 0 ? mg.bytes[i] / (mg.ms[i] * 1e-3) / 1e9 : 0.0;
    const MgLevelTraffic& t = mg.traffic[i];
    if (root)
      std::printf("%-6zu %-14s %12.4g %12.4f %10.1f %8.1f%% %5d %6.0f %10.4g%s\n", i,
                  to_string(g).c_str(), mg.bytes[i], mg.ms[i], gbs, 100.0 * gbs / copy_gbs,
                  t.exchanges, t.messages, t.bytes,
                  mg.info[i].distributed ? (t.gathers ? "  (gathers below)" : "") : "  (gathered)");
    levels.push_back({{"level", i},
                      {"grid", {g[0], g[1], g[2]}},
                      {"distributed", mg.info[i].distributed},
                      {"gathers", t.gathers},
                      {"bytes", mg.bytes[i]},
                      {"median_ms", mg.ms[i]},
                      {"gbytes_per_s", gbs},
                      {"exchanges", t.exchanges},
                      {"messages", t.messages},
                      {"halo_bytes", t.bytes}});
  }
  return levels;
}

// The solve bench measures: MG-PCG on a random right-hand side, built as `solve` builds it
// (SolveSession); --fmg's F-cycle is set up too, for its row. tol 1e-300: it never stops.
// coefficient: k of the operator ("1": constant); shift: --shift's text (empty: 0); bc:
// --bc's text (empty: every face Dirichlet).
std::unique_ptr<SolveSession> bench_session(const BenchOptions& o, const std::string& coefficient,
                                            const std::string& shift, const std::string& bc,
                                            MPI_Comm world) {
  ProblemSpec p;
  p.grid = o.grid;
  p.coefficient = coefficient;
  if (!shift.empty()) set_shift(p, shift);
  if (!bc.empty()) p.bc = parse_bc(bc);
  if ((!shift.empty() || !bc.empty()) && !variable_operator(p))
    throw BadInput("bench" + (shift.empty() ? "" : " --shift " + printable(shift, 80)) +
                   (bc.empty() ? "" : " --bc " + printable(bc, 80)) +
                   " without --coefficient leaves the operator constant (the _var rows would "
                   "repeat the constant ones): give --coefficient too, sigma as a field, or a "
                   "Neumann face");
  p.rhs = "random";
  p.seed = 7;
  MethodPlan m;
  m.kind = MethodKind::cg;
  m.multigrid = true;
  m.tol = 1e-300;
  m.mg.gather_points = o.mg_gather;
  m.mg.interp = o.mg_interp;
  m.mg.fmg_cycles = kFmgCycles;
  return std::make_unique<SolveSession>(p, o, m, world);
}

// --coefficient: the rows that sweep the operator again, on `session`, whose operator has
// that k (its own runtime, fields and timer), named NAME_var; its multigrid levels in `mg`.
void measure_variable(const BenchOptions& o, SolveSession& session, std::vector<Row>& rows,
                      MgNumbers& mg) {
  Runtime& rt = session.runtime();
  Kernels& k = *rt.kernels;
  MPI_Comm comm = rt.cart.get();
  Fields fields(k, random_box(rt.decomp, 7));  // the constant rows' data
  const Measure measure = [&](const std::string& name, const std::string& what, double bytes,
                              const std::function<void()>& work) {
    // Rows that do not touch the operator would only repeat the constant ones; so would the
    // transfers, unless --mg-interp operator takes their weights from it.
    for (const char* same : {"copy", "axpby", "cg_update", "mg_fmg"})
      if (name == same) return;
    const bool transfer = name.rfind("mg_restrict", 0) == 0 || name.rfind("mg_prolong", 0) == 0;
    if (transfer && o.mg_interp != MgInterp::operator_) return;
    rows.push_back(time_work(k, o, comm, name + "_var", what + " (variable k)", bytes, work));
  };
  measure_kernels(rt, fields, measure);
  MgNumbers mixed;  // not reported: the constant operator's float levels are
  mg = measure_multigrid(session, fields, o.reps, measure, mixed);
}

// The _var rows' session (--coefficient or --shift given; else null), made before any
// measuring: a bad k or sigma is refused at once.
std::unique_ptr<SolveSession> variable_session(const BenchOptions& o, MPI_Comm world) {
  if (o.coefficient.empty() && o.shift.empty() && o.bc.empty()) return nullptr;
  auto s = bench_session(o, o.coefficient.empty() ? "1" : o.coefficient, o.shift, o.bc, world);
  s->fill_source();
  s->build_method();
  return s;
}

// The report's (and the printed table's) part for the _var rows' operator.
void report_variable(const BenchOptions& o, const MgNumbers& mg_var, double copy_gbs, bool root,
                     nlohmann::json& j) {
  j["coefficient"] = o.coefficient.empty() ? "1" : o.coefficient;
  if (!o.shift.empty()) j["shift"] = o.shift;
  if (!o.bc.empty()) j["bc"] = bc_text(parse_bc(o.bc));
  j["mg_setup_s_var"] = mg_var.setup_s;
  j["mg_levels_var"] =
      report_levels(mg_var, copy_gbs, root,
                    (o.coefficient.empty() ? "" : " with --coefficient " + o.coefficient) +
                        (o.shift.empty() ? "" : " with --shift " + o.shift) +
                        (o.bc.empty() ? "" : " with --bc " + o.bc));
}

}  // namespace

int run_bench(const BenchOptions& o, MPI_Comm world) {
  if (o.io) return run_bench_io(o, world);
  const std::unique_ptr<SolveSession> session = bench_session(o, "1", "", "", world);
  Runtime* rt = &session->runtime();
  if (!o.report.empty())  // before measuring, not after
    check_planned_files({{"--report", o.report}}, world);
  session->fill_source();
  session->build_method();
  const std::unique_ptr<SolveSession> variable = variable_session(o, world);
  MPI_Comm comm = rt->cart.get();
  Kernels& k = *rt->kernels;
  const Decomposition& d = rt->decomp;
  const bool root = d.rank == 0;
  if (root && !rt->warnings.empty()) std::fputs(rt->warnings.c_str(), stderr);
  if (root) print_halo_selection(rt->halo_selection);
  if (root && !rt->overlap_choice.empty()) std::printf("overlap: %s\n", rt->overlap_choice.c_str());

  Fields fields(k, random_box(d, 7));  // random: zeros can run faster than real data
  std::vector<Row> rows;
  const Measure measure = [&](const std::string& name, const std::string& what, double bytes,
                              const std::function<void()>& work) {
    rows.push_back(time_work(k, o, comm, name, what, bytes, work));
  };
  measure_kernels(*rt, fields, measure);
  MgNumbers mg_mixed;
  const MgNumbers mg = measure_multigrid(*session, fields, o.reps, measure, mg_mixed);
  MgNumbers mg_var;
  if (variable) measure_variable(o, *variable, rows, mg_var);

  const double copy_gbs = rows[0].bytes / (rows[0].median_ms * 1e-3) / 1e9;
  nlohmann::json j;
  j["halo3d_version"] = version_string();
  j["command"] = "bench";
  j["grid"] = {o.grid[0], o.grid[1], o.grid[2]};
  j["procs"] = {d.procs[0], d.procs[1], d.procs[2]};
  j["ranks"] = d.ranks;
  j["backend"] = k.name();
  j["device"] = k.device_name();
  j["reps"] = o.reps;
  j["warmup"] = o.warmup;
  j["copy_gbytes_per_s"] = copy_gbs;
  j["overlap"] = rt->op->overlap();
  j["mg_setup_s"] = mg.setup_s;
  if (root) {
    std::printf(
        "halo3d bench %s: grid %s on %d rank(s) as %s, backend %s (%s), %d reps (median), %d "
        "warm-up\n",
        version_string().c_str(), to_string(o.grid).c_str(), d.ranks, to_string(d.procs).c_str(),
        k.name().c_str(), k.device_name().c_str(), o.reps, o.warmup);
    std::printf("%-*s %12s %12s %10s %9s  %s\n", name_width(rows), "kernel", "bytes", "median ms",
                "GB/s", "of copy", "what");
  }
  j["results"] = report_rows(rows, copy_gbs, root);
  j["mg_levels"] = report_levels(mg, copy_gbs, root, "");
  j["mg_levels_mixed"] = report_levels(mg_mixed, copy_gbs, root, " of the float V-cycle");
  if (variable) report_variable(o, mg_var, copy_gbs, root, j);
  if (!o.report.empty())
    write_file_atomically(
        o.report,
        root ? j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n" : "", world);
  return kExitOk;
}

}  // namespace halo3d
