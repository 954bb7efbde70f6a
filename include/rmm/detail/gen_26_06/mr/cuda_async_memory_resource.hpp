/**
 * @file detail/gen_26_06/mr/cuda_async_memory_resource.hpp
 * @brief RMM 26.06's `rmm::mr::cuda_async_memory_resource`: stream-ordered allocation
 * (`cudaMallocAsync`) from a pool of its own, through librmm's async resource.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/aligned.hpp>
#include <rmm/detail/runtime_capabilities.hpp>
#include <rmm/detail/gen_26_06/mr/detail/resource_bases.hpp>

#include <cuda/memory_resource>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief The shared state of a cuda_async_memory_resource: librmm's async resource.
 */
class cuda_async_memory_resource_impl final
  : public librmm_equal_impl<cuda_async_memory_resource_impl> {
 public:
  /**
   * @brief Creates the pool (see cuda_async_memory_resource's constructor).
   * @param initial_pool_size Bytes to prime the pool with; none: not primed
   * @param release_threshold Bytes kept reserved at synchronizations; none: all of them
   * @param export_handle_type `cudaMemAllocationHandleType` value; none: not exportable
   */
  cuda_async_memory_resource_impl(std::optional<std::size_t> initial_pool_size,
                                  std::optional<std::size_t> release_threshold,
                                  std::optional<std::int32_t> export_handle_type)
    : librmm_equal_impl{create(initial_pool_size, release_threshold, export_handle_type)}
  {
  }

  /**
   * @brief The runtime's pool.
   * @return The pool handle
   */
  [[nodiscard]] cudaMemPool_t pool_handle() const noexcept
  {
    void* pool = nullptr;
    (void)rmm_async_pool_handle(handle(), &pool);
    return static_cast<cudaMemPool_t>(pool);
  }

 private:
  static rmm_resource_t create(std::optional<std::size_t> initial_pool_size,
                               std::optional<std::size_t> release_threshold,
                               std::optional<std::int32_t> export_handle_type)
  {
    // RMM 26.06 primes the pool only when asked to, and keeps everything by default.
    std::size_t const initial = initial_pool_size.value_or(0);
    std::size_t const threshold =
      release_threshold.value_or(std::numeric_limits<std::size_t>::max());
    return make_handle(rmm_async_create, &initial, &threshold, export_handle_type.value_or(0));
  }
};

}  // namespace detail

/**
 * @brief Stream-ordered device memory from a `cudaMemPool_t` this resource creates and owns.
 * Copies share the pool.
 */
class RMM_EXPORT cuda_async_memory_resource final
  : public detail::shared_handle_resource<detail::cuda_async_memory_resource_impl> {
 public:
  /// @brief How the pool's memory may be exported to other processes
  /// (`cudaMemAllocationHandleType`).
  enum class allocation_handle_type : std::int32_t {
    none                  = 0x0,  ///< Not exportable.
    posix_file_descriptor = 0x1,  ///< A POSIX file descriptor.
    win32                 = 0x2,  ///< A Win32 NT handle.
    win32_kmt             = 0x4,  ///< A Win32 KMT handle.
    fabric                = 0x8   ///< A fabric handle.
  };

  /// @brief Usage flags of a pool (`cudaMemPoolCreateUsage*`).
#if !RMM_DETAIL_API_REMOVED_IN_26_08  // removed in RMM 26.08
  enum class mempool_usage : unsigned short {
    hw_decompress = 0x2,  ///< Buffers for the hardware decompression engine.
  };
#endif

  /// @brief Device-accessible memory.
  friend void get_property(cuda_async_memory_resource const&, cuda::mr::device_accessible) noexcept
  {
  }

  /**
   * @brief Creates the pool on the current device.
   * @param initial_pool_size Bytes to prime the pool with (allocated and freed once); none: the
   * pool starts empty
   * @param release_threshold Bytes the pool keeps reserved when synchronizing; none: it keeps
   * everything (the maximum)
   * @param export_handle_type How the pool may be exported; none: not exportable
   * @throws rmm::logic_error when the runtime lacks stream-ordered pools or the handle type
   */
  cuda_async_memory_resource(std::optional<std::size_t> initial_pool_size             = {},
                             std::optional<std::size_t> release_threshold             = {},
                             std::optional<allocation_handle_type> export_handle_type = {})
    : shared_handle_resource{
        std::in_place,
        initial_pool_size,
        release_threshold,
        export_handle_type.has_value()
          ? std::optional<std::int32_t>{static_cast<std::int32_t>(*export_handle_type)}
          : std::nullopt}
  {
  }

  /**
   * @brief The runtime's pool.
   * @return The pool handle
   */
  [[nodiscard]] cudaMemPool_t pool_handle() const noexcept { return get().pool_handle(); }
};

static_assert(cuda::mr::resource_with<cuda_async_memory_resource, cuda::mr::device_accessible>);

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
