#include "options.hpp"

#include <cmath>
#include <utility>

#include "errors.hpp"

namespace halo3d {

void check_grid_size(const Int3& grid, const std::string& option) {
  for (int d = 0; d < 3; ++d)
    if (grid[d] < 1) throw BadInput(option + " " + to_string(grid) + ": every size must be >= 1");
  // A rank's padded rows and boxes are indexed in 64 bits, and a row's length in int: beyond
  // these the arithmetic would overflow (a bad_alloc, or a hang) instead of failing cleanly.
  for (int d = 0; d < 3; ++d)
    if (grid[d] > kMaxGridAxis)
      throw BadInput(option + " " + to_string(grid) + ": at most " + std::to_string(kMaxGridAxis) +
                     " points per axis");
  const double padded = double(grid[0] + 8) * double(grid[1] + 2) * double(grid[2] + 2);
  if (padded > 0x1p58)
    throw BadInput(option + " " + to_string(grid) +
                   ": too many points for 64-bit sizes (at most 2^58 with ghost layers)");
}

namespace {

// The modes and the field specifications are attributes of the output and of checkpoints
// (HDF5 attributes hold at most 64 KiB): refused now, not when the output is written.
void check_stored_sizes(const SolveOptions& o) {
  if (o.modes.size() > kMaxModes)
    throw BadInput("--mode: at most " + std::to_string(kMaxModes) + " modes, got " +
                   std::to_string(o.modes.size()));
  for (const auto& [name, spec] : {std::pair<const char*, const std::string&>{"--rhs", o.rhs},
                                   {"--initial", o.initial},
                                   {"--boundary", o.boundary}})
    if (spec.size() > kMaxSpecBytes)
      throw BadInput(std::string(name) + ": at most " + std::to_string(kMaxSpecBytes) +
                     " characters, got " + std::to_string(spec.size()));
}

// Modes that alias on a periodic axis: refused rather than solved wrong.
void check_periodic(const SolveOptions& o) {
  const Periodic periodic = periodic_axes(o);
  if (!(periodic[0] || periodic[1] || periodic[2])) return;
  // sin(2 pi k i/N) vanishes at every point for k = N/2 and aliases beyond it.
  if (source_field(o).kind == FieldSpec::kModes)
    for (const Int3& m : o.modes)
      for (int d = 0; d < 3; ++d)
        if (periodic[d] && 2 * m[d] >= o.grid[d])
          throw BadInput("--mode " + to_string(m) + ": wave number " + std::to_string(m[d]) +
                         " on the periodic axis " + "xyz"[d] + " must be below N/2 = " +
                         std::to_string(o.grid[d]) + "/2 (sin(2 pi k i/N) aliases there)");
}

// Modes that alias on a Neumann axis: refused rather than solved wrong.
void check_neumann(const SolveOptions& o) {
  if (!has_neumann(o)) return;
  // cos(pi k i/(N-1)) between two Neumann faces: k = N-1 is the last distinct one.
  if (source_field(o).kind == FieldSpec::kModes)
    for (const Int3& m : o.modes)
      for (int d = 0; d < 3; ++d)
        if (o.bc[2 * d] == Bc::neumann && o.bc[2 * d + 1] == Bc::neumann && m[d] >= o.grid[d])
          throw BadInput("--mode " + to_string(m) + ": wave number " + std::to_string(m[d]) +
                         " on the Neumann axis " + "xyz"[d] + " must be below N = " +
                         std::to_string(o.grid[d]) + " (cos(pi k i/(N-1)) aliases there)");
}

}  // namespace

void validate(const SolveOptions& o) {
  check_grid_size(o.grid, "--grid");
  check_operator(o);
  if (o.modes.empty()) throw BadInput("--mode: at least one mode is needed");
  check_stored_sizes(o);
  check_periodic(o);
  check_neumann(o);
  // A wave number beyond the grid aliases: K = N+1 is zero at every point, larger ones
  // repeat smaller modes, so the "exact" answer would not be the grid's.
  if (source_field(o).kind == FieldSpec::kModes)
    for (const Int3& m : o.modes)
      for (int d = 0; d < 3; ++d)
        if (m[d] < 1 || m[d] > o.grid[d])
          throw BadInput("--mode " + to_string(m) + ": wave number " + std::to_string(m[d]) +
                         " on axis " + "xyz"[d] + " must be between 1 and the grid size " +
                         std::to_string(o.grid[d]) + " (larger ones alias on the grid)");
  if (!(o.tol >= 0) || !(o.tol < 1))
    throw BadInput("--tol must be 0 (run --max-iters iterations) or a number between 0 and 1");
  if (!(o.alpha > 0) || !std::isfinite(o.alpha))
    throw BadInput("--alpha must be a finite number > 0");
  if (!(o.dt >= 0) || !std::isfinite(o.dt)) throw BadInput("--dt must be a finite number >= 0");
  if (o.output.empty()) throw BadInput("--output: give a file name or 'none'");
  if (!o.checkpoint.empty() && o.checkpoint == o.output)
    throw BadInput("--checkpoint and --output must be different files");
  if (o.checkpoint_every > 0 && o.checkpoint.empty())
    throw BadInput("--checkpoint-every needs --checkpoint FILE.h5");
}

}  // namespace halo3d
