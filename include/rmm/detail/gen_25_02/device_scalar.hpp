/**
 * @file detail/gen_25_02/device_scalar.hpp
 * @brief RMM 25.02's `rmm::device_scalar<T>`: the constructor set over
 * rmm/detail/basic_device_scalar.hpp (a resource pointer or a `device_async_resource_ref`).
 */
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/basic_device_scalar.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/mr/device/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <type_traits>

namespace rmm {
RMM_API_NAMESPACE_BEGIN

/**
 * @brief A single `T` in device memory (RMM 25.02; see detail::basic_device_scalar for the
 * operations). The resource must outlive the scalar.
 * @tparam T The value type; must be trivially copyable
 */
template <typename T>
class device_scalar : public detail::basic_device_scalar<T, device_uvector<T>> {
 public:
  /**
   * @brief Allocates uninitialized storage for one value on @p stream.
   * @param stream Stream of the allocation
   * @param mr Resource to allocate from
   */
  explicit device_scalar(cuda_stream_view stream,
                         mr::device_memory_resource* mr = mr::get_current_device_resource())
    : base{std::in_place, std::size_t{1}, stream, mr}
  {
  }

  /**
   * @brief Allocates storage on @p stream and enqueues a copy of @p initial_value into it
   * (@p initial_value must stay alive until the copy completes).
   * @param initial_value The value
   * @param stream Stream of the allocation and the copy
   * @param mr Resource to allocate from
   */
  explicit device_scalar(T const& initial_value,
                         cuda_stream_view stream,
                         mr::device_memory_resource* mr = mr::get_current_device_resource())
    : base{std::in_place, std::size_t{1}, stream, mr}
  {
    this->set_value_async(initial_value, stream);
  }

  /**
   * @brief A copy of @p other's value in new storage, enqueued on @p stream.
   * @param other The scalar to copy
   * @param stream Stream of the allocation and the copy
   * @param mr Resource to allocate from
   */
  device_scalar(device_scalar const& other,
                cuda_stream_view stream,
                mr::device_memory_resource* mr = mr::get_current_device_resource())
    : base{std::in_place, other.storage(), stream, mr}
  {
  }

  /**
   * @brief As the pointer form, with the resource given as a reference.
   * @param stream Stream of the allocation
   * @param mr The resource
   */
  device_scalar(cuda_stream_view stream, device_async_resource_ref mr)
    : base{std::in_place, std::size_t{1}, stream, mr}
  {
  }

  /**
   * @brief As the pointer form, with the resource given as a reference.
   * @param initial_value The value
   * @param stream Stream of the allocation and the copy
   * @param mr The resource
   */
  device_scalar(T const& initial_value, cuda_stream_view stream, device_async_resource_ref mr)
    : base{std::in_place, std::size_t{1}, stream, mr}
  {
    this->set_value_async(initial_value, stream);
  }

  /**
   * @brief As the pointer form, with the resource given as a reference.
   * @param other The scalar to copy
   * @param stream Stream of the allocation and the copy
   * @param mr The resource
   */
  device_scalar(device_scalar const& other, cuda_stream_view stream, device_async_resource_ref mr)
    : base{std::in_place, other.storage(), stream, mr}
  {
  }

 private:
  using base = detail::basic_device_scalar<T, device_uvector<T>>;
};

RMM_API_NAMESPACE_END
}  // namespace rmm
