/**
 * @file detail/basic_device_uvector.hpp
 * @brief The one implementation of `rmm::device_uvector<T>`: every API generation's class
 * template (rmm/detail/gen_<yy>_<mm>/device_uvector.hpp) derives from it and adds only its
 * constructor set and the members whose signatures differ.
 */
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/stream_arg.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/exec_check_disable.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/error.hpp>
#include <rmm/rmm.h>

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace detail {

/**
 * @brief An array of `T` in device memory whose elements are not initialized at construction.
 *
 * Allocation, reallocation and deallocation are stream-ordered, like the `device_buffer` that
 * stores the elements (`release()` hands it over). Element access from the host goes through
 * copies on a stream: `element()` and `set_element()` synchronize the stream;
 * `set_element_async()` does not, so its source must stay alive until the copy completes
 * (which is why it has no rvalue overload). A moved-from vector is empty.
 *
 * @tparam T Element type; must be trivially copyable
 * @tparam Buffer The generation's `device_buffer`
 * @tparam Policy The generation's container policy (`stream_type`, `reverse_iterator`,
 * `zero_by_memset`)
 */
template <typename T, typename Buffer, typename Policy>
class basic_device_uvector {
  static_assert(std::is_trivially_copyable_v<T>,
                "device_uvector only supports types that are trivially copyable.");

 protected:
  /// @brief The generation's stream parameter type.
  using stream_type = typename Policy::stream_type;

 public:
  using value_type      = T;              ///< The element type
  using size_type       = std::size_t;    ///< The type of sizes and indices
  using reference       = T&;             ///< Reference to an element
  using const_reference = T const&;       ///< Reference to a const element
  using pointer         = T*;             ///< Pointer to an element
  using const_pointer   = T const*;       ///< Pointer to a const element
  using iterator        = pointer;        ///< Iterator (raw device pointer)
  using const_iterator  = const_pointer;  ///< Const iterator (raw device pointer)
  /// @brief What rbegin() returns
  using reverse_iterator = typename Policy::template reverse_iterator<iterator>;
  /// @brief What crbegin() returns
  using const_reverse_iterator = typename Policy::template reverse_iterator<const_iterator>;

  RMM_EXEC_CHECK_DISABLE
  ~basic_device_uvector() = default;
  /// @brief Move constructor: takes the elements; the source is left empty.
  RMM_EXEC_CHECK_DISABLE
  basic_device_uvector(basic_device_uvector&&) noexcept = default;
  /// @brief Move assignment: frees this vector's memory, takes the source's. @return *this
  RMM_EXEC_CHECK_DISABLE
  basic_device_uvector& operator=(basic_device_uvector&&) noexcept = default;
  /// @brief Copying needs a stream: use device_uvector(other, stream).
  basic_device_uvector(basic_device_uvector const&) = delete;
  /// @brief Copying needs a stream: use device_uvector(other, stream).
  basic_device_uvector& operator=(basic_device_uvector const&) = delete;
  /// @brief A vector needs a stream: use device_uvector(0, stream).
  basic_device_uvector() = delete;

  /**
   * @brief Pointer to element @p element_index (checked only by an assertion).
   * @param element_index Index of the element
   * @return Its device address
   */
  [[nodiscard]] pointer element_ptr(size_type element_index) noexcept
  {
    assert(element_index < size());
    return data() + element_index;
  }

  /**
   * @brief Pointer to element @p element_index (checked only by an assertion).
   * @param element_index Index of the element
   * @return Its device address
   */
  [[nodiscard]] const_pointer element_ptr(size_type element_index) const noexcept
  {
    assert(element_index < size());
    return data() + element_index;
  }

  /**
   * @brief Enqueues a copy of @p value into element @p element_index on @p stream.
   *
   * Returns without waiting: @p value must stay alive and unchanged until the copy completes
   * (synchronize @p stream). Where the generation's RMM does (25.x), a zero value of an
   * arithmetic type is written with a memset instead.
   * @param element_index Index of the element to set
   * @param value Value to copy from (host memory)
   * @param stream Stream of the copy
   * @throws rmm::out_of_range when @p element_index >= size()
   * @throws rmm::cuda_error when the copy fails
   */
  void set_element_async(size_type element_index, value_type const& value, stream_type stream)
  {
    check_index(element_index);
    if constexpr (Policy::zero_by_memset && std::is_arithmetic_v<value_type>) {
      if (is_all_zero_bytes(value)) {
        check(
          rmm_memset_async(element_ptr(element_index), 0, sizeof(value_type), c_stream(stream)));
        return;
      }
    }
    check(
      rmm_memcpy_async(element_ptr(element_index), &value, sizeof(value_type), c_stream(stream)));
  }

  /// @brief Deleted: the asynchronous copy would read a temporary after it is destroyed.
  void set_element_async(size_type, value_type const&&, stream_type) = delete;

  /**
   * @brief Enqueues setting all bytes of element @p element_index to zero on @p stream.
   * @param element_index Index of the element
   * @param stream Stream of the memset
   * @throws rmm::out_of_range when @p element_index >= size()
   * @throws rmm::cuda_error when the memset fails
   */
  void set_element_to_zero_async(size_type element_index, stream_type stream)
  {
    check_index(element_index);
    check(rmm_memset_async(element_ptr(element_index), 0, sizeof(value_type), c_stream(stream)));
  }

  /**
   * @brief Copies @p value into element @p element_index and waits for @p stream (a failure
   * of the wait is reported on stderr, as RMM does).
   * @param element_index Index of the element
   * @param value Value to copy
   * @param stream Stream of the copy
   * @throws rmm::out_of_range when @p element_index >= size()
   */
  void set_element(size_type element_index, value_type const& value, stream_type stream)
  {
    set_element_async(element_index, value, stream);
    synchronize_arg_no_throw(stream);
  }

  /**
   * @brief Copies element @p element_index to the host, waiting for @p stream.
   * @param element_index Index of the element
   * @param stream Stream of the copy
   * @return The element's value
   * @throws rmm::out_of_range when @p element_index >= size()
   * @throws rmm::cuda_error when the copy fails
   */
  [[nodiscard]] value_type element(size_type element_index, stream_type stream) const
  {
    check_index(element_index);
    value_type value;
    check(
      rmm_memcpy_async(&value, element_ptr(element_index), sizeof(value_type), c_stream(stream)));
    synchronize_arg(stream);
    return value;
  }

  /**
   * @brief The first element, copied to the host (waits for @p stream).
   * @param stream Stream of the copy
   * @return Its value
   * @throws rmm::out_of_range when the vector is empty
   */
  [[nodiscard]] value_type front_element(stream_type stream) const { return element(0, stream); }

  /**
   * @brief The last element, copied to the host (waits for @p stream).
   * @param stream Stream of the copy
   * @return Its value
   * @throws rmm::out_of_range when the vector is empty
   */
  [[nodiscard]] value_type back_element(stream_type stream) const
  {
    RMM_EXPECTS(!is_empty(),
                "device_uvector: back_element of an empty vector; resize it first",
                rmm::out_of_range);
    return element(size() - 1, stream);
  }

  /**
   * @brief Grows the capacity to at least @p new_capacity elements, keeping the contents.
   * @param new_capacity Elements of capacity wanted
   * @param stream Stream of the reallocation and its copy (becomes the vector's stream)
   * @throws rmm::bad_alloc when the allocation fails
   */
  void reserve(size_type new_capacity, stream_type stream)
  {
    storage_.reserve(elements_to_bytes(new_capacity), stream);
  }

  /**
   * @brief Changes the size to @p new_size elements; new elements are uninitialized.
   * @param new_size The new number of elements
   * @param stream Stream of a reallocation and its copy (becomes the vector's stream)
   * @throws rmm::bad_alloc when the allocation fails
   */
  void resize(size_type new_size, stream_type stream)
  {
    storage_.resize(elements_to_bytes(new_size), stream);
  }

  /**
   * @brief Reallocates so that the capacity equals the size.
   * @param stream Stream of the reallocation and its copy (becomes the vector's stream)
   */
  void shrink_to_fit(stream_type stream) { storage_.shrink_to_fit(stream); }

  /**
   * @brief Hands the storage over; the vector is left empty.
   * @return The buffer that held the elements
   */
  Buffer release() noexcept { return std::move(storage_); }

  /// @brief Elements the memory can hold. @return The capacity
  [[nodiscard]] size_type capacity() const noexcept { return storage_.capacity() / sizeof(T); }

  /// @brief The elements (null when the capacity is 0). @return Device pointer
  [[nodiscard]] pointer data() noexcept { return static_cast<pointer>(storage_.data()); }

  /// @brief The elements (null when the capacity is 0). @return Device pointer
  [[nodiscard]] const_pointer data() const noexcept
  {
    return static_cast<const_pointer>(storage_.data());
  }

  /// @brief Iterator (device pointer) to the first element. @return data()
  [[nodiscard]] iterator begin() noexcept { return data(); }
  /// @brief Const iterator (device pointer) to the first element. @return data()
  [[nodiscard]] const_iterator cbegin() const noexcept { return data(); }
  /// @brief Const iterator (device pointer) to the first element. @return data()
  [[nodiscard]] const_iterator begin() const noexcept { return cbegin(); }
  /// @brief Iterator (device pointer) past the last element. @return data() + size()
  [[nodiscard]] iterator end() noexcept { return data() + size(); }
  /// @brief Const iterator (device pointer) past the last element. @return data() + size()
  [[nodiscard]] const_iterator cend() const noexcept { return data() + size(); }
  /// @brief Const iterator (device pointer) past the last element. @return data() + size()
  [[nodiscard]] const_iterator end() const noexcept { return cend(); }
  /// @brief Reverse iterator to the last element. @return reverse_iterator(end())
  [[nodiscard]] reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  /// @brief Const reverse iterator to the last element. @return const_reverse_iterator(cend())
  [[nodiscard]] const_reverse_iterator crbegin() const noexcept
  {
    return const_reverse_iterator(cend());
  }
  /// @brief Const reverse iterator to the last element. @return crbegin()
  [[nodiscard]] const_reverse_iterator rbegin() const noexcept { return crbegin(); }
  /// @brief Reverse iterator before the first element. @return reverse_iterator(begin())
  [[nodiscard]] reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  /// @brief Const reverse iterator before the first element (RMM's form).
  /// @return const_reverse_iterator(begin())
  [[nodiscard]] const_reverse_iterator crend() const noexcept
  {
    return const_reverse_iterator(begin());
  }
  /// @brief Const reverse iterator before the first element. @return crend()
  [[nodiscard]] const_reverse_iterator rend() const noexcept { return crend(); }

  /// @brief Number of elements. @return The size
  [[nodiscard]] size_type size() const noexcept { return storage_.size() / sizeof(T); }

  /// @brief Number of elements, signed. @return The size
  [[nodiscard]] std::int64_t ssize() const noexcept
  {
    assert(size() < static_cast<size_type>(std::numeric_limits<std::int64_t>::max()) &&
           "Size overflows signed integer");
    return static_cast<std::int64_t>(size());
  }

  /// @brief Whether there are no elements. @return true when empty
  [[nodiscard]] bool is_empty() const noexcept { return size() == 0; }

  /// @brief The stream of the most recent operation. @return The stream
  [[nodiscard]] stream_type stream() const noexcept { return storage_.stream(); }

  /**
   * @brief Sets the stream later reallocations and the deallocation use.
   * @param stream The new stream
   */
  void set_stream(stream_type stream) noexcept { storage_.set_stream(stream); }

 protected:
  /**
   * @brief Makes the storage from @p args (the generation's device_buffer constructor).
   * @param args The buffer's constructor arguments
   */
  template <typename... Args>
  explicit basic_device_uvector(std::in_place_t, Args&&... args)
    : storage_{std::forward<Args>(args)...}
  {
  }

  /**
   * @brief Bytes of @p num_elements elements.
   * @param num_elements Number of elements
   * @return The size in bytes
   * @throws rmm::invalid_argument (RMM 26.08 on; before, rmm::bad_alloc) when it overflows
   * std::size_t
   */
  static size_type elements_to_bytes(size_type num_elements)
  {
#if RMM_DETAIL_API_UVECTOR_SIZE_CHECK
    using size_error = rmm::invalid_argument;
#else
    using size_error = rmm::bad_alloc;
#endif
    RMM_EXPECTS(num_elements <= std::numeric_limits<size_type>::max() / sizeof(T),
                "device_uvector: " + std::to_string(num_elements) + " elements of " +
                  std::to_string(sizeof(T)) + " bytes overflow std::size_t",
                size_error);
    return num_elements * sizeof(T);
  }

  /// @brief The buffer holding the elements. @return It
  [[nodiscard]] Buffer& storage() noexcept { return storage_; }
  /// @brief The buffer holding the elements. @return It
  [[nodiscard]] Buffer const& storage() const noexcept { return storage_; }

 private:
  static rmm_stream_t c_stream(stream_type stream) noexcept { return c_stream_arg(stream); }

  void check_index(size_type element_index) const
  {
    RMM_EXPECTS(element_index < size(),
                "device_uvector: element " + std::to_string(element_index) +
                  " is out of bounds of a vector of size " + std::to_string(size()),
                rmm::out_of_range);
  }

  static bool is_all_zero_bytes(value_type const& value) noexcept
  {
    auto const* bytes = reinterpret_cast<unsigned char const*>(&value);
    for (std::size_t i = 0; i < sizeof(value_type); ++i) {
      if (bytes[i] != 0) { return false; }
    }
    return true;
  }

  Buffer storage_;
};

}  // namespace detail
RMM_API_NAMESPACE_END
}  // namespace rmm
