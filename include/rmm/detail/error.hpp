/**
 * @file detail/error.hpp
 * @brief Precondition macros `RMM_EXPECTS` and `RMM_FAIL`.
 */
#pragma once

#include <rmm/error.hpp>

#include <string>

/// @cond
#define RMM_STRINGIFY_DETAIL(x) #x
#define RMM_STRINGIFY(x)        RMM_STRINGIFY_DETAIL(x)
#define RMM_LOCATION_PREFIX     "RMM failure at: " __FILE__ ":" RMM_STRINGIFY(__LINE__) ": "
#define RMM_PICK_MACRO(_1, _2, _3, NAME, ...) NAME
#define RMM_EXPECTS_3(cond, reason, exception_type)                                \
  do {                                                                             \
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
#define RMM_EXPECTS(...) RMM_PICK_MACRO(__VA_ARGS__, RMM_EXPECTS_3, RMM_EXPECTS_2, unused)(__VA_ARGS__)

/**
 * @brief Unconditionally throws an exception (default rmm::logic_error).
 *
 * Usage: `RMM_FAIL("unreachable")` or `RMM_FAIL("no memory", rmm::out_of_memory)`.
 */
#define RMM_FAIL(...) RMM_PICK_MACRO(__VA_ARGS__, unused, RMM_FAIL_2, RMM_FAIL_1, unused)(__VA_ARGS__)
