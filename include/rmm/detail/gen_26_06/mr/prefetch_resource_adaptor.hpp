/**
 * @file detail/gen_26_06/mr/prefetch_resource_adaptor.hpp
 * @brief RMM 26.06's `rmm::mr::prefetch_resource_adaptor`: prefetches each new allocation to the current device, through librmm's prefetch adaptor.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/aligned.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/gen_26_06/mr/detail/handle_impl.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>

#include <cstddef>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief The shared state of a prefetch_resource_adaptor: librmm's prefetch adaptor over the upstream.
 */
class prefetch_resource_adaptor_impl final : public adaptor_impl_base {
 public:
  /**
   * @brief Creates the adaptor over @p upstream.
   * @param upstream The upstream
   */
  explicit prefetch_resource_adaptor_impl(any_device_resource upstream)
    : adaptor_impl_base{std::move(upstream), "prefetch_resource_adaptor(upstream)", [](rmm_resource_t up) {
                          return make_handle(rmm_prefetch_adaptor_create, up);
                        }}
  {
  }
};

}  // namespace detail

/**
 * @brief Prefetches each allocation of its upstream (managed memory) to the current device on the allocation's stream. Copies share one adaptor.
 */
class RMM_EXPORT prefetch_resource_adaptor
  : public cuda::mr::shared_resource<detail::prefetch_resource_adaptor_impl> {
  using shared_base = cuda::mr::shared_resource<detail::prefetch_resource_adaptor_impl>;

 public:

  /// @brief Device-accessible memory.
  friend void get_property(prefetch_resource_adaptor const&, cuda::mr::device_accessible) noexcept {}

  /**
   * @brief Creates the adaptor.
   * @param upstream The upstream
   * @throws rmm::logic_error for an empty upstream
   */
  explicit prefetch_resource_adaptor(cuda::mr::any_resource<cuda::mr::device_accessible> upstream)
    : shared_base{cuda::std::in_place_type<detail::prefetch_resource_adaptor_impl>, std::move(upstream)}
  {
  }

  RMM_DETAIL_SHARED_RESOURCE_COPY_MOVE(prefetch_resource_adaptor)
  ~prefetch_resource_adaptor() = default;

  /**
   * @brief The upstream.
   * @return A reference to it
   */
  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept
  {
    return get().get_upstream_resource();
  }
};

static_assert(cuda::mr::resource_with<prefetch_resource_adaptor, cuda::mr::device_accessible>);

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
