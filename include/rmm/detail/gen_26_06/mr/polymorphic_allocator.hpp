/**
 * @file detail/gen_26_06/mr/polymorphic_allocator.hpp
 * @brief RMM 26.06's `rmm::mr::polymorphic_allocator<T>` (a stream-ordered allocator that owns
 * its resource as a `cuda::mr::any_resource<cuda::mr::device_accessible>`) and
 * `rmm::mr::stream_allocator_adaptor` (binds a stream, giving a standard Allocator).
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/stream_arg.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/mr/detail/stream_allocator_adaptor.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>

#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief A stream-ordered allocator of objects of type @p T, drawing from a device resource
 * chosen at run time and kept by the allocator (copies share it).
 *
 * Unlike a standard Allocator, allocate() and deallocate() take a stream: use
 * stream_allocator_adaptor for containers that expect a standard Allocator.
 * @tparam T The value type
 */
template <typename T>
class polymorphic_allocator {
 public:
  using value_type = T;  ///< The type of the objects allocated

  /// @brief Allocates from the current device resource (as it is now).
  polymorphic_allocator() = default;

  /**
   * @brief Allocates from @p mr.
   * @param mr The resource; an owning wrapper of one of our resources, a resource_ref, or any
   * stream-ordered device resource
   * @throws rmm::logic_error when @p mr is empty
   */
  polymorphic_allocator(cuda::mr::any_resource<cuda::mr::device_accessible> mr) : mr_(std::move(mr))
  {
    RMM_EXPECTS(mr_.has_value(),
                "polymorphic_allocator: empty cuda::mr::any_resource; pass a memory resource");
  }

  /**
   * @brief Allocates from the resource of @p other (an allocator of another value type).
   * @param other The allocator to share the resource of
   */
  template <typename U>
  polymorphic_allocator(polymorphic_allocator<U> const& other) noexcept
    : mr_(other.get_upstream_resource())
  {
  }

  /**
   * @brief Allocates room for @p num objects on @p stream (uninitialized).
   * @param num Number of objects
   * @param stream Stream of the allocation
   * @return Pointer to the memory
   * @throws rmm::bad_alloc when `num * sizeof(T)` overflows or the allocation fails
   */
  value_type* allocate(std::size_t num, rmm::detail::stream_arg stream)
  {
    RMM_EXPECTS(num <= std::numeric_limits<std::size_t>::max() / sizeof(T),
                "polymorphic_allocator: " + std::to_string(num) + " objects of " +
                  std::to_string(sizeof(T)) + " bytes overflow std::size_t",
                rmm::bad_alloc);
    return static_cast<value_type*>(
      mr_.allocate(stream, num * sizeof(T), rmm::CUDA_ALLOCATION_ALIGNMENT));
  }

  /**
   * @brief Frees memory of @p num objects from allocate() on @p stream.
   * @param ptr The memory
   * @param num The number of objects it was allocated for
   * @param stream Stream of the deallocation
   */
  void deallocate(value_type* ptr, std::size_t num, rmm::detail::stream_arg stream) noexcept
  {
    mr_.deallocate(stream, ptr, num * sizeof(T), rmm::CUDA_ALLOCATION_ALIGNMENT);
  }

  /// @brief A reference to the resource the allocator keeps. @return The reference
  [[nodiscard]] rmm::device_async_resource_ref get_upstream_resource() const noexcept
  {
    return rmm::device_async_resource_ref{mr_};
  }

 private:
  // Mutable: a reference to the kept resource is handed out from const member functions.
  mutable cuda::mr::any_resource<cuda::mr::device_accessible> mr_{
    get_current_device_resource_ref()};
};

/**
 * @brief Whether two allocators draw from equal resources.
 * @return true when memory from one may be freed by the other
 */
template <typename T, typename U>
bool operator==(polymorphic_allocator<T> const& lhs, polymorphic_allocator<U> const& rhs)
{
  return lhs.get_upstream_resource() == rhs.get_upstream_resource();
}

/**
 * @brief Negation of operator==.
 * @return true when the resources differ
 */
template <typename T, typename U>
bool operator!=(polymorphic_allocator<T> const& lhs, polymorphic_allocator<U> const& rhs)
{
  return !(lhs == rhs);
}

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#endif  // RMM_API_GENERATION
