/**
 * @file detail/gen_26_06/mr/per_device_resource.hpp
 * @brief RMM 26.06's per-device resources: each device's current resource, taken and returned
 * by value as `cuda::mr::any_resource<device_accessible>`.
 *
 * The map is librmm's registry (one per process, shared with the RMM 25.02/25.10 layers, C,
 * Python and Rust). This layer keeps its own object per entry under key 2: a heap
 * registry_entry holding the any_resource, freed by the registry when another front end
 * replaces the entry (so a resource set here is never leaked alive by 25.02 code replacing it).
 * - Setting one of this layer's resources registers its own handle; any other resource is
 *   registered through a callback resource that owns a copy of the any_resource, so C code
 *   allocating from the current resource reaches it.
 * - An entry set by RMM 25.02/25.10 code, C, Python or Rust is wrapped on first get into a
 *   detail::registry_resource allocating through its handle, stored as the entry's tag
 *   (compare-and-set, so concurrent getters agree on one object).
 * - The initial entry of a device is a cuda_memory_resource, kept for the process's life.
 *
 * As in RMM 26.06, the references the getters return refer to the registry's object: they
 * stay valid while that entry is set (keep the value a setter returns to restore it later).
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/cuda_device.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/runtime_shutdown.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/detail/gen_26_06/mr/detail/handle_impl.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>

#include <cuda/memory_resource>

#include <cstdint>
#include <memory>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief The object of this layer for one registry entry (the entry's tag under key 2).
 */
struct registry_entry {
  any_device_resource resource;  ///< What the getters refer to
  bool permanent{false};         ///< The initial resource's entry: never freed

  /**
   * @brief `rmm_tag_release_fn`: frees an entry replaced by another front end.
   * @param tag The registry_entry
   */
  static void release(void* tag) noexcept
  {
    auto* entry = static_cast<registry_entry*>(tag);
    if (entry != nullptr && !entry->permanent) { delete entry; }
  }
};

/**
 * @brief Takes @p handle over into a new heap registry_entry (releasing it if that throws).
 * @param handle A handle owning one reference
 * @param initial Whether it is the device's initial cuda resource
 * @return The entry
 */
inline std::unique_ptr<registry_entry> adopt_entry(rmm_resource_t handle, bool initial)
{
  try {
    if (initial) {
      return std::make_unique<registry_entry>(
        registry_entry{any_device_resource{cuda_memory_resource{adopt_handle, handle}}, true});
    }
    return std::make_unique<registry_entry>(
      registry_entry{any_device_resource{registry_resource{adopt_handle, handle}}, false});
  } catch (...) {
    (void)rmm_resource_release(handle);
    throw;
  }
}

/**
 * @brief The registry_entry of an entry whose handle is @p handle (taken over) and tag @p tag.
 * An untagged entry is wrapped and its object proposed as the tag (compare-and-set); one
 * replaced meanwhile gets an object that is not stored (and never freed, as the pointers of
 * RMM 25.02 are not).
 * @param device Device ordinal
 * @param handle The entry's handle (a new reference), may be null
 * @param tag The entry's tag under key 2
 * @return The entry
 */
inline registry_entry* resolve_entry(int device, rmm_resource_t handle, void* tag)
{
  if (tag != nullptr) {
    (void)rmm_resource_release(handle);
    return static_cast<registry_entry*>(tag);
  }
  RMM_EXPECTS(handle != nullptr, "the per-device registry returned no resource");
  bool is_initial     = false;
  rmm_status_t status = rmm_per_device_resource_is_initial(device, handle, &is_initial);
  if (status != RMM_STATUS_SUCCESS) {
    (void)rmm_resource_release(handle);
    rmm::detail::check(status);
  }
  auto proposal  = adopt_entry(handle, is_initial);
  void* proposed = proposal.get();
  void* actual   = nullptr;
  if (is_initial) {
    rmm::detail::check(
      rmm_initial_resource_tag(device, RMM_DETAIL_REGISTRY_KEY, proposed, &actual));
  } else {
    rmm::detail::check(rmm_per_device_entry_tag(
      device,
      RMM_DETAIL_REGISTRY_KEY,
      handle_of(*cuda::mr::resource_cast<registry_resource>(&proposal->resource)),
      proposed,
      &registry_entry::release,
      &actual));
  }
  if (actual == proposed || actual == nullptr) { return proposal.release(); }
  return static_cast<registry_entry*>(actual);
}

/**
 * @brief The initial resource of the current device (RMM's `detail::initial_resource()`):
 * the same object for the life of the process.
 * @return The cuda_memory_resource
 */
inline cuda_memory_resource& initial_resource()
{
  int const device = rmm::get_current_cuda_device().value();
  auto proposal    = std::make_unique<registry_entry>(
    registry_entry{any_device_resource{cuda_memory_resource{}}, true});
  void* actual = nullptr;
  rmm::detail::check(
    rmm_initial_resource_tag(device, RMM_DETAIL_REGISTRY_KEY, proposal.get(), &actual));
  auto* entry = static_cast<registry_entry*>(actual);
  if (actual == proposal.get()) { (void)proposal.release(); }
  return *cuda::mr::resource_cast<cuda_memory_resource>(&entry->resource);
}

/**
 * @brief The previous resource of an entry just replaced, by value; frees this layer's
 * object for it (unless permanent).
 * @param device Device ordinal
 * @param previous Its handle (taken over)
 * @param previous_tag Its tag under key 2
 * @return The resource
 */
inline any_device_resource take_previous(int device, rmm_resource_t previous, void* previous_tag)
{
  if (previous_tag != nullptr) {
    (void)rmm_resource_release(previous);
    auto* old = static_cast<registry_entry*>(previous_tag);
    if (old->permanent) { return old->resource; }
    std::unique_ptr<registry_entry> owned{old};
    return std::move(owned->resource);
  }
  RMM_EXPECTS(previous != nullptr, "the per-device registry returned no previous resource");
  bool is_initial     = false;
  rmm_status_t status = rmm_per_device_resource_is_initial(device, previous, &is_initial);
  if (status != RMM_STATUS_SUCCESS || is_initial) {
    (void)rmm_resource_release(previous);
    rmm::detail::check(status);
    return any_device_resource{initial_resource()};
  }
  return any_device_resource{registry_resource{adopt_handle, previous}};
}

/**
 * @brief Makes @p handle (taken over; null: the initial resource) with @p entry (null for
 * the initial resource) the entry of @p device.
 * @param device Device ordinal
 * @param handle The new handle
 * @param entry The new tag under key 2
 * @return The previous resource
 */
inline any_device_resource exchange_entry(int device,
                                          rmm_resource_t handle,
                                          std::unique_ptr<registry_entry> entry)
{
  rmm_resource_t previous = nullptr;
  void* previous_tag      = nullptr;
  rmm_status_t status     = rmm_set_per_device_resource_tagged(device,
                                                           RMM_DETAIL_REGISTRY_KEY,
                                                           handle,
                                                           entry.get(),
                                                           &registry_entry::release,
                                                           &previous,
                                                           &previous_tag);
  (void)rmm_resource_release(handle);
  rmm::detail::check(status);
  (void)entry.release();  // the registry's now
  return take_previous(device, previous, previous_tag);
}

}  // namespace detail

/**
 * @brief A reference to the resource of device @p device_id (its initial cuda_memory_resource
 * when none was set).
 * @param device_id The device
 * @return The reference (valid while that resource stays set)
 * @throws rmm::logic_error for an invalid device id
 */
inline device_async_resource_ref get_per_device_resource_ref(cuda_device_id device_id)
{
  rmm_resource_t handle = nullptr;
  void* tag             = nullptr;
  rmm::detail::check(
    rmm_get_per_device_resource_tagged(device_id.value(), RMM_DETAIL_REGISTRY_KEY, &handle, &tag));
  return device_async_resource_ref{detail::resolve_entry(device_id.value(), handle, tag)->resource};
}

namespace detail {

/**
 * @brief RMM 26.06's access to the per-device map (`rmm::mr::detail::get_ref_map()`). The map
 * lives in librmm, so this is a stateless view of it: `view[device_id]` is
 * get_per_device_resource_ref(device_id).
 */
struct ref_map_view {
  /// @brief The resource of device @p device_id. @param device_id The device @return A reference
  device_async_resource_ref operator[](cuda_device_id device_id) const
  {
    return get_per_device_resource_ref(device_id);
  }
};

/**
 * @brief The per-device map, as RMM 26.06 names it; also registers the process-exit hook
 * (as RMM does once its map exists), so that statics constructed before this call see
 * `rmm::process_is_exiting()` true in their destructors.
 * @return The view
 */
inline ref_map_view const& get_ref_map()
{
  static constexpr ref_map_view view{};  // stateless: the map itself is librmm's
  rmm::detail::register_process_exit_hook();
  return view;
}

}  // namespace detail

/**
 * @brief Sets the resource of device @p device_id.
 * @param device_id The device
 * @param new_resource The resource (kept by the registry while set)
 * @return The previous resource
 * @throws rmm::logic_error for an invalid device id or an empty @p new_resource
 */
inline cuda::mr::any_resource<cuda::mr::device_accessible> set_per_device_resource(
  cuda_device_id device_id, cuda::mr::any_resource<cuda::mr::device_accessible> new_resource)
{
  detail::expect_non_empty(new_resource, "set_per_device_resource(device_id, new_resource)");
  // The entry owns a copy; the handle takes the resource itself (a callback resource owns it
  // when it is not one of this layer's).
  auto entry =
    std::make_unique<detail::registry_entry>(detail::registry_entry{new_resource, false});
  rmm_resource_t handle = detail::to_handle(std::move(new_resource));
  return detail::exchange_entry(device_id.value(), handle, std::move(entry));
}

#if !RMM_DETAIL_API_REMOVED_IN_26_08  // removed in RMM 26.08
/**
 * @brief Sets the resource of device @p device_id from a reference (the referenced resource
 * must stay alive while set).
 * @param device_id The device
 * @param new_resource_ref The resource
 * @return The previous resource
 */
[[deprecated("Use set_per_device_resource instead.")]] inline cuda::mr::any_resource<
  cuda::mr::device_accessible>
set_per_device_resource_ref(cuda_device_id device_id, device_async_resource_ref new_resource_ref)
{
  return set_per_device_resource(
    device_id, cuda::mr::any_resource<cuda::mr::device_accessible>{new_resource_ref});
}
#endif

/**
 * @brief A reference to the resource of the current device.
 * @return The reference
 */
inline device_async_resource_ref get_current_device_resource_ref()
{
  return get_per_device_resource_ref(rmm::get_current_cuda_device());
}

/**
 * @brief Sets the resource of the current device.
 * @param new_resource The resource
 * @return The previous resource
 */
inline cuda::mr::any_resource<cuda::mr::device_accessible> set_current_device_resource(
  cuda::mr::any_resource<cuda::mr::device_accessible> new_resource)
{
  return set_per_device_resource(rmm::get_current_cuda_device(), std::move(new_resource));
}

#if !RMM_DETAIL_API_REMOVED_IN_26_08  // removed in RMM 26.08
/**
 * @brief Sets the resource of the current device from a reference.
 * @param new_resource_ref The resource (must stay alive while set)
 * @return The previous resource
 */
[[deprecated("Use set_current_device_resource instead.")]] inline cuda::mr::any_resource<
  cuda::mr::device_accessible>
set_current_device_resource_ref(device_async_resource_ref new_resource_ref)
{
  return set_current_device_resource(
    cuda::mr::any_resource<cuda::mr::device_accessible>{new_resource_ref});
}
#endif

/**
 * @brief Restores the initial resource of device @p device_id.
 * @param device_id The device
 * @return The previous resource
 */
inline cuda::mr::any_resource<cuda::mr::device_accessible> reset_per_device_resource(
  cuda_device_id device_id)
{
  // No handle: librmm restores the device's initial entry, which every layer recognises.
  return detail::exchange_entry(device_id.value(), nullptr, nullptr);
}

/**
 * @brief Restores the initial resource of the current device.
 * @return The previous resource
 */
inline cuda::mr::any_resource<cuda::mr::device_accessible> reset_current_device_resource()
{
  return reset_per_device_resource(rmm::get_current_cuda_device());
}

#if !RMM_DETAIL_API_REMOVED_IN_26_08  // removed in RMM 26.08
/**
 * @brief Restores the initial resource of device @p device_id.
 * @param device_id The device
 * @return The previous resource
 */
[[deprecated("Use reset_per_device_resource instead.")]] inline cuda::mr::any_resource<
  cuda::mr::device_accessible>
reset_per_device_resource_ref(cuda_device_id device_id)
{
  return reset_per_device_resource(device_id);
}
#endif

#if !RMM_DETAIL_API_REMOVED_IN_26_08  // removed in RMM 26.08
/**
 * @brief Restores the initial resource of the current device.
 * @return The previous resource
 */
[[deprecated("Use reset_current_device_resource instead.")]] inline cuda::mr::any_resource<
  cuda::mr::device_accessible>
reset_current_device_resource_ref()
{
  return reset_current_device_resource();
}
#endif

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
