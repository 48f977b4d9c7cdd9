// NCCL's check macro: a failed call throws Error with exit code 1, seen by this rank only
// (NCCL failures need not be collective, so the job is aborted rather than waiting).
#pragma once
#include <nccl.h>

#include <string>

#include "errors.hpp"

#define HALO3D_NCCL_CHECK(expr)                                                              \
  do {                                                                                       \
    const ncclResult_t halo3d_nccl_rc_ = (expr);                                             \
    if (halo3d_nccl_rc_ != ncclSuccess)                                                      \
      throw ::halo3d::Error(::halo3d::kExitFailure,                                          \
                            std::string("NCCL error: ") + #expr +                            \
                                " failed: " + ncclGetErrorString(halo3d_nccl_rc_) + " at " + \
                                __FILE__ + ":" + std::to_string(__LINE__),                   \
                            false);                                                          \
  } while (false)
