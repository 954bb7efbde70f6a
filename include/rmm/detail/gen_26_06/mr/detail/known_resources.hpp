/**
 * @file detail/gen_26_06/mr/detail/known_resources.hpp
 * @brief find_handle(): recognises each resource class of the 26.06 layer inside a
 * `cuda::mr::any_resource` or `resource_ref`, so that librmm reaches it through its own handle.
 *
 * CCCL's `resource_cast<T>` is exact on the stored type, so this header knows every class.
 * Each resource header includes it last: it includes them all first (those already being
 * read are skipped by their include guard, after their class is complete), so every class is
 * complete where find_handle is defined.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/error.hpp>
#include <rmm/detail/gen_26_06/mr/detail/handle_impl.hpp>

#include <rmm/mr/aligned_resource_adaptor.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/callback_memory_resource.hpp>
#include <rmm/mr/cuda_async_managed_memory_resource.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_async_view_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/failure_callback_resource_adaptor.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>
#include <rmm/mr/logging_resource_adaptor.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/prefetch_resource_adaptor.hpp>
#include <rmm/mr/sam_headroom_memory_resource.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>
#include <rmm/mr/system_memory_resource.hpp>
#include <rmm/mr/thread_safe_resource_adaptor.hpp>
#include <rmm/mr/tracking_resource_adaptor.hpp>
#include <rmm/mr/vmm_pool_memory_resource.hpp>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief The handle of the first of @p Resources that @p wrapper holds, else null.
 * @param wrapper Pointer to an any_resource or a resource_ref
 * @return The handle (borrowed), or null
 */
template <typename... Resources, typename Wrapper>
rmm_resource_t handle_of_one_of(Wrapper* wrapper) noexcept
{
  rmm_resource_t found = nullptr;
  (void)((found == nullptr &&
          [&] {
            if (auto const* res = cuda::mr::resource_cast<Resources>(wrapper); res != nullptr) {
              found = handle_of(*res);
            }
            return found != nullptr;
          }()) ||
         ...);
  return found;
}

/**
 * @brief The handle held by @p wrapper when it holds one of this layer's resources.
 * @param wrapper Pointer to an any_resource or a resource_ref
 * @return The handle (borrowed), or null
 */
template <typename Wrapper>
rmm_resource_t handle_of_known(Wrapper* wrapper) noexcept
{
  return handle_of_one_of<pool_memory_resource,
                          cuda_memory_resource,
                          registry_resource,
                          cuda_async_memory_resource,
                          statistics_resource_adaptor,
                          tracking_resource_adaptor,
                          limiting_resource_adaptor,
                          binning_memory_resource,
                          fixed_size_memory_resource,
                          arena_memory_resource,
                          aligned_resource_adaptor,
                          managed_memory_resource,
                          cuda_async_view_memory_resource,
                          cuda_async_managed_memory_resource,
                          logging_resource_adaptor,
                          thread_safe_resource_adaptor,
                          prefetch_resource_adaptor,
                          callback_memory_resource,
                          failure_callback_resource_adaptor<rmm::out_of_memory>,
                          failure_callback_resource_adaptor<rmm::bad_alloc>,
                          pinned_host_memory_resource,
                          system_memory_resource,
                          sam_headroom_memory_resource,
                          vmm_pool_memory_resource>(wrapper);
}

inline rmm_resource_t find_handle(device_async_resource_ref ref) noexcept
{
  return handle_of_known(&ref);
}

inline rmm_resource_t find_handle(any_device_resource const& resource) noexcept
{
  auto* any = const_cast<any_device_resource*>(&resource);
  if (rmm_resource_t own = handle_of_known(any); own != nullptr) { return own; }
  // An any_resource made from a reference (RMM 26.06's containers take the current resource
  // that way) holds the reference: look through it.
  if (auto* ref = cuda::mr::resource_cast<device_async_resource_ref>(any); ref != nullptr) {
    return handle_of_known(ref);
  }
  return nullptr;
}

}  // namespace detail
}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#endif  // RMM_API_GENERATION
