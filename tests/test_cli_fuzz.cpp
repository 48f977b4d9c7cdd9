// Property test of the command line and the --config reader: thousands of random and
// mutated argument vectors and TOML files through parse_command_line(), in process.
// Every one must end in a parsed command (exit_code -1), help/version (0) or exactly one
// "halo3d: error:" line (2): never an exception, a crash or a sanitizer finding.
//   HALO3D_FUZZ_COUNT  cases (default 10000; e.g. 1000000 for a long run by hand)
//   HALO3D_FUZZ_SEED   seed (default 1; the same seed gives the same cases)
// A failure prints the case (argv and config file) so that it can be replayed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"

namespace {

using Rng = std::mt19937_64;

template <class T>
const T& pick(Rng& g, const std::vector<T>& v) {
  return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(g)];
}
bool chance(Rng& g, double p) { return std::uniform_real_distribution<double>(0, 1)(g) < p; }
int below(Rng& g, int n) { return std::uniform_int_distribution<int>(0, n - 1)(g); }

// Values of every kind an option may be given: well-formed, edge, malformed.
const std::vector<std::string> kNumbers = {"0",
                                           "1",
                                           "2",
                                           "4",
                                           "-1",
                                           "-0",
                                           "+3",
                                           "1e-8",
                                           "1e300",
                                           "1e-300",
                                           "nan",
                                           "inf",
                                           "-inf",
                                           "0x10",
                                           "1.5",
                                           "3.",
                                           ".5",
                                           "1e",
                                           "",
                                           " 4",
                                           "4 ",
                                           "9223372036854775807",
                                           "9223372036854775808",
                                           "99999999999999999999",
                                           "-9223372036854775809",
                                           "2147483648",
                                           "4294967296",
                                           "18446744073709551615",
                                           "18446744073709551616",
                                           "abc",
                                           "1,2",
                                           "--",
                                           "-",
                                           "1e-400",
                                           "0.0"};
const std::vector<std::string> kTriples = {
    "4,4,4",          "1,1,1",   "0,0,0",  "4,4",    "4,4,4,4", "-1,4,4",
    "4,,4",           ",,",      "a,b,c",  "4;4;4",  "4 4 4",   "2147483647,1,1",
    "4,4,2147483648", "1e2,4,4", "4,4,4,", ",4,4,4", "3,1,1",   "99999999999999999999,1,1"};
const std::vector<std::string> kWords = {
    "poisson", "heat",    "modes",    "random",    "cg",
    "jacobi",  "mg",      "none",     "chebyshev", "auto",
    "host",    "cuda",    "mpi",      "ipc",       "nccl",
    "on",      "off",     "explicit", "implicit",  "crank-nicolson",
    "",        "POISSON", "cg ",      "mpi-cuda",  "\xff\xfe",
    "a\nb",    "x=y",     "[solve]",  "\"quoted\""};
const std::vector<std::string> kPaths = {"out.h5",
                                         "none",
                                         "",
                                         "/",
                                         ".",
                                         "..",
                                         "/nonexistent/dir/x.h5",
                                         "a b.h5",
                                         "ck.h5",
                                         "/dev/null",
                                         "/proc/self/status",
                                         "x\n.h5",
                                         "-",
                                         "--output",
                                         std::string(300, 'p')};

struct Opt {
  std::string name;
  enum Kind { Number, Triple, Word, Path, Flag } kind;
};
const std::vector<Opt> kSolve = {{"--grid", Opt::Triple},
                                 {"--procs", Opt::Triple},
                                 {"--problem", Opt::Word},
                                 {"--rhs", Opt::Word},
                                 {"--mode", Opt::Triple},
                                 {"--seed", Opt::Number},
                                 {"--solver", Opt::Word},
                                 {"--precond", Opt::Word},
                                 {"--mg-levels", Opt::Number},
                                 {"--mg-gather", Opt::Number},
                                 {"--mg-smooth", Opt::Number},
                                 {"--mg-smoother", Opt::Word},
                                 {"--tol", Opt::Number},
                                 {"--max-iters", Opt::Number},
                                 {"--iters", Opt::Number},
                                 {"--steps", Opt::Number},
                                 {"--alpha", Opt::Number},
                                 {"--time-scheme", Opt::Word},
                                 {"--dt", Opt::Number},
                                 {"--backend", Opt::Word},
                                 {"--peer-access", Opt::Word},
                                 {"--halo", Opt::Word},
                                 {"--overlap", Opt::Word},
                                 {"--monitor", Opt::Number},
                                 {"--quiet", Opt::Flag},
                                 {"--progress", Opt::Number},
                                 {"--verify", Opt::Word},
                                 {"--output", Opt::Path},
                                 {"--output-every", Opt::Number},
                                 {"--compress", Opt::Number},
                                 {"--report", Opt::Path},
                                 {"--checkpoint", Opt::Path},
                                 {"--checkpoint-every", Opt::Number},
                                 {"--restart", Opt::Path},
                                 {"--config", Opt::Path},
                                 {"--help", Opt::Flag},
                                 {"--help-all", Opt::Flag},
                                 {"--version", Opt::Flag},
                                 {"--reps", Opt::Number},
                                 {"--warmup", Opt::Number},
                                 {"--sizes", Opt::Word},
                                 {"--topology", Opt::Flag},
                                 {"--nonexistent", Opt::Number},
                                 {"-x", Opt::Flag}};

std::string value_of(Rng& g, Opt::Kind k) {
  switch (k) {
    case Opt::Number:
      return pick(g, kNumbers);
    case Opt::Triple:
      return pick(g, kTriples);
    case Opt::Word:
      return pick(g, kWords);
    case Opt::Path:
      return pick(g, kPaths);
    case Opt::Flag:
      return pick(g, kWords);
  }
  return "";
}

// Byte-level mutations: flip, insert, delete, truncate, duplicate.
std::string mutate(Rng& g, std::string s) {
  const int n = 1 + below(g, 3);
  for (int i = 0; i < n; ++i) {
    const std::size_t at = s.empty() ? 0 : std::size_t(below(g, int(s.size())));
    switch (below(g, 6)) {
      case 0:
        if (!s.empty()) s[at] = char(below(g, 256));
        break;
      case 1:
        s.insert(s.begin() + at, pick(g, std::vector<char>{',', '=', '-', '"', '\'', '[', '\0',
                                                           '\n', ' ', '#', '\\', '.'}));
        break;
      case 2:
        if (!s.empty()) s.erase(at, 1);
        break;
      case 3:
        s.resize(at);
        break;
      case 4:
        s += s.substr(at);
        break;
      case 5:
        s.insert(at, pick(g, kNumbers));
        break;
    }
  }
  return s;
}

// A TOML file: keys from the options (and some unknown), values of every TOML type.
std::string random_toml(Rng& g) {
  std::ostringstream f;
  const int lines = below(g, 8);
  for (int i = 0; i < lines; ++i) {
    const Opt& o = pick(g, kSolve);
    std::string key = o.name.size() > 2 ? o.name.substr(2) : o.name;
    std::string v = value_of(g, o.kind);
    switch (below(g, 7)) {
      case 0:
        v = "\"" + v + "\"";
        break;
      case 1:
        v = "[" + v + "]";
        break;
      case 2:
        v = "'" + v + "'";
        break;
      case 3:
        v = pick(g, std::vector<std::string>{"true", "false", "[1, 2, 3]", "[\"1,1,1\", \"2,2,2\"]",
                                             "{a = 1}", "\"\"\"x\"\"\"", "[]", "[[1]]"});
        break;
      default:
        break;
    }
    if (chance(g, 0.05))
      f << pick(g,
                std::vector<std::string>{"[solve]\n", "[a.b]\n", "[[x]]\n", "# c\n", "\n", "=\n"});
    std::string line = key + (chance(g, 0.5) ? " = " : "=") + v;
    if (chance(g, 0.1)) line = mutate(g, line);
    f << line << "\n";
  }
  std::string s = f.str();
  if (chance(g, 0.1)) s = mutate(g, s);
  return s;
}

struct Case {
  std::vector<std::string> args;  // without argv[0]
  std::string config;             // written to the file named by {config}, when used
  bool uses_config = false;
};

Case random_case(Rng& g, const std::string& config_path) {
  Case c;
  const int sub = below(g, 20);
  if (sub < 15)
    c.args.push_back("solve");
  else if (sub == 15)
    c.args.push_back("bench");
  else if (sub == 16)
    c.args.push_back("probe");
  else if (sub == 17)
    c.args.push_back("info");
  else if (sub == 18)
    c.args.push_back(mutate(g, "solve"));
  const int n = below(g, 9);
  for (int i = 0; i < n; ++i) {
    const Opt& o = pick(g, kSolve);
    if (o.name == "--help" || o.name == "--help-all" || o.name == "--version") {
      if (!chance(g, 0.1)) continue;  // rare: they end parsing at once
    }
    if (o.name == "--config") {
      c.uses_config = true;
      c.config = random_toml(g);
      c.args.push_back("--config");
      c.args.push_back(config_path);
      continue;
    }
    std::string v = value_of(g, o.kind);
    if (o.kind == Opt::Flag) {
      c.args.push_back(o.name);
      if (chance(g, 0.1)) c.args.push_back(v);
    } else if (chance(g, 0.2)) {
      c.args.push_back(o.name + "=" + v);
    } else {
      c.args.push_back(o.name);
      if (chance(g, 0.95)) c.args.push_back(v);
    }
  }
  if (!c.args.empty() && chance(g, 0.2)) {
    auto& t = c.args[std::size_t(below(g, int(c.args.size())))];
    t = mutate(g, t);
  }
  if (chance(g, 0.05))
    c.args.push_back(pick(g, std::vector<std::string>{"--", "-", "", "extra", "solve"}));
  return c;
}

std::string describe(const Case& c) {
  std::string s = "halo3d";
  for (const auto& a : c.args) s += " '" + a + "'";
  if (c.uses_config) s += "\n--- config file ---\n" + c.config + "--- end ---";
  return s;
}

long env_long(const char* name, long dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtol(v, nullptr, 10) : dflt;
}

TEST(CliFuzz, EveryArgumentVectorParsesOrFailsWithOneLine) {
  const long count = env_long("HALO3D_FUZZ_COUNT", 10000);
  const long seed = env_long("HALO3D_FUZZ_SEED", 1);
  char dir[] = "/tmp/halo3d-cli-fuzz-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string config_path = std::string(dir) + "/fuzz.toml";
  Rng g{std::uint64_t(seed)};
  long parsed = 0, help = 0, errors = 0, failures = 0;
  for (long i = 0; i < count && failures < 10; ++i) {
    const Case c = random_case(g, config_path);
    if (c.uses_config) std::ofstream(config_path, std::ios::binary) << c.config;
    std::vector<std::string> storage{"halo3d"};
    storage.insert(storage.end(), c.args.begin(), c.args.end());
    std::vector<char*> argv;
    for (auto& s : storage) argv.push_back(s.data());
    argv.push_back(nullptr);
    std::string problem;
    halo3d::Command cmd;
    try {
      cmd = halo3d::parse_command_line(int(storage.size()), argv.data());
    } catch (const std::exception& e) {
      problem = std::string("exception escaped: ") + e.what();
    } catch (...) {
      problem = "unknown exception escaped";
    }
    if (problem.empty()) {
      if (cmd.exit_code == -1) {
        ++parsed;
        if (cmd.name != "solve" && cmd.name != "bench" && cmd.name != "probe" && cmd.name != "info")
          problem = "parsed into unknown command '" + cmd.name + "'";
      } else if (cmd.exit_code == 0) {
        ++help;
        if (cmd.message.empty()) problem = "exit 0 without help or version text";
      } else if (cmd.exit_code == 2) {
        ++errors;
        const std::string& m = cmd.message;
        if (m.rfind("halo3d: error: ", 0) != 0 || m.back() != '\n' || m.find('\n') != m.size() - 1)
          problem = "error message is not exactly one 'halo3d: error:' line: " + m;
      } else {
        problem = "exit code " + std::to_string(cmd.exit_code);
      }
    }
    if (!problem.empty()) {
      ++failures;
      ADD_FAILURE() << "case " << i << " (seed " << seed << "): " << problem << "\n" << describe(c);
    }
  }
  std::remove(config_path.c_str());
  rmdir(dir);
  std::printf("cli fuzz: %ld cases (seed %ld): %ld parsed, %ld help/version, %ld errors\n", count,
              seed, parsed, help, errors);
  // The generator must reach both sides, or it tests nothing.
  EXPECT_GT(parsed, count / 50);
  EXPECT_GT(errors, count / 4);
}

}  // namespace
