/**
 * @file detail/gen_25_02/device_buffer.hpp
 * @brief Untyped, uninitialized, stream-ordered device memory (RMM's `rmm::device_buffer`).
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/mr/device/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>
#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <utility>
#include <cassert>
#include <stdexcept>

namespace rmm {
RMM_API_NAMESPACE_BEGIN

/**
 * @brief RAII owner of an untyped, uninitialized block of device memory.
 *
 * Memory is allocated from a device memory resource on a stream and freed on the buffer's
 * current stream (`stream()`). The buffer remembers the device that was current when it was
 * constructed and makes that device current while it reallocates or frees its memory.
 * Copies between buffers and from host memory are enqueued with `rmm_memcpy_async` on the
 * buffer's stream.
 *
 * A moved-from buffer is empty: `data() == nullptr`, `size() == 0`, `capacity() == 0`, and its
 * stream is the default stream. It may be destroyed, assigned to, or reused (e.g. `resize`).
 *
 * @note The memory resource is held as a `device_async_resource_ref` (as in RMM 25.02) and must
 * outlive the buffer. Constructors take a reference or a resource pointer. Memory is
 * allocated and freed through the reference, as RMM does, so the resource sees the size
 * rounded up to `alignof(std::max_align_t)` (the reference's default alignment).
 */
class device_buffer {
 public:
  /// @brief An empty buffer: no memory, size 0, default stream, the current device resource.
  device_buffer() : mr_{mr::get_current_device_resource_ref()} {}

  /**
   * @brief Allocates @p size bytes of uninitialized memory on @p stream.
   * @param size Bytes to allocate
   * @param stream Stream of the allocation (and of later operations)
   * @param mr Resource to allocate from (held as a pointer; must outlive the buffer)
   * @throws rmm::bad_alloc when the allocation fails
   * @throws rmm::logic_error when @p mr is null
   */
  explicit device_buffer(std::size_t size,
                         cuda_stream_view stream,
                         mr::device_memory_resource* mr = mr::get_current_device_resource())
    : device_buffer{size, stream, checked_mr(mr)}
  {
  }

  /**
   * @brief Allocates @p size bytes on @p stream and enqueues a copy of @p source_data into them.
   * @param source_data Host or device memory to copy from (at least @p size bytes)
   * @param size Bytes to allocate and copy
   * @param stream Stream of the allocation and the copy
   * @param mr Resource to allocate from (held as a pointer; must outlive the buffer)
   * @throws rmm::logic_error when @p source_data is null and @p size is not 0, or @p mr is null
   * @throws rmm::bad_alloc when the allocation fails
   * @throws rmm::cuda_error when the copy fails
   */
  device_buffer(void const* source_data,
                std::size_t size,
                cuda_stream_view stream,
                mr::device_memory_resource* mr = mr::get_current_device_resource())
    : device_buffer{source_data, size, stream, checked_mr(mr)}
  {
  }

  /**
   * @brief A deep copy of @p other's contents (its `size()` bytes), enqueued on @p stream.
   *
   * The new buffer's capacity equals `other.size()`.
   * @param other Buffer to copy
   * @param stream Stream of the allocation and the copy
   * @param mr Resource to allocate from (held as a pointer; must outlive the buffer)
   * @throws rmm::bad_alloc when the allocation fails
   * @throws rmm::cuda_error when the copy fails
   */
  device_buffer(device_buffer const& other,
                cuda_stream_view stream,
                mr::device_memory_resource* mr = mr::get_current_device_resource())
    : device_buffer{other.data(), other.size(), stream, mr}
  {
  }

  /**
   * @brief As the pointer form, with the resource given as a reference (RMM 25.02's form);
   * the reference may be to any device-accessible, stream-ordered resource.
   * @param size Bytes to allocate
   * @param stream Stream of the allocation (and of later operations)
   * @param mr The resource (must outlive the buffer)
   * @throws rmm::bad_alloc when the allocation fails
   */
  device_buffer(std::size_t size, cuda_stream_view stream, device_async_resource_ref mr)
    : stream_{stream}, mr_{mr}
  {
    allocate_async(size);
  }

  /**
   * @brief As the pointer form, with the resource given as a reference (RMM 25.02's form).
   * @param source_data Host or device memory to copy from (at least @p size bytes)
   * @param size Bytes to allocate and copy
   * @param stream Stream of the allocation and the copy
   * @param mr The resource (must outlive the buffer)
   * @throws rmm::logic_error when @p source_data is null and @p size is not 0
   */
  device_buffer(void const* source_data,
                std::size_t size,
                cuda_stream_view stream,
                device_async_resource_ref mr)
    : stream_{stream}, mr_{mr}
  {
    if (source_data == nullptr && size > 0) {
      throw rmm::logic_error{"device_buffer: copy from a null pointer"};
    }
    allocate_async(size);
    // A constructor that throws runs no destructor: give the memory back first.
    try {
      copy_async(source_data, size);
    } catch (...) {
      deallocate_async();
      throw;
    }
  }

  /**
   * @brief As the pointer form, with the resource given as a reference (RMM 25.02's form).
   * @param other Buffer to copy
   * @param stream Stream of the allocation and the copy
   * @param mr The resource (must outlive the buffer)
   */
  device_buffer(device_buffer const& other, cuda_stream_view stream, device_async_resource_ref mr)
    : device_buffer{other.data(), other.size(), stream, mr}
  {
  }

  device_buffer(device_buffer const&)            = delete;
  device_buffer& operator=(device_buffer const&) = delete;

  /**
   * @brief Takes @p other's memory, stream, resource and device.
   *
   * @p other is left empty: null data, size and capacity 0, the default stream.
   * @param other Buffer to move from
   */
  device_buffer(device_buffer&& other) noexcept
    : data_{std::exchange(other.data_, nullptr)},
      size_{std::exchange(other.size_, 0)},
      capacity_{std::exchange(other.capacity_, 0)},
      stream_{std::exchange(other.stream_, cuda_stream_view{})},
      mr_{other.mr_},
      device_{other.device_}
  {
  }

  /**
   * @brief Frees this buffer's memory (on its stream) and takes @p other's.
   *
   * @p other is left empty: null data, size and capacity 0, the default stream.
   * @param other Buffer to move from
   * @return *this
   */
  device_buffer& operator=(device_buffer&& other) noexcept
  {
    if (&other != this) {
      deallocate_async();
      data_     = std::exchange(other.data_, nullptr);
      size_     = std::exchange(other.size_, 0);
      capacity_ = std::exchange(other.capacity_, 0);
      stream_   = std::exchange(other.stream_, cuda_stream_view{});
      mr_       = other.mr_;
      device_   = other.device_;
    }
    return *this;
  }

  /// @brief Frees the memory on the buffer's stream, with its device current.
  ~device_buffer() noexcept { deallocate_async(); }

  /**
   * @brief Makes the capacity at least @p new_capacity bytes, keeping the contents.
   *
   * Reallocates (with the buffer's device current) only when @p new_capacity exceeds
   * `capacity()`; `size()` is unchanged. @p stream becomes the buffer's stream.
   * @param new_capacity Requested capacity in bytes
   * @param stream Stream of the reallocation and copy
   * @throws rmm::bad_alloc when the allocation fails
   */
  void reserve(std::size_t new_capacity, cuda_stream_view stream)
  {
    set_stream(stream);
    if (new_capacity > capacity()) { reallocate(new_capacity); }
  }

  /**
   * @brief Changes the size to @p new_size bytes.
   *
   * Shrinking or growing within the capacity only changes `size()`. Growing past it
   * reallocates exactly @p new_size bytes and copies the old contents; the added bytes are
   * uninitialized. @p stream becomes the buffer's stream.
   * @param new_size New size in bytes
   * @param stream Stream of the reallocation and copy
   * @throws rmm::bad_alloc when the allocation fails
   */
  void resize(std::size_t new_size, cuda_stream_view stream)
  {
    set_stream(stream);
    if (new_size > capacity()) { reallocate(new_size); }
    size_ = new_size;
  }

  /**
   * @brief Makes the capacity equal to the size, reallocating when they differ.
   * @param stream Stream of the reallocation and copy (becomes the buffer's stream)
   * @throws rmm::bad_alloc when the allocation fails
   */
  void shrink_to_fit(cuda_stream_view stream)
  {
    set_stream(stream);
    if (size() != capacity()) { reallocate(size()); }
  }

  /**
   * @brief Pointer to the device memory (null when the capacity is 0).
   * @return The pointer
   */
  [[nodiscard]] void const* data() const noexcept { return data_; }

  /**
   * @brief Pointer to the device memory (null when the capacity is 0).
   * @return The pointer
   */
  void* data() noexcept { return data_; }

  /**
   * @brief The size in bytes.
   * @return The size
   */
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

  /**
   * @brief The size in bytes as a signed integer.
   * @return The size
   */
  [[nodiscard]] std::int64_t ssize() const noexcept { return static_cast<std::int64_t>(size_); }

  /**
   * @brief Whether the size is 0.
   * @return true when empty
   */
  [[nodiscard]] bool is_empty() const noexcept { return size_ == 0; }

  /**
   * @brief The number of bytes allocated (at least `size()`).
   * @return The capacity
   */
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }

  /**
   * @brief The stream used for reallocation and deallocation.
   * @return The stream
   */
  [[nodiscard]] cuda_stream_view stream() const noexcept { return stream_; }

  /**
   * @brief Sets the stream used for later reallocation and deallocation.
   *
   * The caller must make sure that earlier work on the old stream that uses this memory is
   * ordered before later work on @p stream.
   * @param stream The new stream
   */
  void set_stream(cuda_stream_view stream) noexcept { stream_ = stream; }

  /**
   * @brief The resource the memory comes from.
   * @return A reference to it (RMM 25.02's return type)
   */
  [[nodiscard]] device_async_resource_ref memory_resource() const noexcept { return mr_; }

 private:
  static device_async_resource_ref checked_mr(mr::device_memory_resource* mr)
  {
    if (mr == nullptr) { throw rmm::logic_error{"device_buffer: null memory resource"}; }
    return device_async_resource_ref{mr};
  }

  // Allocation on the current device (the one recorded in device_).
  void allocate_async(std::size_t bytes)
  {
    size_     = bytes;
    capacity_ = bytes;
    data_     = (bytes > 0) ? mr_.allocate_async(bytes, stream_) : nullptr;
  }

  void copy_async(void const* source, std::size_t bytes)
  {
    if (bytes == 0) { return; }
    if (source == nullptr) { throw rmm::logic_error{"device_buffer: copy from a null pointer"}; }
    detail::check(rmm_memcpy_async(data_, source, bytes, detail::to_c_stream(stream_.value())));
  }

  // Replaces the memory by new_capacity bytes holding the first min(size, new_capacity) bytes.
  void reallocate(std::size_t new_capacity)
  {
    cuda_set_device_raii const dev{device_};
    void* const new_data = (new_capacity > 0) ? mr_.allocate_async(new_capacity, stream_) : nullptr;
    std::size_t const keep = size_ < new_capacity ? size_ : new_capacity;
    if (keep > 0) {
      rmm_status_t const status =
        rmm_memcpy_async(new_data, data_, keep, detail::to_c_stream(stream_.value()));
      if (status != RMM_STATUS_SUCCESS) {
        mr_.deallocate_async(new_data, new_capacity, stream_);
        detail::check(status);
      }
    }
    if (capacity_ > 0) { mr_.deallocate_async(data_, capacity_, stream_); }
    data_     = new_data;
    capacity_ = new_capacity;
    if (size_ > new_capacity) { size_ = new_capacity; }
  }

  void deallocate_async() noexcept
  {
    if (capacity_ > 0) {
      try {
        cuda_set_device_raii const dev{device_};
        mr_.deallocate_async(data_, capacity_, stream_);
      } catch (std::exception const& e) {
        std::fprintf(stderr, "rmm: device_buffer deallocation failed: %s\n", e.what());
      }
    }
    data_     = nullptr;
    size_     = 0;
    capacity_ = 0;
  }

  void* data_{nullptr};
  std::size_t size_{0};
  std::size_t capacity_{0};
  cuda_stream_view stream_{};
  device_async_resource_ref mr_;
  cuda_device_id device_{get_current_cuda_device()};
};

RMM_API_NAMESPACE_END
}  // namespace rmm
