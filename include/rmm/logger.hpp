/**
 * @file logger.hpp
 * @brief RMM's debug logger: messages of the library itself, written to the file named by
 * `RMM_DEBUG_LOG_FILE` (stderr when unset), with a level settable at run time.
 *
 * The sink lives in the Rust core; this header forwards to it through the C ABI
 * (`rmm_set_debug_log_level`, `rmm_get_debug_log_level`, `rmm_debug_log`). Messages use
 * printf-style formats, as RMM 25.02's (rapids-logger) macros do.
 */
#pragma once

#include <rmm/detail/check.hpp>
#include <rmm/rmm.h>

#include <cstdio>
#include <utility>
#include <string>
#include <vector>

namespace rmm {

/**
 * @brief Severity levels (numbered as RMM's / rapids-logger's `level_enum`).
 */
enum class level_enum : int {
  trace    = 0,  ///< Everything
  debug    = 1,  ///< Debugging detail
  info     = 2,  ///< Informational messages (the default)
  warn     = 3,  ///< Warnings
  error    = 4,  ///< Errors
  critical = 5,  ///< Critical errors
  off      = 6,  ///< Nothing
  n_levels = 7   ///< Number of levels
};

/**
 * @brief Handle to the process's debug logger (all instances share one sink and level).
 */
class logger {
 public:
  /**
   * @brief Sets the level below which messages are dropped.
   * @param lvl The level
   */
  void set_level(level_enum lvl) { rmm::detail::check(rmm_set_debug_log_level(static_cast<int>(lvl))); }

  /**
   * @brief The current level.
   * @return The level
   */
  [[nodiscard]] level_enum level() const
  {
    int lvl = 0;
    rmm::detail::check(rmm_get_debug_log_level(&lvl));
    return static_cast<level_enum>(lvl);
  }

  /**
   * @brief True when a message of @p lvl would be written.
   * @param lvl The level
   * @return Whether it is enabled
   */
  [[nodiscard]] bool should_log(level_enum lvl) const
  {
    return lvl != level_enum::off && static_cast<int>(lvl) >= static_cast<int>(level());
  }

  /**
   * @brief Writes buffered messages out.
   */
  void flush() { rmm::detail::check(rmm_debug_log_flush()); }

  /**
   * @brief Writes a message (printf-style format) at @p lvl.
   * @param lvl The level
   * @param format printf-style format, or the message itself when no arguments follow
   * @param args The arguments
   */
  template <typename... Args>
  void log(level_enum lvl, char const* format, Args&&... args)
  {
    if (!should_log(lvl)) { return; }
    if constexpr (sizeof...(Args) == 0) {
      rmm::detail::check(rmm_debug_log(static_cast<int>(lvl), format));
    } else {
      int const n = std::snprintf(nullptr, 0, format, args...);
      if (n < 0) { return; }
      std::vector<char> buf(static_cast<std::size_t>(n) + 1);
      (void)std::snprintf(buf.data(), buf.size(), format, args...);
      rmm::detail::check(rmm_debug_log(static_cast<int>(lvl), buf.data()));
    }
  }

  /**
   * @brief Writes @p msg at @p lvl.
   * @param lvl The level
   * @param msg The message
   */
  void log(level_enum lvl, std::string const& msg) { log(lvl, msg.c_str()); }

  /// @brief Writes at trace level. @param args format and arguments, as for log()
  template <typename... Args>
  void trace(Args&&... args) { log(level_enum::trace, std::forward<Args>(args)...); }
  /// @brief Writes at debug level. @param args format and arguments, as for log()
  template <typename... Args>
  void debug(Args&&... args) { log(level_enum::debug, std::forward<Args>(args)...); }
  /// @brief Writes at info level. @param args format and arguments, as for log()
  template <typename... Args>
  void info(Args&&... args) { log(level_enum::info, std::forward<Args>(args)...); }
  /// @brief Writes at warn level. @param args format and arguments, as for log()
  template <typename... Args>
  void warn(Args&&... args) { log(level_enum::warn, std::forward<Args>(args)...); }
  /// @brief Writes at error level. @param args format and arguments, as for log()
  template <typename... Args>
  void error(Args&&... args) { log(level_enum::error, std::forward<Args>(args)...); }
  /// @brief Writes at critical level. @param args format and arguments, as for log()
  template <typename... Args>
  void critical(Args&&... args) { log(level_enum::critical, std::forward<Args>(args)...); }
};

/**
 * @brief The debug logger (RMM's `rmm::default_logger()`).
 * @return The logger
 */
inline logger& default_logger()
{
  static logger instance{};
  return instance;
}

}  // namespace rmm

/// @brief Logs at trace level: `RMM_LOG_TRACE("grew to %zu", n)`.
#define RMM_LOG_TRACE(...) ::rmm::default_logger().trace(__VA_ARGS__)
/// @brief Logs at debug level.
#define RMM_LOG_DEBUG(...) ::rmm::default_logger().debug(__VA_ARGS__)
/// @brief Logs at info level.
#define RMM_LOG_INFO(...) ::rmm::default_logger().info(__VA_ARGS__)
/// @brief Logs at warn level.
#define RMM_LOG_WARN(...) ::rmm::default_logger().warn(__VA_ARGS__)
/// @brief Logs at error level.
#define RMM_LOG_ERROR(...) ::rmm::default_logger().error(__VA_ARGS__)
/// @brief Logs at critical level.
#define RMM_LOG_CRITICAL(...) ::rmm::default_logger().critical(__VA_ARGS__)
