/**
 * @file process_is_exiting.hpp
 * @brief `rmm::process_is_exiting()`: whether the process has begun `exit()` (RMM's
 * `rmm/process_is_exiting.hpp`).
 *
 * Destructors of static objects (for example a resource left set as a per-device resource)
 * may run after `main()` returned, when calling into the GPU runtime is no longer safe. Such
 * destructors can test process_is_exiting() and skip runtime calls.
 *
 * Header-only implementation: the first translation unit that includes this header registers
 * (during static initialization) an `std::atexit` handler setting the flag. atexit handlers and
 * static destructors run in reverse order of registration/construction, so the flag is set
 * before the destruction of every static object constructed after that registration (in
 * particular objects constructed in main() or later). The flag is also set by
 * rmm::detail::mark_process_exiting().
 */
#pragma once

#include <atomic>
#include <cstdlib>

namespace rmm {

namespace detail {

/// @brief The process-wide flag (one instance across translation units: an inline function's
/// static).
inline std::atomic<bool>& process_exiting_flag() noexcept
{
  static std::atomic<bool> flag{false};
  return flag;
}

/// @brief Sets the flag: from now on process_is_exiting() returns true.
inline void mark_process_exiting() noexcept
{
  process_exiting_flag().store(true, std::memory_order_release);
}

/// @brief Registers the atexit handler once per process.
inline bool register_process_exit_handler() noexcept
{
  static bool const registered = [] {
    (void)process_exiting_flag();  // construct the flag before registering the handler
    return std::atexit([] { mark_process_exiting(); }) == 0;
  }();
  return registered;
}

/// @brief Static initialization hook: registers the handler when the program starts.
inline bool const process_exit_handler_registered = register_process_exit_handler();

}  // namespace detail

/**
 * @brief Whether the process has entered `exit()` (atexit handlers / static destructors).
 * @return true once exiting
 */
[[nodiscard]] inline bool process_is_exiting() noexcept
{
  (void)detail::register_process_exit_handler();
  return detail::process_exiting_flag().load(std::memory_order_acquire);
}

}  // namespace rmm
