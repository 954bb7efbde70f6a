/**
 * @file detail/gen_26_06/device_scalar.hpp
 * @brief RMM 26.06's `rmm::device_scalar<T>`: one uninitialized `T` in device memory, stored in a
 * 26.06 `rmm::device_uvector` (owning `cuda::mr::any_resource`).
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/cuda_stream_view.hpp>
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
 * @brief A single `T` in device memory, read and written from the host through copies on a
 * stream (RMM 26.06). Construction allocates without initializing unless a value is given.
 *
 * @tparam T The element type; must be trivially copyable
 */
template <typename T>
class device_scalar {
 public:
  static_assert(std::is_trivially_copyable_v<T>, "Scalar type must be trivially copyable");

  using value_type      = typename device_uvector<T>::value_type;       ///< T
  using size_type       = typename device_uvector<T>::size_type;        ///< std::size_t
  using reference       = typename device_uvector<T>::reference;        ///< T&
  using const_reference = typename device_uvector<T>::const_reference;  ///< T const&
  using pointer         = typename device_uvector<T>::pointer;          ///< T*
  using const_pointer   = typename device_uvector<T>::const_pointer;    ///< T const*

  RMM_EXEC_CHECK_DISABLE
  ~device_scalar() = default;
  /// @brief Move constructor: the source is left without storage.
  RMM_EXEC_CHECK_DISABLE
  device_scalar(device_scalar&&) noexcept = default;
  /// @brief Move assignment: the source is left without storage. @return *this
  device_scalar& operator=(device_scalar&&) noexcept = default;
  /// @brief Copying needs a stream: use device_scalar(other, stream).
  device_scalar(device_scalar const&) = delete;
  /// @brief Copying needs a stream: use device_scalar(other, stream).
  device_scalar& operator=(device_scalar const&) = delete;
  /// @brief A scalar needs a stream: use device_scalar(stream).
  device_scalar() = delete;

  /**
   * @brief Allocates an uninitialized `T` on @p stream.
   * @param stream Stream of the allocation
   * @param mr The resource to allocate from; the scalar keeps it
   */
  explicit device_scalar(
    cuda_stream_view stream,
    cuda::mr::any_resource<cuda::mr::device_accessible> mr = mr::get_current_device_resource_ref())
    : storage_{1, stream, std::move(mr)}
  {
  }

  /**
   * @brief Allocates a `T` on @p stream and enqueues copying @p initial_value into it (the
   * caller keeps @p initial_value alive until @p stream has done so).
   * @param initial_value The value to copy in
   * @param stream Stream of the allocation and the copy
   * @param mr The resource to allocate from
   */
  explicit device_scalar(
    value_type const& initial_value,
    cuda_stream_view stream,
    cuda::mr::any_resource<cuda::mr::device_accessible> mr = mr::get_current_device_resource_ref())
    : storage_{1, stream, std::move(mr)}
  {
    set_value_async(initial_value, stream);
  }

  /**
   * @brief A copy of @p other's value in new memory from @p mr, copied on @p stream.
   * @param other The scalar to copy
   * @param stream Stream of the allocation and the copy
   * @param mr The resource to allocate from
   */
  device_scalar(
    device_scalar const& other,
    cuda_stream_view stream,
    cuda::mr::any_resource<cuda::mr::device_accessible> mr = mr::get_current_device_resource_ref())
    : storage_{other.storage_, stream, std::move(mr)}
  {
  }

  /**
   * @brief The value, copied to the host (waits for @p stream).
   * @param stream Stream of the copy
   * @return The value
   * @throws rmm::out_of_range when the scalar was moved from
   */
  [[nodiscard]] value_type value(cuda_stream_view stream) const
  {
    return storage_.front_element(stream);
  }

  /**
   * @brief Enqueues copying @p value into the scalar on @p stream; @p value must stay alive
   * until the copy completes.
   * @param value The value to copy in
   * @param stream Stream of the copy
   */
  void set_value_async(value_type const& value, cuda_stream_view stream)
  {
    storage_.set_element_async(0, value, stream);
  }

  /// @brief Deleted: the asynchronous copy would read a temporary after it is destroyed.
  void set_value_async(value_type&&, cuda_stream_view) = delete;

  /**
   * @brief Enqueues setting all bytes of the scalar to zero on @p stream.
   * @param stream Stream of the memset
   */
  void set_value_to_zero_async(cuda_stream_view stream)
  {
    storage_.set_element_to_zero_async(0, stream);
  }

  /// @brief The scalar's device address. @return Device pointer
  [[nodiscard]] pointer data() noexcept { return static_cast<pointer>(storage_.data()); }

  /// @brief The scalar's device address. @return Device pointer
  [[nodiscard]] const_pointer data() const noexcept
  {
    return static_cast<const_pointer>(storage_.data());
  }

  /// @brief Always 1. @return 1
  [[nodiscard]] constexpr size_type size() const noexcept { return 1; }

  /// @brief The stream of the most recent operation. @return The stream
  [[nodiscard]] cuda_stream_view stream() const noexcept { return storage_.stream(); }

  /**
   * @brief Sets the stream of later operations and of the deallocation.
   * @param stream The new stream
   */
  void set_stream(cuda_stream_view stream) noexcept { storage_.set_stream(stream); }

 private:
  rmm::device_uvector<T> storage_;
};

RMM_API_NAMESPACE_END
}  // namespace rmm

#endif  // RMM_API_GENERATION
