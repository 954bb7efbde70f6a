/**
 * @file detail/basic_device_buffer.hpp
 * @brief The one implementation of `rmm::device_buffer`: every API generation's class
 * (rmm/detail/gen_<yy>_<mm>/device_buffer.hpp) derives from it and adds only its constructor
 * set and the accessors whose signatures differ.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/stream_arg.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/error.hpp>
#include <rmm/rmm.h>

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace detail {

/**
 * @brief RAII owner of untyped, uninitialized device memory, allocated, reallocated and freed
 * in stream order from the resource the buffer holds.
 *
 * The buffer records the device that was current at construction and makes it current again
 * to reallocate or free. A moved-from buffer is empty: null data, size and capacity 0, the
 * default stream and no device (as RMM's); it may be destroyed, assigned to or reused.
 *
 * @tparam Policy The generation's container policy (rmm/detail/gen_<yy>_<mm>/container_policy.hpp):
 * `stream_type`, `resource_type` (what the buffer holds) and `has_value`, `allocate`,
 * `deallocate` over it
 */
template <typename Policy>
class basic_device_buffer {
 protected:
  /// @brief The generation's stream parameter type.
  using stream_type = typename Policy::stream_type;
  /// @brief What the buffer holds to allocate from.
  using resource_type = typename Policy::resource_type;

  /**
   * @brief An empty buffer on the default stream that allocates from @p mr when it grows.
   * @param mr The resource
   */
  explicit basic_device_buffer(resource_type mr) : mr_{std::move(mr)} {}

  /**
   * @brief Allocates @p size bytes aligned to @p alignment on @p stream.
   * @param size Bytes to allocate
   * @param alignment Alignment of the allocation (checked by the caller)
   * @param stream Stream of the allocation (and of later operations)
   * @param mr The resource to allocate from (checked by the caller)
   * @throws rmm::bad_alloc (or rmm::out_of_memory) when the allocation fails
   */
  basic_device_buffer(std::size_t size, std::size_t alignment, stream_type stream, resource_type mr)
    : alignment_{alignment}, stream_{stream}, mr_{std::move(mr)}
  {
    cuda_set_device_raii const dev{device_};
    allocate_async(size);
  }

  /**
   * @brief Allocates @p size bytes on @p stream and copies @p size bytes from @p source_data
   * (host or device memory) into them, asynchronously on @p stream.
   * @param source_data Where to copy from; may be null only when @p size is 0
   * @param size Bytes to allocate and copy
   * @param alignment Alignment of the allocation
   * @param stream Stream of the allocation and the copy
   * @param mr The resource to allocate from
   * @throws rmm::logic_error when @p source_data is null and @p size is not 0
   * @throws rmm::bad_alloc when the allocation fails
   * @throws rmm::cuda_error when the copy fails
   */
  basic_device_buffer(void const* source_data,
                      std::size_t size,
                      std::size_t alignment,
                      stream_type stream,
                      resource_type mr)
    : alignment_{alignment}, stream_{stream}, mr_{std::move(mr)}
  {
    RMM_EXPECTS(source_data != nullptr || size == 0,
                "device_buffer: copy of " + std::to_string(size) +
                  " bytes from a null pointer; pass the source's address or a size of 0");
    cuda_set_device_raii const dev{device_};
    allocate_async(size);
    // A constructor that throws runs no destructor: give the memory back first.
    try {
      copy_async(source_data, size);
    } catch (...) {
      deallocate_async();
      throw;
    }
  }

 public:
  basic_device_buffer(basic_device_buffer const&)            = delete;
  basic_device_buffer& operator=(basic_device_buffer const&) = delete;

  /**
   * @brief Takes @p other's memory, stream, resource and device; @p other is left empty.
   * @param other The buffer to move from
   */
  basic_device_buffer(basic_device_buffer&& other) noexcept
    : data_{std::exchange(other.data_, nullptr)},
      size_{std::exchange(other.size_, 0)},
      alignment_{std::exchange(other.alignment_, 1)},
      capacity_{std::exchange(other.capacity_, 0)},
      stream_{std::exchange(other.stream_, default_stream_arg())},
      mr_{std::move(other.mr_)},
      device_{std::exchange(other.device_, cuda_device_id{-1})}
  {
  }

  /**
   * @brief Frees this buffer's memory (on its stream), then takes @p other's memory, stream,
   * resource and device; @p other is left empty.
   * @param other The buffer to move from
   * @return *this
   */
  basic_device_buffer& operator=(basic_device_buffer&& other) noexcept
  {
    if (this != std::addressof(other)) {
      deallocate_async();
      data_      = std::exchange(other.data_, nullptr);
      size_      = std::exchange(other.size_, 0);
      alignment_ = std::exchange(other.alignment_, 1);
      capacity_  = std::exchange(other.capacity_, 0);
      stream_    = std::exchange(other.stream_, default_stream_arg());
      mr_        = std::move(other.mr_);
      device_    = std::exchange(other.device_, cuda_device_id{-1});
    }
    return *this;
  }

  /// @brief Frees the memory on the buffer's stream, with its device current.
  ~basic_device_buffer() noexcept { deallocate_async(); }

  /**
   * @brief Grows the capacity to at least @p new_capacity bytes, keeping the contents; does
   * nothing when the capacity is already large enough. The buffer's stream becomes @p stream.
   * @param new_capacity Bytes of capacity wanted
   * @param stream Stream of the new allocation and the copy
   * @throws rmm::logic_error when the buffer has no resource (it was moved from)
   * @throws rmm::bad_alloc when the allocation fails
   */
  void reserve(std::size_t new_capacity, stream_type stream)
  {
    set_stream(stream);
    if (new_capacity > capacity()) { reallocate(new_capacity); }
  }

  /**
   * @brief Changes the size to @p new_size bytes. Within the capacity only the size changes;
   * beyond it, new memory of exactly @p new_size bytes receives the old contents. Bytes past
   * the old size are uninitialized. The buffer's stream becomes @p stream.
   * @param new_size The new size in bytes
   * @param stream Stream of a reallocation and its copy
   * @throws rmm::logic_error when growing a buffer with no resource (it was moved from)
   * @throws rmm::bad_alloc when the allocation fails
   */
  void resize(std::size_t new_size, stream_type stream)
  {
    set_stream(stream);
    if (new_size > capacity()) { reallocate(new_size); }
    size_ = new_size;
  }

  /**
   * @brief Reallocates so that the capacity equals the size (when it does not already). The
   * buffer's stream becomes @p stream.
   * @param stream Stream of the reallocation and its copy
   */
  void shrink_to_fit(stream_type stream)
  {
    set_stream(stream);
    if (size() != capacity()) { reallocate(size()); }
  }

  /// @brief The memory (null when the capacity is 0). @return Device pointer
  [[nodiscard]] void const* data() const noexcept { return data_; }

  /// @brief The memory (null when the capacity is 0). @return Device pointer
  void* data() noexcept { return data_; }

  /// @brief Bytes in use. @return The size
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

  /// @brief Bytes in use, as a signed number. @return The size
  [[nodiscard]] std::int64_t ssize() const noexcept
  {
    assert(size() < static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max()) &&
           "Size overflows signed integer");
    return static_cast<std::int64_t>(size());
  }

  /// @brief Whether the size is 0. @return true when empty
  [[nodiscard]] bool is_empty() const noexcept { return size_ == 0; }

  /// @brief Bytes allocated (at least `size()`). @return The capacity
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }

  /// @brief The stream of the most recent (de)allocation or copy. @return The stream
  [[nodiscard]] stream_type stream() const noexcept { return stream_; }

  /**
   * @brief Sets the stream later reallocations and the deallocation use. The caller makes
   * sure that work on the old stream that uses the memory is ordered before them.
   * @param stream The new stream
   */
  void set_stream(stream_type stream) noexcept { stream_ = stream; }

 protected:
  /// @brief The resource the buffer holds. @return It
  [[nodiscard]] resource_type& resource() noexcept { return mr_; }
  /// @brief The resource the buffer holds. @return It
  [[nodiscard]] resource_type const& resource() const noexcept { return mr_; }
  /// @brief The alignment the memory was allocated with (1 after a move). @return Bytes
  [[nodiscard]] std::size_t allocation_alignment() const noexcept { return alignment_; }

 private:
  void* checked_allocate(std::size_t bytes)
  {
    RMM_EXPECTS(Policy::has_value(mr_),
                "device_buffer: no memory resource to allocate " + std::to_string(bytes) +
                  " bytes from (the buffer was moved from); assign a new buffer to it first");
    return Policy::allocate(mr_, stream_, bytes, alignment_);
  }

  // Allocation on the buffer's device, which the caller made current.
  void allocate_async(std::size_t bytes)
  {
    data_     = (bytes > 0) ? checked_allocate(bytes) : nullptr;
    size_     = bytes;
    capacity_ = bytes;
  }

  [[nodiscard]] rmm_stream_t c_stream() const noexcept { return c_stream_arg(stream_); }

  void copy_async(void const* source, std::size_t bytes)
  {
    if (bytes == 0) { return; }
    check(rmm_memcpy_async(data_, source, bytes, c_stream()));
  }

  // Replaces the memory by new_capacity bytes holding the first min(size, new_capacity) bytes.
  void reallocate(std::size_t new_capacity)
  {
    cuda_set_device_raii const dev{device_};
    void* const new_data   = (new_capacity > 0) ? checked_allocate(new_capacity) : nullptr;
    std::size_t const keep = size_ < new_capacity ? size_ : new_capacity;
    if (keep > 0) {
      rmm_status_t const status = rmm_memcpy_async(new_data, data_, keep, c_stream());
      if (status != RMM_STATUS_SUCCESS) {
        Policy::deallocate(mr_, stream_, new_data, new_capacity, alignment_);
        check(status);
      }
    }
    if (capacity_ > 0) { Policy::deallocate(mr_, stream_, data_, capacity_, alignment_); }
    data_     = new_data;
    capacity_ = new_capacity;
    if (size_ > new_capacity) { size_ = new_capacity; }
  }

  void deallocate_async() noexcept
  {
    if (capacity_ > 0 && Policy::has_value(mr_)) {
      try {
        cuda_set_device_raii const dev{device_};
        Policy::deallocate(mr_, stream_, data_, capacity_, alignment_);
      } catch (std::exception const& e) {
        std::fprintf(stderr, "rmm: device_buffer deallocation failed: %s\n", e.what());
      }
    }
    data_      = nullptr;
    size_      = 0;
    alignment_ = 1;
    capacity_  = 0;
  }

  void* data_{nullptr};
  std::size_t size_{0};
  std::size_t alignment_{rmm::CUDA_ALLOCATION_ALIGNMENT};
  std::size_t capacity_{0};
  stream_type stream_{default_stream_arg()};
  resource_type mr_;
  cuda_device_id device_{get_current_cuda_device()};
};

}  // namespace detail
RMM_API_NAMESPACE_END
}  // namespace rmm
