/**
 * @file detail/api_26_06/mr/is_resource_adaptor.hpp
 * @brief RMM 26.06's `rmm::mr::is_resource_adaptor` (deprecated there): whether a type is a
 * synchronous resource with `get_upstream_resource()`. Included through
 * `<rmm/mr/is_resource_adaptor.hpp>` by 26.06 translation units.
 */
#pragma once

#include <rmm/detail/export.hpp>

// 26.06 content only: a 25.x translation unit that includes this file gets nothing from it.
#if RMM_API_GENERATION >= 2606

#include <cuda/memory_resource>
#include <cuda/std/type_traits>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/// @brief Whether @p Resource is a resource adaptor (false: no `get_upstream_resource()`).
template <class Resource, class = void>
[[deprecated("is_resource_adaptor is deprecated and will be removed in a future release.")]]
inline constexpr bool is_resource_adaptor = false;

/// @brief Whether @p Resource is a resource adaptor: a synchronous resource with
/// `get_upstream_resource()`.
template <class Resource>
[[deprecated("is_resource_adaptor is deprecated and will be removed in a future release.")]]
inline constexpr bool is_resource_adaptor<
  Resource,
  cuda::std::void_t<decltype(cuda::std::declval<Resource>().get_upstream_resource())>> =
  cuda::mr::synchronous_resource<Resource>;

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#endif  // RMM_API_GENERATION
