/**
 * @file detail/gen_25_02/mr/device/per_device_resource.hpp
 * @brief The current device memory resource of each device (RMM's per-device resource map).
 *
 * The map lives once, in the Rust core, so C (`rmm_get_current_device_resource`), C++ and
 * Rust all see the same current resource. The C++ functions store the C++ object pointer as
 * the entry's tag, so getters return exactly the object that was set:
 * - a Rust-backed resource (cuda_memory_resource, ...) is registered with its own handle;
 * - a user subclass of device_memory_resource is registered through a bridge handle, so C
 *   code allocating from the current resource reaches the subclass's `do_allocate`;
 *   exceptions it throws come back as statuses (see detail/resource_bridge.hpp) and, through
 *   the C++ wrapper of a handle, as rmm::out_of_memory / rmm::bad_alloc;
 * - the initial resource of a device is a cuda_memory_resource object created on first use
 *   and shared by all callers (never destroyed, like RMM's);
 * - a resource set from C, Python or Rust (an untagged entry) is seen as a
 *   detail::registry_resource allocating through its handle, created on first use and stored
 *   as the entry's tag (never destroyed either).
 *
 * As in RMM, the caller keeps a resource alive for as long as it is set.
 *
 * The `_ref` forms (RMM 24.x/25.02) take and return rmm::device_async_resource_ref; a
 * reference wraps the same device_memory_resource objects the pointer forms use, so
 * `get_current_device_resource_ref() == device_async_resource_ref{get_current_device_resource()}`.
 * The references given to the setters must refer to a device_memory_resource.
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/cuda_device.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/handle_resource.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/resource_bridge.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

namespace detail {

/**
 * @brief The C++ object of a registry entry set without a C++ object: a resource set from C,
 * Python or Rust (`rmm_set_current_device_resource(pool)`, say). It allocates through the
 * entry's handle, whatever kind of resource that is.
 *
 * One is created per such entry and stored as the entry's tag, so later calls return the same
 * object. It is never freed, on purpose: the registry (in Rust) cannot run C++ destructors,
 * and callers may keep the returned pointer after the entry is replaced, as they do with the
 * pointers RMM returns. Each keeps one reference to its handle, so the resource stays alive
 * as long as it does.
 */
class registry_resource final : public handle_resource {
 public:
  /// @brief Takes over the reference a handle owns.
  using handle_resource::handle_resource;
};

/**
 * @brief Wraps @p handle in a new heap object of type @p Wrapper; releases @p handle if that
 * throws.
 * @param handle A handle owning one reference, taken over
 * @return The new object
 */
template <typename Wrapper>
std::unique_ptr<Wrapper> adopt_registry_handle(rmm_resource_t handle)
{
  try {
    return std::make_unique<Wrapper>(adopt_handle, handle);
  } catch (...) {
    (void)rmm_resource_release(handle);
    throw;
  }
}

/**
 * @brief The C++ object of a registry entry; takes over the reference @p handle owns.
 *
 * - A tagged entry (set from C++, or resolved before) returns its tag.
 * - An untagged entry that is the device's initial resource gets the initial resource's
 *   cuda_memory_resource object: a heap cuda_memory_resource adopting @p handle is proposed
 *   through rmm_initial_resource_tag.
 * - Any other untagged entry (set from C, Python or Rust) gets a registry_resource adopting
 *   @p handle, proposed as the current entry's tag through rmm_per_device_entry_tag; when the
 *   entry is no longer current (a previous entry, or one replaced meanwhile) the object is
 *   returned without being stored.
 *
 * Both proposals are compare-and-set: if another thread stored a tag first, the proposal is
 * deleted and the earlier object returned.
 * @param device Device ordinal
 * @param handle The entry's handle (a new reference), may be null
 * @param tag The entry's tag
 * @return The C++ object
 */
inline device_memory_resource* resolve_registry_entry(int device, rmm_resource_t handle, void* tag)
{
  if (tag != nullptr) {
    (void)rmm_resource_release(handle);
    return static_cast<device_memory_resource*>(tag);
  }
  if (handle == nullptr) { return nullptr; }
  bool is_initial     = false;
  rmm_status_t status = rmm_per_device_resource_is_initial(device, handle, &is_initial);
  if (status != RMM_STATUS_SUCCESS) {
    (void)rmm_resource_release(handle);
    rmm::detail::check(status);
  }
  void* actual = nullptr;
  if (is_initial) {
    auto proposal  = adopt_registry_handle<cuda_memory_resource>(handle);
    void* proposed = static_cast<device_memory_resource*>(proposal.get());
    rmm::detail::check(
      rmm_initial_resource_tag(device, RMM_DETAIL_REGISTRY_KEY, proposed, &actual));
    if (actual == proposed) { return static_cast<device_memory_resource*>(proposal.release()); }
    return static_cast<device_memory_resource*>(actual);
  }
  auto proposal  = adopt_registry_handle<registry_resource>(handle);
  void* proposed = static_cast<device_memory_resource*>(proposal.get());
  rmm::detail::check(rmm_per_device_entry_tag(
    device, RMM_DETAIL_REGISTRY_KEY, proposal->handle(), proposed, nullptr, &actual));
  if (actual == proposed || actual == nullptr) {
    return static_cast<device_memory_resource*>(proposal.release());
  }
  return static_cast<device_memory_resource*>(actual);
}

/**
 * @brief The initial resource of the current device: the `cuda_memory_resource` that
 * get_current_device_resource() returns before any resource is set (RMM's
 * `rmm::mr::detail::initial_resource()`).
 *
 * The same object is returned for the life of the process (per device), so it compares equal,
 * by pointer, to what the per-device functions return for the initial resource.
 *
 * @return The initial resource (never null; owned by rmm)
 */
inline device_memory_resource* initial_resource()
{
  int const device = rmm::get_current_cuda_device().value();
  auto proposal    = std::make_unique<cuda_memory_resource>();
  void* proposed   = static_cast<device_memory_resource*>(proposal.get());
  void* actual     = nullptr;
  rmm::detail::check(rmm_initial_resource_tag(device, RMM_DETAIL_REGISTRY_KEY, proposed, &actual));
  if (actual == proposed) { return static_cast<device_memory_resource*>(proposal.release()); }
  return static_cast<device_memory_resource*>(actual);
}
}  // namespace detail

/**
 * @brief The resource set for device @p device_id (its initial cuda_memory_resource when
 * none was set).
 * @param device_id The device
 * @return The resource, never null
 * @throws rmm::logic_error for an invalid device id
 */
inline device_memory_resource* get_per_device_resource(cuda_device_id device_id)
{
  rmm_resource_t handle = nullptr;
  void* tag             = nullptr;
  rmm::detail::check(
    rmm_get_per_device_resource_tagged(device_id.value(), RMM_DETAIL_REGISTRY_KEY, &handle, &tag));
  return detail::resolve_registry_entry(device_id.value(), handle, tag);
}

/**
 * @brief Sets the resource of device @p device_id.
 * @param device_id The device
 * @param new_mr The resource (must stay alive while set); nullptr restores the initial one
 * @return The previous resource
 * @throws rmm::logic_error for an invalid device id
 */
inline device_memory_resource* set_per_device_resource(cuda_device_id device_id,
                                                       device_memory_resource* new_mr)
{
  rmm_resource_t handle   = new_mr != nullptr ? detail::to_handle(new_mr) : nullptr;
  rmm_resource_t previous = nullptr;
  void* previous_tag      = nullptr;
  rmm_status_t status     = rmm_set_per_device_resource_tagged(device_id.value(),
                                                           RMM_DETAIL_REGISTRY_KEY,
                                                           handle,
                                                           static_cast<void*>(new_mr),
                                                           nullptr,
                                                           &previous,
                                                           &previous_tag);
  (void)rmm_resource_release(handle);
  rmm::detail::check(status);
  return detail::resolve_registry_entry(device_id.value(), previous, previous_tag);
}

/**
 * @brief Restores the initial resource of device @p device_id.
 * @param device_id The device
 * @return The previous resource
 * @throws rmm::logic_error for an invalid device id
 */
inline device_memory_resource* reset_per_device_resource(cuda_device_id device_id)
{
  return set_per_device_resource(device_id, nullptr);
}

/**
 * @brief The resource of the current device.
 * @return The resource, never null
 */
inline device_memory_resource* get_current_device_resource()
{
  return get_per_device_resource(rmm::get_current_cuda_device());
}

/**
 * @brief Sets the resource of the current device.
 * @param new_mr The resource (must stay alive while set); nullptr restores the initial one
 * @return The previous resource
 */
inline device_memory_resource* set_current_device_resource(device_memory_resource* new_mr)
{
  return set_per_device_resource(rmm::get_current_cuda_device(), new_mr);
}

/**
 * @brief Restores the initial resource of the current device.
 * @return The previous resource
 */
inline device_memory_resource* reset_current_device_resource()
{
  return set_current_device_resource(nullptr);
}

namespace detail {

/**
 * @brief The device_memory_resource a reference refers to.
 * @param ref The reference
 * @return The resource
 * @throws rmm::logic_error when @p ref refers to an object that is not a device_memory_resource
 */
inline device_memory_resource* device_resource_of(device_async_resource_ref ref)
{
  device_memory_resource* mr = ref.as_device_memory_resource();
  RMM_EXPECTS(mr != nullptr,
              "per-device resource references must refer to an rmm::mr::device_memory_resource");
  return mr;
}

}  // namespace detail

/**
 * @brief A reference to the resource of device @p device_id.
 * @param device_id The device
 * @return The reference
 * @throws rmm::logic_error for an invalid device id
 */
inline device_async_resource_ref get_per_device_resource_ref(cuda_device_id device_id)
{
  return device_async_resource_ref{get_per_device_resource(device_id)};
}

/**
 * @brief Sets the resource of device @p device_id from a reference.
 * @param device_id The device
 * @param new_resource_ref Reference to a device_memory_resource that stays alive while set
 * @return A reference to the previous resource
 * @throws rmm::logic_error for an invalid device id, or a reference to another kind of object
 */
inline device_async_resource_ref set_per_device_resource_ref(
  cuda_device_id device_id, device_async_resource_ref new_resource_ref)
{
  return device_async_resource_ref{
    set_per_device_resource(device_id, detail::device_resource_of(new_resource_ref))};
}

/**
 * @brief Restores the initial resource of device @p device_id.
 * @param device_id The device
 * @return A reference to the previous resource
 */
inline device_async_resource_ref reset_per_device_resource_ref(cuda_device_id device_id)
{
  return device_async_resource_ref{reset_per_device_resource(device_id)};
}

/**
 * @brief A reference to the resource of the current device.
 * @return The reference
 */
inline device_async_resource_ref get_current_device_resource_ref()
{
  return device_async_resource_ref{get_current_device_resource()};
}

/**
 * @brief Sets the resource of the current device from a reference.
 * @param new_resource_ref Reference to a device_memory_resource that stays alive while set
 * @return A reference to the previous resource
 * @throws rmm::logic_error for a reference to another kind of object
 */
inline device_async_resource_ref set_current_device_resource_ref(
  device_async_resource_ref new_resource_ref)
{
  return set_per_device_resource_ref(rmm::get_current_cuda_device(), new_resource_ref);
}

/**
 * @brief Restores the initial resource of the current device.
 * @return A reference to the previous resource
 */
inline device_async_resource_ref reset_current_device_resource_ref()
{
  return device_async_resource_ref{reset_current_device_resource()};
}

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
