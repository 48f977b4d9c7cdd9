// NVTX ranges (nvtx3, header-only, from the CUDA toolkit) around the phases of an
// exchange and of an iteration, so an Nsight Systems timeline (nsys profile -t cuda,nvtx,mpi)
// shows what overlaps what. Without NVTX (CPU-only builds) the macro compiles to nothing;
// with it but no profiler attached a range costs a few nanoseconds.
//
//   HALO3D_NVTX_RANGE("interior");   // until the end of the enclosing scope
#pragma once

#if defined(HALO3D_HAVE_CUDA) && !defined(HALO3D_NO_NVTX) && defined(__has_include)
#if __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define HALO3D_HAVE_NVTX 1
#endif
#endif

#ifdef HALO3D_HAVE_NVTX
namespace halo3d {
class NvtxRange {
 public:
  explicit NvtxRange(const char* name) {
    static const nvtxDomainHandle_t domain = nvtxDomainCreateA("halo3d");
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name;
    nvtxDomainRangePushEx(domain_ = domain, &a);
  }
  ~NvtxRange() { nvtxDomainRangePop(domain_); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;

 private:
  nvtxDomainHandle_t domain_;
};
}  // namespace halo3d
#define HALO3D_NVTX_CAT2(a, b) a##b
#define HALO3D_NVTX_CAT(a, b) HALO3D_NVTX_CAT2(a, b)
#define HALO3D_NVTX_RANGE(name) \
  ::halo3d::NvtxRange HALO3D_NVTX_CAT(halo3d_nvtx_range_, __LINE__)(name)
#else
#define HALO3D_NVTX_RANGE(name) static_cast<void>(0)
#endif
