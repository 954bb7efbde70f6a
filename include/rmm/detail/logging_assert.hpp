/**
 * @file detail/logging_assert.hpp
 * @brief `RMM_LOGGING_ASSERT(expr)`: a debug-build assertion that first writes the failed
 * expression to rmm's debug logger (RMM's `rmm/detail/logging_assert.hpp`).
 *
 * With `NDEBUG` defined it expands to `(void)0` and @p expr is not evaluated. Otherwise a
 * false @p expr is logged at critical level as "[file:line] Assertion expr failed.", the
 * logger is flushed, and `assert` fails. When the logger is compiled out
 * (`RMM_LOG_ACTIVE_LEVEL` at `RMM_LOG_LEVEL_OFF`), it is a plain `assert`.
 */
#pragma once

#if !defined(NDEBUG)
#include <rmm/detail/error.hpp>
#include <rmm/logger.hpp>

#include <cassert>
#endif

/// @cond
#if defined(NDEBUG)
#define RMM_DETAIL_LOGGING_ASSERT_MODE 0
#elif defined(RMM_LOG_ACTIVE_LEVEL) && defined(RMM_LOG_LEVEL_OFF)
#if RMM_LOG_ACTIVE_LEVEL < RMM_LOG_LEVEL_OFF
#define RMM_DETAIL_LOGGING_ASSERT_MODE 1
#else
#define RMM_DETAIL_LOGGING_ASSERT_MODE 2
#endif
#else
#define RMM_DETAIL_LOGGING_ASSERT_MODE 1
#endif
/// @endcond

#if RMM_DETAIL_LOGGING_ASSERT_MODE == 0
/// @brief Debug-build assertion that logs before failing (no-op with NDEBUG).
#define RMM_LOGGING_ASSERT(_expr) (void)0
#elif RMM_DETAIL_LOGGING_ASSERT_MODE == 1
#define RMM_LOGGING_ASSERT(_expr)                                                                 \
  do {                                                                                            \
    bool const rmm_logging_assert_ok_ = static_cast<bool>(_expr);                                 \
    if (!rmm_logging_assert_ok_) {                                                                \
      ::rmm::default_logger().critical(                                                           \
        "[" __FILE__ ":" RMM_STRINGIFY(__LINE__) "] Assertion " RMM_STRINGIFY(_expr) " failed."); \
      ::rmm::default_logger().flush();                                                            \
      assert(rmm_logging_assert_ok_);                                                             \
    }                                                                                             \
  } while (0)
#else
#define RMM_LOGGING_ASSERT(_expr) assert((_expr))
#endif
