/**
 * @file detail/cuda_memory_resource.hpp
 * @brief `rmm::detail::polyfill`: CCCL's memory-resource concepts under names that do not
 * change with the CCCL release (RMM 25.10's `rmm/detail/cuda_memory_resource.hpp`).
 *
 * CCCL 3.1 renamed the concepts: what CCCL up to 3.0 names `resource` (synchronous
 * allocate/deallocate) became `synchronous_resource`, and `async_resource` (stream-ordered)
 * became `resource`. Code written for RMM 25.10 spells them through this header:
 *
 * | polyfill name | CCCL up to 3.0 | CCCL 3.1 and later |
 * | --- | --- | --- |
 * | resource / resource_with | resource / resource_with | synchronous_resource /
 * synchronous_resource_with | | async_resource / async_resource_with | async_resource /
 * async_resource_with | resource / resource_with |
 *
 * The names exist only when CCCL's (or libhipcxx's) `cuda::mr` interface is available
 * (`RMM_HAS_CUDA_MR`, see rmm/detail/cuda_mr.hpp): the concepts are CCCL's own, and rmm-rs's
 * other headers compile without CCCL.
 */
#pragma once

#include <rmm/detail/cuda_mr.hpp>
#include <rmm/detail/export.hpp>

#if defined(RMM_HAS_CUDA_MR)

namespace RMM_EXPORT rmm {
RMM_API_NAMESPACE_BEGIN
namespace detail {
namespace polyfill {

#if defined(RMM_CUDA_MR_SYNC_NAMES)
/// @brief Whether @p Resource has synchronous allocate_sync / deallocate_sync and equality.
template <class Resource>
inline constexpr bool resource = ::cuda::mr::synchronous_resource<Resource>;

/// @brief resource, and @p Resource has each of @p Properties.
template <class Resource, class... Properties>
inline constexpr bool resource_with =
  ::cuda::mr::synchronous_resource_with<Resource, Properties...>;

/// @brief Whether @p Resource has the stream-ordered allocate / deallocate as well.
template <class Resource>
inline constexpr bool async_resource = ::cuda::mr::resource<Resource>;

/// @brief async_resource, and @p Resource has each of @p Properties.
template <class Resource, class... Properties>
inline constexpr bool async_resource_with = ::cuda::mr::resource_with<Resource, Properties...>;
#else
/// @brief Whether @p Resource has synchronous allocate / deallocate and equality.
template <class Resource>
inline constexpr bool resource = ::cuda::mr::resource<Resource>;

/// @brief resource, and @p Resource has each of @p Properties.
template <class Resource, class... Properties>
inline constexpr bool resource_with = ::cuda::mr::resource_with<Resource, Properties...>;

/// @brief Whether @p Resource has allocate_async / deallocate_async as well.
template <class Resource>
inline constexpr bool async_resource = ::cuda::mr::async_resource<Resource>;

/// @brief async_resource, and @p Resource has each of @p Properties.
template <class Resource, class... Properties>
inline constexpr bool async_resource_with =
  ::cuda::mr::async_resource_with<Resource, Properties...>;
#endif

}  // namespace polyfill
}  // namespace detail
RMM_API_NAMESPACE_END
}  // namespace rmm

#endif
