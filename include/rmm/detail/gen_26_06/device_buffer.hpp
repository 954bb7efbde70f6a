/**
 * @file detail/gen_26_06/device_buffer.hpp
 * @brief RMM 26.06's `rmm::device_buffer`: untyped, uninitialized, stream-ordered device memory
 * that owns its memory resource as a `cuda::mr::any_resource<cuda::mr::device_accessible>`.
 *
 * Differences from the 25.x buffer (rmm/device_buffer.hpp): the resource argument is an owning
 * `any_resource` (built from one of our resources, a resource_ref, or any user resource that
 * satisfies `cuda::mr::resource_with<R, cuda::mr::device_accessible>`), so the buffer keeps a
 * shared resource alive; an allocation alignment can be chosen (`alignment()`), and an
 * alignment that is not a power of two throws `rmm::invalid_argument`.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>

#include <cuda/memory_resource>

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN

/**
 * @brief RAII owner of untyped, uninitialized device memory, allocated and freed in stream order
 * from a memory resource the buffer holds (RMM 26.06).
 *
 * The buffer records the device that was current at construction and makes it current again
 * to free or reallocate. Copying needs a stream (`device_buffer(other, stream)`); moving does
 * not, and leaves the source empty with no resource.
 */
class device_buffer {
 public:
  device_buffer(device_buffer const& other)            = delete;
  device_buffer& operator=(device_buffer const& other) = delete;

  /// @brief An empty buffer: no memory, size 0, default stream, the current device resource.
  device_buffer() : mr_{mr::get_current_device_resource_ref()} {}

  /**
   * @brief Allocates @p size bytes (uninitialized) on @p stream, aligned to
   * rmm::CUDA_ALLOCATION_ALIGNMENT.
   *
   * @param size Bytes to allocate
   * @param stream Stream of the allocation (and of later deallocation)
   * @param mr The resource to allocate from; the buffer keeps it (a copy, or a reference for
   * a resource_ref)
   * @throws rmm::logic_error when @p mr is empty
   * @throws rmm::bad_alloc or rmm::out_of_memory when the allocation fails
   */
  explicit device_buffer(
    std::size_t size,
    cuda_stream_view stream,
    cuda::mr::any_resource<cuda::mr::device_accessible> mr = mr::get_current_device_resource_ref())
    : device_buffer{size, rmm::CUDA_ALLOCATION_ALIGNMENT, stream, std::move(mr)}
  {
  }

  /**
   * @brief Allocates @p size bytes (uninitialized) on @p stream, aligned to at least
   * @p alignment.
   *
   * @param size Bytes to allocate
   * @param alignment Required alignment, a power of two
   * @param stream Stream of the allocation (and of later deallocation)
   * @param mr The resource to allocate from
   * @throws rmm::invalid_argument when @p alignment is not a power of two
   * @throws rmm::logic_error when @p mr is empty
   * @throws rmm::bad_alloc when the resource cannot allocate (or cannot align) the memory
   */
  explicit device_buffer(
    std::size_t size,
    std::size_t alignment,
    cuda_stream_view stream,
    cuda::mr::any_resource<cuda::mr::device_accessible> mr = mr::get_current_device_resource_ref())
    : alignment_{checked_alignment(alignment)}, stream_{stream}, mr_{checked_resource(std::move(mr))}
  {
    cuda_set_device_raii const dev{device_};
    allocate_async(size);
  }

  /**
   * @brief Allocates @p size bytes on @p stream and copies @p size bytes from @p source_data
   * (host or device memory) into them, asynchronously on @p stream.
   *
   * @param source_data Where to copy from; may be null only when @p size is 0
   * @param size Bytes to allocate and copy
   * @param stream Stream of the allocation and the copy
   * @param mr The resource to allocate from
   * @throws rmm::logic_error when @p source_data is null (and @p size is not 0), or @p mr is
   * empty
   * @throws rmm::bad_alloc when the allocation fails
   * @throws rmm::cuda_error when the copy fails
   */
  device_buffer(
    void const* source_data,
    std::size_t size,
    cuda_stream_view stream,
    cuda::mr::any_resource<cuda::mr::device_accessible> mr = mr::get_current_device_resource_ref())
    : device_buffer{source_data, size, rmm::CUDA_ALLOCATION_ALIGNMENT, stream, std::move(mr)}
  {
  }

  /**
   * @brief Allocates @p size bytes aligned to at least @p alignment on @p stream and copies
   * @p size bytes from @p source_data into them.
   *
   * @param source_data Where to copy from; may be null only when @p size is 0
   * @param size Bytes to allocate and copy
   * @param alignment Required alignment, a power of two
   * @param stream Stream of the allocation and the copy
   * @param mr The resource to allocate from
   * @throws rmm::invalid_argument when @p alignment is not a power of two
   * @throws rmm::logic_error when @p source_data is null (and @p size is not 0), or @p mr is
   * empty
   * @throws rmm::bad_alloc when the allocation fails
   */
  explicit device_buffer(
    void const* source_data,
    std::size_t size,
    std::size_t alignment,
    cuda_stream_view stream,
    cuda::mr::any_resource<cuda::mr::device_accessible> mr = mr::get_current_device_resource_ref())
    : alignment_{checked_alignment(alignment)}, stream_{stream}, mr_{checked_resource(std::move(mr))}
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

  /**
   * @brief A copy of @p other's bytes (its size, not its capacity, with its alignment) in new
   * memory from @p mr, copied on @p stream.
   *
   * @param other The buffer to copy
   * @param stream Stream of the allocation and the copy
   * @param mr The resource to allocate from
   */
  device_buffer(
    device_buffer const& other,
    cuda_stream_view stream,
    cuda::mr::any_resource<cuda::mr::device_accessible> mr = mr::get_current_device_resource_ref())
    : device_buffer{other.data(), other.size(), other.alignment(), stream, std::move(mr)}
  {
  }

  /**
   * @brief Takes @p other's memory, stream, resource and device; @p other is left empty (no
   * memory, default stream, no resource).
   * @param other The buffer to move from
   */
  device_buffer(device_buffer&& other) noexcept
    : data_{std::exchange(other.data_, nullptr)},
      size_{std::exchange(other.size_, 0)},
      alignment_{std::exchange(other.alignment_, 1)},
      capacity_{std::exchange(other.capacity_, 0)},
      stream_{std::exchange(other.stream_, cuda_stream_view{})},
      mr_{std::move(other.mr_)},
      device_{std::exchange(other.device_, cuda_device_id{-1})}
  {
  }

  /**
   * @brief Frees this buffer's memory, then takes @p other's memory, stream, resource and
   * device; @p other is left empty.
   * @param other The buffer to move from
   * @return *this
   */
  device_buffer& operator=(device_buffer&& other) noexcept
  {
    if (this != std::addressof(other)) {
      deallocate_async();
      data_      = std::exchange(other.data_, nullptr);
      size_      = std::exchange(other.size_, 0);
      alignment_ = std::exchange(other.alignment_, 1);
      capacity_  = std::exchange(other.capacity_, 0);
      stream_    = std::exchange(other.stream_, cuda_stream_view{});
      mr_        = std::move(other.mr_);
      device_    = std::exchange(other.device_, cuda_device_id{-1});
    }
    return *this;
  }

  /// @brief Frees the memory on the buffer's stream, with its device current.
  ~device_buffer() noexcept { deallocate_async(); }

  /**
   * @brief Grows the capacity to at least @p new_capacity bytes, keeping the contents; does
   * nothing when the capacity is already large enough. The buffer's stream becomes @p stream.
   *
   * @param new_capacity Bytes of capacity wanted
   * @param stream Stream of the new allocation and the copy
   * @throws rmm::logic_error when the buffer has no resource (it was moved from)
   * @throws rmm::bad_alloc when the allocation fails
   */
  void reserve(std::size_t new_capacity, cuda_stream_view stream)
  {
    set_stream(stream);
    if (new_capacity > capacity()) { reallocate(new_capacity); }
  }

  /**
   * @brief Changes the size to @p new_size bytes. Within the capacity only the size changes;
   * beyond it, new memory of exactly @p new_size bytes receives the old contents. Bytes past
   * the old size are uninitialized. The buffer's stream becomes @p stream.
   *
   * @param new_size The new size in bytes
   * @param stream Stream of a reallocation and its copy
   * @throws rmm::logic_error when growing a buffer with no resource (it was moved from)
   * @throws rmm::bad_alloc when the allocation fails
   */
  void resize(std::size_t new_size, cuda_stream_view stream)
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
  void shrink_to_fit(cuda_stream_view stream)
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

  /// @brief Bytes allocated. @return The capacity
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }

  /// @brief The alignment the memory was allocated with (1 after a move). @return Bytes
  [[nodiscard]] std::size_t alignment() const noexcept { return alignment_; }

  /// @brief The stream of the most recent (de)allocation or copy. @return The stream
  [[nodiscard]] cuda_stream_view stream() const noexcept { return stream_; }

  /**
   * @brief Sets the stream later reallocations and the deallocation use. The caller makes
   * sure that work on the old stream that uses the memory is ordered before them.
   * @param stream The new stream
   */
  void set_stream(cuda_stream_view stream) noexcept { stream_ = stream; }

  /**
   * @brief A reference to the resource the buffer holds; valid while the buffer lives and keeps
   * that resource (a later move-assignment replaces it).
   * @return The reference
   */
  [[nodiscard]] rmm::device_async_resource_ref memory_resource() noexcept
  {
    return rmm::device_async_resource_ref{mr_};
  }

 private:
  static std::size_t checked_alignment(std::size_t alignment)
  {
    RMM_EXPECTS(rmm::is_supported_alignment(alignment),
                "device_buffer: alignment " + std::to_string(alignment) +
                  " is not a power of two; pass a power of two such as 256",
                rmm::invalid_argument);
    return alignment;
  }

  static cuda::mr::any_resource<cuda::mr::device_accessible> checked_resource(
    cuda::mr::any_resource<cuda::mr::device_accessible>&& mr)
  {
    RMM_EXPECTS(mr.has_value(),
                "device_buffer: empty cuda::mr::any_resource; pass a memory resource (or omit "
                "the argument for the current device resource)");
    return std::move(mr);
  }

  void* checked_allocate(std::size_t bytes)
  {
    RMM_EXPECTS(mr_.has_value(),
                "device_buffer: no memory resource to allocate " + std::to_string(bytes) +
                  " bytes from (the buffer was moved from); assign a new buffer to it first");
    return mr_.allocate(stream_, bytes, alignment_);
  }

  // Allocation on the buffer's device, which the caller made current.
  void allocate_async(std::size_t bytes)
  {
    data_     = (bytes > 0) ? checked_allocate(bytes) : nullptr;
    size_     = bytes;
    capacity_ = bytes;
  }

  void copy_async(void const* source, std::size_t bytes)
  {
    if (bytes == 0) { return; }
    detail::check(rmm_memcpy_async(data_, source, bytes, detail::to_c_stream(stream_.value())));
  }

  // Replaces the memory by new_capacity bytes holding the first min(size, new_capacity) bytes.
  void reallocate(std::size_t new_capacity)
  {
    cuda_set_device_raii const dev{device_};
    void* const new_data = (new_capacity > 0) ? checked_allocate(new_capacity) : nullptr;
    std::size_t const keep = size_ < new_capacity ? size_ : new_capacity;
    if (keep > 0) {
      rmm_status_t const status =
        rmm_memcpy_async(new_data, data_, keep, detail::to_c_stream(stream_.value()));
      if (status != RMM_STATUS_SUCCESS) {
        mr_.deallocate(stream_, new_data, new_capacity, alignment_);
        detail::check(status);
      }
    }
    if (capacity_ > 0) { mr_.deallocate(stream_, data_, capacity_, alignment_); }
    data_     = new_data;
    capacity_ = new_capacity;
    if (size_ > new_capacity) { size_ = new_capacity; }
  }

  void deallocate_async() noexcept
  {
    if (capacity_ > 0 && mr_.has_value()) {
      try {
        cuda_set_device_raii const dev{device_};
        mr_.deallocate(stream_, data_, capacity_, alignment_);
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
  cuda_stream_view stream_{};
  cuda::mr::any_resource<cuda::mr::device_accessible> mr_;
  cuda_device_id device_{get_current_cuda_device()};
};

RMM_API_NAMESPACE_END
}  // namespace rmm

#endif  // RMM_API_GENERATION
