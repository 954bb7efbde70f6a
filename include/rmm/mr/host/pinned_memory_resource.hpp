/**
 * @file pinned_memory_resource.hpp
 * @brief Host memory resource allocating pinned (page-locked) memory from the runtime.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/alloc_error.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/cuda_mr.hpp>
#include <rmm/mr/host/host_memory_resource.hpp>
#include <rmm/rmm.h>
#include <rmm/detail/aligned.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>

#include <cstddef>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief Host memory resource allocating pinned host memory (cudaMallocHost /
 * hipHostMalloc), accessible from the device. Any power-of-two alignment (else
 * rmm::logic_error); zero bytes give nullptr.
 *
 * Implemented by the Rust core (`rmm_pinned_host_allocate` / `rmm_pinned_host_deallocate`).
 */
class pinned_memory_resource final : public host_memory_resource {
 public:
  pinned_memory_resource()                                             = default;
  ~pinned_memory_resource() override                                   = default;
  pinned_memory_resource(pinned_memory_resource const&)                = default;  ///< Copyable
  pinned_memory_resource(pinned_memory_resource&&) noexcept            = default;  ///< Movable
  pinned_memory_resource& operator=(pinned_memory_resource const&)     = default;  ///< Copyable
  pinned_memory_resource& operator=(pinned_memory_resource&&) noexcept = default;  ///< Movable

  /**
   * @brief Allocates pinned memory; the stream is ignored (pinned allocation is synchronous).
   * @param bytes The size
   * @param alignment A power of two
   * @param stream Ignored
   * @return The memory
   */
  [[nodiscard]] void* allocate_async(std::size_t bytes,
                                     std::size_t alignment,
                                     [[maybe_unused]] cuda_stream_view stream)
  {
    return allocate(bytes, alignment);
  }

  /**
   * @brief Allocates pinned memory (default host alignment); the stream is ignored.
   * @param bytes The size
   * @param stream Ignored
   * @return The memory
   */
  [[nodiscard]] void* allocate_async(std::size_t bytes, [[maybe_unused]] cuda_stream_view stream)
  {
    return allocate(bytes);
  }

  /**
   * @brief Frees memory from allocate_async(); the stream is ignored.
   * @param ptr The memory
   * @param bytes Its size
   * @param alignment Its alignment
   * @param stream Ignored
   */
  void deallocate_async(void* ptr,
                        std::size_t bytes,
                        std::size_t alignment,
                        [[maybe_unused]] cuda_stream_view stream)
  {
    deallocate(ptr, bytes, alignment);
  }

  using host_memory_resource::allocate;
  using host_memory_resource::deallocate;

  /**
   * @brief Allocates pinned memory (CCCL 3.1's stream-first form, which RMM 25.10 has); the
   * stream is ignored.
   * @param stream Ignored
   * @param bytes The size
   * @param alignment A power of two
   * @return The memory
   */
  void* allocate(cuda_stream_view stream, std::size_t bytes, std::size_t alignment)
  {
    return allocate_async(bytes, alignment, stream);
  }

  /**
   * @brief Frees memory from allocate(stream, bytes, alignment); the stream is ignored.
   * @param stream Ignored
   * @param ptr The memory
   * @param bytes Its size
   * @param alignment Its alignment
   */
  void deallocate(cuda_stream_view stream, void* ptr, std::size_t bytes, std::size_t alignment)
  {
    deallocate_async(ptr, bytes, alignment, stream);
  }

#if defined(RMM_HAS_CUDA_MR)
  /// @brief Pinned memory is also device accessible (`cuda::mr` property).
  friend void get_property(pinned_memory_resource const&, ::cuda::mr::device_accessible) noexcept {}
#endif

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override
  {
    void* ptr = nullptr;
    rmm::detail::check_alloc(
      rmm_pinned_host_allocate(bytes, detail::host_alignment(alignment), &ptr), bytes);
    return ptr;
  }

  void do_deallocate(void* ptr, std::size_t bytes, std::size_t alignment) override
  {
    rmm::detail::check(rmm_pinned_host_deallocate(ptr, bytes, detail::host_alignment(alignment)));
  }

  [[nodiscard]] bool do_is_equal(host_memory_resource const& other) const noexcept override
  {
    return dynamic_cast<pinned_memory_resource const*>(&other) != nullptr;
  }
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
