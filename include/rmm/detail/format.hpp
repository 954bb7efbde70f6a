/**
 * @file detail/format.hpp
 * @brief String helpers used in log messages (RMM's `rmm/detail/format.hpp`):
 * `format_bytes`, `format_stream`, and `formatted_log` (printf-style, RMM 24.12).
 */
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>

#include <array>
#include <cstddef>
#include <cstdio>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace RMM_EXPORT rmm {
RMM_API_NAMESPACE_BEGIN
namespace detail {

/// @cond
template <typename Arg>
decltype(auto) printf_argument(Arg&& arg)
{
  if constexpr (std::is_same_v<std::decay_t<Arg>, std::string>) {
    return arg.c_str();
  } else {
    return std::forward<Arg>(arg);
  }
}
/// @endcond

/**
 * @brief Formats @p format with @p args the way `printf` does (a `std::string` argument is
 * passed as its C string) and returns the result.
 *
 * @param format printf-style format
 * @param args Its arguments
 * @return The formatted text
 * @throws rmm::logic_error when formatting fails
 */
template <typename... Args>
std::string formatted_log(std::string const& format, Args&&... args)
{
  if constexpr (sizeof...(Args) == 0) {
    return format;
  } else {
    int const length = std::snprintf(nullptr, 0, format.c_str(), printf_argument(args)...);
    RMM_EXPECTS(length >= 0, "Error during formatting.");
    if (length == 0) { return {}; }
    std::vector<char> buffer(static_cast<std::size_t>(length) + 1);
    (void)std::snprintf(buffer.data(), buffer.size(), format.c_str(), printf_argument(args)...);
    return std::string{buffer.data(), static_cast<std::size_t>(length)};
  }
}

/**
 * @brief A byte count in human-readable form, e.g. `format_bytes(1536)` is "1.500000 KiB".
 *
 * The value is divided by 1024 while it exceeds 1024, then printed with `std::to_string`
 * and the unit (B, KiB, MiB, GiB, TiB, PiB, EiB, ZiB, YiB).
 *
 * @param value Bytes
 * @return The text
 */
inline std::string format_bytes(std::size_t value)
{
  static constexpr std::array<char const*, 9> units{
    "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
  auto scaled      = static_cast<double>(value);
  std::size_t unit = 0;
  while (scaled > 1024 && unit + 1 < units.size()) {
    scaled /= 1024;
    ++unit;
  }
  return std::to_string(scaled) + ' ' + units.at(unit);
}

/**
 * @brief The stream's handle as a hexadecimal number (as used in RMM's log lines).
 * @param stream The stream
 * @return The text, e.g. "0x7f12..." (or "0" for the default stream)
 */
#if RMM_DETAIL_API_STREAM_REF
inline std::string format_stream(::cuda::stream_ref stream)
{
  std::stringstream out{};
  out << std::hex << static_cast<void const*>(stream.get());
  return out.str();
}
#else
inline std::string format_stream(rmm::cuda_stream_view stream)
{
  std::stringstream out{};
  out << std::hex << static_cast<void const*>(stream.value());
  return out.str();
}
#endif

}  // namespace detail
RMM_API_NAMESPACE_END
}  // namespace rmm
