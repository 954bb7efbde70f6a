/**
 * @file detail/gen_26_06/mr/vmm_pool_memory_resource.hpp
 * @brief `rmm::mr::vmm_pool_memory_resource` in RMM 26.06's style: a pool on virtual memory
 * (one reserved address range, physical memory mapped into it in granules), implemented by
 * librmm. RMM has no such class.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/aligned.hpp>
#include <rmm/detail/gen_26_06/mr/detail/resource_bases.hpp>
#include <rmm/mr/detail/vmm_pool_accessors.hpp>
#include <rmm/mr/detail/vmm_pool_options.hpp>

#include <cuda/memory_resource>

#include <cstddef>
#include <optional>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief The shared state of a vmm_pool_memory_resource: librmm's pool on virtual memory.
 */
class vmm_pool_memory_resource_impl final : public handle_base {
 public:
  /**
   * @brief Creates the pool (see vmm_pool_memory_resource's constructor).
   * @param initial_pool_size Bytes mapped now; 0: grow on demand
   * @param maximum_pool_size The most bytes mapped at once; none: the reservation
   * @param options Reservation, granularity, release threshold and peer devices
   */
  vmm_pool_memory_resource_impl(std::size_t initial_pool_size,
                                std::optional<std::size_t> maximum_pool_size,
                                vmm_pool_options const& options)
    : handle_base{adopt_handle, create_vmm_pool(initial_pool_size, maximum_pool_size, options)}
  {
  }

  vmm_pool_memory_resource_impl(vmm_pool_memory_resource_impl const&)            = delete;
  vmm_pool_memory_resource_impl& operator=(vmm_pool_memory_resource_impl const&) = delete;

  /**
   * @brief All statistics at once, from one consistent snapshot.
   * @return The statistics
   */
  [[nodiscard]] rmm_vmm_pool_stats stats() const { return vmm_pool_stats(handle()); }

  /**
   * @brief Unmaps every whole free granule (see vmm_pool_memory_resource::release).
   * @return Bytes unmapped
   */
  std::size_t release() const { return vmm_pool_release(handle()); }
};

}  // namespace detail

/**
 * @brief A coalescing pool sub-allocator on virtual memory of the current device; thread-safe
 * and stream-ordered. Copies share one pool; a resource equals its copies and nothing else.
 *
 * The pool reserves one range of address space (vmm_pool_options::reserved_size) and maps
 * physical memory into it in granules as it grows, right after what it already has. So
 * free memory of every growth merges into one block, and a request the pool's free bytes
 * can hold never fails for want of a contiguous block across growths (where
 * pool_memory_resource, growing by separate upstream chunks, can). release() unmaps every
 * free granule, wherever it lies, while the blocks around it stay allocated.
 *
 * Needs a device and runtime with virtual memory management (CUDA's `cuMem*` driver API,
 * HIP's `hipMem*`); elsewhere construction throws rmm::logic_error saying so.
 */
class RMM_EXPORT vmm_pool_memory_resource
  : public detail::shared_handle_resource<detail::vmm_pool_memory_resource_impl>,
    public detail::vmm_pool_accessors<vmm_pool_memory_resource> {
 public:
  /**
   * @brief Creates the pool on the current device.
   * @param initial_pool_size Bytes mapped now (rounded up to the granularity); 0: grow on
   * demand
   * @param maximum_pool_size The most bytes mapped at once (rounded down to the
   * granularity); none: the reservation
   * @param options Reservation, granularity, release threshold and peer devices
   * @throws rmm::logic_error for a zero maximum, reservation or granularity (std::nullopt
   * asks for the default), an initial size above the maximum, sizes beyond the reservation,
   * a granularity that is not a multiple of the device's, an unknown peer device, or a
   * device or runtime without virtual memory management
   * @throws rmm::out_of_memory when mapping the initial size fails
   */
  explicit vmm_pool_memory_resource(std::size_t initial_pool_size                = 0,
                                    std::optional<std::size_t> maximum_pool_size = std::nullopt,
                                    vmm_pool_options const& options              = {})
    : shared_handle_resource{std::in_place, initial_pool_size, maximum_pool_size, options}
  {
  }

  /**
   * @brief All statistics at once, from one consistent snapshot.
   * @return The statistics
   */
  [[nodiscard]] rmm_vmm_pool_stats stats() const { return get().stats(); }

  /**
   * @brief Unmaps every whole free granule, wherever it lies (the blocks around it stay
   * allocated), once the streams that freed it finished their work. Copies share the pool:
   * this releases theirs too.
   * @return Bytes unmapped (pool_size() shrinks by as much)
   * @throws rmm::cuda_error when the runtime fails to unmap
   */
  std::size_t release() { return get().release(); }
};

static_assert(cuda::mr::resource_with<vmm_pool_memory_resource, cuda::mr::device_accessible>);

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
