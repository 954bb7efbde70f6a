/**
 * @file detail/gen_26_06/mr/pool_memory_resource.hpp
 * @brief RMM 26.06's `rmm::mr::pool_memory_resource`: a coalescing best-fit sub-allocator over
 * an upstream, implemented by librmm's pool.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/aligned.hpp>
#include <rmm/detail/format.hpp>
#include <rmm/detail/gen_26_06/mr/detail/resource_bases.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>

#include <cstddef>
#include <optional>
#include <string>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief The shared state of a pool_memory_resource: librmm's pool over the upstream.
 */
class pool_memory_resource_impl final : public adaptor_impl_base {
 public:
  /**
   * @brief Creates the pool and takes @p initial_pool_size bytes from the upstream.
   * @param upstream The upstream
   * @param initial_pool_size Bytes taken now (a multiple of 256)
   * @param maximum_pool_size The most the pool grows to (a multiple of 256, at least the
   * initial size); none: no limit but the upstream's
   * @throws rmm::logic_error for sizes that are not multiples of 256, a maximum below the
   * initial size, or an empty upstream
   */
  pool_memory_resource_impl(any_device_resource upstream,
                            std::size_t initial_pool_size,
                            std::optional<std::size_t> maximum_pool_size)
    : adaptor_impl_base{
        std::move(upstream), "pool_memory_resource(upstream, ...)", [&](rmm_resource_t up) {
          check_sizes(initial_pool_size, maximum_pool_size);
          return make_handle(rmm_pool_create, up, initial_pool_size, maximum_pool_size.value_or(0));
        }}
  {
  }

  /**
   * @brief Bytes the pool holds (allocated and free).
   * @return The size
   */
  [[nodiscard]] std::size_t pool_size() const noexcept
  {
    rmm_pool_stats stats{};
    return rmm_pool_get_stats(handle(), &stats) == RMM_STATUS_SUCCESS ? stats.pool_size : 0;
  }

 private:
  static void check_sizes(std::size_t initial, std::optional<std::size_t> maximum)
  {
    RMM_EXPECTS(rmm::is_aligned(initial, rmm::CUDA_ALLOCATION_ALIGNMENT),
                "pool_memory_resource: initial_pool_size (" + std::to_string(initial) +
                  " bytes) must be a multiple of 256 bytes; round it with rmm::align_up");
    RMM_EXPECTS(rmm::is_aligned(maximum.value_or(0), rmm::CUDA_ALLOCATION_ALIGNMENT),
                "pool_memory_resource: maximum_pool_size (" + std::to_string(maximum.value_or(0)) +
                  " bytes) must be a multiple of 256 bytes; round it with rmm::align_up");
    RMM_EXPECTS(!maximum.has_value() || *maximum >= initial,
                "pool_memory_resource: initial_pool_size (" + std::to_string(initial) +
                  " bytes) exceeds maximum_pool_size (" + std::to_string(maximum.value_or(0)) +
                  " bytes); raise the maximum or lower the initial size");
    RMM_EXPECTS(!maximum.has_value() || *maximum > 0,
                "pool_memory_resource: maximum_pool_size is 0; pass std::nullopt for no maximum");
  }
};

}  // namespace detail

/**
 * @brief A coalescing best-fit sub-allocator over an upstream resource; thread-safe and
 * stream-ordered. Copies share one pool.
 */
class RMM_EXPORT pool_memory_resource
  : public detail::shared_adaptor<detail::pool_memory_resource_impl> {
 public:
  /**
   * @brief Creates the pool, taking @p initial_pool_size bytes from @p upstream.
   * @param upstream The upstream (owned: copies of a shared resource share it)
   * @param initial_pool_size Initial size in bytes (a multiple of 256)
   * @param maximum_pool_size Maximum size in bytes (a multiple of 256); none: unlimited
   * @throws rmm::logic_error for misaligned sizes, maximum < initial, an empty upstream
   */
  explicit pool_memory_resource(cuda::mr::any_resource<cuda::mr::device_accessible> upstream,
                                std::size_t initial_pool_size,
                                std::optional<std::size_t> maximum_pool_size = std::nullopt)
    : shared_adaptor{std::in_place, std::move(upstream), initial_pool_size, maximum_pool_size}
  {
  }

  /**
   * @brief Bytes the pool holds, allocated and free.
   * @return The size
   */
  [[nodiscard]] std::size_t pool_size() const noexcept { return get().pool_size(); }
};

static_assert(cuda::mr::resource_with<pool_memory_resource, cuda::mr::device_accessible>);

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
