/**
 * @file detail/gen_26_06/mr/sam_headroom_memory_resource.hpp
 * @brief RMM 26.06's `rmm::mr::sam_headroom_memory_resource`: system memory placed on the
 * device while it keeps a headroom free, through librmm's sam_headroom resource.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/aligned.hpp>
#include <rmm/detail/gen_26_06/mr/detail/resource_bases.hpp>

#include <cuda/memory_resource>

#include <cstddef>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief The shared state of a sam_headroom_memory_resource.
 */
class sam_headroom_memory_resource_impl final
  : public librmm_equal_impl<sam_headroom_memory_resource_impl> {
 public:
  /**
   * @brief Creates librmm's resource.
   * @param headroom Bytes of device memory left free
   */
  explicit sam_headroom_memory_resource_impl(std::size_t headroom)
    : librmm_equal_impl{make_handle(rmm_sam_headroom_create, headroom)}
  {
  }
};

}  // namespace detail

/**
 * @brief System memory preferred on the current device while @p headroom bytes of it stay
 * free, on the host beyond that. Copies share the resource.
 */
class RMM_EXPORT sam_headroom_memory_resource final
  : public detail::shared_handle_resource<detail::sam_headroom_memory_resource_impl> {
 public:
  /// @brief Device-accessible memory.
  friend void get_property(sam_headroom_memory_resource const&,
                           cuda::mr::device_accessible) noexcept
  {
  }
  /// @brief Host-accessible memory.
  friend void get_property(sam_headroom_memory_resource const&, cuda::mr::host_accessible) noexcept
  {
  }

  /**
   * @brief Creates the resource.
   * @param headroom Bytes of device memory to leave free
   * @throws rmm::logic_error when the device cannot access pageable memory
   */
  explicit sam_headroom_memory_resource(std::size_t headroom)
    : shared_handle_resource{std::in_place, headroom}
  {
  }

  sam_headroom_memory_resource() = delete;
};

static_assert(cuda::mr::resource_with<sam_headroom_memory_resource, cuda::mr::device_accessible>);
static_assert(cuda::mr::resource_with<sam_headroom_memory_resource, cuda::mr::host_accessible>);

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
