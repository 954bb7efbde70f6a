/**
 * @file detail/gen_25_02/mr/device/thrust_allocator_adaptor.hpp
 * @brief Thrust allocator over a device memory resource and a stream (RMM's
 * `rmm::mr::thrust_allocator`).
 *
 * Available whenever Thrust (rocThrust on AMD) is on the include path with a device system
 * this unit's runtime header serves, with any compiler (see rmm/detail/thrust.hpp); otherwise
 * this header defines nothing.
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/detail/thrust.hpp>

#if defined(RMM_DETAIL_HAVE_THRUST)
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/mr/device/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/detail/thrust_namespace.h>

#include <thrust/device_malloc_allocator.h>
#include <thrust/device_ptr.h>
#include <thrust/memory.h>

#include <cstddef>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief A Thrust device allocator that allocates from a device memory resource on a stream.
 *
 * Allocations are made with the device that was current at construction made current. As in
 * hipMM 25.02 the resource is held as a `device_async_resource_ref`, which a
 * `device_memory_resource*` converts to, so code of either era compiles.
 * @tparam T Element type
 */
template <typename T>
class thrust_allocator : public thrust::device_malloc_allocator<T> {
 public:
  using Base      = thrust::device_malloc_allocator<T>;  ///< The Thrust base allocator
  using pointer   = typename Base::pointer;              ///< Device pointer type
  using size_type = typename Base::size_type;            ///< Size type

  /// @brief Rebinds the allocator to another element type.
  template <typename U>
  struct rebind {
    using other = thrust_allocator<U>;  ///< The rebound allocator
  };

  /// @brief Allocates from the current device resource on the default stream.
  thrust_allocator() = default;

  /**
   * @brief Allocates from the current device resource on @p stream.
   * @param stream The stream
   */
  explicit thrust_allocator(cuda_stream_view stream) : stream_{stream} {}

  /**
   * @brief Allocates from @p mr on @p stream.
   * @param stream The stream
   * @param mr The resource (must outlive the allocator and its allocations)
   */
  thrust_allocator(cuda_stream_view stream, rmm::device_async_resource_ref mr)
    : stream_{stream}, mr_{mr}
  {
  }

  /**
   * @brief Converting copy from an allocator of another element type.
   * @param other The allocator to copy stream, resource and device from
   */
  template <typename U>
  thrust_allocator(thrust_allocator<U> const& other)
    : stream_{other.stream()}, mr_{other.get_upstream_resource()}, device_{other.device()}
  {
  }

  /**
   * @brief Allocates @p num objects.
   * @param num Number of objects
   * @return Device pointer to the memory
   */
  pointer allocate(size_type num)
  {
    cuda_set_device_raii const dev{device_};
    return thrust::device_pointer_cast(
      static_cast<T*>(mr_.allocate_async(num * sizeof(T), stream_)));
  }

  /**
   * @brief Frees @p num objects at @p ptr.
   * @param ptr Pointer returned by allocate()
   * @param num Number of objects passed to allocate()
   */
  void deallocate(pointer ptr, size_type num) noexcept
  {
    cuda_set_device_raii const dev{device_};
    mr_.deallocate_async(thrust::raw_pointer_cast(ptr), num * sizeof(T), stream_);
  }

  /// @brief The resource allocations come from. @return The resource
  [[nodiscard]] rmm::device_async_resource_ref get_upstream_resource() const noexcept
  {
    return mr_;
  }
  /// @brief The stream of allocations. @return The stream
  [[nodiscard]] cuda_stream_view stream() const noexcept { return stream_; }
  /// @brief The device current during allocation. @return The device
  [[nodiscard]] cuda_device_id device() const noexcept { return device_; }

  /// @brief Equality: same resource and stream. @return Whether equal
  friend bool operator==(thrust_allocator const& lhs, thrust_allocator const& rhs)
  {
    return lhs.mr_ == rhs.mr_ && lhs.stream_ == rhs.stream_;
  }
  /// @brief Inequality. @return Whether different
  friend bool operator!=(thrust_allocator const& lhs, thrust_allocator const& rhs)
  {
    return !(lhs == rhs);
  }

#if defined(RMM_HAS_CUDA_MR)
  /// @brief The memory is device accessible (for `cuda::mr` property queries).
  friend void get_property(thrust_allocator const&, ::cuda::mr::device_accessible) noexcept {}
#endif

 private:
  cuda_stream_view stream_{};
  rmm::device_async_resource_ref mr_{get_current_device_resource_ref()};
  cuda_device_id device_{get_current_cuda_device()};
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#endif
