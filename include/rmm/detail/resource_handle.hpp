/**
 * @file detail/resource_handle.hpp
 * @brief How every generation's resource classes use librmm's resource handles
 * (`rmm_resource_t`): the tag of the constructors that take a handle over, the call of a C ABI
 * constructor, and the translation of C++ exceptions into statuses for the callbacks through
 * which librmm reaches a C++ resource.
 */
#pragma once

#include <rmm/detail/check.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/error.hpp>
#include <rmm/rmm.h>

#include <exception>
#include <new>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief Tag selecting the constructors that take over an existing reference to a handle.
 */
struct adopt_handle_t {
  /// @brief Explicit so that `{}` does not select an adopting constructor by accident.
  explicit adopt_handle_t() = default;
};

/// @brief The adopt_handle_t value.
inline constexpr adopt_handle_t adopt_handle{};

/**
 * @brief Calls a C ABI constructor whose last parameter receives the new handle.
 * @param create The constructor
 * @param args Its arguments before the out-pointer
 * @return A handle owning one reference
 * @throws the exception matching the failing status
 */
template <typename Create, typename... Args>
rmm_resource_t make_handle(Create create, Args... args)
{
  rmm_resource_t handle = nullptr;
  rmm::detail::check(create(args..., &handle));
  return handle;
}

/**
 * @brief Runs @p fn, turning any exception into a status and the error message of the
 * callback resource (exceptions never cross the C ABI).
 * @param fn The callable
 * @param unknown The message for an exception that is not a std::exception
 * @return RMM_STATUS_SUCCESS, or the status matching the exception thrown
 */
template <typename Fn>
rmm_status_t translate_exceptions(
  Fn&& fn, char const* unknown = "unknown C++ exception thrown by a memory resource") noexcept
{
  try {
    fn();
    return RMM_STATUS_SUCCESS;
  } catch (rmm::out_of_memory const& e) {
    rmm_callback_set_error_message(e.what());
    return RMM_STATUS_OUT_OF_MEMORY;
  } catch (std::bad_alloc const& e) {
    rmm_callback_set_error_message(e.what());
    return RMM_STATUS_BAD_ALLOC;
  } catch (std::exception const& e) {
    rmm_callback_set_error_message(e.what());
    return RMM_STATUS_CALLBACK_FAILED;
  } catch (...) {
    rmm_callback_set_error_message(unknown);
    return RMM_STATUS_CALLBACK_FAILED;
  }
}

}  // namespace detail
}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
