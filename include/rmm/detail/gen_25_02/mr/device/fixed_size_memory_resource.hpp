/**
 * @file detail/gen_25_02/mr/device/fixed_size_memory_resource.hpp
 * @brief Sub-allocator of fixed-size blocks over an upstream resource (implemented by the
 * Rust core).
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/detail/check.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/handle_resource.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/upstream_handle.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/upstream_resource.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>
#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/detail/logging_assert.hpp>
#include <rmm/detail/thrust_namespace.h>

#include <cstddef>
#include <type_traits>
#include <algorithm>
#include <list>
#include <map>
#include <utility>
#include <vector>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief Serves allocations of at most one block size in constant time, taking
 * `blocks_to_preallocate` blocks from @p Upstream at a time.
 *
 * Larger requests throw rmm::bad_alloc. The upstream must outlive this resource. Not
 * copyable or movable.
 *
 * @tparam Upstream Type of the upstream resource (a device_memory_resource)
 */
template <typename Upstream>
class fixed_size_memory_resource final : public detail::upstream_resource<Upstream> {
 public:
  /// @brief Default block size: 1 MiB.
  static constexpr std::size_t default_block_size = std::size_t{1} << 20;
  /// @brief Default number of blocks taken from the upstream at a time.
  static constexpr std::size_t default_blocks_to_preallocate = 128;

  /**
   * @brief Creates the resource over @p upstream.
   * @param upstream The upstream resource (not owned; must outlive this resource)
   * @param block_size Size of every block (rounded up to 256)
   * @param blocks_to_preallocate Blocks taken from the upstream at a time
   * @throws rmm::logic_error when @p upstream is null or a size is invalid
   * @throws rmm::out_of_memory / rmm::bad_alloc when the preallocation fails
   */
  explicit fixed_size_memory_resource(
    Upstream* upstream,
    std::size_t block_size            = default_block_size,
    std::size_t blocks_to_preallocate = default_blocks_to_preallocate)
    : detail::upstream_resource<Upstream>{upstream, &create, block_size, blocks_to_preallocate}
  {
  }

  /**
   * @brief Creates the resource over @p upstream.
   * @param upstream Reference to the upstream resource (not owned; must outlive this resource)
   * @param block_size Size of every block (rounded up to 256)
   * @param blocks_to_preallocate Blocks taken from the upstream at a time
   * @throws rmm::logic_error when @p upstream is null or a size is invalid
   * @throws rmm::out_of_memory / rmm::bad_alloc when the preallocation fails
   */
  explicit fixed_size_memory_resource(
    device_async_resource_ref upstream,
    std::size_t block_size            = default_block_size,
    std::size_t blocks_to_preallocate = default_blocks_to_preallocate)
    : detail::upstream_resource<Upstream>{upstream, &create, block_size, blocks_to_preallocate}
  {
  }

  /**
   * @brief The size of every block (the largest allocation served).
   * @return Bytes
   */
  [[nodiscard]] std::size_t get_block_size() const
  {
    std::size_t size = 0;
    rmm::detail::check(rmm_fixed_size_get_block_size(this->handle(), &size));
    return size;
  }

 private:
  static rmm_status_t create(rmm_resource_t upstream,
                             std::size_t block_size,
                             std::size_t blocks_to_preallocate,
                             rmm_resource_t* out)
  {
    RMM_EXPECTS(block_size != 0, "block_size must be positive");
    RMM_EXPECTS(blocks_to_preallocate != 0, "blocks_to_preallocate must be positive");
    return rmm_fixed_size_create(upstream, block_size, blocks_to_preallocate, out);
  }
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
