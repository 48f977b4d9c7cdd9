// The command line (CLI11): subcommands solve, info, bench, probe; every option also settable
// from a TOML file given with --config.
#pragma once
#include <string>

#include "options.hpp"

namespace halo3d {

struct Command {
  std::string name;  // solve | info | bench | probe, empty when only --help/--version was asked
  SolveOptions solve;
  BenchOptions bench;
  ProbeOptions probe;
  int exit_code = -1;   // >= 0: parsing ended the program (help, version, error)
  std::string message;  // help text or the one-line error
};

Command parse_command_line(int argc, char** argv);

}  // namespace halo3d
