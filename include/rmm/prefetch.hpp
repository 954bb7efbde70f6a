/**
 * @file prefetch.hpp
 * @brief `rmm::prefetch`: migrate managed memory to a device ahead of use (RMM's
 * `rmm/prefetch.hpp`).
 *
 * Goes through the C ABI's `rmm_prefetch`, so it prefetches with the runtime librmm.so uses
 * (`cudaMemPrefetchAsync`, `hipMemPrefetchAsync`, or the host emulation's check of the
 * range) and code calling it links no runtime library of its own.
 *
 * As in RMM, prefetching memory that is not managed (the runtime answers "invalid value") is
 * a no-op, not an error.
 */
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/stream_arg.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/error.hpp>
#include <rmm/detail/export.hpp>

#include <cstddef>

#if defined(__has_include)
#if __has_include(<cuda/std/span>) && !defined(RMM_DISABLE_CUDA_MR)
#include <cuda/std/span>
#define RMM_DETAIL_PREFETCH_CUDA_SPAN 1
#endif
#endif
// RMM 26.06 has only the cuda::std::span overload: with a std::span one as well, a braced
// `{ptr, n}` or a container argument would match both.
#if __cplusplus >= 202002L && defined(__has_include) && RMM_DETAIL_API_STD_SPAN_PREFETCH
#if __has_include(<span>)
#include <span>
#define RMM_DETAIL_PREFETCH_STD_SPAN 1
#endif
#endif

namespace rmm {
RMM_API_NAMESPACE_BEGIN

/**
 * @brief Prefetches @p size bytes at @p ptr to @p device, ordered on @p stream.
 *
 * A no-op for memory that is not managed and for a null pointer or zero size.
 * @param ptr The memory
 * @param size The number of bytes
 * @param device The destination device
 * @param stream The stream
 * @throws rmm::cuda_error when the runtime reports another error (e.g. a device out of
 * range), rmm::logic_error for a device id below -1 or a runtime that cannot prefetch
 */
inline void prefetch(void const* ptr,
                     std::size_t size,
                     rmm::cuda_device_id device,
                     detail::stream_arg stream)
{
  detail::check(rmm_prefetch(ptr, size, device.value(), detail::c_stream_arg(stream)));
}

#if defined(RMM_DETAIL_PREFETCH_CUDA_SPAN)
/**
 * @brief Prefetches the memory of @p data (RMM's span overload).
 * @param data The elements
 * @param device The destination device
 * @param stream The stream
 */
template <typename T>
void prefetch(cuda::std::span<T const> data, rmm::cuda_device_id device, detail::stream_arg stream)
{
  prefetch(data.data(), data.size_bytes(), device, stream);
}
#endif

#if defined(RMM_DETAIL_PREFETCH_STD_SPAN)
/**
 * @brief Prefetches the memory of @p data (C++20 std::span form).
 * @param data The elements
 * @param device The destination device
 * @param stream The stream
 */
template <typename T>
void prefetch(std::span<T const> data, rmm::cuda_device_id device, detail::stream_arg stream)
{
  prefetch(data.data(), data.size_bytes(), device, stream);
}
#endif

RMM_API_NAMESPACE_END
}  // namespace rmm
