/**
 * @file thrust.hpp
 * @brief Decides whether the Thrust-based headers (device_vector, thrust_allocator,
 * exec_policy) are offered in this translation unit.
 *
 * As with RAPIDS RMM and hipMM, they are offered whenever Thrust is on the include path, with
 * any compiler (RMM's own exec_policy.cpp is compiled by the host C++ compiler): the types,
 * the policies' construction and the allocator's allocate/deallocate need no device compiler.
 * Running an algorithm with Thrust's CUDA or HIP device system does: Thrust defines those
 * systems' algorithms only for nvcc (clang in CUDA mode) or hipcc, so a host-compiled unit
 * passes the policy on, or runs algorithms with a host system.
 *
 * `RMM_DETAIL_HAVE_THRUST` is defined when Thrust's configured device system can be included
 * here:
 * - CUDA's (CCCL's Thrust, Debian's libthrust-dev): with CUDA's runtime header, the runtime
 *   these headers build on (rmm/detail/runtime_select.h). Thrust's CUDA system includes it,
 *   and its streams are `cudaStream_t`.
 * - HIP's (rocThrust): with HIP's runtime header on AMD's platform, likewise.
 * - A host system (CPP, OMP, TBB: `-DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CPP`): always;
 *   algorithms then run on the host, and `device_vector` memory is dereferenced on the host,
 *   which suits rmm-rs's host runtime.
 * With Thrust's CUDA system but HIP's runtime (or none), and the reverse, the headers define
 * nothing: code that merely includes every rmm header still compiles.
 */
#pragma once

#if defined(__has_include)
#if __has_include(<thrust/device_malloc_allocator.h>) && __has_include(<thrust/detail/config.h>)
#include <rmm/detail/runtime_select.h>

#include <thrust/detail/config.h>

#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
#if defined(RMM_DETAIL_RUNTIME_CUDA)
/// @brief Defined when Thrust's headers are usable with the configured device system.
#define RMM_DETAIL_HAVE_THRUST 1
/// @brief Defined when the device system runs on CUDA streams.
#define RMM_DETAIL_THRUST_CUDA 1
#endif
#elif defined(THRUST_DEVICE_SYSTEM_HIP) && THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_HIP
#if defined(RMM_DETAIL_RUNTIME_HIP)
#define RMM_DETAIL_HAVE_THRUST 1
/// @brief Defined when the device system runs on HIP streams.
#define RMM_DETAIL_THRUST_HIP  1
#endif
#else
#define RMM_DETAIL_HAVE_THRUST 1
/// @brief Defined when the device system runs on the host (CPP, OMP or TBB).
#define RMM_DETAIL_THRUST_HOST 1
#endif

#endif
#endif
