/**
 * @file detail/error.hpp
 * @brief Precondition macros `RMM_EXPECTS` and `RMM_FAIL`, and the runtime error macros
 * `RMM_CUDA_TRY`, `RMM_CUDA_TRY_ALLOC` and `RMM_ASSERT_CUDA_SUCCESS`.
 *
 * The runtime macros check the return value of a HIP call (`hipError_t`, when compiling for
 * AMD's HIP platform with HIP's runtime header found) or of a CUDA call (`cudaError_t`, when
 * CUDA's is), the selection of rmm/detail/runtime_select.h. When
 * neither header is found (or `RMM_FORCE_OPAQUE_STREAM` is defined) they are not defined:
 * code using only `RMM_EXPECTS`/`RMM_FAIL` still compiles. `RMM_HAS_RUNTIME_ERROR_MACROS` is
 * defined to 1 when they are available. Code using them calls the runtime's error functions
 * (`hipGetErrorName`, ...) and so links the runtime library, as with hipMM.
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/error.hpp>

#include <cassert>
#include <cstddef>
#include <cstdio>
#include <string>
#include <iostream>

#include <rmm/detail/runtime_select.h>

#if defined(RMM_FORCE_OPAQUE_STREAM)
#elif defined(RMM_DETAIL_RUNTIME_HIP)
#define RMM_DETAIL_ERROR_HIP 1
#elif defined(RMM_DETAIL_RUNTIME_CUDA)
#define RMM_DETAIL_ERROR_CUDA 1
#endif

#if defined(RMM_DETAIL_ERROR_HIP) || defined(RMM_DETAIL_ERROR_CUDA)
// The runtime's header: CUDA's own with CUDA; HIP's with CUDA's names for it on HIP.
#include <rmm/cuda_runtime_api.h>
#endif

/// @cond
#define RMM_STRINGIFY_DETAIL(x)               #x
#define RMM_STRINGIFY(x)                      RMM_STRINGIFY_DETAIL(x)
#define RMM_LOCATION_PREFIX                   "RMM failure at: " __FILE__ ":" RMM_STRINGIFY(__LINE__) ": "
#define RMM_PICK_MACRO(_1, _2, _3, NAME, ...) NAME
// RMM's own names of the stringify helper and the argument-count pickers.
#ifndef STRINGIFY_DETAIL
#define STRINGIFY_DETAIL(x) #x
#endif
#define GET_RMM_EXPECTS_MACRO(_1, _2, _3, NAME, ...) NAME
#define GET_RMM_FAIL_MACRO(_1, _2, NAME, ...)        NAME
#define GET_RMM_CUDA_TRY_MACRO(_1, _2, NAME, ...)    NAME
#define RMM_EXPECTS_3(cond, reason, exception_type)                                     \
  do {                                                                                  \
    if (!(cond)) { throw exception_type{std::string{RMM_LOCATION_PREFIX} + (reason)}; } \
  } while (0)
#define RMM_EXPECTS_2(cond, reason) RMM_EXPECTS_3(cond, reason, ::rmm::logic_error)
#define RMM_FAIL_2(reason, exception_type) \
  throw exception_type { std::string{RMM_LOCATION_PREFIX} + (reason) }
#define RMM_FAIL_1(reason) RMM_FAIL_2(reason, ::rmm::logic_error)
/// @endcond

/**
 * @brief Throws an exception (default rmm::logic_error) when @p cond is false.
 *
 * Usage: `RMM_EXPECTS(p != nullptr, "null pointer")` or
 * `RMM_EXPECTS(bytes <= limit, "too big", rmm::out_of_memory)`.
 * The message is prefixed with the file and line.
 */
#define RMM_EXPECTS(...) \
  RMM_PICK_MACRO(__VA_ARGS__, RMM_EXPECTS_3, RMM_EXPECTS_2, unused)(__VA_ARGS__)

/**
 * @brief Unconditionally throws an exception (default rmm::logic_error).
 *
 * Usage: `RMM_FAIL("unreachable")` or `RMM_FAIL("no memory", rmm::out_of_memory)`.
 */
#define RMM_FAIL(...) \
  RMM_PICK_MACRO(__VA_ARGS__, unused, RMM_FAIL_2, RMM_FAIL_1, unused)(__VA_ARGS__)

#if defined(RMM_DETAIL_ERROR_HIP) || defined(RMM_DETAIL_ERROR_CUDA)

/// @brief Defined to 1: RMM_CUDA_TRY, RMM_CUDA_TRY_ALLOC and RMM_ASSERT_CUDA_SUCCESS exist.
#define RMM_HAS_RUNTIME_ERROR_MACROS 1

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace detail {

#if defined(RMM_DETAIL_ERROR_HIP)
/// @brief The runtime's error type (hipError_t).
using runtime_error_t = hipError_t;
/// @brief The runtime's success value.
inline constexpr runtime_error_t runtime_success = hipSuccess;
/// @brief The runtime's out-of-memory error.
inline constexpr runtime_error_t runtime_out_of_memory = hipErrorOutOfMemory;
/// @brief The name of @p e (e.g. "hipErrorOutOfMemory").
inline std::string runtime_error_name(runtime_error_t e) { return hipGetErrorName(e); }
/// @brief The description of @p e.
inline std::string runtime_error_string(runtime_error_t e) { return hipGetErrorString(e); }
/// @brief Clears the runtime's sticky last error.
inline void clear_runtime_last_error() noexcept { (void)hipGetLastError(); }
/// @brief The error a runtime call returns once the runtime is being torn down at exit.
inline constexpr runtime_error_t runtime_unloading = hipErrorDeinitialized;
#else
/// @brief The runtime's error type (cudaError_t).
using runtime_error_t = cudaError_t;
/// @brief The runtime's success value.
inline constexpr runtime_error_t runtime_success = cudaSuccess;
/// @brief The runtime's out-of-memory error.
inline constexpr runtime_error_t runtime_out_of_memory = cudaErrorMemoryAllocation;
/// @brief The name of @p e (e.g. "cudaErrorMemoryAllocation").
inline std::string runtime_error_name(runtime_error_t e) { return cudaGetErrorName(e); }
/// @brief The description of @p e.
inline std::string runtime_error_string(runtime_error_t e) { return cudaGetErrorString(e); }
/// @brief Clears the runtime's sticky last error.
inline void clear_runtime_last_error() noexcept { (void)cudaGetLastError(); }
/// @brief The error a runtime call returns once the runtime is being torn down at exit.
inline constexpr runtime_error_t runtime_unloading = cudaErrorCudartUnloading;
#endif

/**
 * @brief "CUDA error at: file:line: name description" (hipMM's wording).
 * @param prefix Text before " at: " (e.g. "CUDA error")
 * @param location "file:line"
 * @param e The error
 * @return The message
 */
inline std::string runtime_error_message(char const* prefix,
                                         char const* location,
                                         runtime_error_t e)
{
  return std::string{prefix} + " at: " + location + ": " + runtime_error_name(e) + " " +
         runtime_error_string(e);
}

/**
 * @brief The message of a failed allocation: "CUDA error (failed to allocate N bytes) at:
 * file:line: name description", or without the size when @p bytes is not known.
 */
inline std::string runtime_alloc_error_message(char const* location,
                                               runtime_error_t e,
                                               bool has_size,
                                               std::size_t bytes)
{
  if (!has_size) { return runtime_error_message("CUDA error", location, e); }
  std::string prefix = "CUDA error (failed to allocate " + std::to_string(bytes) + " bytes)";
  return runtime_error_message(prefix.c_str(), location, e);
}

/**
 * @brief Throws rmm::out_of_memory ("out_of_memory: " + message) for the runtime's
 * out-of-memory error and rmm::bad_alloc for any other error.
 */
[[noreturn]] inline void throw_runtime_alloc_error(char const* location,
                                                   runtime_error_t e,
                                                   bool has_size,
                                                   std::size_t bytes)
{
  clear_runtime_last_error();
  std::string msg = runtime_alloc_error_message(location, e, has_size, bytes);
  if (e == runtime_out_of_memory) { throw rmm::out_of_memory{"out_of_memory: " + msg}; }
  throw rmm::bad_alloc{msg};
}

}  // namespace detail
RMM_API_NAMESPACE_END
}  // namespace rmm

/// @cond
#define RMM_DETAIL_LOCATION __FILE__ ":" RMM_STRINGIFY(__LINE__)
#define RMM_CUDA_TRY_2(_call, _exception_type)                           \
  do {                                                                   \
    ::rmm::detail::runtime_error_t const rmm_cuda_try_status_ = (_call); \
    if (rmm_cuda_try_status_ != ::rmm::detail::runtime_success) {        \
      ::rmm::detail::clear_runtime_last_error();                         \
      throw _exception_type{::rmm::detail::runtime_error_message(        \
        "CUDA error", RMM_DETAIL_LOCATION, rmm_cuda_try_status_)};       \
    }                                                                    \
  } while (0)
#define RMM_CUDA_TRY_1(_call) RMM_CUDA_TRY_2(_call, ::rmm::cuda_error)
#define RMM_CUDA_TRY_ALLOC_2(_call, _num_bytes)                                                 \
  do {                                                                                          \
    ::rmm::detail::runtime_error_t const rmm_cuda_try_status_ = (_call);                        \
    if (rmm_cuda_try_status_ != ::rmm::detail::runtime_success) {                               \
      ::rmm::detail::throw_runtime_alloc_error(                                                 \
        RMM_DETAIL_LOCATION, rmm_cuda_try_status_, true, static_cast<std::size_t>(_num_bytes)); \
    }                                                                                           \
  } while (0)
#define RMM_CUDA_TRY_ALLOC_1(_call)                                      \
  do {                                                                   \
    ::rmm::detail::runtime_error_t const rmm_cuda_try_status_ = (_call); \
    if (rmm_cuda_try_status_ != ::rmm::detail::runtime_success) {        \
      ::rmm::detail::throw_runtime_alloc_error(                          \
        RMM_DETAIL_LOCATION, rmm_cuda_try_status_, false, 0);            \
    }                                                                    \
  } while (0)
/// @endcond

/**
 * @brief Checks a HIP/CUDA runtime call; on error clears the runtime's last error and throws
 * (default rmm::cuda_error) "CUDA error at: file:line: name description".
 *
 * Usage: `RMM_CUDA_TRY(hipMemsetAsync(p, 0, n, s))` or
 * `RMM_CUDA_TRY(call, rmm::logic_error)`.
 */
#define RMM_CUDA_TRY(...) \
  RMM_PICK_MACRO(__VA_ARGS__, unused, RMM_CUDA_TRY_2, RMM_CUDA_TRY_1, unused)(__VA_ARGS__)

/**
 * @brief Checks a HIP/CUDA allocation call: the runtime's out-of-memory error throws
 * rmm::out_of_memory ("out_of_memory: CUDA error (failed to allocate N bytes) at: ..."), any
 * other error rmm::bad_alloc.
 *
 * Usage: `RMM_CUDA_TRY_ALLOC(hipMalloc(&p, bytes), bytes)`; the older one-argument form
 * (without the size) is accepted too.
 */
#define RMM_CUDA_TRY_ALLOC(...)                                                           \
  RMM_PICK_MACRO(__VA_ARGS__, unused, RMM_CUDA_TRY_ALLOC_2, RMM_CUDA_TRY_ALLOC_1, unused) \
  (__VA_ARGS__)

#if defined(NDEBUG)
/**
 * @brief Calls @p _call; in debug builds (NDEBUG undefined) also prints the error and asserts
 * that it succeeded. For noexcept contexts such as destructors.
 */
#define RMM_ASSERT_CUDA_SUCCESS(_call) \
  do {                                 \
    (void)(_call);                     \
  } while (0)
#else
#define RMM_ASSERT_CUDA_SUCCESS(_call)                                               \
  do {                                                                               \
    ::rmm::detail::runtime_error_t const rmm_assert_status_ = (_call);               \
    if (rmm_assert_status_ != ::rmm::detail::runtime_success) {                      \
      std::fprintf(stderr,                                                           \
                   "CUDA Error detected. %s %s\n",                                   \
                   ::rmm::detail::runtime_error_name(rmm_assert_status_).c_str(),    \
                   ::rmm::detail::runtime_error_string(rmm_assert_status_).c_str()); \
    }                                                                                \
    assert(rmm_assert_status_ == ::rmm::detail::runtime_success);                    \
  } while (0)
#endif

#if RMM_DETAIL_API_SAFE_SHUTDOWN_ASSERT
#if defined(NDEBUG)
/**
 * @brief Like RMM_ASSERT_CUDA_SUCCESS, but the runtime's "unloading" error is accepted too:
 * for destructors that may run while the process exits, after the runtime began its teardown
 * (RMM 26.06).
 */
#define RMM_ASSERT_CUDA_SUCCESS_SAFE_SHUTDOWN(_call) \
  do {                                               \
    (void)(_call);                                   \
  } while (0)
#else
#define RMM_ASSERT_CUDA_SUCCESS_SAFE_SHUTDOWN(_call)                                 \
  do {                                                                               \
    ::rmm::detail::runtime_error_t const rmm_assert_status_ = (_call);               \
    if (rmm_assert_status_ != ::rmm::detail::runtime_success &&                      \
        rmm_assert_status_ != ::rmm::detail::runtime_unloading) {                    \
      std::fprintf(stderr,                                                           \
                   "CUDA Error detected. %s %s\n",                                   \
                   ::rmm::detail::runtime_error_name(rmm_assert_status_).c_str(),    \
                   ::rmm::detail::runtime_error_string(rmm_assert_status_).c_str()); \
    }                                                                                \
    assert(rmm_assert_status_ == ::rmm::detail::runtime_success ||                   \
           rmm_assert_status_ == ::rmm::detail::runtime_unloading);                  \
  } while (0)
#endif
#endif

#endif  // runtime headers
