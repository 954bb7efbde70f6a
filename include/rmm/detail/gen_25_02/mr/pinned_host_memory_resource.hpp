/**
 * @file detail/gen_25_02/mr/pinned_host_memory_resource.hpp
 * @brief Pinned (page-locked) host memory resource, accessible from host and device.
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/detail/gen_25_02/mr/device/detail/handle_resource.hpp>
#include <rmm/rmm.h>

#include <type_traits>
#include <rmm/aligned.hpp>
#include <rmm/detail/aligned.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/detail/nvtx/ranges.hpp>

#include <cstddef>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief Memory resource allocating pinned host memory with cudaHostAlloc/hipHostMalloc.
 *
 * The memory is accessible from the host and the device. Unlike RMM, where this class only
 * models the cuda::mr resource concepts, it derives from device_memory_resource, so it can be
 * set as a device resource or used as the upstream of a pool directly.
 */
class pinned_host_memory_resource final : public detail::handle_resource {
 public:
  /**
   * @brief Creates the resource.
   * @throws rmm::cuda_error when no runtime is available
   */
  pinned_host_memory_resource()
    : handle_resource{detail::adopt_handle, detail::make_handle(rmm_pinned_host_create)}
  {
  }

  /// @brief Takes over an existing handle (one reference) of this kind of resource.
  using handle_resource::handle_resource;

  // The static functions below hide the base class's overloads of the same names; these keep
  // allocate(bytes, stream) and CCCL 3.1's stream-first forms reachable on this type. (A
  // using-declaration would make allocate(bytes) ambiguous.)
  /// @brief Allocates @p bytes ordered on @p stream. @param bytes Size @param stream Stream
  /// @return The memory
  void* allocate(std::size_t bytes, cuda_stream_view stream)
  {
    return device_memory_resource::allocate(bytes, stream);
  }
  /// @brief Frees memory from allocate(bytes, stream). @param ptr Memory @param bytes Size
  /// @param stream Stream
  void deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream)
  {
    device_memory_resource::deallocate(ptr, bytes, stream);
  }
  /// @brief Allocates @p bytes ordered on @p stream (CCCL 3.1's stream-first form).
  /// @param stream Stream @param bytes Size @param alignment A power of two @return The memory
  void* allocate(cuda_stream_view stream,
                 std::size_t bytes,
                 std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT)
  {
    return device_memory_resource::allocate(stream, bytes, alignment);
  }
  /// @brief Frees memory from allocate(stream, bytes, alignment). @param stream Stream
  /// @param ptr Memory @param bytes Size @param alignment Alignment it was allocated with
  void deallocate(cuda_stream_view stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT)
  {
    device_memory_resource::deallocate(stream, ptr, bytes, alignment);
  }
#if defined(RMM_HAS_CUDA_MR)
  /// @cond
  template <typename S, std::enable_if_t<std::is_same_v<S, ::cuda::stream_ref>, int> = 0>
  void* allocate(S stream, std::size_t bytes, std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT)
  {
    return device_memory_resource::allocate(stream, bytes, alignment);
  }
  template <typename S, std::enable_if_t<std::is_same_v<S, ::cuda::stream_ref>, int> = 0>
  void deallocate(S stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT)
  {
    device_memory_resource::deallocate(stream, ptr, bytes, alignment);
  }
  /// @endcond
#endif

  /**
   * @brief Allocates @p bytes of pinned host memory aligned to @p alignment (RMM's static
   * member: usable without an object). Zero bytes give nullptr.
   * @param bytes Bytes to allocate
   * @param alignment A power of two (default: alignof(std::max_align_t))
   * @return The memory, host and device accessible
   * @throws rmm::out_of_memory / rmm::bad_alloc when the allocation fails
   */
  static void* allocate(std::size_t bytes, std::size_t alignment = rmm::RMM_DEFAULT_HOST_ALIGNMENT)
  {
    void* ptr = nullptr;
    rmm::detail::check(rmm_pinned_host_allocate(bytes, alignment, &ptr));
    return ptr;
  }

  /**
   * @brief Frees memory from allocate() (same @p bytes and @p alignment); nullptr is a no-op.
   * @param ptr The memory
   * @param bytes Its size
   * @param alignment Its alignment
   */
  static void deallocate(void* ptr,
                         std::size_t bytes,
                         std::size_t alignment = rmm::RMM_DEFAULT_HOST_ALIGNMENT) noexcept
  {
    (void)rmm_pinned_host_deallocate(ptr, bytes, alignment);
  }

  /**
   * @brief As allocate(); the stream is ignored (pinned allocation is synchronous, as in RMM).
   * @param bytes Bytes to allocate
   * @param stream Ignored
   * @return The memory
   */
  static void* allocate_async(std::size_t bytes, [[maybe_unused]] cuda_stream_view stream)
  {
    return allocate(bytes);
  }

  /**
   * @brief As allocate(); the stream is ignored.
   * @param bytes Bytes to allocate
   * @param alignment A power of two
   * @param stream Ignored
   * @return The memory
   */
  static void* allocate_async(std::size_t bytes,
                              std::size_t alignment,
                              [[maybe_unused]] cuda_stream_view stream)
  {
    return allocate(bytes, alignment);
  }

  /**
   * @brief As deallocate(); the stream is ignored.
   * @param ptr The memory
   * @param bytes Its size
   * @param stream Ignored
   */
  static void deallocate_async(void* ptr,
                               std::size_t bytes,
                               [[maybe_unused]] cuda_stream_view stream) noexcept
  {
    deallocate(ptr, bytes);
  }

  /**
   * @brief As deallocate(); the stream is ignored.
   * @param ptr The memory
   * @param bytes Its size
   * @param alignment Its alignment
   * @param stream Ignored
   */
  static void deallocate_async(void* ptr,
                               std::size_t bytes,
                               std::size_t alignment,
                               [[maybe_unused]] cuda_stream_view stream) noexcept
  {
    deallocate(ptr, bytes, alignment);
  }

#if defined(RMM_HAS_CUDA_MR)
  /// @brief Pinned host memory is host accessible too (`cuda::mr` property; device access
  /// comes from device_memory_resource).
  friend void get_property(pinned_host_memory_resource const&, ::cuda::mr::host_accessible) noexcept
  {
  }
#endif
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
