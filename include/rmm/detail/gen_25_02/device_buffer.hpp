/**
 * @file detail/gen_25_02/device_buffer.hpp
 * @brief RMM 25.02's `rmm::device_buffer`: the constructor set over
 * rmm/detail/basic_device_buffer.hpp.
 *
 * The buffer holds its memory resource as a `device_async_resource_ref` (the resource must
 * outlive the buffer); constructors take a resource pointer (null throws `rmm::logic_error`)
 * or a reference. Memory is allocated and freed through the reference, as RMM does, so the
 * resource sees the size rounded up to `alignof(std::max_align_t)` (the reference's default
 * alignment).
 */
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/basic_device_buffer.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/detail/gen_25_02/container_policy.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/mr/device/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN

/**
 * @brief RAII owner of an untyped, uninitialized block of device memory, allocated and freed
 * in stream order from a resource the caller keeps alive (RMM 25.02).
 */
class device_buffer : public detail::basic_device_buffer<detail::container_policy> {
  using base = detail::basic_device_buffer<detail::container_policy>;

 public:
  /// @brief An empty buffer: no memory, size 0, default stream, the current device resource.
  device_buffer() : base{mr::get_current_device_resource_ref()} {}

  /**
   * @brief Allocates @p size bytes of uninitialized memory on @p stream.
   * @param size Bytes to allocate
   * @param stream Stream of the allocation (and of later operations)
   * @param mr Resource to allocate from (must outlive the buffer)
   * @throws rmm::bad_alloc when the allocation fails
   * @throws rmm::logic_error when @p mr is null
   */
  explicit device_buffer(std::size_t size,
                         cuda_stream_view stream,
                         mr::device_memory_resource* mr = mr::get_current_device_resource())
    : device_buffer{size, stream, checked_mr(mr)}
  {
  }

  /**
   * @brief Allocates @p size bytes on @p stream and enqueues a copy of @p source_data into them.
   * @param source_data Host or device memory to copy from (at least @p size bytes)
   * @param size Bytes to allocate and copy
   * @param stream Stream of the allocation and the copy
   * @param mr Resource to allocate from (must outlive the buffer)
   * @throws rmm::logic_error when @p source_data is null and @p size is not 0, or @p mr is null
   * @throws rmm::bad_alloc when the allocation fails
   * @throws rmm::cuda_error when the copy fails
   */
  device_buffer(void const* source_data,
                std::size_t size,
                cuda_stream_view stream,
                mr::device_memory_resource* mr = mr::get_current_device_resource())
    : device_buffer{source_data, size, stream, checked_mr(mr)}
  {
  }

  /**
   * @brief A deep copy of @p other's contents (its `size()` bytes), enqueued on @p stream; the
   * new buffer's capacity equals `other.size()`.
   * @param other Buffer to copy
   * @param stream Stream of the allocation and the copy
   * @param mr Resource to allocate from (must outlive the buffer)
   * @throws rmm::bad_alloc when the allocation fails
   * @throws rmm::cuda_error when the copy fails
   */
  device_buffer(device_buffer const& other,
                cuda_stream_view stream,
                mr::device_memory_resource* mr = mr::get_current_device_resource())
    : device_buffer{other.data(), other.size(), stream, mr}
  {
  }

  /**
   * @brief As the pointer form, with the resource given as a reference (RMM 25.02's form);
   * the reference may be to any device-accessible, stream-ordered resource.
   * @param size Bytes to allocate
   * @param stream Stream of the allocation (and of later operations)
   * @param mr The resource (must outlive the buffer)
   * @throws rmm::bad_alloc when the allocation fails
   */
  device_buffer(std::size_t size, cuda_stream_view stream, device_async_resource_ref mr)
    : base{size, rmm::CUDA_ALLOCATION_ALIGNMENT, stream, mr}
  {
  }

  /**
   * @brief As the pointer form, with the resource given as a reference (RMM 25.02's form).
   * @param source_data Host or device memory to copy from (at least @p size bytes)
   * @param size Bytes to allocate and copy
   * @param stream Stream of the allocation and the copy
   * @param mr The resource (must outlive the buffer)
   * @throws rmm::logic_error when @p source_data is null and @p size is not 0
   */
  device_buffer(void const* source_data,
                std::size_t size,
                cuda_stream_view stream,
                device_async_resource_ref mr)
    : base{source_data, size, rmm::CUDA_ALLOCATION_ALIGNMENT, stream, mr}
  {
  }

  /**
   * @brief As the pointer form, with the resource given as a reference (RMM 25.02's form).
   * @param other Buffer to copy
   * @param stream Stream of the allocation and the copy
   * @param mr The resource (must outlive the buffer)
   */
  device_buffer(device_buffer const& other, cuda_stream_view stream, device_async_resource_ref mr)
    : device_buffer{other.data(), other.size(), stream, mr}
  {
  }

  /**
   * @brief The resource the memory comes from.
   * @return A reference to it (RMM 25.02's return type)
   */
  [[nodiscard]] device_async_resource_ref memory_resource() const noexcept { return resource(); }

 private:
  static device_async_resource_ref checked_mr(mr::device_memory_resource* mr)
  {
    if (mr == nullptr) { throw rmm::logic_error{"device_buffer: null memory resource"}; }
    return device_async_resource_ref{mr};
  }
};

RMM_API_NAMESPACE_END
}  // namespace rmm
