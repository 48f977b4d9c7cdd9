#include "options.hpp"

#include "errors.hpp"

namespace halo3d {

std::string to_string(const Int3& v) {
  return std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]);
}

void validate(const SolveOptions& o) {
  for (int d = 0; d < 3; ++d)
    if (o.grid[d] < 1) throw BadInput("--grid " + to_string(o.grid) + ": every size must be >= 1");
  if (o.modes.empty()) throw BadInput("--mode: at least one mode is needed");
  if (!(o.tol >= 0)) throw BadInput("--tol must be >= 0 (0: run --max-iters iterations)");
  if (o.output.empty()) throw BadInput("--output: give a file name or 'none'");
  if (!o.checkpoint.empty() && o.checkpoint == o.output)
    throw BadInput("--checkpoint and --output must be different files");
  if (o.checkpoint_every > 0 && o.checkpoint.empty())
    throw BadInput("--checkpoint-every needs --checkpoint FILE.h5");
}

}  // namespace halo3d
