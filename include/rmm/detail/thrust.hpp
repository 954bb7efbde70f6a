/**
 * @file thrust.hpp
 * @brief Decides whether the Thrust-based headers (device_vector, thrust_allocator,
 * exec_policy) can be offered in this translation unit.
 *
 * Thrust's headers may be installed (Debian's libthrust-dev, CUDA's CCCL, rocThrust) while the
 * compiler cannot use their device system: Thrust's CUDA system needs nvcc or clang in CUDA
 * mode, rocThrust's HIP system needs hipcc/clang in HIP mode. Including them anyway would break
 * code that merely includes every rmm header, so `RMM_DETAIL_HAVE_THRUST` is defined only when
 * the configured device system can be compiled here. Thrust's host device systems (CPP, OMP,
 * TBB: `-DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CPP`) work with any C++17 compiler; with
 * them `device_vector` memory is dereferenced on the host, which suits rmm-rs's host runtime.
 */
#pragma once

#if defined(__has_include)
#if __has_include(<thrust/device_malloc_allocator.h>) && __has_include(<thrust/detail/config.h>)
#include <thrust/detail/config.h>

#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
#if defined(__CUDACC__)
/// @brief Defined when Thrust's headers are usable with the configured device system.
#define RMM_DETAIL_HAVE_THRUST 1
/// @brief Defined when the device system runs on CUDA streams.
#define RMM_DETAIL_THRUST_CUDA 1
#endif
#elif defined(THRUST_DEVICE_SYSTEM_HIP) && THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_HIP
#if defined(__HIP__) || defined(__HIPCC__)
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
