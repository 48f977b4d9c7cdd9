// The backends a test can run against: host always; cuda when compiled and a GPU is
// visible. The same test source checks both, with the host (and plain loops) as oracle.
#pragma once
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "cuda_variants.hpp"
#include "kernels.hpp"

namespace halo3d::test {

inline std::unique_ptr<Kernels> make_backend(const std::string& name) {
  if (name == "host") return make_host_kernels();
  if (!cuda_compiled() || cuda_devices().empty()) return nullptr;
  return make_cuda_kernels(0, cuda_variants_from_env());
}

#define HALO3D_REQUIRE_BACKEND(ptr, name)        \
  auto ptr = ::halo3d::test::make_backend(name); \
  if (!ptr) GTEST_SKIP() << "backend " << (name) << " not available here"

}  // namespace halo3d::test
