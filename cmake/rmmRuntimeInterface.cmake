# What RMM's rmm::rmm target gives its users besides rmm's own headers, and so ours too:
#  - LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE, so that `cuda::mr` (CCCL up to 3.0,
#    libhipcxx) is usable after including rmm headers;
#  - the GPU runtime and CCCL when they are installed: CUDA::cudart (plus CUDA 13's
#    include/cccl directory, where CCCL moved) or hip::host. RMM programs call
#    cudaMalloc, use cudaStream_t and include <cuda/memory_resource> without naming them.
# librmm.so itself loads the runtime at run time and needs none of this.
# Set RMM_NO_GPU_RUNTIME_INTERFACE to skip the runtime search (host-only consumers).
function(rmm_add_runtime_interface target)
  target_compile_definitions(${target} INTERFACE LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE)
  if(RMM_NO_GPU_RUNTIME_INTERFACE)
    return()
  endif()
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND AND TARGET CUDA::cudart)
    target_link_libraries(${target} INTERFACE CUDA::cudart)
    foreach(dir IN LISTS CUDAToolkit_INCLUDE_DIRS)
      if(EXISTS "${dir}/cccl/cuda/memory_resource")
        target_include_directories(${target} SYSTEM INTERFACE "${dir}/cccl")
      endif()
    endforeach()
    return()
  endif()
  # HIP's package is looked for only beside a hipcc: Debian's hip-config.cmake
  # (libamdhip64-dev) stops the whole configure with an error, QUIET or not, when hipcc is
  # not installed with it, and a program that only has HIP's headers needs none of this.
  find_program(RMM_HIPCC hipcc HINTS "$ENV{ROCM_PATH}/bin" "$ENV{HIP_PATH}/bin" /opt/rocm/bin)
  mark_as_advanced(RMM_HIPCC)
  if(NOT RMM_HIPCC)
    return()
  endif()
  find_package(hip QUIET CONFIG HINTS "$ENV{ROCM_PATH}" "$ENV{HIP_PATH}" /opt/rocm)
  if(hip_FOUND AND TARGET hip::host)
    target_link_libraries(${target} INTERFACE hip::host)
  endif()
endfunction()

# find_package(rmm <major>.<minor>): the translation units of the target's users compile
# against that RMM release's C++ API (RMM_API_VERSION=<YYMM>, see rmm/version_config.hpp).
function(rmm_add_api_version target major minor)
  if("${major}" STREQUAL "")
    return()
  endif()
  math(EXPR yymm "${major} * 100 + ${minor}")
  target_compile_definitions(${target} INTERFACE RMM_API_VERSION=${yymm})
  # RMM 26.08 raised its C++ floor to C++20.
  if(yymm GREATER_EQUAL 2608)
    set_property(TARGET ${target} APPEND PROPERTY INTERFACE_COMPILE_FEATURES cxx_std_20)
  endif()
endfunction()
