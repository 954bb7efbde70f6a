/**
 * @file runtime_shutdown.hpp
 * @brief `rmm::detail::register_process_exit_hook()` (RMM 26.06's
 * `rmm/detail/runtime_shutdown.hpp`): arms the flag `rmm::process_is_exiting()` reports.
 *
 * Exit hooks run in reverse order of registration, interleaved with the destructors of
 * statics: a static constructed before the hook is registered is destroyed after the hook ran.
 * Code that keeps resources in statics calls this right after constructing them, so that
 * their destructors see the process exiting and skip runtime calls. The hook and its
 * once-per-process guard live in librmm (no state in this header).
 */
#pragma once

#include <rmm/detail/export.hpp>
#include <rmm/process_is_exiting.hpp>
#include <rmm/rmm.h>

#include <cstdio>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace detail {

/**
 * @brief Registers, once per process, the exit hook that sets `rmm::process_is_exiting()`.
 *
 * Later calls do nothing. A failure to register (the C library's exit-hook table is full) is
 * reported on stderr: the flag then is set only by librmm's own hook.
 */
inline void register_process_exit_hook() noexcept
{
  if (!rmm_register_process_exit_hook()) {
    std::fprintf(stderr,
                 "rmm: could not register the process-exit hook (atexit failed); destructors of "
                 "static resources may call the GPU runtime during exit\n");
  }
}

}  // namespace detail
RMM_API_NAMESPACE_END
}  // namespace rmm
