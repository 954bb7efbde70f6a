/**
 * @file prefetch.hpp
 * @brief `rmm::prefetch`: migrate managed memory to a device ahead of use (RMM's
 * `rmm/prefetch.hpp`).
 *
 * The C ABI has no prefetch function (only the prefetch_resource_adaptor, which prefetches
 * what it allocates), so this header calls the runtime directly when its header is found:
 * `hipMemPrefetchAsync` (HIP) or `cudaMemPrefetchAsync` (CUDA); code calling prefetch() then
 * links the runtime library. Without runtime headers prefetch() only validates its
 * arguments and does nothing: prefetching is a performance hint, and the host emulation has
 * no device memory to migrate.
 *
 * As in RMM, prefetching memory that is not managed (the runtime answers "invalid value") is
 * a no-op, not an error.
 */
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
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
#if __cplusplus >= 202002L && defined(__has_include)
#if __has_include(<span>)
#include <span>
#define RMM_DETAIL_PREFETCH_STD_SPAN 1
#endif
#endif

namespace rmm {

/**
 * @brief Prefetches @p size bytes at @p ptr to @p device, ordered on @p stream.
 *
 * A no-op for memory that is not managed, for a null pointer or zero size, and when no
 * runtime header was available at compile time.
 * @param ptr The memory
 * @param size The number of bytes
 * @param device The destination device
 * @param stream The stream
 * @throws rmm::cuda_error when the runtime reports another error
 */
inline void prefetch(void const* ptr,
                     std::size_t size,
                     rmm::cuda_device_id device,
                     rmm::cuda_stream_view stream)
{
  if (ptr == nullptr || size == 0) { return; }
#if defined(RMM_DETAIL_ERROR_HIP) && defined(RMM_DETAIL_STREAM_HIP)
  hipError_t const result = hipMemPrefetchAsync(ptr, size, device.value(), stream.value());
  if (result == hipErrorInvalidValue) {
    (void)hipGetLastError();
    return;
  }
  RMM_CUDA_TRY(result);
#elif defined(RMM_DETAIL_ERROR_CUDA) && defined(RMM_DETAIL_STREAM_CUDA)
#if defined(CUDART_VERSION) && CUDART_VERSION >= 13000
  cudaMemLocation location{};
  location.type = cudaMemLocationTypeDevice;
  location.id   = device.value();
  cudaError_t const result = cudaMemPrefetchAsync(ptr, size, location, 0, stream.value());
#else
  cudaError_t const result = cudaMemPrefetchAsync(ptr, size, device.value(), stream.value());
#endif
  if (result == cudaErrorInvalidValue) {
    (void)cudaGetLastError();
    return;
  }
  RMM_CUDA_TRY(result);
#else
  (void)device;
  (void)stream;
#endif
}

#if defined(RMM_DETAIL_PREFETCH_CUDA_SPAN)
/**
 * @brief Prefetches the memory of @p data (RMM's span overload).
 * @param data The elements
 * @param device The destination device
 * @param stream The stream
 */
template <typename T>
void prefetch(cuda::std::span<T const> data, rmm::cuda_device_id device, rmm::cuda_stream_view stream)
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
void prefetch(std::span<T const> data, rmm::cuda_device_id device, rmm::cuda_stream_view stream)
{
  prefetch(data.data(), data.size_bytes(), device, stream);
}
#endif

}  // namespace rmm
