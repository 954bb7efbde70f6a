/**
 * @file detail/gen_26_06/mr/fixed_size_memory_resource.hpp
 * @brief RMM 26.06's `rmm::mr::fixed_size_memory_resource`: blocks of one size carved from its
 * upstream, through librmm's fixed_size resource.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/aligned.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/gen_26_06/mr/detail/resource_bases.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>

#include <cstddef>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief The shared state of a fixed_size_memory_resource: librmm's fixed_size resource over the
 * upstream.
 */
class fixed_size_memory_resource_impl final : public adaptor_impl_base {
 public:
  /**
   * @brief Creates the resource over @p upstream.
   * @param upstream The upstream
   * @param block_size Size of every block
   * @param blocks_to_preallocate Blocks taken from the upstream at a time
   */
  fixed_size_memory_resource_impl(any_device_resource upstream,
                                  std::size_t block_size,
                                  std::size_t blocks_to_preallocate)
    : adaptor_impl_base{
        std::move(upstream), "fixed_size_memory_resource(upstream, ...)", [&](rmm_resource_t up) {
          RMM_EXPECTS(block_size > 0 && blocks_to_preallocate > 0,
                      "fixed_size_memory_resource: block_size and blocks_to_preallocate "
                      "must be positive (got " +
                        std::to_string(block_size) + " and " +
                        std::to_string(blocks_to_preallocate) + ")");
          return make_handle(rmm_fixed_size_create, up, block_size, blocks_to_preallocate);
        }}
  {
  }

  /**
   * @brief The block size (rounded up to 256).
   * @return The size
   */
  [[nodiscard]] std::size_t get_block_size() const noexcept
  {
    std::size_t size = 0;
    (void)rmm_fixed_size_get_block_size(handle(), &size);
    return size;
  }
};

}  // namespace detail

/**
 * @brief Allocates blocks of one fixed size (requests up to that size) from lists replenished from
 * its upstream. Copies share one adaptor.
 */
class RMM_EXPORT fixed_size_memory_resource
  : public detail::shared_adaptor<detail::fixed_size_memory_resource_impl> {
 public:
  /// @brief Default block size (1 MiB).
  static constexpr std::size_t default_block_size = 1 << 20;
  /// @brief Default number of blocks taken from the upstream at a time.
  static constexpr std::size_t default_blocks_to_preallocate = 128;

  /**
   * @brief Creates the resource.
   * @param upstream The upstream
   * @param block_size Size of every block
   * @param blocks_to_preallocate Blocks taken from the upstream at a time
   * @throws rmm::logic_error for an empty upstream or zero sizes
   */
  explicit fixed_size_memory_resource(
    cuda::mr::any_resource<cuda::mr::device_accessible> upstream,
    std::size_t block_size            = default_block_size,
    std::size_t blocks_to_preallocate = default_blocks_to_preallocate)
    : shared_adaptor{std::in_place, std::move(upstream), block_size, blocks_to_preallocate}
  {
  }

  /**
   * @brief The block size.
   * @return The size
   */
  [[nodiscard]] std::size_t get_block_size() const noexcept { return get().get_block_size(); }
};

static_assert(cuda::mr::resource_with<fixed_size_memory_resource, cuda::mr::device_accessible>);

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
