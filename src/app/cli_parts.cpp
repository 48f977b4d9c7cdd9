#include "cli_parts.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "errors.hpp"

namespace halo3d::cli {

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

}  // namespace halo3d::cli
