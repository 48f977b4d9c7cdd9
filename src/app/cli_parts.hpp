// The command line's building blocks, shared by its commands (cli.cpp): validators with
// short messages, parsers of --mode and --sizes, the option groups several commands take
// (grid, backend, halo, overlap), named choices, and the "did you mean" suggestion.
#pragma once
#include <CLI/CLI.hpp>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "checks.hpp"
#include "choices.hpp"
#include "decomposition.hpp"
#include "options.hpp"

namespace halo3d::cli {

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

CLI::Validator positive();
CLI::Validator non_negative();
CLI::Validator no_underflow();
CLI::Validator tolerance();
void none_is_empty(std::string& path);
Int3 to_int3(const std::vector<int>& v, const std::string& what);
Int3 parse_mode(const std::string& s);
std::size_t parse_bytes(const std::string& s);
void add_grid_options(CLI::App& c, std::vector<int>& grid, std::vector<int>& procs);
CLI::Option* add_switch(CLI::App& c, const std::string& name, bool& target,
                        const std::string& description);
void add_backend_options(CLI::App& c, Backend& backend, PeerAccess& peer_access);
void add_parallel_options(CLI::App& c, Backend& backend, Transport& halo, OverlapMode& overlap,
                          PeerAccess& peer_access);
std::size_t edit_distance(const std::string& a, const std::string& b);
std::string suggestion(const CLI::App& app, const std::string& message);

// What solve reads as text or lists first and converts once parsing is done (the initial
// values are the defaults that --help and --dry-run show).
struct SolveArgs {
  explicit SolveArgs(const SolveOptions& o)
      : grid(o.grid.begin(), o.grid.end()),
        procs(o.procs.begin(), o.procs.end()),
        box(o.box.begin(), o.box.end()),
        shift(exact_text(o.shift)),
        output(o.output) {}
  std::vector<int> grid, procs;
  std::vector<double> box;
  std::string shift;  // a constant, expr:FORMULA or file:PATH.h5:/DATASET
  std::vector<std::string> modes{"1,1,1"};
  std::string output, config;
  std::string bc = "dirichlet";
};

// solve's options (cli_solve.cpp), in the order of --help and of --dry-run's configuration.
CLI::App* add_solve_command(CLI::App& app, SolveOptions& o, SolveArgs& a);

}  // namespace halo3d::cli
