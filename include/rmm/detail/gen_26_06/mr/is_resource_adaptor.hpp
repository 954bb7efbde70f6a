/**
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <cuda/memory_resource>
#include <cuda/std/type_traits>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/// @brief Whether @p Resource is a resource adaptor (false: no `get_upstream_resource()`).
template <class Resource, class = void>
[[deprecated(
  "is_resource_adaptor is deprecated and will be removed in a future "
  "release.")]] inline constexpr bool is_resource_adaptor = false;

/// @brief Whether @p Resource is a resource adaptor: a synchronous resource with
/// `get_upstream_resource()`.
template <class Resource>
[[deprecated(
  "is_resource_adaptor is deprecated and will be removed in a future "
  "release.")]] inline constexpr bool
  is_resource_adaptor<
    Resource,
    cuda::std::void_t<decltype(cuda::std::declval<Resource>().get_upstream_resource())>> =
    cuda::mr::synchronous_resource<Resource>;

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#endif  // RMM_API_GENERATION
