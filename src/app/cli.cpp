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
#include "cli_parts.hpp"
#include "config_toml.hpp"
#include "errors.hpp"
#include "fields.hpp"
#include "files.hpp"
#include "hdf5_io.hpp"
#include "runtime.hpp"
#include "scaling_model.hpp"

namespace halo3d {
namespace {

using namespace cli;

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
    for (const char* n :
         {"mg-levels", "mg-smooth", "mg-smoother", "mg-interp", "mg-gather", "precision", "fmg"})
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

// What bench and probe read as text or lists first and converts once parsing is done (the
// initial values are the defaults that --help shows); solve's SolveArgs is in cli_parts.hpp.
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

CLI::App* add_bench_command(CLI::App& app, BenchOptions& b, BenchArgs& a) {
  CLI::App* bench = app.add_subcommand(
      "bench", "Measure kernel and CG-iteration bandwidth against a copy ceiling");
  bench->option_defaults()->always_capture_default();
  bench->add_option("--config", a.config, "Read options from this TOML file");
  add_grid_options(*bench, a.grid, a.procs);
  add_parallel_options(*bench, b.backend, b.halo, b.overlap, b.peer_access);
  bench
      ->add_option("--mg-gather", b.mg_gather,
                   "Multigrid: coarse levels of at most this many points are gathered (auto: "
                   "262144 with CUDA, 4096 on the host)")
      ->check(non_negative())
      ->default_str("auto")
      ->group("Benchmark");
  add_choice(*bench, "--mg-interp", b.mg_interp,
             "Multigrid interpolation of the _var rows' operator (as solve's)")
      ->group("Benchmark");
  bench->add_option("--reps", b.reps, "Timed repetitions (the median is reported)")
      ->check(whole_number<int>())
      ->check(positive())
      ->group("Benchmark");
  bench->add_option("--warmup", b.warmup, "Untimed repetitions first")
      ->check(whole_number<int>())
      ->check(non_negative())
      ->group("Benchmark");
  bench
      ->add_option("--coefficient", b.coefficient,
                   "Also time the operator and multigrid rows with this k (as solve's "
                   "--coefficient; rows ending _var) beside the constant ones")
      ->group("Benchmark");
  bench
      ->add_option("--shift", b.shift,
                   "The _var rows' operator with this sigma (as solve's --shift: VALUE, "
                   "expr:FORMULA or file:PATH.h5:/DATASET; k = 1 without --coefficient)")
      ->group("Benchmark");
  bench
      ->add_option("--bc", b.bc,
                   "The _var rows' operator with these boundary kinds (as solve's --bc, e.g. "
                   "x=neumann,y=periodic; k = 1 without --coefficient)")
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
  if (a.box.size() != 3) throw BadInput("--box: three sides LX,LY,LZ expected");
  for (int d = 0; d < 3; ++d) o.box[d] = a.box[std::size_t(d)];
  set_shift(o, a.shift);
  o.bc = parse_bc(a.bc);
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
    for (const char* name : {"--coefficient", "--shift", "--bc"})
      if (bench->count(name) > 0)
        throw BadInput(std::string(name) + " is for the kernel benchmark, not --io");
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
