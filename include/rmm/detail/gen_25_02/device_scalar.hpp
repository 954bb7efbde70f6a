/**
 * @file detail/gen_25_02/device_scalar.hpp
 * @brief A single typed value in device memory (RMM's `rmm::device_scalar`).
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/cuda_stream_view.hpp>
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
 * @brief One object of type `T` in device memory, allocated and freed in stream order.
 *
 * `value()` copies it to the host and synchronizes the stream; `set_value_async()` copies a
 * host value in without waiting, so the source must outlive the copy (the rvalue overload is
 * deleted).
 *
 * @tparam T Value type; must be trivially copyable
 * @note The memory resource is held as a `device_async_resource_ref` (RMM 25.02); constructors
 * take a reference or a resource pointer.
 */
template <typename T>
class device_scalar {
  static_assert(std::is_trivially_copyable<T>::value, "Scalar type must be trivially copyable");

 public:
  using value_type      = typename device_uvector<T>::value_type;       ///< T
  using size_type       = typename device_uvector<T>::size_type;        ///< std::size_t
  using reference       = typename device_uvector<T>::reference;        ///< T&
  using const_reference = typename device_uvector<T>::const_reference;  ///< T const&
  using pointer         = typename device_uvector<T>::pointer;          ///< T*
  using const_pointer   = typename device_uvector<T>::const_pointer;    ///< T const*

  device_scalar()                                = delete;
  ~device_scalar()                               = default;
  device_scalar(device_scalar const&)            = delete;
  device_scalar& operator=(device_scalar const&) = delete;
  /// @brief Move constructor: the source is left without storage.
  device_scalar(device_scalar&&) noexcept = default;
  /// @brief Move assignment: the source is left without storage. @return *this
  device_scalar& operator=(device_scalar&&) noexcept = default;

  /**
   * @brief Allocates an uninitialized value on @p stream.
   * @param stream Stream of the allocation (and of later operations)
   * @param mr Resource to allocate from (must outlive the scalar)
   * @throws rmm::bad_alloc when the allocation fails
   */
  explicit device_scalar(cuda_stream_view stream,
                         mr::device_memory_resource* mr = mr::get_current_device_resource())
    : storage_{1, stream, mr}
  {
  }

  /**
   * @brief Allocates a value on @p stream and enqueues copying @p initial_value into it.
   *
   * @p initial_value must stay alive until the copy completes (synchronize @p stream).
   * @param initial_value Host value to copy
   * @param stream Stream of the allocation and the copy
   * @param mr Resource to allocate from (must outlive the scalar)
   * @throws rmm::bad_alloc when the allocation fails
   * @throws rmm::cuda_error when the copy fails
   */
  explicit device_scalar(value_type const& initial_value,
                         cuda_stream_view stream,
                         mr::device_memory_resource* mr = mr::get_current_device_resource())
    : storage_{1, stream, mr}
  {
    set_value_async(initial_value, stream);
  }

  /**
   * @brief A deep copy of @p other's value, enqueued on @p stream.
   * @param other Scalar to copy
   * @param stream Stream of the allocation and the copy
   * @param mr Resource to allocate from (must outlive the scalar)
   */
  device_scalar(device_scalar const& other,
                cuda_stream_view stream,
                mr::device_memory_resource* mr = mr::get_current_device_resource())
    : storage_{other.storage_, stream, mr}
  {
  }

  /**
   * @brief As the pointer form, with the resource given as a reference (RMM 25.02's form).
   * @param stream Stream of the allocation (and of later operations)
   * @param mr The resource (must outlive the scalar)
   */
  device_scalar(cuda_stream_view stream, device_async_resource_ref mr)
    : storage_{1, stream, mr}
  {
  }

  /**
   * @brief As the pointer form, with the resource given as a reference (RMM 25.02's form).
   * @param initial_value Host value to copy
   * @param stream Stream of the allocation and the copy
   * @param mr The resource (must outlive the scalar)
   */
  device_scalar(value_type const& initial_value,
                cuda_stream_view stream,
                device_async_resource_ref mr)
    : storage_{1, stream, mr}
  {
    set_value_async(initial_value, stream);
  }

  /**
   * @brief A deep copy of @p other's value, enqueued on @p stream, with the resource given as
   * a reference (RMM 25.02 style).
   * @param other Scalar to copy
   * @param stream Stream of the allocation and the copy
   * @param mr The resource (must outlive the scalar)
   */
  device_scalar(device_scalar const& other, cuda_stream_view stream, device_async_resource_ref mr)
    : storage_{other.storage_, stream, mr}
  {
  }

  /**
   * @brief Copies the value to the host, synchronizing @p stream.
   * @param stream Stream of the copy
   * @return The value
   * @throws rmm::cuda_error when the copy fails
   */
  [[nodiscard]] value_type value(cuda_stream_view stream) const
  {
    return storage_.front_element(stream);
  }

  /**
   * @brief Enqueues copying @p value into the device value on @p stream, without waiting.
   * @param value Host value (must stay alive until the copy completes)
   * @param stream Stream of the copy
   * @throws rmm::cuda_error when the copy fails
   */
  void set_value_async(value_type const& value, cuda_stream_view stream)
  {
    storage_.set_element_async(0, value, stream);
  }

  /// @brief Deleted: the asynchronous copy would read a temporary after it is destroyed.
  void set_value_async(value_type&&, cuda_stream_view) = delete;

  /**
   * @brief Enqueues setting the value's bytes to zero on @p stream.
   * @param stream Stream of the memset
   */
  void set_value_to_zero_async(cuda_stream_view stream)
  {
    storage_.set_element_to_zero_async(0, stream);
  }

  /**
   * @brief Device pointer to the value.
   * @return The pointer
   */
  [[nodiscard]] pointer data() noexcept { return storage_.data(); }

  /**
   * @brief Device pointer to the value.
   * @return The pointer
   */
  [[nodiscard]] const_pointer data() const noexcept { return storage_.data(); }

  /**
   * @brief The number of values held.
   * @return 1
   */
  [[nodiscard]] constexpr size_type size() const noexcept { return 1; }

  /**
   * @brief The stream used for deallocation.
   * @return The stream
   */
  [[nodiscard]] cuda_stream_view stream() const noexcept { return storage_.stream(); }

  /**
   * @brief Sets the stream used for deallocation.
   * @param stream The new stream
   */
  void set_stream(cuda_stream_view stream) noexcept { storage_.set_stream(stream); }

 private:
  device_uvector<T> storage_;
};

RMM_API_NAMESPACE_END
}  // namespace rmm
