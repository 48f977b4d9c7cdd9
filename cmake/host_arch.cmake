# HALO3D_HOST_ARCH (top-level CMakeLists.txt) -> HALO3D_HOST_MARCH, the -march the host
# kernels are compiled with (empty: none, the compiler's baseline, SSE2 on x86-64).
# auto: x86-64-v3 (AVX2; the kernels' -ffp-contract=off keeps FMA out, so the bits are the
# baseline's) where the compiler takes it and the CPU of the machine that builds has it, as
# codes built where they run usually are; one MG-PCG iteration on a core is about 1.2x
# faster (docs/PERFORMANCE.md, "The host kernels"). A binary so built checks at start-up that
# its CPU has x86-64-v3 and refuses with one line otherwise (check_host_isa).
set(HALO3D_HOST_MARCH "${HALO3D_HOST_ARCH}")
if(HALO3D_HOST_ARCH STREQUAL "auto")
  set(HALO3D_HOST_MARCH "")
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" AND NOT CMAKE_CROSSCOMPILING)
    include(CheckCXXCompilerFlag)
    check_cxx_compiler_flag(-march=x86-64-v3 HALO3D_CXX_TAKES_X86_64_V3)
    if(HALO3D_CXX_TAKES_X86_64_V3)
      try_run(_h3d_v3_run _h3d_v3_compiled ${CMAKE_BINARY_DIR}/host_arch_check
              ${CMAKE_CURRENT_LIST_DIR}/cpu_has_x86_64_v3.cpp)
      if(_h3d_v3_compiled AND _h3d_v3_run EQUAL 0)
        set(HALO3D_HOST_MARCH x86-64-v3)
      endif()
    endif()
  endif()
endif()
if(HALO3D_HOST_MARCH STREQUAL "")
  message(STATUS "halo3d host kernels: the compiler's baseline -march")
else()
  message(STATUS "halo3d host kernels: -march=${HALO3D_HOST_MARCH}")
endif()
