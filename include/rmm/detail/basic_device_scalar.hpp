/**
 * @file detail/basic_device_scalar.hpp
 * @brief The one implementation of `rmm::device_scalar<T>`: every API generation's class
 * template (rmm/detail/gen_<yy>_<mm>/device_scalar.hpp) derives from it and adds only its
 * constructor set.
 */
#pragma once

#include <rmm/detail/exec_check_disable.hpp>
#include <rmm/detail/export.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace detail {

/**
 * @brief A single `T` in device memory, stored in a one-element `device_uvector<T>`; reads and
 * writes go through copies on a stream.
 *
 * @tparam T The value type; must be trivially copyable
 * @tparam Uvector The generation's `device_uvector<T>`
 */
template <typename T, typename Uvector>
class basic_device_scalar {
  static_assert(std::is_trivially_copyable_v<T>, "Scalar type must be trivially copyable");

 protected:
  /// @brief The generation's stream parameter type.
  using stream_type = decltype(std::declval<Uvector const&>().stream());

  /**
   * @brief Makes the storage from @p args (the generation's device_uvector constructor).
   * @param args The vector's constructor arguments
   */
  template <typename... Args>
  explicit basic_device_scalar(std::in_place_t, Args&&... args)
    : storage_{std::forward<Args>(args)...}
  {
  }

 public:
  using value_type      = typename Uvector::value_type;       ///< T
  using size_type       = typename Uvector::size_type;        ///< std::size_t
  using reference       = typename Uvector::reference;        ///< T&
  using const_reference = typename Uvector::const_reference;  ///< T const&
  using pointer         = typename Uvector::pointer;          ///< T*
  using const_pointer   = typename Uvector::const_pointer;    ///< T const*

  RMM_EXEC_CHECK_DISABLE
  ~basic_device_scalar() = default;
  /// @brief Move constructor: the source is left without storage.
  RMM_EXEC_CHECK_DISABLE
  basic_device_scalar(basic_device_scalar&&) noexcept = default;
  /// @brief Move assignment: the source is left without storage. @return *this
  basic_device_scalar& operator=(basic_device_scalar&&) noexcept = default;
  /// @brief Copying needs a stream: use device_scalar(other, stream).
  basic_device_scalar(basic_device_scalar const&) = delete;
  /// @brief Copying needs a stream: use device_scalar(other, stream).
  basic_device_scalar& operator=(basic_device_scalar const&) = delete;
  /// @brief A scalar needs a stream: use device_scalar(stream).
  basic_device_scalar() = delete;

  /**
   * @brief Copies the value to the host, waiting for @p stream.
   * @param stream Stream of the copy
   * @return The value
   * @throws rmm::cuda_error when the copy fails
   */
  [[nodiscard]] value_type value(stream_type stream) const
  {
    return storage_.front_element(stream);
  }

  /**
   * @brief Enqueues a copy of @p value into the scalar on @p stream; @p value must stay alive
   * until the copy completes.
   * @param value Value to copy (host memory)
   * @param stream Stream of the copy
   * @throws rmm::cuda_error when the copy fails
   */
  void set_value_async(value_type const& value, stream_type stream)
  {
    storage_.set_element_async(0, value, stream);
  }

  /// @brief Deleted: the asynchronous copy would read a temporary after it is destroyed.
#if RMM_DETAIL_API_STREAM_REF
  void set_value_async(value_type const&&, stream_type) = delete;
#else
  void set_value_async(value_type&&, stream_type) = delete;
#endif

  /**
   * @brief Enqueues setting the scalar's bytes to zero on @p stream.
   * @param stream Stream of the memset
   * @throws rmm::cuda_error when the memset fails
   */
  void set_value_to_zero_async(stream_type stream)
  {
    storage_.set_element_to_zero_async(0, stream);
  }

  /// @brief The scalar's device address. @return Device pointer
  [[nodiscard]] pointer data() noexcept { return storage_.data(); }

  /// @brief The scalar's device address. @return Device pointer
  [[nodiscard]] const_pointer data() const noexcept { return storage_.data(); }

  /// @brief Always 1. @return 1
  [[nodiscard]] constexpr size_type size() const noexcept { return 1; }

  /// @brief The stream of the most recent operation. @return The stream
  [[nodiscard]] stream_type stream() const noexcept { return storage_.stream(); }

  /**
   * @brief Sets the stream later reallocations and the deallocation use.
   * @param stream The new stream
   */
  void set_stream(stream_type stream) noexcept { storage_.set_stream(stream); }

 protected:
  /// @brief The one-element vector holding the value. @return It
  [[nodiscard]] Uvector const& storage() const noexcept { return storage_; }

 private:
  Uvector storage_;
};

}  // namespace detail
RMM_API_NAMESPACE_END
}  // namespace rmm
