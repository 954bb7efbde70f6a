/**
 * @file detail/exec_check_disable.hpp
 * @brief `RMM_EXEC_CHECK_DISABLE`: silences nvcc's host/device execution-space checks for the
 * function template that follows (RMM's `rmm/detail/exec_check_disable.hpp`).
 *
 * Expands to `#pragma nv_exec_check_disable` only when nvcc compiles CUDA source, and to
 * nothing for every other compiler (g++, clang, hipcc).
 */
#pragma once

#if defined(__CUDACC__) && defined(__NVCC__)
/// @brief Disables nvcc's execution-space check for the next function.
#define RMM_EXEC_CHECK_DISABLE _Pragma("nv_exec_check_disable")
#else
/// @brief Disables nvcc's execution-space check for the next function (no-op here).
#define RMM_EXEC_CHECK_DISABLE
#endif
