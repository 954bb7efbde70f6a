/**
 * @file detail/gen_26_06/resource_ref.hpp
 * @brief RMM 26.06's `rmm/resource_ref.hpp`: the `rmm::*resource_ref` names are CCCL's own
 * `cuda::mr::resource_ref` / `cuda::mr::synchronous_resource_ref` types.
 *
 * Being CCCL's types (not wrappers), they work with everything CCCL offers for them, e.g.
 * `cuda::mr::resource_cast<T>(&ref)` to recover the referenced resource, and a reference of
 * the host+device kind narrows to the host-only or device-only kind. Stream-ordered calls take
 * the stream first: `ref.allocate(stream, bytes[, alignment])`, where an `rmm::cuda_stream_view`
 * converts to `cuda::stream_ref`.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/error.hpp>

#include <cuda/memory_resource>

#include <type_traits>

namespace rmm {
RMM_API_NAMESPACE_BEGIN

/// @brief Non-owning reference to a synchronous resource of device-accessible memory.
using device_resource_ref = cuda::mr::synchronous_resource_ref<cuda::mr::device_accessible>;

/// @brief Non-owning reference to a stream-ordered resource of device-accessible memory.
using device_async_resource_ref = cuda::mr::resource_ref<cuda::mr::device_accessible>;

/// @brief Non-owning reference to a synchronous resource of host-accessible memory.
using host_resource_ref = cuda::mr::synchronous_resource_ref<cuda::mr::host_accessible>;

/// @brief Non-owning reference to a stream-ordered resource of host-accessible memory.
using host_async_resource_ref = cuda::mr::resource_ref<cuda::mr::host_accessible>;

/// @brief Non-owning reference to a synchronous resource of memory accessible from host and
/// device.
using host_device_resource_ref =
  cuda::mr::synchronous_resource_ref<cuda::mr::host_accessible, cuda::mr::device_accessible>;

/// @brief Non-owning reference to a stream-ordered resource of memory accessible from host and
/// device.
using host_device_async_resource_ref =
  cuda::mr::resource_ref<cuda::mr::host_accessible, cuda::mr::device_accessible>;

/**
 * @brief A device_async_resource_ref to `*res`, refusing a null pointer.
 *
 * @tparam Resource A stream-ordered resource type of device-accessible memory
 * @param res The resource to refer to; must outlive the reference
 * @return A reference to `*res`
 * @throws rmm::logic_error when @p res is null
 */
template <class Resource>
device_async_resource_ref to_device_async_resource_ref_checked(Resource* res)
{
  RMM_EXPECTS(res != nullptr,
              "to_device_async_resource_ref_checked: null resource pointer; pass the address of "
              "a live memory resource");
  return device_async_resource_ref{*res};
}

// A host+device resource may serve where only one of the two is needed.
static_assert(std::is_constructible_v<device_async_resource_ref, host_device_async_resource_ref>);
static_assert(std::is_constructible_v<device_resource_ref, host_device_resource_ref>);
static_assert(std::is_constructible_v<host_async_resource_ref, host_device_async_resource_ref>);
static_assert(std::is_constructible_v<host_resource_ref, host_device_resource_ref>);

RMM_API_NAMESPACE_END
}  // namespace rmm

#endif  // RMM_API_GENERATION
