/**
 * @file detail/gen_26_06/container_policy.hpp
 * @brief What the containers of RMM 26.06 hold and how they allocate from it: an owning
 * `cuda::mr::any_resource<cuda::mr::device_accessible>`, streams as `detail::stream_arg`
 * (`cuda_stream_view`; `cuda::stream_ref` from 26.10). The containers themselves are written once
 * (rmm/detail/basic_device_*.hpp).
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/detail/stream_arg.hpp>

#include <cuda/memory_resource>
#include <cuda/std/iterator>

#include <cstddef>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace detail {

/**
 * @brief The container policy of RMM 26.06: the buffer owns its resource (a moved-from buffer
 * has none) and allocates with the buffer's alignment.
 */
struct container_policy {
  using stream_type = stream_arg;  ///< Stream parameters
  /// @brief What a device_buffer holds.
  using resource_type = cuda::mr::any_resource<cuda::mr::device_accessible>;

  /// @brief device_uvector's reverse iterator over @p Iterator.
  template <typename Iterator>
  using reverse_iterator = cuda::std::reverse_iterator<Iterator>;

  /// @brief RMM 26.06 copies every element value, zero or not.
  static constexpr bool zero_by_memset = false;

  /// @brief Whether @p mr holds a resource. @return true when it does
  static bool has_value(resource_type const& mr) noexcept { return mr.has_value(); }

  /**
   * @brief Allocates @p bytes aligned to @p alignment from @p mr in stream order.
   * @param mr The resource
   * @param stream The stream
   * @param bytes The size
   * @param alignment The alignment
   * @return The memory
   */
  static void* allocate(resource_type& mr,
                        stream_type stream,
                        std::size_t bytes,
                        std::size_t alignment)
  {
    return mr.allocate(stream, bytes, alignment);
  }

  /**
   * @brief Frees @p ptr to @p mr in stream order.
   * @param mr The resource
   * @param stream The stream
   * @param ptr The memory
   * @param bytes Its size
   * @param alignment Its alignment
   */
  static void deallocate(
    resource_type& mr, stream_type stream, void* ptr, std::size_t bytes, std::size_t alignment)
  {
    mr.deallocate(stream, ptr, bytes, alignment);
  }
};

}  // namespace detail
RMM_API_NAMESPACE_END
}  // namespace rmm

#endif  // RMM_API_GENERATION
