/**
 * @file process_is_exiting.hpp
 * @brief `rmm::process_is_exiting()`: whether the process has begun `exit()` (RMM's
 * `rmm/process_is_exiting.hpp`).
 *
 * Destructors of static objects (for example a resource left set as a per-device resource)
 * may run after `main()` returned, when calling into the GPU runtime is no longer safe. Such
 * destructors can test process_is_exiting() and skip runtime calls.
 *
 * The flag lives in librmm (set by an `atexit` hook registered right after the GPU runtime is
 * loaded, so it runs before the runtime's own teardown), so C, C++ and Rust agree on it and
 * no state lives in this header.
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/rmm.h>

namespace rmm {
RMM_API_NAMESPACE_BEGIN

/**
 * @brief Whether the process has entered `exit()` (atexit handlers / static destructors).
 * @return true once exiting
 */
[[nodiscard]] inline bool process_is_exiting() noexcept { return rmm_process_is_exiting(); }

RMM_API_NAMESPACE_END
}  // namespace rmm
