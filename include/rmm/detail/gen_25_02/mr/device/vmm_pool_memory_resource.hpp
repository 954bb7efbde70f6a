/**
 * @file detail/gen_25_02/mr/device/vmm_pool_memory_resource.hpp
 * @brief A pool on virtual memory: one reserved address range, physical memory mapped into
 * it in granules (implemented by the Rust core; RMM has no such class).
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/cuda_device.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/mr/detail/vmm_pool_accessors.hpp>
#include <rmm/mr/detail/vmm_pool_options.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/handle_resource.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/rmm.h>

#include <cstddef>
#include <optional>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief A coalescing pool sub-allocator on virtual memory of the current device.
 *
 * The pool reserves one range of address space (vmm_pool_options::reserved_size) and maps
 * physical memory into it in granules as it grows, right after what it already has. So
 * free memory of every growth merges into one block, and a request the pool's free bytes
 * can hold never fails for want of a contiguous block across growths (where
 * pool_memory_resource, growing by separate upstream chunks, can). release() unmaps every
 * free granule, wherever it lies, while the blocks around it stay allocated.
 *
 * Needs a device and runtime with virtual memory management (CUDA's `cuMem*` driver API,
 * HIP's `hipMem*`); elsewhere construction throws rmm::logic_error saying so. Thread-safe and
 * stream-ordered, as pool_memory_resource. Not copyable or movable (RMM's pools are not).
 */
class vmm_pool_memory_resource final : public detail::handle_resource,
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
    : handle_resource{detail::adopt_handle,
                      detail::create_vmm_pool(initial_pool_size, maximum_pool_size, options)}
  {
  }

  vmm_pool_memory_resource(vmm_pool_memory_resource const&)            = delete;
  vmm_pool_memory_resource(vmm_pool_memory_resource&&)                 = delete;
  vmm_pool_memory_resource& operator=(vmm_pool_memory_resource const&) = delete;
  vmm_pool_memory_resource& operator=(vmm_pool_memory_resource&&)      = delete;
  ~vmm_pool_memory_resource() override                                 = default;

  /**
   * @brief All statistics at once, from one consistent snapshot.
   * @return The statistics
   */
  [[nodiscard]] rmm_vmm_pool_stats stats() const { return detail::vmm_pool_stats(handle()); }

  /**
   * @brief Unmaps every whole free granule, wherever it lies (the blocks around it stay
   * allocated), once the streams that freed it finished their work.
   * @return Bytes unmapped (pool_size() shrinks by as much)
   * @throws rmm::cuda_error when the runtime fails to unmap
   */
  std::size_t release() { return detail::vmm_pool_release(handle()); }
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
