/**
 * @file detail/gen_26_06/mr/thrust_allocator_adaptor.hpp
 * @brief RMM 26.06's `rmm::mr::thrust_allocator<T>`: a Thrust device allocator that allocates
 * in stream order from a resource it keeps as a `cuda::mr::any_resource<device_accessible>`.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/detail/thrust.hpp>

#if defined(RMM_DETAIL_HAVE_THRUST)
#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/stream_arg.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/exec_check_disable.hpp>
#include <rmm/detail/thrust_namespace.h>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>

#include <thrust/device_malloc_allocator.h>
#include <thrust/device_ptr.h>
#include <thrust/memory.h>

#include <cstddef>
#include <cstdio>
#include <exception>
#include <limits>
#include <string>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief A Thrust allocator (for `thrust::device_vector`, execution policies) that allocates
 * from a device resource on a stream, with the device that was current at construction.
 * Copies share the resource.
 * @tparam T The value type
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
  RMM_EXEC_CHECK_DISABLE
  thrust_allocator() {}

  /**
   * @brief Allocates from the current device resource on @p stream.
   * @param stream The stream of allocations
   */
  RMM_EXEC_CHECK_DISABLE
  explicit thrust_allocator(rmm::detail::stream_arg stream) : stream_{stream} {}

  /**
   * @brief Allocates from @p mr on @p stream.
   * @param stream The stream of allocations
   * @param mr The resource; the allocator keeps it
   * @throws rmm::logic_error when @p mr is empty
   */
  RMM_EXEC_CHECK_DISABLE
  thrust_allocator(rmm::detail::stream_arg stream,
                   cuda::mr::any_resource<cuda::mr::device_accessible> mr)
    : stream_{stream}, mr_(std::move(mr))
  {
    RMM_EXPECTS(mr_.has_value(),
                "thrust_allocator: empty cuda::mr::any_resource; pass a memory resource");
  }

  /// @brief Copy: shares the resource. @param other The allocator to copy
  RMM_EXEC_CHECK_DISABLE
  thrust_allocator(thrust_allocator const& other)
    : Base(other), stream_{other.stream_}, mr_(other.mr_), device_{other.device_}
  {
  }

  /// @brief Move: takes the resource. @param other The allocator to move from
  RMM_EXEC_CHECK_DISABLE
  thrust_allocator(thrust_allocator&& other) noexcept
    : Base(std::move(other)),
      stream_{other.stream_},
      mr_(std::move(other.mr_)),
      device_{other.device_}
  {
  }

  /// @brief Copy assignment: shares the resource. @return *this
  thrust_allocator& operator=(thrust_allocator const&) = default;
  /// @brief Move assignment: takes the resource. @return *this
  thrust_allocator& operator=(thrust_allocator&&) noexcept = default;

  /**
   * @brief The stream, resource and device of an allocator of another value type.
   * @param other The allocator to copy from
   */
  RMM_EXEC_CHECK_DISABLE
  template <typename U>
  thrust_allocator(thrust_allocator<U> const& other)
    : stream_{other.stream()}, mr_(other.get_upstream_resource()), device_{other.device_}
  {
  }

  /**
   * @brief Allocates room for @p num objects, with the allocator's device current.
   * @param num Number of objects
   * @return Device pointer to the memory
   * @throws rmm::bad_alloc when `num * sizeof(T)` overflows or the allocation fails
   */
  pointer allocate(size_type num)
  {
    RMM_EXPECTS(num <= std::numeric_limits<std::size_t>::max() / sizeof(T),
                "thrust_allocator: " + std::to_string(num) + " objects of " +
                  std::to_string(sizeof(T)) + " bytes overflow std::size_t",
                rmm::bad_alloc);
    cuda_set_device_raii const dev{device_};
    return thrust::device_pointer_cast(
      static_cast<T*>(mr_.allocate(stream_, num * sizeof(T), rmm::CUDA_ALLOCATION_ALIGNMENT)));
  }

  /**
   * @brief Frees memory of @p num objects from allocate().
   * @param ptr The memory
   * @param num The number of objects it was allocated for
   */
  void deallocate(pointer ptr, size_type num) noexcept
  {
    try {
      cuda_set_device_raii const dev{device_};
      mr_.deallocate(
        stream_, thrust::raw_pointer_cast(ptr), num * sizeof(T), rmm::CUDA_ALLOCATION_ALIGNMENT);
    } catch (std::exception const& e) {
      std::fprintf(stderr, "rmm: thrust_allocator deallocation failed: %s\n", e.what());
    }
  }

  /// @brief A reference to the resource the allocator keeps. @return The reference
  [[nodiscard]] rmm::device_async_resource_ref get_upstream_resource() const noexcept
  {
    return rmm::device_async_resource_ref{mr_};
  }

  /// @brief The stream of allocations. @return The stream
  [[nodiscard]] rmm::detail::stream_arg stream() const noexcept { return stream_; }

  /// @brief The memory is device accessible (for `cuda::mr` property queries).
  RMM_CONSTEXPR_FRIEND void get_property(thrust_allocator const&,
                                         cuda::mr::device_accessible) noexcept
  {
  }

 private:
  template <typename>
  friend class thrust_allocator;

  rmm::detail::stream_arg stream_{rmm::detail::default_stream_arg()};
  // Mutable: a reference to the kept resource is handed out from const member functions.
  mutable cuda::mr::any_resource<cuda::mr::device_accessible> mr_{
    rmm::mr::get_current_device_resource_ref()};
  cuda_device_id device_{get_current_cuda_device()};
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#endif  // RMM_DETAIL_HAVE_THRUST

#endif  // RMM_API_GENERATION
