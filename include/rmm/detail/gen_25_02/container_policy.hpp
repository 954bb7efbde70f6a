/**
 * @file detail/gen_25_02/container_policy.hpp
 * @brief What the containers of RMM 25.02 (and 25.10) hold and how they allocate from it: a
 * `device_async_resource_ref` to a resource the caller keeps alive, streams as
 * `cuda_stream_view`. The containers themselves are written once (rmm/detail/basic_device_*.hpp).
 */
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <iterator>

// RMM 25.10's reverse iterators are thrust's (usable in thrust algorithms on the device);
// without thrust on the include path the standard adaptor serves host-side arithmetic.
#if defined(__has_include)
#if __has_include(<thrust/iterator/reverse_iterator.h>)
#include <thrust/iterator/reverse_iterator.h>
#define RMM_DETAIL_UVECTOR_THRUST_REVERSE 1
#endif
#endif

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace detail {

/**
 * @brief The container policy of RMM 25.02: the buffer refers to its resource and allocates
 * through the reference with its default alignment (as RMM 25.02 does).
 */
struct container_policy {
  using stream_type   = cuda_stream_view;           ///< Stream parameters
  using resource_type = device_async_resource_ref;  ///< What a device_buffer holds

  /// @brief device_uvector's reverse iterator over @p Iterator.
  template <typename Iterator>
#if defined(RMM_DETAIL_UVECTOR_THRUST_REVERSE)
  using reverse_iterator = thrust::reverse_iterator<Iterator>;
#else
  using reverse_iterator = std::reverse_iterator<Iterator>;
#endif

  /// @brief RMM 25.x writes a zero element with a memset (its source need not stay alive).
  static constexpr bool zero_by_memset = true;

  /// @brief A reference always refers to a resource. @return true
  static constexpr bool has_value(resource_type const&) noexcept { return true; }

  /**
   * @brief Allocates @p bytes from @p mr in stream order.
   * @param mr The resource
   * @param stream The stream
   * @param bytes The size
   * @return The memory
   */
  static void* allocate(resource_type& mr, stream_type stream, std::size_t bytes, std::size_t)
  {
    return mr.allocate_async(bytes, stream);
  }

  /**
   * @brief Frees @p ptr to @p mr in stream order.
   * @param mr The resource
   * @param stream The stream
   * @param ptr The memory
   * @param bytes Its size
   */
  static void deallocate(
    resource_type& mr, stream_type stream, void* ptr, std::size_t bytes, std::size_t)
  {
    mr.deallocate_async(ptr, bytes, stream);
  }
};

}  // namespace detail
RMM_API_NAMESPACE_END
}  // namespace rmm
