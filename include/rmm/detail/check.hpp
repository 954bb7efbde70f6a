/**
 * @file detail/check.hpp
 * @brief Conversion of C ABI status codes (`rmm_status_t`) into rmm exceptions.
 *
 * Mapping (the one place it is defined for the C++ wrapper):
 * | status | exception |
 * | --- | --- |
 * | `RMM_STATUS_INVALID_ARGUMENT`, `RMM_STATUS_UNSUPPORTED`, `RMM_STATUS_PANIC` | rmm::logic_error
 * | | `RMM_STATUS_OUT_OF_MEMORY` | rmm::out_of_memory | | `RMM_STATUS_BAD_ALLOC`,
 * `RMM_STATUS_CALLBACK_FAILED` | rmm::bad_alloc | | `RMM_STATUS_RUNTIME_ERROR`,
 * `RMM_STATUS_NO_RUNTIME` | rmm::cuda_error |
 *
 * The exception message is this thread's `rmm_last_error_message()` (falling back to
 * `rmm_status_string()` when the library recorded no message).
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/error.hpp>
#include <rmm/rmm.h>

#include <string>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace detail {

/**
 * @brief The message describing the last failure on this thread, or the generic text of
 * @p status when none was recorded.
 * @param status The failing status
 * @return The message
 */
inline std::string status_message(rmm_status_t status)
{
  const char* msg = rmm_last_error_message();
  if (msg != nullptr && msg[0] != '\0') { return std::string{msg}; }
  const char* generic = rmm_status_string(status);
  return std::string{generic != nullptr ? generic : "unknown rmm status"};
}

/**
 * @brief Throws the rmm exception matching @p status (a failure).
 *
 * Kept out of line and marked cold, so that `check()` on the allocation path is a compare
 * and a branch that the compiler inlines into its caller.
 * @param status A failing status returned by a function of the C ABI
 * @throws rmm::logic_error, rmm::out_of_memory, rmm::bad_alloc or rmm::cuda_error
 */
#if defined(__GNUC__)
#define RMMRS_DETAIL_COLD [[gnu::noinline, gnu::cold]]
#else
#define RMMRS_DETAIL_COLD
#endif
[[noreturn]] RMMRS_DETAIL_COLD inline void throw_status(rmm_status_t status)
{
  switch (status) {
    // RMM's messages name the kind first ("out_of_memory: ..."); code searches what() for it.
    case RMM_STATUS_OUT_OF_MEMORY:
      throw rmm::out_of_memory{"out_of_memory: " + status_message(status)};
    case RMM_STATUS_BAD_ALLOC:
    case RMM_STATUS_CALLBACK_FAILED:
      throw rmm::bad_alloc{status_message(status)};
    case RMM_STATUS_RUNTIME_ERROR:
    case RMM_STATUS_NO_RUNTIME:
      throw rmm::cuda_error{status_message(status)};
    case RMM_STATUS_SUCCESS:  // not a failure: a caller's mistake, reported as one
    case RMM_STATUS_INVALID_ARGUMENT:
    case RMM_STATUS_UNSUPPORTED:
    case RMM_STATUS_PANIC:
    default:
      throw rmm::logic_error{status_message(status)};
  }
}

#undef RMMRS_DETAIL_COLD

/**
 * @brief Throws the rmm exception matching @p status; returns normally on success.
 * @param status A status returned by a function of the C ABI
 * @throws rmm::logic_error, rmm::out_of_memory, rmm::bad_alloc or rmm::cuda_error
 */
inline void check(rmm_status_t status)
{
  if (status != RMM_STATUS_SUCCESS) { throw_status(status); }
}

}  // namespace detail
RMM_API_NAMESPACE_END
}  // namespace rmm
