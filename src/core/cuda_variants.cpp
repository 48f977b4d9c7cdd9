#include "cuda_variants.hpp"

#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>

#include "errors.hpp"

namespace halo3d {
namespace {

// NAME's value as an index into `choices`; unset or empty: 0 (the first, the default).
int env_choice(const char* name, std::initializer_list<const char*> choices) {
  const char* v = std::getenv(name);
  if (!v || !*v) return 0;
  int index = 0;
  std::string list;
  for (const char* c : choices) {
    if (std::strcmp(v, c) == 0) return index;
    list += (index++ ? ", '" : "'") + std::string(c) + "'";
  }
  throw BadInput(std::string(name) + " must be one of " + list + ", not '" + v + "'");
}

}  // namespace

CudaVariants cuda_variants_from_env() {
  using Sweep = CudaVariants::Sweep;
  static constexpr Sweep kSweeps[] = {Sweep::fastest, Sweep::naive, Sweep::tile3d, Sweep::smem};
  CudaVariants v;
  v.sweep = kSweeps[env_choice("HALO3D_CUDA_APPLY", {"auto", "naive", "tile3d", "smem"})];
  v.rows = env_choice("HALO3D_CUDA_ROWS", {"vec2", "flat"}) == 1 ? CudaVariants::Rows::flat
                                                                 : CudaVariants::Rows::vec2;
  v.graphs = env_choice("HALO3D_CUDA_GRAPHS", {"on", "off"}) == 0;
  return v;
}

}  // namespace halo3d
