/**
 * @file detail/gen_26_06/device_scalar.hpp
 * @brief RMM 26.06's `rmm::device_scalar<T>`: the constructor set over
 * rmm/detail/basic_device_scalar.hpp (an owning `cuda::mr::any_resource`).
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/stream_arg.hpp>
#include <rmm/detail/basic_device_scalar.hpp>
#include <rmm/detail/exec_check_disable.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN

/**
 * @brief A single `T` in device memory (RMM 26.06; see detail::basic_device_scalar for the
 * operations). The scalar keeps its resource.
 * @tparam T The value type; must be trivially copyable
 */
template <typename T>
class device_scalar : public detail::basic_device_scalar<T, device_uvector<T>> {
 public:
  /**
   * @brief Allocates uninitialized storage for one value on @p stream.
   * @param stream Stream of the allocation
   * @param mr The resource to allocate from; the scalar keeps it
   */
  explicit device_scalar(
    detail::stream_arg stream,
    cuda::mr::any_resource<cuda::mr::device_accessible> mr = mr::get_current_device_resource_ref())
    : base{std::in_place, std::size_t{1}, stream, std::move(mr)}
  {
  }

  /**
   * @brief Allocates storage on @p stream and enqueues a copy of @p initial_value into it
   * (@p initial_value must stay alive until the copy completes).
   * @param initial_value The value
   * @param stream Stream of the allocation and the copy
   * @param mr The resource to allocate from
   */
  explicit device_scalar(
    T const& initial_value,
    detail::stream_arg stream,
    cuda::mr::any_resource<cuda::mr::device_accessible> mr = mr::get_current_device_resource_ref())
    : base{std::in_place, std::size_t{1}, stream, std::move(mr)}
  {
    this->set_value_async(initial_value, stream);
  }

#if RMM_DETAIL_API_STREAM_REF
  /// @brief Deleted (RMM 26.10): the asynchronous copy would read a temporary after it is
  /// destroyed.
  device_scalar(T const&&,
                detail::stream_arg,
                cuda::mr::any_resource<cuda::mr::device_accessible> =
                  mr::get_current_device_resource_ref()) = delete;
#endif

  /**
   * @brief A copy of @p other's value in new storage from @p mr, copied on @p stream.
   * @param other The scalar to copy
   * @param stream Stream of the allocation and the copy
   * @param mr The resource to allocate from
   */
  device_scalar(
    device_scalar const& other,
    detail::stream_arg stream,
    cuda::mr::any_resource<cuda::mr::device_accessible> mr = mr::get_current_device_resource_ref())
    : base{std::in_place, other.storage(), stream, std::move(mr)}
  {
  }

 private:
  using base = detail::basic_device_scalar<T, device_uvector<T>>;
};

RMM_API_NAMESPACE_END
}  // namespace rmm

#endif  // RMM_API_GENERATION
