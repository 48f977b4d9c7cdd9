#include "cli.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <set>
#include <sstream>

#include "checks.hpp"
#include "config_toml.hpp"
#include "errors.hpp"
#include "fields.hpp"
#include "files.hpp"
#include "hdf5_io.hpp"
#include "runtime.hpp"
#include "scaling_model.hpp"

namespace halo3d {
namespace {

// Short messages (CLI11's own range checks print the whole double range).
CLI::Validator positive() {
  return CLI::Validator(
      [](std::string& v) {
        double x = 0;
        return CLI::detail::lexical_cast(v, x) && x > 0 ? std::string()
                                                        : "must be a number > 0, got " + v;
      },
      "> 0");
}
CLI::Validator non_negative() {
  return CLI::Validator(
      [](std::string& v) {
        double x = 0;
        return CLI::detail::lexical_cast(v, x) && x >= 0 ? std::string()
                                                         : "must be a number >= 0, got " + v;
      },
      ">= 0");
}

// Whole numbers of the option's type only: CLI11 2.1 clamps values beyond the range
// (99999999999999999999 became LLONG_MAX) and reads "-1" as 2^64-1 for unsigned options.
template <class T>
CLI::Validator whole_number() {
  return CLI::Validator(
      [](std::string& v) {
        const bool neg = !v.empty() && v[0] == '-';
        const std::size_t start = (!v.empty() && (v[0] == '-' || v[0] == '+')) ? 1 : 0;
        bool digits = v.size() > start;
        for (std::size_t i = start; i < v.size(); ++i)
          digits = digits && std::isdigit((unsigned char)v[i]);
        if (!digits) return "must be a whole number in decimal digits, got " + printable(v);
        // CLI11 would read 010 as octal 8 (and 0x40 as 64): no leading zeros.
        if (v.size() > start + 1 && v[start] == '0')
          return "must be a whole number without leading zeros (not read as octal), got " +
                 printable(v);
        if (neg && std::numeric_limits<T>::min() == 0)
          return "must be a whole number >= 0, got " + printable(v);
        errno = 0;
        bool fits = false;
        if (neg) {
          const long long x = std::strtoll(v.c_str(), nullptr, 10);
          fits = errno != ERANGE && x >= (long long)std::numeric_limits<T>::min();
        } else {
          const unsigned long long x = std::strtoull(v.c_str(), nullptr, 10);
          fits = errno != ERANGE && x <= (unsigned long long)std::numeric_limits<T>::max();
        }
        if (!fits)
          return "must be between " + std::to_string(std::numeric_limits<T>::min()) + " and " +
                 std::to_string(std::numeric_limits<T>::max()) + ", got " + printable(v);
        return std::string();
      },
      "INT");
}

// A decimal number that does not underflow: 1e-400 would silently be 0 (--dt 0 means "choose
// one", --alpha 0 is refused as 0 rather than as what was typed).
CLI::Validator no_underflow() {
  return CLI::Validator(
      [](std::string& v) {
        double x = 0;
        if (!parse_decimal(v, x)) return std::string();  // the next check says what is wrong
        return underflows(v, x) ? "must be 0 or at least 2.2e-308 in magnitude (the smallest "
                                  "normal double), got " +
                                      printable(v) + ", which would underflow"
                                : std::string();
      },
      "NUMBER");
}

// --tol: 0 (a fixed iteration count) or a decimal number in [2.2e-308, 1): a tolerance that
// underflows would silently become 0, and a relative residual of 1 is met by x = 0.
CLI::Validator tolerance() {
  return CLI::Validator(
      [](std::string& v) {
        double x = 0;
        if (!parse_decimal(v, x) || !std::isfinite(x) || x < 0)
          return "must be 0 (run --max-iters iterations) or a number between 0 and 1, got " +
                 printable(v);
        if (underflows(v, x))
          return "must be 0 or at least 2.2e-308 (the smallest normal double), got " +
                 printable(v) + ", which would underflow to 0 (a fixed iteration count)";
        if (x >= 1)
          return "must be below 1 (a relative residual ||r||/||b||; x = 0 meets 1), got " +
                 printable(v);
        return std::string();
      },
      "TOL");
}

std::string suggestion(const CLI::App& app, const std::string& message);  // below

// CLI11 2.1 reads config files for the top-level app only, and its reader is not TOML
// (quotes, escapes, comments, duplicate keys), so the subcommand's --config is read with
// toml++ (config_toml.cpp) and applied here; options given on the command line win.
void apply_config(CLI::App& sub, const std::string& path) {
  const std::string shown = printable(path);
  // Rank 0 reads the file and broadcasts it (before MPI starts: this process reads it), so
  // ranks that would see different contents (a file rewritten at job start, NFS attribute
  // caches) all parse the same text; a FIFO or directory is refused, never waited on.
  int mpi_up = 0;
  MPI_Initialized(&mpi_up);
  const std::string text =
      read_input_file("--config " + shown, path, mpi_up ? MPI_COMM_WORLD : MPI_COMM_NULL,
                      std::size_t(16) << 20, kExitBadInput);
  for (const auto& it : parse_config_toml(text, shown)) {
    const std::string at =
        "--config " + shown + ":" + std::to_string(it.line) + ":" + std::to_string(it.column);
    CLI::Option* opt = nullptr;
    try {
      opt = sub.get_option("--" + it.key);
    } catch (const CLI::OptionNotFound&) {
    }
    if (it.section)
      throw BadInput(at + ": unknown key '" + printable(it.key) +
                     "': a [section]; options are top-level keys");
    if (!opt || it.key == "config")
      throw BadInput(at + ": unknown key '" + printable(it.key) + "'" +
                     suggestion(sub, "--" + it.key));
    if (opt->count() > 0) continue;
    try {
      opt->add_result(it.values);
      opt->run_callback();
    } catch (const CLI::Error& e) {
      throw BadInput(at + ": key '" + printable(it.key) + "': " + printable(e.what()));
    }
  }
}

// "none" means no file for every path option, as it does for --output.
void none_is_empty(std::string& path) {
  if (path == "none") path.clear();
}

Int3 to_int3(const std::vector<int>& v, const std::string& what) {
  if (v.size() != 3) throw BadInput(what + " needs three comma-separated integers");
  return {v[0], v[1], v[2]};
}

Int3 parse_mode(const std::string& s) {
  Int3 m{};
  char c1 = 0, c2 = 0;
  std::istringstream in(s);
  if (!(in >> m[0] >> c1 >> m[1] >> c2 >> m[2]) || c1 != ',' || c2 != ',' || !(in >> std::ws).eof())
    throw BadInput("--mode " + s + ": expected KX,KY,KZ (three positive integers)");
  if (m[0] < 1 || m[1] < 1 || m[2] < 1)
    throw BadInput("--mode " + s + ": wave numbers must be >= 1");
  return m;
}

// "8", "64K", "1M", "2G" (binary multiples) -> bytes, a multiple of 8 up to 1 GiB.
std::size_t parse_bytes(const std::string& s) {
  std::size_t pos = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(s, &pos);
  } catch (const std::exception&) {
    throw BadInput("--sizes " + s + ": expected a byte count such as 8, 64K or 16M");
  }
  std::string suffix = s.substr(pos);
  unsigned long long m = 1;
  if (suffix == "K" || suffix == "k" || suffix == "KiB")
    m = 1ull << 10;
  else if (suffix == "M" || suffix == "m" || suffix == "MiB")
    m = 1ull << 20;
  else if (suffix == "G" || suffix == "g" || suffix == "GiB")
    m = 1ull << 30;
  else if (!(suffix.empty() || suffix == "B"))
    throw BadInput("--sizes " + s + ": unknown suffix '" + suffix + "'");
  if (v == 0 || v > (1ull << 30) / m)
    throw BadInput("--sizes " + s + ": must be between 8 B and 1 GiB");
  if ((v * m) % 8 != 0)
    throw BadInput("--sizes " + s + ": must be a multiple of 8 bytes (faces are doubles)");
  return std::size_t(v * m);
}

void add_grid_options(CLI::App& c, std::vector<int>& grid, std::vector<int>& procs) {
  c.add_option("--grid", grid, "Interior points NX,NY,NZ (x fastest)")
      ->delimiter(',')
      ->expected(3)
      ->check(whole_number<int>())
      ->group("Problem");
  c.add_option("--procs", procs, "Process grid PX,PY,PZ (0 = chosen by MPI_Dims_create)")
      ->delimiter(',')
      ->expected(3)
      ->check(whole_number<int>())
      ->check(non_negative())
      ->group("Parallel");
}

// An option naming one of E's values (choices.hpp's table), converted as it is parsed; its
// results stay the text given (for --dry-run and the report) and its default shows by name.
template <class E>
CLI::Option* add_choice(CLI::App& c, const std::string& name, const std::string& description,
                        E initial, std::function<void(E)> set) {
  return c
      .add_option_function<std::string>(
          name, [set, name](const std::string& v) { set(parse_choice<E>(v, name)); }, description)
      ->check(CLI::IsMember(choice_names<E>()))
      ->default_str(to_string(initial));
}
template <class E>
CLI::Option* add_choice(CLI::App& c, const std::string& name, E& target,
                        const std::string& description) {
  return add_choice<E>(c, name, description, target, [&target](E v) { target = v; });
}
// on | off into a bool.
CLI::Option* add_switch(CLI::App& c, const std::string& name, bool& target,
                        const std::string& description) {
  return add_choice<OnOff>(c, name, description, target ? OnOff::on : OnOff::off,
                           [&target](OnOff v) { target = v == OnOff::on; });
}

void add_backend_options(CLI::App& c, Backend& backend, PeerAccess& peer_access) {
  add_choice(c, "--backend", backend, "Where kernels run (auto: cuda when a GPU is visible)")
      ->group("Parallel");
  add_choice(c, "--peer-access", peer_access,
             "CUDA peer access between different GPUs (off: never, e.g. to emulate a PCIe box "
             "without P2P)")
      ->group("Parallel");
}

void add_parallel_options(CLI::App& c, Backend& backend, Transport& halo, OverlapMode& overlap,
                          PeerAccess& peer_access) {
  add_backend_options(c, backend, peer_access);
  add_choice(c, "--halo", halo, "Halo transport (auto: the fastest here, timed at start-up)")
      ->group("Parallel");
  add_choice(c, "--overlap", overlap,
             "Overlap interior compute with the halo exchange (auto: if it is faster here, timed "
             "at start-up)")
      ->group("Parallel");
}

// Levenshtein distance, for suggesting the option a typo meant.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// "; did you mean --grid?" for the first unknown "--word" of `message` close to a long
// option of `app` (at most a third of its letters wrong, at least 2); "" when none is.
std::string suggestion(const CLI::App& app, const std::string& message) {
  std::istringstream in(message);
  std::string word;
  while (in >> word) {
    if (word.rfind("--", 0) != 0) continue;
    std::string typed = word.substr(
        2, word.find('=') == std::string::npos ? std::string::npos : word.find('=') - 2);
    // "--steps: must be ..." names a known option: no suggestion of itself.
    if (!typed.empty() && typed.back() == ':') typed.pop_back();
    std::string best;
    std::size_t best_d = std::max<std::size_t>(2, typed.size() / 3) + 1;
    for (const CLI::Option* opt : app.get_options()) {
      for (const std::string& name : opt->get_lnames()) {
        const std::size_t dist = edit_distance(typed, name);
        if (dist < best_d) best_d = dist, best = name;
      }
    }
    if (!best.empty() && best != typed) return "; did you mean --" + best + "?";
  }
  return "";
}

// Options given on the command line (`given`) that the chosen problem or solver does not
// use are refused, one line (a config file may hold keys for several set-ups).
void refuse_inapplicable(const SolveOptions& o, const std::set<std::string>& given) {
  const auto refuse = [&](const char* name, const std::string& why) {
    if (given.count(name)) throw BadInput(std::string("--") + name + " " + why);
  };
  const bool heat = o.problem == ProblemKind::heat;
  if (!heat) {
    for (const char* n : {"steps", "alpha", "dt", "time-scheme", "output-every"})
      refuse(n, "applies to --problem heat only (this run solves Poisson)");
  } else {
    refuse("solver", "applies to --problem poisson only (heat steps by --time-scheme)");
    refuse("fmg", "applies to --problem poisson only (an implicit step starts from the last)");
  }
  const bool explicit_heat = heat && o.time_scheme == TimeScheme::explicit_;
  const bool jacobi = !heat && o.solver == SolverKind::jacobi;
  if (explicit_heat || jacobi)
    refuse("precond", explicit_heat ? "does not apply to explicit heat steps (no solve)"
                                    : "does not apply to --solver jacobi (CG's preconditioner)");
  const bool mg = !explicit_heat && !jacobi && o.precond == Precond::mg;
  if (!mg)
    for (const char* n : {"mg-levels", "mg-smooth", "mg-smoother", "mg-gather", "precision", "fmg"})
      refuse(n, explicit_heat ? "does not apply to explicit heat steps (no multigrid)"
                : jacobi      ? "does not apply to --solver jacobi (no multigrid)"
                              : "does not apply with --precond none (no multigrid)");
}

// A flag's value, "true" or "false" ("quiet = false" in a config file counts too).
std::string flag_value(const CLI::Option& opt) {
  const std::string v = opt.results().empty() ? "true" : opt.results().back();
  return v == "false" || v == "0" || v == "off" || v == "no" || v == "-1" ? "false" : "true";
}

// An option's values as given, joined by commas (spaces for a repeated option without a
// delimiter, such as --mode).
std::string given_value(const CLI::Option& opt) {
  const auto& r = opt.results();
  const std::string sep = opt.get_delimiter() == '\0' && r.size() > 1 ? " " : ",";
  std::string value;
  for (std::size_t i = 0; i < r.size(); ++i) value += (i ? sep : "") + r[i];
  return value;
}

// An option's default as text.
std::string default_value(const CLI::Option& opt, bool flag) {
  std::string value = flag ? "false" : opt.get_default_str();
  // CLI11 shows vector defaults as [a,b,c].
  if (value.size() >= 2 && value.front() == '[' && value.back() == ']')
    value = value.substr(1, value.size() - 2);
  return value;
}

// Every option of `sub` with its final value and where it came from: "command line" for
// those in `given` (counted before the config file was applied), "config file" for the
// others that have results, "default" for the rest.
std::vector<OptionSource> option_sources(const CLI::App& sub, const std::set<std::string>& given) {
  std::vector<OptionSource> out;
  for (const CLI::Option* opt : sub.get_options()) {
    const std::string name = opt->get_single_name();
    if (name == "help" || name.empty()) continue;
    OptionSource s;
    s.name = name;
    const bool flag = opt->get_expected_max() == 0;
    if (opt->count() > 0) {
      s.source = given.count(name) ? "command line" : "config file";
      s.value = flag ? flag_value(*opt) : given_value(*opt);
    } else {
      s.source = "default";
      s.value = default_value(*opt, flag);
    }
    out.push_back(s);
  }
  return out;
}

// What each command reads as text or lists first and converts once parsing is done (the
// initial values are the defaults that --help and --dry-run show).
struct SolveArgs {
  explicit SolveArgs(const SolveOptions& o)
      : grid(o.grid.begin(), o.grid.end()),
        procs(o.procs.begin(), o.procs.end()),
        output(o.output) {}
  std::vector<int> grid, procs;
  std::vector<std::string> modes{"1,1,1"};
  std::string output, config;
};
struct BenchArgs {
  explicit BenchArgs(const BenchOptions& b)
      : grid(b.grid.begin(), b.grid.end()), procs(b.procs.begin(), b.procs.end()) {}
  std::vector<int> grid, procs;
  std::string config;
};
struct ProbeArgs {
  std::vector<int> grid, procs{0, 0, 0};
  std::vector<std::string> sizes;
};

// solve's options by --help group (a new option goes in its group's function): --config,
// Problem and the process grid.
void add_solve_problem_options(CLI::App* solve, SolveOptions& o, SolveArgs& a) {
  solve->add_option("--config", a.config,
                    "Read options from this TOML file (keys = long option names)");
  add_grid_options(*solve, a.grid, a.procs);
  add_choice(*solve, "--problem", o.problem, "poisson: -lap u = f; heat: u_t = alpha lap u")
      ->group("Problem");
  solve
      ->add_option("--rhs", o.rhs,
                   "Poisson right-hand side: modes, random, file:PATH.h5:/DATASET or "
                   "expr:FORMULA (heat: its initial state when --initial is not given)")
      ->group("Problem");
  solve
      ->add_option("--initial", o.initial,
                   "Heat initial state: modes, random, file:PATH.h5:/DATASET or expr:FORMULA")
      ->group("Problem");
  solve
      ->add_option(
          "--boundary", o.boundary,
          "Dirichlet boundary values (Poisson and heat): VALUE, x0=V,x1=V,y0=V,... (others 0), "
          "expr:FORMULA or file:PATH.h5:/DATASET ([NZ+2][NY+2][NX+2])")
      ->group("Problem");
  solve->add_option("--mode", a.modes, "Manufactured mode KX,KY,KZ (repeatable; summed)")
      ->group("Problem");
  solve->add_option("--seed", o.seed, "Seed of --rhs random")
      ->check(whole_number<std::uint64_t>())
      ->group("Problem");
}

// Solver (Poisson and heat).
void add_solve_solver_options(CLI::App* solve, SolveOptions& o) {
  add_choice(*solve, "--solver", o.solver, "Poisson solver")->group("Solver");
  add_choice(*solve, "--precond", o.precond, "CG's preconditioner: multigrid V-cycle, or none")
      ->group("Solver");
  solve->add_option("--mg-levels", o.mg_levels, "Multigrid levels (0: down to one point per axis)")
      ->check(whole_number<int>())
      ->check(non_negative())
      ->group("Solver");
  solve->add_option("--mg-smooth", o.mg_smooth, "Multigrid smoothing steps before and after")
      ->check(whole_number<int>())
      ->check(CLI::Range(1, 32))
      ->group("Solver");
  add_choice(*solve, "--mg-smoother", o.mg_smoother, "Multigrid smoother")->group("Solver");
  solve
      ->add_option("--mg-gather", o.mg_gather,
                   "Multigrid: coarse levels of at most this many points are gathered and run "
                   "on every rank")
      ->check(non_negative())
      ->group("Solver");
  add_choice(*solve, "--precision", o.precision,
             "double, or mixed: the multigrid V-cycle in float, CG in double")
      ->group("Solver");
  solve
      ->add_flag("--fmg", o.fmg,
                 "MG-PCG starts from a full-multigrid F-cycle's answer instead of 0 (Poisson)")
      ->group("Solver");
  solve->add_option("--tol", o.tol, "Stop at this relative residual ||r||/||b||")
      ->check(tolerance())
      ->group("Solver");
  solve->add_option("--max-iters", o.max_iters, "Iteration limit")
      ->check(whole_number<long>() & non_negative())
      ->group("Solver");
  solve->get_option("--tol")->description(
      "Stop at this relative residual ||r||/||b|| (0: run --max-iters iterations)");
  solve
      ->add_option("--iters", o.iters,
                   "Run exactly N iterations whatever the residual (timing runs; exit code 0)")
      ->check(whole_number<long>())
      ->check(positive())
      ->excludes("--tol")
      ->excludes("--max-iters")
      ->group("Solver");
  solve->add_option("--steps", o.steps, "Heat: explicit Euler steps")
      ->check(whole_number<long>() & non_negative())
      ->group("Solver");
  solve->add_option("--alpha", o.alpha, "Heat: diffusivity")
      ->check(no_underflow())
      ->check(positive())
      ->group("Solver");
  add_choice(*solve, "--time-scheme", o.time_scheme,
             "Heat: explicit (Euler), implicit (backward Euler) or crank-nicolson; the "
             "implicit ones take any --dt and solve each step with CG (--precond, --tol)")
      ->group("Solver");
  solve->add_option("--dt", o.dt, "Heat: time step (0 = 0.9 of the stability limit)")
      ->check(no_underflow())
      ->check(non_negative())
      ->group("Solver");
}

// Parallel, Output and Checkpoint.
void add_solve_output_options(CLI::App* solve, SolveOptions& o, SolveArgs& a) {
  add_parallel_options(*solve, o.backend, o.halo, o.overlap, o.peer_access);
  solve->add_option("--monitor", o.monitor, "Progress line every N iterations (0: none)")
      ->check(whole_number<int>() & non_negative())
      ->group("Output");
  solve
      ->add_option("--progress", o.progress,
                   "Progress line (iteration, residual, time) every this many seconds of a solve "
                   "(0: none; with --quiet, none unless given)")
      ->check(non_negative())
      ->group("Output");
  solve
      ->add_flag("--quiet", o.quiet,
                 "Print only the result, the error, the time and the files written (no header, "
                 "phase or progress lines)")
      ->group("Output");
  add_switch(*solve, "--verify", o.verify,
             "Measure the error against the exact answer and the halo overlap after the solve "
             "(off: production runs; the true residual is still recomputed)")
      ->group("Output");
  solve
      ->add_flag("--dry-run", o.dry_run,
                 "Print the configuration (each value and its source), decomposition, multigrid "
                 "hierarchy, memory per rank and files, then exit 0 without solving")
      ->group("Output");
  solve->add_option("--output", a.output, "Solution file (HDF5), or 'none'")->group("Output");
  solve
      ->add_option("--output-every", o.output_every,
                   "Heat: also a snapshot of u every N steps (and the last step) in --output's "
                   "/series, played by the .xdmf sidecar")
      ->check(whole_number<long>() & positive())
      ->group("Output");
  solve
      ->add_option("--compress", o.compress,
                   "Deflate /u of --output at this level, 1-9 (chunked; slower to write); 0: off")
      ->check(whole_number<int>())
      ->check(CLI::Range(0, 9))
      ->group("Output");
  solve->add_option("--report", o.report, "JSON report of the run, or 'none'")->group("Output");
  solve->add_option("--checkpoint", o.checkpoint, "Checkpoint file (HDF5), or 'none'")
      ->group("Checkpoint");
  solve
      ->add_option("--checkpoint-every", o.checkpoint_every,
                   "Checkpoint every N iterations (0: only on a signal)")
      ->check(whole_number<long>() & non_negative())
      ->group("Checkpoint");
  solve->add_option("--restart", o.restart, "Continue from this checkpoint")->group("Checkpoint");
}

// The options' order here is the order of --help and of --dry-run's configuration.
CLI::App* add_solve_command(CLI::App& app, SolveOptions& o, SolveArgs& a) {
  CLI::App* solve = app.add_subcommand("solve", "Solve a Poisson or heat problem");
  solve->option_defaults()->always_capture_default();
  add_solve_problem_options(solve, o, a);
  add_solve_solver_options(solve, o);
  add_solve_output_options(solve, o, a);
  solve->footer(
      "Stopping a run and keeping its work: Ctrl-C (SIGINT), SIGTERM or SIGUSR1 to halo3d or to\n"
      "any one rank stops every rank at the next iteration; with --checkpoint FILE that is\n"
      "written first (exit code 75; continue with --restart FILE), without it nothing is saved\n"
      "(exit code 76). Under mpirun, Ctrl-C makes mpirun send SIGTERM and then SIGKILL 1 s\n"
      "later, which can cut a large checkpoint off (the previous one stays complete, and the\n"
      "stop line names the iteration it holds). To give the checkpoint the time it needs,\n"
      "signal mpirun with SIGUSR1, which it forwards to every rank:\n"
      "    kill -USR1 <mpirun pid>        (e.g. kill -USR1 $(pgrep -n mpirun))\n");
  return solve;
}

CLI::App* add_bench_command(CLI::App& app, BenchOptions& b, BenchArgs& a) {
  CLI::App* bench = app.add_subcommand(
      "bench", "Measure kernel and CG-iteration bandwidth against a copy ceiling");
  bench->option_defaults()->always_capture_default();
  bench->add_option("--config", a.config, "Read options from this TOML file");
  add_grid_options(*bench, a.grid, a.procs);
  add_parallel_options(*bench, b.backend, b.halo, b.overlap, b.peer_access);
  bench
      ->add_option("--mg-gather", b.mg_gather,
                   "Multigrid: coarse levels of at most this many points are gathered")
      ->check(non_negative())
      ->group("Benchmark");
  bench->add_option("--reps", b.reps, "Timed repetitions (the median is reported)")
      ->check(whole_number<int>())
      ->check(positive())
      ->group("Benchmark");
  bench->add_option("--warmup", b.warmup, "Untimed repetitions first")
      ->check(whole_number<int>())
      ->check(non_negative())
      ->group("Benchmark");
  bench->add_option("--report", b.report, "JSON file for the results, or 'none'")->group("Output");
  bench
      ->add_flag("--io", b.io,
                 "Instead of the kernels: time writing the grid's field as solve --output does "
                 "(HDF5) against a raw write of the same bytes")
      ->group("I/O benchmark");
  bench->add_option("--io-dir", b.io_dir, "Directory for --io's temporary files (removed after)")
      ->group("I/O benchmark");
  bench
      ->add_option("--io-reps", b.io_reps,
                   "--io: timed writes of each kind (the median is reported)")
      ->check(whole_number<int>())
      ->check(positive())
      ->group("I/O benchmark");
  add_switch(*bench, "--io-sync", b.io_sync, "--io: fsync inside both timed writes")
      ->group("I/O benchmark");
  return bench;
}

CLI::App* add_probe_command(CLI::App& app, ProbeOptions& pr, ProbeArgs& a) {
  CLI::App* probe = app.add_subcommand(
      "probe",
      "Peer access, latency and bandwidth of each halo transport between every pair of ranks");
  probe->option_defaults()->always_capture_default();
  add_backend_options(*probe, pr.backend, pr.peer_access);
  probe
      ->add_option("--sizes", a.sizes,
                   "Message sizes in bytes, K/M/G suffixes allowed (default 8 B to 64 MiB)")
      ->delimiter(',')
      ->group("Probe");
  probe->add_option("--reps", pr.reps, "Timed exchanges per size (the median is reported)")
      ->check(whole_number<int>())
      ->check(positive())
      ->group("Probe");
  probe->add_option("--warmup", pr.warmup, "Untimed exchanges first (at least 1)")
      ->check(whole_number<int>())
      ->check(non_negative())
      ->group("Probe");
  probe
      ->add_flag("--topology", pr.topology,
                 "Also nvidia-smi topo -m and the CUDA P2P attributes of each GPU pair")
      ->group("Probe");
  probe->add_option("--grid", a.grid, "Estimate the halo time per iteration of this grid NX,NY,NZ")
      ->delimiter(',')
      ->expected(3)
      ->check(whole_number<int>())
      ->group("Probe");
  probe->add_option("--procs", a.procs, "Process grid for --grid (0 = chosen)")
      ->delimiter(',')
      ->expected(3)
      ->check(whole_number<int>())
      ->check(non_negative())
      ->group("Probe");
  probe->add_option("--report", pr.report, "JSON file for the results, or 'none'")->group("Output");
  probe
      ->add_flag("--model", pr.model,
                 "Measure nothing: predict MG-PCG time per iteration and weak/strong scaling "
                 "on 1-4096 GPUs over NVLink, PCIe, InfiniBand HDR/NDR (docs/SCALING_MODEL.md); "
                 "--grid adds a strong-scaling series")
      ->group("Model");
  probe
      ->add_option("--model-bench", pr.model_bench,
                   "--model's per-level costs from this one-rank `halo3d bench --report` file "
                   "(default: built-in H200 512^3 measurements)")
      ->group("Model");
  probe
      ->add_option("--model-link", pr.model_links,
                   "--model: replace a link's numbers, NAME=LAT_US,GBPS[,COLLECTIVE_LAT_US] "
                   "(repeatable; nvlink, pcie, ib-hdr, ib-ndr, mps-shared-gpu)")
      ->group("Model");
  probe
      ->add_option("--model-launch-us", pr.model_launch_us,
                   "--model: microseconds per kernel launch in place of the one measured on "
                   "the tiny levels (e.g. what CUDA graphs would leave)")
      ->check(non_negative())
      ->group("Model");
  probe
      ->add_option("--mg-gather", pr.mg_gather,
                   "--model: coarse levels of at most this many points are gathered, as "
                   "solve's --mg-gather")
      ->check(non_negative())
      ->group("Model");
  return probe;
}

// After parsing: the config file, the sources, the conversions and the checks of solve.
void finish_solve(CLI::App* solve, const SolveArgs& a, int argc, char** argv, SolveOptions& o) {
  // Heat's initial state: --initial, or --rhs as before; not both on the command line.
  if (solve->count("--rhs") > 0 && solve->count("--initial") > 0)
    throw BadInput(
        "--rhs and --initial both given: heat's initial state is --initial (--rhs "
        "is the Poisson right-hand side)");
  std::set<std::string> given;
  for (const CLI::Option* opt : solve->get_options())
    if (opt->count() > 0) given.insert(opt->get_single_name());
  if (!a.config.empty()) apply_config(*solve, a.config);
  o.sources = option_sources(*solve, given);
  refuse_inapplicable(o, given);
  o.command_line.assign(argv, argv + argc);
  o.config_file = a.config;
  o.grid = to_int3(a.grid, "--grid");
  o.procs = to_int3(a.procs, "--procs");
  o.modes.clear();
  for (const auto& m : a.modes) o.modes.push_back(parse_mode(m));
  o.output = a.output;
  if (o.compress > 0 && o.output == "none")
    throw BadInput("--compress applies to the --output file (--output none writes none)");
  if (o.compress > 0 && !h5_deflate_available())
    throw Error(kExitUnavailable, "--compress: this HDF5 library cannot write deflate (zlib)");
  if (given.count("output-every") && o.output == "none")
    throw BadInput(
        "--output-every needs an --output file (the snapshots are written into it), not 'none'");
  if (o.quiet && solve->count("--progress") == 0) o.progress = 0;  // quiet unless asked
  none_is_empty(o.report);
  none_is_empty(o.checkpoint);
  none_is_empty(o.restart);
  if (o.iters > 0) {
    if (o.problem == ProblemKind::heat)
      throw BadInput("--iters is for Poisson solves; heat runs --steps");
    o.max_iters = o.iters;  // over --max-iters / --tol from a --config file
    o.tol = 0;
  }
  validate(o);
  check_field_options(o);
}

void finish_bench(CLI::App* bench, const BenchArgs& a, BenchOptions& b) {
  if (!a.config.empty()) apply_config(*bench, a.config);
  b.grid = to_int3(a.grid, "--grid");
  b.procs = to_int3(a.procs, "--procs");
  if (!b.io) {  // the --io options without --io would be silently ignored
    for (const char* name : {"--io-dir", "--io-reps", "--io-sync"})
      if (bench->count(name) > 0) throw BadInput(std::string(name) + " needs --io");
  } else {
    for (const char* name : {"--reps", "--warmup"})
      if (bench->count(name) > 0)
        throw BadInput(std::string(name) + " is for the kernel benchmark; --io takes --io-reps");
  }
  none_is_empty(b.report);
  check_grid_size(b.grid, "--grid");
}

// --model measures nothing: the measurement options do not apply to it, and its own
// options need it; its link overrides are checked here.
void check_model_options(const CLI::App* probe, const ProbeOptions& pr) {
  if (!pr.model) {
    for (const char* name : {"--model-bench", "--model-link", "--mg-gather", "--model-launch-us"})
      if (probe->count(name) > 0) throw BadInput(std::string(name) + " needs --model");
    return;
  }
  for (const char* name :
       {"--sizes", "--reps", "--warmup", "--topology", "--procs", "--backend", "--peer-access"})
    if (probe->count(name) > 0)
      throw BadInput(std::string(name) + " does not apply to --model (it measures nothing)");
  std::vector<model::Link> links = model::default_links();
  for (const std::string& spec : pr.model_links) model::apply_link_override(links, spec);
  if (pr.model_bench == "none") throw BadInput("--model-bench needs a bench report file");
}

void finish_probe(const CLI::App* probe, const ProbeArgs& a, ProbeOptions& pr) {
  check_model_options(probe, pr);
  pr.sizes.clear();
  for (const auto& s : a.sizes) pr.sizes.push_back(parse_bytes(s));
  if (!a.grid.empty()) {
    pr.grid = to_int3(a.grid, "--grid");
    check_grid_size(pr.grid, "--grid");
  }
  pr.procs = to_int3(a.procs, "--procs");
  none_is_empty(pr.report);
}

}  // namespace

namespace {

// "halo3d solv": the word is no command (CLI11 says only "A subcommand is required"); name
// the commands and the nearest one.
std::string unknown_command(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return "";
  const std::string typed = argv[1];
  std::string names, best;
  std::size_t best_d = 3;
  for (const CLI::App* sub : app.get_subcommands({})) {
    const std::string& n = sub->get_name();
    if (n == typed) return "";
    names += (names.empty() ? "" : ", ") + n;
    const std::size_t d = edit_distance(typed, n);
    if (d < best_d) best_d = d, best = n;
  }
  return "unknown command '" + printable(typed, 60) + "'" +
         (best.empty() ? "" : "; did you mean '" + best + "'?") + " (commands: " + names + ")";
}

// --help shows each option's type alone: CLI11 2.1 appends every validator's description to
// it ("INT:(INT) AND (>= 0)"); the checks are in the option's text and docs/OPTIONS.md.
// A choice shows its choices ("{cg,jacobi}") instead of TEXT.
class CleanTypes : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* opt) const override {
    std::string s = CLI::Formatter::make_option_opts(opt);
    const std::string full = opt->get_type_name();
    const std::size_t at = full.empty() ? std::string::npos : s.find(" " + full);
    if (at == std::string::npos || full.find(':') == std::string::npos) return s;
    std::string shown = full.substr(0, full.find(':'));
    const std::size_t brace = full.find(":{");
    if (brace != std::string::npos) shown = full.substr(brace + 1, full.find('}', brace) - brace);
    return s.replace(at + 1, full.size(), shown);
  }
};

}  // namespace

Command parse_command_line(int argc, char** argv) {
  Command cmd;
  CLI::App app{"halo3d: domain-decomposed 3D stencil and CG solver (MPI, CUDA, parallel HDF5)",
               "halo3d"};
  app.set_version_flag("--version", version_string());
  app.require_subcommand(1, 1);
  app.failure_message(CLI::FailureMessage::simple);
  app.formatter(std::make_shared<CleanTypes>());  // before the subcommands, which copy it

  SolveArgs solve_args(cmd.solve);
  BenchArgs bench_args(cmd.bench);
  ProbeArgs probe_args;
  CLI::App* solve = add_solve_command(app, cmd.solve, solve_args);
  CLI::App* bench = add_bench_command(app, cmd.bench, bench_args);
  app.add_subcommand("info", "Versions, backends compiled, and the rank-to-host/GPU map");
  CLI::App* probe = add_probe_command(app, cmd.probe, probe_args);

  try {
    app.parse(argc, argv);
    if (solve->parsed()) {
      cmd.name = "solve";
      finish_solve(solve, solve_args, argc, argv, cmd.solve);
    } else if (bench->parsed()) {
      cmd.name = "bench";
      finish_bench(bench, bench_args, cmd.bench);
    } else if (probe->parsed()) {
      cmd.name = "probe";
      finish_probe(probe, probe_args, cmd.probe);
    } else {
      cmd.name = "info";
    }
  } catch (const CLI::CallForHelp&) {
    cmd.exit_code = kExitOk;
    cmd.message = (app.get_subcommands().empty() ? app.help()
                                                 : app.get_subcommands().front()->help("halo3d"));
  } catch (const CLI::CallForAllHelp&) {
    cmd.exit_code = kExitOk;
    cmd.message = app.help("", CLI::AppFormatMode::All);
  } catch (const CLI::CallForVersion&) {
    cmd.exit_code = kExitOk;
    cmd.message = "halo3d " + version_string() + "\n";
  } catch (const CLI::ParseError& e) {
    cmd.exit_code = kExitBadInput;
    const auto subs = app.get_subcommands();
    const std::string unknown = subs.empty() ? unknown_command(app, argc, argv) : "";
    const std::string hint = suggestion(subs.empty() ? app : *subs.front(), e.what());
    cmd.message =
        "halo3d: error: " + (unknown.empty() ? printable(e.what(), 400) + hint : unknown) + "\n";
  } catch (const Error& e) {  // BadInput, or a feature this build lacks
    cmd.exit_code = e.code();
    cmd.message = std::string("halo3d: error: ") + printable(e.what(), 400) + "\n";
  }
  return cmd;
}

}  // namespace halo3d
