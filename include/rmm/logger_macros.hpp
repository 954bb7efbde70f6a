/**
 * @file logger_macros.hpp
 * @brief The `RMM_LOG_*` macros (RMM 26.10's `rmm/logger_macros.hpp`; rmm/logger.hpp
 * includes them, as earlier releases' rmm/logger.hpp defined them).
 *
 * `RMM_LOG_ACTIVE_LEVEL` filters at compile time: levels below it compile to nothing.
 */
#pragma once

#include <rmm/logger.hpp>

// Compile-time filter of the RMM_LOG_* macros: levels below it compile to nothing.
#if !defined(RMM_LOG_ACTIVE_LEVEL)
#define RMM_LOG_ACTIVE_LEVEL RMM_LOG_LEVEL_INFO
#endif

/// @brief Logs through @p logger at @p level (printf-style arguments).
#define RMM_LOGGER_CALL(logger, level, ...) (logger).log(level, __VA_ARGS__)

#if RMM_LOG_ACTIVE_LEVEL <= RMM_LOG_LEVEL_TRACE
#define RMM_LOG_TRACE(...) \
  RMM_LOGGER_CALL(rmm::default_logger(), rmm::level_enum::trace, __VA_ARGS__)
#else
#define RMM_LOG_TRACE(...) (void)0
#endif

#if RMM_LOG_ACTIVE_LEVEL <= RMM_LOG_LEVEL_DEBUG
#define RMM_LOG_DEBUG(...) \
  RMM_LOGGER_CALL(rmm::default_logger(), rmm::level_enum::debug, __VA_ARGS__)
#else
#define RMM_LOG_DEBUG(...) (void)0
#endif

#if RMM_LOG_ACTIVE_LEVEL <= RMM_LOG_LEVEL_INFO
#define RMM_LOG_INFO(...) RMM_LOGGER_CALL(rmm::default_logger(), rmm::level_enum::info, __VA_ARGS__)
#else
#define RMM_LOG_INFO(...) (void)0
#endif

#if RMM_LOG_ACTIVE_LEVEL <= RMM_LOG_LEVEL_WARN
#define RMM_LOG_WARN(...) RMM_LOGGER_CALL(rmm::default_logger(), rmm::level_enum::warn, __VA_ARGS__)
#else
#define RMM_LOG_WARN(...) (void)0
#endif

#if RMM_LOG_ACTIVE_LEVEL <= RMM_LOG_LEVEL_ERROR
#define RMM_LOG_ERROR(...) \
  RMM_LOGGER_CALL(rmm::default_logger(), rmm::level_enum::error, __VA_ARGS__)
#else
#define RMM_LOG_ERROR(...) (void)0
#endif

#if RMM_LOG_ACTIVE_LEVEL <= RMM_LOG_LEVEL_CRITICAL
#define RMM_LOG_CRITICAL(...) \
  RMM_LOGGER_CALL(rmm::default_logger(), rmm::level_enum::critical, __VA_ARGS__)
#else
#define RMM_LOG_CRITICAL(...) (void)0
#endif
