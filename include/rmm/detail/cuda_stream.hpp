/**
 * @file detail/cuda_stream.hpp
 * @brief `rmm::detail::is_default_stream` (RMM 26.10's `rmm/detail/cuda_stream.hpp`): whether
 * a `cuda::stream_ref` names the default stream of this translation unit.
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_DETAIL_API_STREAM_REF

#include <rmm/detail/stream_arg.hpp>

#include <cuda/stream_ref>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace detail {

/**
 * @brief Whether @p stream is the null stream or the default stream it stands for here:
 * `cudaStreamPerThread` under `CUDA_API_PER_THREAD_DEFAULT_STREAM`, else `cudaStreamLegacy`.
 * @param stream The stream
 * @return true for the default stream
 */
[[nodiscard, maybe_unused]] inline bool is_default_stream(cuda::stream_ref stream) noexcept
{
  auto const handle = c_stream_arg(stream);
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
  return handle == nullptr || handle == RMM_STREAM_PER_THREAD;
#else
  return handle == nullptr || handle == RMM_STREAM_LEGACY;
#endif
}

}  // namespace detail
RMM_API_NAMESPACE_END
}  // namespace rmm

#endif  // RMM_DETAIL_API_STREAM_REF
