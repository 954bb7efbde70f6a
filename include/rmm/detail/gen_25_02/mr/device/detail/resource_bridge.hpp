/**
 * @file detail/resource_bridge.hpp
 * @brief Bridges any rmm::mr::device_memory_resource into the Rust core as an
 * `rmm_resource_t` (a vtable callback resource), and C++ exceptions into C ABI statuses.
 *
 * Exceptions thrown by a bridged resource never cross the C ABI. They become statuses, and
 * their `what()` travels as the error message:
 * | thrown | status | seen by a C++ caller of the handle as |
 * | --- | --- | --- |
 * | rmm::out_of_memory | `RMM_STATUS_OUT_OF_MEMORY` | rmm::out_of_memory |
 * | any other std::bad_alloc (incl. rmm::bad_alloc) | `RMM_STATUS_BAD_ALLOC` | rmm::bad_alloc |
 * | any other exception | `RMM_STATUS_CALLBACK_FAILED` | rmm::bad_alloc |
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/handle_resource.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>

#include <cstddef>
#include <exception>
#include <memory>
#include <new>
#include <type_traits>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/// @brief The message of a non-standard exception thrown by a bridged resource.
inline constexpr char const* unknown_exception =
  "unknown C++ exception thrown by a device_memory_resource";

/**
 * @brief The return type of the vtable entries (`rmm_status_t`, or its underlying integer
 * type, depending on how the C header spells it).
 */
using vtable_status_t = std::invoke_result_t<decltype(rmm_callback_vtable::allocate),
                                             void*,
                                             std::size_t,
                                             rmm_stream_t,
                                             void**>;

/**
 * @brief Vtable allocate entry: `ctx` is the bridged device_memory_resource.
 * @param ctx The device_memory_resource
 * @param bytes Size to allocate
 * @param stream Stream of the allocation
 * @param out Receives the pointer
 * @return Status
 */
inline vtable_status_t bridge_allocate(void* ctx,
                                       std::size_t bytes,
                                       rmm_stream_t stream,
                                       void** out) noexcept
{
  return static_cast<vtable_status_t>(translate_exceptions(
    [&] {
      *out = static_cast<device_memory_resource*>(ctx)->allocate(
        bytes, cuda_stream_view{rmm::detail::from_c_stream(stream)});
    },
    unknown_exception));
}

/**
 * @brief Vtable deallocate entry: `ctx` is the bridged device_memory_resource.
 * @param ctx The device_memory_resource
 * @param ptr Pointer to free
 * @param bytes Size passed to allocate
 * @param stream Stream of the deallocation
 * @return Status
 */
inline vtable_status_t bridge_deallocate(void* ctx,
                                         void* ptr,
                                         std::size_t bytes,
                                         rmm_stream_t stream) noexcept
{
  return static_cast<vtable_status_t>(translate_exceptions(
    [&] {
      static_cast<device_memory_resource*>(ctx)->deallocate(
        ptr, bytes, cuda_stream_view{rmm::detail::from_c_stream(stream)});
    },
    unknown_exception));
}

/**
 * @brief Wraps @p mr (not owned: it must outlive the handle's use) into a new handle.
 * @param mr The resource to bridge
 * @return A handle owning one reference
 * @throws rmm::logic_error when @p mr is null
 */
inline rmm_resource_t make_bridge_handle(device_memory_resource* mr)
{
  RMM_EXPECTS(mr != nullptr, "cannot bridge a null device_memory_resource");
  rmm_callback_vtable vtable{};
  vtable.allocate       = &bridge_allocate;
  vtable.deallocate     = &bridge_deallocate;
  vtable.destroy        = nullptr;
  rmm_resource_t handle = nullptr;
  rmm::detail::check(rmm_callback_create_with_vtable(&vtable, mr, &handle));
  return handle;
}

/**
 * @brief A handle through which the Rust core reaches @p mr: its own handle (retained) for a
 * Rust-backed resource, else a new bridge.
 * @param mr The resource
 * @return A handle owning one reference
 * @throws rmm::logic_error when @p mr is null
 */
inline rmm_resource_t to_handle(device_memory_resource* mr)
{
  RMM_EXPECTS(mr != nullptr, "null device_memory_resource");
  if (auto* rust_backed = dynamic_cast<handle_resource*>(mr);
      rust_backed != nullptr && rust_backed->handle() != nullptr) {
    rmm::detail::check(rmm_resource_retain(rust_backed->handle()));
    return rust_backed->handle();
  }
  return make_bridge_handle(mr);
}

/**
 * @brief Callbacks of a bridge to a resource known only through a reference (a user type with
 * the `cuda::mr` interface, say): the context is a heap copy of the reference. The resource
 * is asked for 256-byte alignment explicitly (a reference's default is 16): the sub-allocators
 * over it hand out 256-byte-aligned blocks and check what they get.
 */
struct ref_bridge {
  static vtable_status_t allocate(void* ctx,
                                  std::size_t bytes,
                                  rmm_stream_t stream,
                                  void** out) noexcept
  {
    return static_cast<vtable_status_t>(translate_exceptions(
      [&] {
        *out = static_cast<rmm::device_async_resource_ref*>(ctx)->allocate_async(
          bytes, CUDA_ALLOCATION_ALIGNMENT, cuda_stream_view{rmm::detail::from_c_stream(stream)});
      },
      unknown_exception));
  }

  static vtable_status_t deallocate(void* ctx,
                                    void* ptr,
                                    std::size_t bytes,
                                    rmm_stream_t stream) noexcept
  {
    return static_cast<vtable_status_t>(translate_exceptions(
      [&] {
        static_cast<rmm::device_async_resource_ref*>(ctx)->deallocate_async(
          ptr,
          bytes,
          CUDA_ALLOCATION_ALIGNMENT,
          cuda_stream_view{rmm::detail::from_c_stream(stream)});
      },
      unknown_exception));
  }

  static void destroy(void* ctx) noexcept
  {
    delete static_cast<rmm::device_async_resource_ref*>(ctx);
  }
};

/**
 * @brief A handle (one reference owned by the caller) through which the Rust core reaches the
 * resource @p ref refers to: the resource's own handle when it is Rust-backed, a bridge to
 * its `device_memory_resource` when it is one, else a bridge calling the reference.
 * @param ref Reference to the resource (which must outlive the handle's users)
 * @return The handle
 */
inline rmm_resource_t to_handle(rmm::device_async_resource_ref ref)
{
  if (auto* mr = ref.as_device_memory_resource(); mr != nullptr) { return to_handle(mr); }
  auto copy = std::make_unique<rmm::device_async_resource_ref>(ref);
  rmm_callback_vtable vtable{};
  vtable.allocate       = &ref_bridge::allocate;
  vtable.deallocate     = &ref_bridge::deallocate;
  vtable.destroy        = &ref_bridge::destroy;
  rmm_resource_t handle = nullptr;
  rmm::detail::check(rmm_callback_create_with_vtable(&vtable, copy.get(), &handle));
  (void)copy.release();  // owned by the handle now; freed by ref_bridge::destroy
  return handle;
}

}  // namespace detail
}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
