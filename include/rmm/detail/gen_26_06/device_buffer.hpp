/**
 * @file detail/gen_26_06/device_buffer.hpp
 * @brief RMM 26.06's `rmm::device_buffer`: the constructor set over
 * rmm/detail/basic_device_buffer.hpp.
 *
 * The resource argument is an owning `cuda::mr::any_resource<cuda::mr::device_accessible>`
 * (built from one of our resources, a resource_ref, or any user resource that satisfies
 * `cuda::mr::resource_with<R, cuda::mr::device_accessible>`), so the buffer keeps a shared
 * resource alive; an allocation alignment can be chosen (`alignment()`), and an alignment that
 * is not a power of two throws `rmm::invalid_argument`. A moved-from buffer holds no resource.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/stream_arg.hpp>
#include <rmm/detail/basic_device_buffer.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/gen_26_06/container_policy.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>

#include <cuda/memory_resource>

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN

/**
 * @brief RAII owner of untyped, uninitialized device memory, allocated and freed in stream order
 * from a memory resource the buffer holds (RMM 26.06). Copying needs a stream
 * (`device_buffer(other, stream)`); moving does not, and leaves the source empty with no
 * resource.
 */
class device_buffer : public detail::basic_device_buffer<detail::container_policy> {
  using base         = detail::basic_device_buffer<detail::container_policy>;
  using any_resource = cuda::mr::any_resource<cuda::mr::device_accessible>;

 public:
  /// @brief An empty buffer: no memory, size 0, default stream, the current device resource.
  device_buffer() : base{mr::get_current_device_resource_ref()} {}

  /**
   * @brief Allocates @p size bytes (uninitialized) on @p stream, aligned to
   * rmm::CUDA_ALLOCATION_ALIGNMENT.
   * @param size Bytes to allocate
   * @param stream Stream of the allocation (and of later deallocation)
   * @param mr The resource to allocate from; the buffer keeps it (a copy, or a reference for
   * a resource_ref)
   * @throws rmm::logic_error when @p mr is empty
   * @throws rmm::bad_alloc or rmm::out_of_memory when the allocation fails
   */
  explicit device_buffer(std::size_t size,
                         detail::stream_arg stream,
                         any_resource mr = mr::get_current_device_resource_ref())
    : device_buffer{size, rmm::CUDA_ALLOCATION_ALIGNMENT, stream, std::move(mr)}
  {
  }

  /**
   * @brief Allocates @p size bytes (uninitialized) on @p stream, aligned to at least
   * @p alignment.
   * @param size Bytes to allocate
   * @param alignment Required alignment, a power of two
   * @param stream Stream of the allocation (and of later deallocation)
   * @param mr The resource to allocate from
   * @throws rmm::invalid_argument when @p alignment is not a power of two
   * @throws rmm::logic_error when @p mr is empty
   * @throws rmm::bad_alloc when the resource cannot allocate (or cannot align) the memory
   */
  explicit device_buffer(std::size_t size,
                         std::size_t alignment,
                         detail::stream_arg stream,
                         any_resource mr = mr::get_current_device_resource_ref())
    : base{size, checked_alignment(alignment), stream, checked_resource(std::move(mr))}
  {
  }

  /**
   * @brief Allocates @p size bytes on @p stream and copies @p size bytes from @p source_data
   * (host or device memory) into them, asynchronously on @p stream.
   * @param source_data Where to copy from; may be null only when @p size is 0
   * @param size Bytes to allocate and copy
   * @param stream Stream of the allocation and the copy
   * @param mr The resource to allocate from
   * @throws rmm::logic_error when @p source_data is null (and @p size is not 0), or @p mr is
   * empty
   * @throws rmm::bad_alloc when the allocation fails
   * @throws rmm::cuda_error when the copy fails
   */
  device_buffer(void const* source_data,
                std::size_t size,
                detail::stream_arg stream,
                any_resource mr = mr::get_current_device_resource_ref())
    : device_buffer{source_data, size, rmm::CUDA_ALLOCATION_ALIGNMENT, stream, std::move(mr)}
  {
  }

  /**
   * @brief Allocates @p size bytes aligned to at least @p alignment on @p stream and copies
   * @p size bytes from @p source_data into them.
   * @param source_data Where to copy from; may be null only when @p size is 0
   * @param size Bytes to allocate and copy
   * @param alignment Required alignment, a power of two
   * @param stream Stream of the allocation and the copy
   * @param mr The resource to allocate from
   * @throws rmm::invalid_argument when @p alignment is not a power of two
   * @throws rmm::logic_error when @p source_data is null (and @p size is not 0), or @p mr is
   * empty
   * @throws rmm::bad_alloc when the allocation fails
   */
  explicit device_buffer(void const* source_data,
                         std::size_t size,
                         std::size_t alignment,
                         detail::stream_arg stream,
                         any_resource mr = mr::get_current_device_resource_ref())
    : base{source_data, size, checked_alignment(alignment), stream, checked_resource(std::move(mr))}
  {
  }

  /**
   * @brief A copy of @p other's bytes (its size, not its capacity, with its alignment) in new
   * memory from @p mr, copied on @p stream.
   * @param other The buffer to copy
   * @param stream Stream of the allocation and the copy
   * @param mr The resource to allocate from
   */
  device_buffer(device_buffer const& other,
                detail::stream_arg stream,
                any_resource mr = mr::get_current_device_resource_ref())
    : device_buffer{other.data(), other.size(), other.alignment(), stream, std::move(mr)}
  {
  }

  /// @brief The alignment the memory was allocated with (1 after a move). @return Bytes
  [[nodiscard]] std::size_t alignment() const noexcept { return allocation_alignment(); }

  /**
   * @brief A reference to the resource the buffer holds; valid while the buffer lives and keeps
   * that resource (a later move-assignment replaces it).
   * @return The reference
   */
  [[nodiscard]] rmm::device_async_resource_ref memory_resource() noexcept
  {
    return rmm::device_async_resource_ref{resource()};
  }

 private:
  static std::size_t checked_alignment(std::size_t alignment)
  {
    RMM_EXPECTS(rmm::is_supported_alignment(alignment),
                "device_buffer: alignment " + std::to_string(alignment) +
                  " is not a power of two; pass a power of two such as 256",
                rmm::invalid_argument);
    return alignment;
  }

  static any_resource checked_resource(any_resource&& mr)
  {
    RMM_EXPECTS(mr.has_value(),
                "device_buffer: empty cuda::mr::any_resource; pass a memory resource (or omit "
                "the argument for the current device resource)");
    return std::move(mr);
  }
};

RMM_API_NAMESPACE_END
}  // namespace rmm

#endif  // RMM_API_GENERATION
