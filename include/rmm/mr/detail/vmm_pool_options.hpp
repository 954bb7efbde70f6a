/**
 * @file mr/detail/vmm_pool_options.hpp
 * @brief `rmm::mr::vmm_pool_options` and the creation of librmm's pool on virtual memory
 * (`rmm_vmm_pool_create`), shared by `vmm_pool_memory_resource` of every API generation
 * (rmm/mr/device/vmm_pool_memory_resource.hpp for 25.02/25.10, rmm/mr/vmm_pool_memory_resource.hpp
 * for 26.06).
 *
 * RMM has no such resource: rmm-rs gives it RMM's shape (the sizes of pool_memory_resource,
 * then an options struct for what only this pool has).
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/cuda_device.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/rmm.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief What a vmm_pool_memory_resource has beyond RMM's pool sizes. Every member defaults
 * to librmm's default (`rmm_vmm_pool_options_init`).
 */
struct vmm_pool_options {
  /// Bytes of address space reserved for the pool (rounded up to the granularity): the
  /// pool never grows beyond it. None: twice the device's memory, or the maximum pool size
  /// when that is larger.
  std::optional<std::size_t> reserved_size{};
  /// Bytes per mapping, the unit of growth and of release: a multiple of the device's
  /// minimum mapping granularity. None: the device's recommended granularity (2 MiB on
  /// current NVIDIA GPUs).
  std::optional<std::size_t> granularity{};
  /// Free bytes the pool keeps mapped: above it, a deallocation unmaps the free granules
  /// whose streams finished their work. None: keep everything until release().
  std::optional<std::size_t> release_threshold{};
  /// Other devices that get read and write access to the pool's memory.
  std::vector<rmm::cuda_device_id> peer_devices{};
};

namespace detail {

/**
 * @brief Creates librmm's pool on virtual memory on the current device.
 * @param initial_pool_size Bytes mapped now (rounded up to the granularity); 0: grow on demand
 * @param maximum_pool_size The most bytes mapped at once (rounded down to the granularity);
 * none: the reservation
 * @param options The rest
 * @return A handle owning one reference
 * @throws rmm::logic_error for a zero maximum, reservation or granularity (std::nullopt asks
 * for the default), sizes that do not fit, a granularity that is not a multiple of the
 * device's, an unknown peer device, or a device or runtime without virtual memory management
 * @throws rmm::out_of_memory when the initial mapping fails
 */
inline rmm_resource_t create_vmm_pool(std::size_t initial_pool_size,
                                      std::optional<std::size_t> maximum_pool_size,
                                      vmm_pool_options const& options)
{
  // The C ABI reads 0 as "the default": an explicit 0 here is a mistake, said so.
  RMM_EXPECTS(!maximum_pool_size.has_value() || *maximum_pool_size != 0,
              "vmm_pool_memory_resource: maximum_pool_size is 0; pass std::nullopt for no maximum "
              "but the reservation");
  RMM_EXPECTS(!options.reserved_size.has_value() || *options.reserved_size != 0,
              "vmm_pool_memory_resource: reserved_size is 0; pass std::nullopt for the default "
              "(twice the device's memory)");
  RMM_EXPECTS(!options.granularity.has_value() || *options.granularity != 0,
              "vmm_pool_memory_resource: granularity is 0; pass std::nullopt for the device's "
              "recommended granularity");
  rmm_vmm_pool_options c{};
  rmm::detail::check(rmm_vmm_pool_options_init(&c));
  c.initial_pool_size = initial_pool_size;
  c.maximum_pool_size = maximum_pool_size.value_or(0);
  c.reserved_size     = options.reserved_size.value_or(0);
  c.granularity       = options.granularity.value_or(0);
  if (options.release_threshold.has_value()) { c.release_threshold = *options.release_threshold; }
  std::vector<std::int32_t> peers;
  peers.reserve(options.peer_devices.size());
  for (auto const& device : options.peer_devices) {
    peers.push_back(static_cast<std::int32_t>(device.value()));
  }
  c.peer_devices        = peers.empty() ? nullptr : peers.data();
  c.peer_device_count   = peers.size();
  rmm_resource_t handle = nullptr;
  rmm::detail::check(rmm_vmm_pool_create(&c, &handle));
  return handle;
}

/**
 * @brief The statistics of the vmm pool behind @p handle.
 * @param handle A vmm pool's handle
 * @return One consistent snapshot
 * @throws rmm::logic_error when @p handle is not a vmm pool
 */
inline rmm_vmm_pool_stats vmm_pool_stats(rmm_resource_t handle)
{
  rmm_vmm_pool_stats stats{};
  rmm::detail::check(rmm_vmm_pool_get_stats(handle, &stats));
  return stats;
}

/**
 * @brief Unmaps the free granules of the vmm pool behind @p handle.
 * @param handle A vmm pool's handle
 * @return Bytes unmapped
 * @throws rmm::cuda_error when the runtime fails to unmap
 */
inline std::size_t vmm_pool_release(rmm_resource_t handle)
{
  std::size_t released = 0;
  rmm::detail::check(rmm_vmm_pool_release(handle, &released));
  return released;
}

}  // namespace detail
}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
