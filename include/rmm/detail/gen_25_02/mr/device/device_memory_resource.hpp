/**
 * @file detail/gen_25_02/mr/device/device_memory_resource.hpp
 * @brief The virtual base class of device memory resources (RMM's `device_memory_resource`).
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/detail/export.hpp>

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/cuda_memory_resource.hpp>
#include <rmm/detail/cuda_mr.hpp>
#include <rmm/detail/error.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief Base class of all device memory allocation.
 *
 * The public functions are non-virtual and forward to the private virtual `do_allocate`,
 * `do_deallocate` and `do_is_equal`, which derived classes override. Every allocation is
 * aligned to at least 256 bytes (rmm::CUDA_ALLOCATION_ALIGNMENT).
 *
 * Memory allocated on a stream may be used on that stream right away; using it on another
 * stream needs synchronization (an event or a stream synchronize) first.
 *
 * A user-defined subclass can be passed anywhere the library accepts a resource (for example
 * `set_current_device_resource`): it is then bridged into the Rust core as a callback
 * resource, so C code calling `rmm_allocate` on the current resource reaches its `do_allocate`.
 *
 * The older hipMM API (RMM 23.12) virtuals `supports_streams()`, `supports_get_mem_info()`
 * and `do_get_mem_info()` are kept with defaults so that subclasses overriding them compile.
 */
class device_memory_resource {
 public:
  device_memory_resource()                                             = default;
  virtual ~device_memory_resource()                                    = default;
  device_memory_resource(device_memory_resource const&)                = default;  ///< @brief Copy
  device_memory_resource(device_memory_resource&&) noexcept            = default;  ///< @brief Move
  device_memory_resource& operator=(device_memory_resource const&)     = default;  ///< @brief Copy
  device_memory_resource& operator=(device_memory_resource&&) noexcept = default;  ///< @brief Move

  /**
   * @brief Allocates at least @p bytes, aligned to 256 bytes, ordered on @p stream.
   * @param bytes Size of the allocation; 0 returns nullptr
   * @param stream Stream on which the allocation is ordered
   * @return Pointer to the allocation
   * @throws rmm::bad_alloc (or rmm::out_of_memory) when the memory cannot be allocated
   */
  void* allocate(std::size_t bytes, cuda_stream_view stream = cuda_stream_view{})
  {
    return do_allocate(bytes, stream);
  }

  /**
   * @brief Frees memory returned by allocate() of a resource equal to this one.
   * @param ptr The pointer returned by allocate()
   * @param bytes The size passed to allocate()
   * @param stream Stream on which the deallocation is ordered
   */
  void deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream = cuda_stream_view{})
  {
    do_deallocate(ptr, bytes, stream);
  }

  /**
   * @brief Whether memory allocated by one resource may be freed by the other.
   * @param other The other resource
   * @return true when the two are interchangeable
   */
  [[nodiscard]] bool is_equal(device_memory_resource const& other) const noexcept
  {
    return do_is_equal(other);
  }

  /**
   * @brief Allocates at least @p bytes with the given alignment on the default stream.
   * @param bytes Size of the allocation (rounded up to @p alignment)
   * @param alignment A power of two
   * @return Pointer to the allocation
   * @throws rmm::logic_error when @p alignment is not a power of two
   * @throws rmm::bad_alloc when the memory cannot be allocated
   */
  void* allocate(std::size_t bytes, std::size_t alignment)
  {
    return allocate_async(bytes, alignment, cuda_stream_view{});
  }

  /**
   * @brief Frees memory returned by allocate(bytes, alignment).
   * @param ptr The pointer
   * @param bytes The size passed to allocate()
   * @param alignment The alignment passed to allocate()
   */
  void deallocate(void* ptr, std::size_t bytes, std::size_t alignment)
  {
    deallocate_async(ptr, bytes, alignment, cuda_stream_view{});
  }

  /**
   * @brief Allocates at least @p bytes with the given alignment, ordered on @p stream.
   * @param bytes Size of the allocation (rounded up to @p alignment)
   * @param alignment A power of two
   * @param stream Stream on which the allocation is ordered
   * @return Pointer to the allocation
   * @throws rmm::logic_error when @p alignment is not a power of two
   * @throws rmm::bad_alloc when the memory cannot be allocated
   */
  void* allocate_async(std::size_t bytes, std::size_t alignment, cuda_stream_view stream)
  {
    RMM_EXPECTS(rmm::is_supported_alignment(alignment), "alignment must be a power of two");
    return do_allocate(rmm::align_up(bytes, alignment), stream);
  }

  /**
   * @brief Allocates at least @p bytes, ordered on @p stream.
   * @param bytes Size of the allocation
   * @param stream Stream on which the allocation is ordered
   * @return Pointer to the allocation
   * @throws rmm::bad_alloc when the memory cannot be allocated
   */
  void* allocate_async(std::size_t bytes, cuda_stream_view stream)
  {
    return do_allocate(bytes, stream);
  }

  /**
   * @brief Frees memory returned by allocate_async(bytes, alignment, stream).
   * @param ptr The pointer
   * @param bytes The size passed to allocate_async()
   * @param alignment The alignment passed to allocate_async()
   * @param stream Stream on which the deallocation is ordered
   */
  void deallocate_async(void* ptr,
                        std::size_t bytes,
                        std::size_t alignment,
                        cuda_stream_view stream)
  {
    do_deallocate(ptr, rmm::align_up(bytes, alignment), stream);
  }

  /**
   * @brief Frees memory returned by allocate_async(bytes, stream).
   * @param ptr The pointer
   * @param bytes The size passed to allocate_async()
   * @param stream Stream on which the deallocation is ordered
   */
  void deallocate_async(void* ptr, std::size_t bytes, cuda_stream_view stream)
  {
    do_deallocate(ptr, bytes, stream);
  }

  /**
   * @brief Same as is_equal().
   * @param other The other resource
   * @return true when equal
   */
  [[nodiscard]] bool operator==(device_memory_resource const& other) const noexcept
  {
    return do_is_equal(other);
  }

  /**
   * @brief Negation of is_equal().
   * @param other The other resource
   * @return true when not equal
   */
  [[nodiscard]] bool operator!=(device_memory_resource const& other) const noexcept
  {
    return !do_is_equal(other);
  }

  /**
   * @brief Allocates @p bytes aligned to @p alignment, synchronously (CCCL 3.1's name, which
   * RMM 25.10's resources have): the same as allocate(bytes, alignment).
   * @param bytes The size
   * @param alignment A power of two (default 256)
   * @return The memory
   */
  void* allocate_sync(std::size_t bytes, std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT)
  {
    return allocate(bytes, alignment);
  }

  /**
   * @brief Frees memory from allocate_sync() (CCCL 3.1's name).
   * @param ptr The memory
   * @param bytes The size it was allocated with
   * @param alignment The alignment it was allocated with
   */
  void deallocate_sync(void* ptr,
                       std::size_t bytes,
                       std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT)
  {
    deallocate(ptr, bytes, alignment);
  }

  /**
   * @brief Allocates @p bytes aligned to @p alignment, ordered on @p stream (CCCL 3.1's
   * stream-first form, which RMM 25.10's resources have): allocate_async(bytes, alignment,
   * stream).
   * @param stream The stream
   * @param bytes The size
   * @param alignment A power of two (default 256)
   * @return The memory
   */
  void* allocate(cuda_stream_view stream,
                 std::size_t bytes,
                 std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT)
  {
    return allocate_async(bytes, alignment, stream);
  }

  /**
   * @brief Frees memory from allocate(stream, bytes, alignment), ordered on @p stream.
   * @param stream The stream
   * @param ptr The memory
   * @param bytes The size it was allocated with
   * @param alignment The alignment it was allocated with
   */
  void deallocate(cuda_stream_view stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT)
  {
    deallocate_async(ptr, bytes, alignment, stream);
  }

#if defined(RMM_HAS_CUDA_MR)
  /**
   * @brief Device resources hand out device-accessible memory (`cuda::mr` property), so every
   * resource satisfies `cuda::mr::async_resource_with<R, cuda::mr::device_accessible>`.
   */
  friend void get_property(device_memory_resource const&, ::cuda::mr::device_accessible) noexcept {}

  /// @cond
  // Templates matching exactly cuda::stream_ref, so that allocate(bytes, stream) with a raw
  // stream handle still selects the overload above.
  template <typename S, std::enable_if_t<std::is_same_v<S, ::cuda::stream_ref>, int> = 0>
  void* allocate(S stream, std::size_t bytes, std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT)
  {
    return allocate_async(bytes, alignment, cuda_stream_view{stream});
  }
  template <typename S, std::enable_if_t<std::is_same_v<S, ::cuda::stream_ref>, int> = 0>
  void deallocate(S stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT)
  {
    deallocate_async(ptr, bytes, alignment, cuda_stream_view{stream});
  }
  /// @endcond
#endif

  /**
   * @brief (older API) Whether the resource orders work on streams. Default: false.
   * @return Whether streams are supported
   */
  [[nodiscard]] virtual bool supports_streams() const noexcept { return false; }

  /**
   * @brief (older API) Whether get_mem_info() returns meaningful values. Default: false.
   * @return Whether memory info is supported
   */
  [[nodiscard]] virtual bool supports_get_mem_info() const noexcept { return false; }

  /**
   * @brief (older API) Free and total memory of the resource.
   * @param stream Stream for the query
   * @return {free, total}; {0, 0} unless a subclass overrides do_get_mem_info()
   */
  [[nodiscard]] std::pair<std::size_t, std::size_t> get_mem_info(cuda_stream_view stream) const
  {
    return do_get_mem_info(stream);
  }

 private:
  /**
   * @brief Allocates at least @p bytes aligned to 256 bytes on @p stream.
   * @param bytes Size of the allocation
   * @param stream Stream on which the allocation is ordered
   * @return Pointer to the allocation
   */
  virtual void* do_allocate(std::size_t bytes, cuda_stream_view stream) = 0;

  /**
   * @brief Frees memory returned by do_allocate().
   * @param ptr The pointer
   * @param bytes The size passed to do_allocate()
   * @param stream Stream on which the deallocation is ordered
   */
  virtual void do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) = 0;

  /**
   * @brief Compares this resource to another. Default: identity.
   * @param other The other resource
   * @return true when equal
   */
  [[nodiscard]] virtual bool do_is_equal(device_memory_resource const& other) const noexcept
  {
    return this == &other;
  }

  /**
   * @brief (older API) Free and total memory of the resource. Default: {0, 0}.
   * @param stream Stream for the query
   * @return {free, total}
   */
  [[nodiscard]] virtual std::pair<std::size_t, std::size_t> do_get_mem_info(
    cuda_stream_view stream) const
  {
    (void)stream;
    return {0, 0};
  }
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
