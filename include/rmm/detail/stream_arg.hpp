/**
 * @file detail/stream_arg.hpp
 * @brief The type in which the generation's APIs take and return a stream: `cuda_stream_view`
 * up to RMM 26.08, `cuda::stream_ref` from RMM 26.10 (knob RMM_DETAIL_API_STREAM_REF).
 *
 * Shared headers (the stream pool, prefetch, the callback types, the allocators, the
 * containers' policy) write their stream parameters as `detail::stream_arg` and reach the
 * handle through `detail::raw_stream`, so one declaration serves every generation and none of
 * them names the class 26.10 deprecated.
 */
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/rmm.h>

#include <cstdio>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace detail {

#if RMM_DETAIL_API_STREAM_REF
/// @brief The generation's stream parameter type.
using stream_arg = ::cuda::stream_ref;

/// @brief The handle @p stream names. @param stream The stream @return Its handle
constexpr stream_type raw_stream(::cuda::stream_ref stream) noexcept { return stream.get(); }

/// @brief The default (null) stream in the generation's stream type. @return It
constexpr ::cuda::stream_ref default_stream_arg() noexcept
{
  return ::cuda::stream_ref{stream_type{nullptr}};
}
#else
/// @brief The generation's stream parameter type.
using stream_arg = cuda_stream_view;

/// @brief The handle @p stream names. @param stream The stream @return Its handle
constexpr stream_type raw_stream(cuda_stream_view stream) noexcept { return stream.value(); }

/// @brief The default (null) stream in the generation's stream type. @return It
constexpr cuda_stream_view default_stream_arg() noexcept { return cuda_stream_view{}; }
#endif

/// @brief @p stream as the C ABI's stream. @param stream The stream @return Its C handle
inline rmm_stream_t c_stream_arg(stream_arg stream) noexcept
{
  return to_c_stream(raw_stream(stream));
}

/// @brief Waits for @p stream, throwing on failure. @param stream The stream
inline void synchronize_arg(stream_arg stream)
{
  check(rmm_stream_synchronize(c_stream_arg(stream)));
}

/// @brief Waits for @p stream, reporting a failure on stderr. @param stream The stream
inline void synchronize_arg_no_throw(stream_arg stream) noexcept
{
  if (rmm_stream_synchronize(c_stream_arg(stream)) != RMM_STATUS_SUCCESS) {
    std::fprintf(stderr, "rmm: stream synchronize failed: %s\n", rmm_last_error_message());
  }
}

}  // namespace detail
RMM_API_NAMESPACE_END
}  // namespace rmm
