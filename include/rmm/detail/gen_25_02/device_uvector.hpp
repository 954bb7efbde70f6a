/**
 * @file detail/gen_25_02/device_uvector.hpp
 * @brief Typed, uninitialized, stream-ordered device array (RMM's `rmm::device_uvector`).
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/mr/device/per_device_resource.hpp>
#include <rmm/rmm.h>
#include <rmm/detail/error.hpp>
#include <rmm/detail/exec_check_disable.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// RMM 25.10's reverse iterators are thrust's (usable in thrust algorithms on the device);
// without thrust on the include path the standard adaptor serves host-side arithmetic.
#if defined(__has_include)
#if __has_include(<thrust/iterator/reverse_iterator.h>)
#include <thrust/iterator/reverse_iterator.h>
#define RMM_DETAIL_UVECTOR_THRUST_REVERSE 1
#endif
#endif

namespace rmm {
RMM_API_NAMESPACE_BEGIN

/**
 * @brief An array of `T` in device memory whose elements are not initialized at construction.
 *
 * Allocation, reallocation and deallocation are stream-ordered, like `device_buffer` (which
 * stores the elements; `release()` hands it over). Element access from the host goes through
 * copies on a stream: `element()` and `set_element()` synchronize the stream;
 * `set_element_async()` does not, so its source must stay alive until the copy completes
 * (which is why it has no rvalue overload).
 *
 * A moved-from vector is empty (size 0, null data).
 *
 * @tparam T Element type; must be trivially copyable
 * @note The memory resource is held as a `device_async_resource_ref` (RMM 25.02); constructors
 * take a reference or a resource pointer.
 */
template <typename T>
class device_uvector {
  static_assert(std::is_trivially_copyable<T>::value,
                "device_uvector only supports types that are trivially copyable.");

 public:
  using value_type      = T;            ///< The element type
  using size_type       = std::size_t;  ///< The type of sizes and indices
  using reference       = T&;           ///< Reference to an element
  using const_reference = T const&;     ///< Reference to a const element
  using pointer         = T*;           ///< Pointer to an element
  using const_pointer   = T const*;     ///< Pointer to a const element
  using iterator        = pointer;      ///< Iterator (raw device pointer)
  using const_iterator  = const_pointer;  ///< Const iterator (raw device pointer)
#if defined(RMM_DETAIL_UVECTOR_THRUST_REVERSE)
  using reverse_iterator       = thrust::reverse_iterator<iterator>;  ///< What rbegin() returns
  using const_reverse_iterator = thrust::reverse_iterator<const_iterator>;  ///< What crbegin() returns
#else
  using reverse_iterator       = std::reverse_iterator<iterator>;  ///< What rbegin() returns
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;  ///< What crbegin() returns
#endif

  device_uvector()                                 = delete;
  ~device_uvector()                                = default;
  device_uvector(device_uvector const&)            = delete;
  device_uvector& operator=(device_uvector const&) = delete;
  /// @brief Move constructor: takes the elements; the source is left empty.
  device_uvector(device_uvector&&) noexcept = default;
  /**
   * @brief Move assignment: frees the current elements and takes the source's; the source is
   * left empty.
   * @return *this
   */
  device_uvector& operator=(device_uvector&&) noexcept = default;

  /**
   * @brief Allocates @p size uninitialized elements on @p stream.
   * @param size Number of elements
   * @param stream Stream of the allocation (and of later operations)
   * @param mr Resource to allocate from (must outlive the vector)
   * @throws rmm::bad_alloc when the allocation fails or the byte count overflows
   */
  explicit device_uvector(std::size_t size,
                          cuda_stream_view stream,
                          mr::device_memory_resource* mr = mr::get_current_device_resource())
    : storage_{elements_to_bytes(size), stream, mr}
  {
  }

  /**
   * @brief A deep copy of @p other's elements, enqueued on @p stream.
   * @param other Vector to copy
   * @param stream Stream of the allocation and the copy
   * @param mr Resource to allocate from (must outlive the vector)
   * @throws rmm::bad_alloc when the allocation fails
   */
  explicit device_uvector(device_uvector const& other,
                          cuda_stream_view stream,
                          mr::device_memory_resource* mr = mr::get_current_device_resource())
    : storage_{other.storage_, stream, mr}
  {
  }

  /**
   * @brief As the pointer form, with the resource given as a reference (RMM 25.02's form).
   * @param size Number of elements
   * @param stream Stream of the allocation (and of later operations)
   * @param mr The resource (must outlive the vector)
   */
  device_uvector(std::size_t size, cuda_stream_view stream, device_async_resource_ref mr)
    : storage_{elements_to_bytes(size), stream, mr}
  {
  }

  /**
   * @brief As the pointer form, with the resource given as a reference (RMM 25.02's form).
   * @param other Vector to copy
   * @param stream Stream of the allocation and the copy
   * @param mr The resource (must outlive the vector)
   */
  device_uvector(device_uvector const& other, cuda_stream_view stream, device_async_resource_ref mr)
    : storage_{other.storage_, stream, mr}
  {
  }

  /**
   * @brief Pointer to element @p element_index (not checked).
   * @param element_index Index of the element
   * @return Its device address
   */
  [[nodiscard]] pointer element_ptr(std::size_t element_index) noexcept
  {
    return data() + element_index;
  }

  /**
   * @brief Pointer to element @p element_index (not checked).
   * @param element_index Index of the element
   * @return Its device address
   */
  [[nodiscard]] const_pointer element_ptr(std::size_t element_index) const noexcept
  {
    return data() + element_index;
  }

  /**
   * @brief Enqueues a copy of @p value into element @p element_index on @p stream.
   *
   * Returns without waiting: @p value must stay alive and unchanged until the copy completes
   * (synchronize @p stream). Zero values of arithmetic types are written with a memset.
   * @param element_index Index of the element to set
   * @param value Value to copy from (host memory)
   * @param stream Stream of the copy
   * @throws rmm::out_of_range when @p element_index >= size()
   * @throws rmm::cuda_error when the copy fails
   */
  void set_element_async(std::size_t element_index,
                         value_type const& value,
                         cuda_stream_view stream)
  {
    check_index(element_index);
    if constexpr (std::is_arithmetic<value_type>::value) {
      if (is_all_zero_bytes(value)) {
        detail::check(rmm_memset_async(
          element_ptr(element_index), 0, sizeof(value_type), detail::to_c_stream(stream.value())));
        return;
      }
    }
    detail::check(rmm_memcpy_async(
      element_ptr(element_index), &value, sizeof(value_type), detail::to_c_stream(stream.value())));
  }

  /// @brief Deleted: the asynchronous copy would read a temporary after it is destroyed.
  void set_element_async(std::size_t, value_type const&&, cuda_stream_view) = delete;

  /**
   * @brief Enqueues setting all bytes of element @p element_index to zero on @p stream.
   * @param element_index Index of the element
   * @param stream Stream of the memset
   * @throws rmm::out_of_range when @p element_index >= size()
   * @throws rmm::cuda_error when the memset fails
   */
  void set_element_to_zero_async(std::size_t element_index, cuda_stream_view stream)
  {
    check_index(element_index);
    detail::check(rmm_memset_async(
      element_ptr(element_index), 0, sizeof(value_type), detail::to_c_stream(stream.value())));
  }

  /**
   * @brief Copies @p value into element @p element_index and waits for @p stream.
   * @param element_index Index of the element
   * @param value Value to copy
   * @param stream Stream of the copy (synchronized before returning)
   * @throws rmm::out_of_range when @p element_index >= size()
   * @throws rmm::cuda_error when the copy fails
   */
  void set_element(std::size_t element_index, value_type const& value, cuda_stream_view stream)
  {
    set_element_async(element_index, value, stream);
    stream.synchronize();
  }

  /**
   * @brief Copies element @p element_index to the host, waiting for @p stream.
   * @param element_index Index of the element
   * @param stream Stream of the copy (synchronized before returning)
   * @return The element's value
   * @throws rmm::out_of_range when @p element_index >= size()
   * @throws rmm::cuda_error when the copy fails
   */
  [[nodiscard]] value_type element(std::size_t element_index, cuda_stream_view stream) const
  {
    check_index(element_index);
    value_type value;
    detail::check(rmm_memcpy_async(
      &value, element_ptr(element_index), sizeof(value_type), detail::to_c_stream(stream.value())));
    stream.synchronize();
    return value;
  }

  /**
   * @brief Copies the first element to the host, waiting for @p stream.
   * @param stream Stream of the copy
   * @return The first element
   * @throws rmm::out_of_range when the vector is empty
   */
  [[nodiscard]] value_type front_element(cuda_stream_view stream) const
  {
    return element(0, stream);
  }

  /**
   * @brief Copies the last element to the host, waiting for @p stream.
   * @param stream Stream of the copy
   * @return The last element
   * @throws rmm::out_of_range when the vector is empty
   */
  [[nodiscard]] value_type back_element(cuda_stream_view stream) const
  {
    if (is_empty()) { throw rmm::out_of_range{"back_element of an empty device_uvector"}; }
    return element(size() - 1, stream);
  }

  /**
   * @brief Makes the capacity at least @p new_capacity elements, keeping the contents.
   * @param new_capacity Requested capacity in elements
   * @param stream Stream of any reallocation (becomes the vector's stream)
   * @throws rmm::bad_alloc when the allocation fails
   */
  void reserve(std::size_t new_capacity, cuda_stream_view stream)
  {
    storage_.reserve(elements_to_bytes(new_capacity), stream);
  }

  /**
   * @brief Changes the number of elements; added elements are uninitialized.
   * @param new_size New number of elements
   * @param stream Stream of any reallocation (becomes the vector's stream)
   * @throws rmm::bad_alloc when the allocation fails
   */
  void resize(std::size_t new_size, cuda_stream_view stream)
  {
    storage_.resize(elements_to_bytes(new_size), stream);
  }

  /**
   * @brief Makes the capacity equal to the size.
   * @param stream Stream of any reallocation (becomes the vector's stream)
   */
  void shrink_to_fit(cuda_stream_view stream) { storage_.shrink_to_fit(stream); }

  /**
   * @brief Gives up the elements' storage; the vector is left empty.
   * @return The buffer holding the elements
   */
  device_buffer release() noexcept { return std::move(storage_); }

  /**
   * @brief The number of elements the storage can hold without reallocating.
   * @return The capacity in elements
   */
  [[nodiscard]] std::size_t capacity() const noexcept
  {
    return storage_.capacity() / sizeof(value_type);
  }

  /**
   * @brief Device pointer to the first element (null when the capacity is 0).
   * @return The pointer
   */
  [[nodiscard]] pointer data() noexcept { return static_cast<pointer>(storage_.data()); }

  /**
   * @brief Device pointer to the first element (null when the capacity is 0).
   * @return The pointer
   */
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
  /// @brief Const reverse iterator before the first element. @return
  /// const_reverse_iterator(cbegin())
  [[nodiscard]] const_reverse_iterator crend() const noexcept
  {
    return const_reverse_iterator(cbegin());
  }
  /// @brief Const reverse iterator before the first element. @return crend()
  [[nodiscard]] const_reverse_iterator rend() const noexcept { return crend(); }

  /**
   * @brief The number of elements.
   * @return The size
   */
  [[nodiscard]] std::size_t size() const noexcept { return storage_.size() / sizeof(value_type); }

  /**
   * @brief The number of elements as a signed integer.
   * @return The size
   */
  [[nodiscard]] std::int64_t ssize() const noexcept { return static_cast<std::int64_t>(size()); }

  /**
   * @brief Whether there are no elements.
   * @return true when empty
   */
  [[nodiscard]] bool is_empty() const noexcept { return size() == 0; }

  /**
   * @brief The resource the storage comes from.
   * @return A reference to it (RMM 25.02's return type)
   */
  [[nodiscard]] device_async_resource_ref memory_resource() const noexcept
  {
    return storage_.memory_resource();
  }

  /**
   * @brief The stream used for reallocation and deallocation.
   * @return The stream
   */
  [[nodiscard]] cuda_stream_view stream() const noexcept { return storage_.stream(); }

  /**
   * @brief Sets the stream used for later reallocation and deallocation.
   * @param stream The new stream
   */
  void set_stream(cuda_stream_view stream) noexcept { storage_.set_stream(stream); }

 private:
  static std::size_t elements_to_bytes(std::size_t num_elements)
  {
    if (num_elements > std::numeric_limits<std::size_t>::max() / sizeof(value_type)) {
      throw rmm::bad_alloc{"device_uvector: requested size overflows std::size_t"};
    }
    return num_elements * sizeof(value_type);
  }

  void check_index(std::size_t element_index) const
  {
    if (element_index >= size()) {
      throw rmm::out_of_range{"Attempt to access out of bounds element " +
                              std::to_string(element_index) + " of a device_uvector of size " +
                              std::to_string(size())};
    }
  }

  static bool is_all_zero_bytes(value_type const& value) noexcept
  {
    auto const* bytes = reinterpret_cast<unsigned char const*>(&value);
    for (std::size_t i = 0; i < sizeof(value_type); ++i) {
      if (bytes[i] != 0) { return false; }
    }
    return true;
  }

  device_buffer storage_;
};

RMM_API_NAMESPACE_END
}  // namespace rmm
