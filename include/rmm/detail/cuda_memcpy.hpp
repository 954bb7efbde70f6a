/**
 * @file detail/cuda_memcpy.hpp
 * @brief `rmm::detail::memcpy_async` (RMM 26.10's `rmm/detail/cuda_memcpy.hpp`): one
 * stream-ordered copy of `count` bytes between any two kinds of memory.
 *
 * RMM 26.10 copies with `cudaMemcpyBatchAsync` on CUDA 13, which silently drops the copy when
 * the stream is being captured into a graph. This one is an ordinary stream-ordered copy
 * (`cudaMemcpyAsync` with `cudaMemcpyDefault` on CUDA, `hipMemcpyAsync` on HIP, through
 * librmm's runtime), so a captured copy is recorded into the graph like any other.
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_DETAIL_API_STREAM_REF

#include <rmm/detail/stream_arg.hpp>
#include <rmm/rmm.h>

#include <cuda/stream_ref>

#include <cstddef>
#include <cstdint>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace detail {

/**
 * @brief Enqueues a copy of @p count bytes from @p src to @p dst on @p stream.
 * @param dst Destination (device, managed or host memory)
 * @param src Source
 * @param count Bytes to copy (0 is a no-op)
 * @param stream The stream
 * @return `cudaSuccess`, or the runtime's error code for the failed copy
 * (`cudaErrorInvalidValue` when librmm refused it before the runtime was called)
 */
[[nodiscard]] inline cudaError_t memcpy_async(void* dst,
                                              void const* src,
                                              std::size_t count,
                                              cuda::stream_ref stream)
{
  if (rmm_memcpy_async(dst, src, count, c_stream_arg(stream)) == RMM_STATUS_SUCCESS) {
    return cudaSuccess;
  }
  std::int32_t const code = rmm_last_error_runtime_code();
  return code != 0 ? static_cast<cudaError_t>(code) : cudaErrorInvalidValue;
}

}  // namespace detail
RMM_API_NAMESPACE_END
}  // namespace rmm

#endif  // RMM_DETAIL_API_STREAM_REF
