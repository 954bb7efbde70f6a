/**
 * @file mr/is_resource_adaptor.hpp
 * @brief `rmm::mr::is_resource_adaptor<R>`: whether @p R is a memory resource that adapts an
 * upstream resource (RMM's `rmm/mr/is_resource_adaptor.hpp`).
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/detail/cuda_mr.hpp>
#include <rmm/detail/export.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

#if defined(__has_include)
#if __has_include(<cuda/std/type_traits>)
#include <cuda/std/type_traits>
#endif
#endif

namespace RMM_EXPORT rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

#if defined(RMM_HAS_CUDA_MR)
/// @brief Whether @p Resource satisfies `cuda::mr::resource` (CCCL's concept).
template <class Resource>
inline constexpr bool satisfies_resource_concept = ::cuda::mr::resource<Resource>;
#else
/// @cond
template <class Resource, class = void>
inline constexpr bool has_resource_members = false;

template <class Resource>
inline constexpr bool has_resource_members<
  Resource,
  std::void_t<decltype(std::declval<Resource&>().allocate(std::size_t{}, std::size_t{})),
              decltype(std::declval<Resource&>().deallocate(
                static_cast<void*>(nullptr), std::size_t{}, std::size_t{})),
              decltype(std::declval<Resource const&>() == std::declval<Resource const&>()),
              decltype(std::declval<Resource const&>() != std::declval<Resource const&>())>> =
  std::is_convertible_v<decltype(std::declval<Resource&>().allocate(std::size_t{}, std::size_t{})),
                        void*>;
/// @endcond

/**
 * @brief Whether @p Resource has what `cuda::mr::resource` asks for (CCCL is not available):
 * `void* allocate(bytes, alignment)`, `deallocate(ptr, bytes, alignment)` and `==` / `!=`.
 */
template <class Resource>
inline constexpr bool satisfies_resource_concept = has_resource_members<Resource>;
#endif

}  // namespace detail

/**
 * @brief True when @p Resource is a memory resource (`cuda::mr::resource`) with a
 * `get_upstream_resource()` member, i.e. a resource adaptor; false otherwise.
 *
 * @tparam Resource The type to test
 */
template <class Resource, class = void>
inline constexpr bool is_resource_adaptor = false;

/// @cond
template <class Resource>
inline constexpr bool
  is_resource_adaptor<Resource,
                      std::void_t<decltype(std::declval<Resource>().get_upstream_resource())>> =
    detail::satisfies_resource_concept<Resource>;
/// @endcond

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
