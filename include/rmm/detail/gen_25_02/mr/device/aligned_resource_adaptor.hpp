/**
 * @file detail/gen_25_02/mr/device/aligned_resource_adaptor.hpp
 * @brief Larger alignment for large allocations (implemented by the Rust core).
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/aligned.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/handle_resource.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/upstream_handle.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/upstream_resource.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/mr/device/per_device_resource.hpp>

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief Resource adaptor aligning allocations of at least `alignment_threshold` bytes to
 * `alignment`, by over-allocating from @p Upstream.
 *
 * Smaller allocations (and every allocation when the alignment is 256) pass straight
 * through. The upstream must outlive the adaptor. Not copyable or movable.
 *
 * @tparam Upstream Type of the upstream resource (a device_memory_resource)
 */
template <typename Upstream>
class aligned_resource_adaptor final : public detail::upstream_resource<Upstream> {
 public:
  /// @brief The default threshold: every allocation gets the larger alignment.
  static constexpr std::size_t default_alignment_threshold = 0;

  /**
   * @brief Creates the adaptor over @p upstream.
   * @param upstream The upstream resource (not owned; must outlive the adaptor)
   * @param alignment Alignment of large allocations (a power of two, at least 256)
   * @param alignment_threshold Allocations of this many bytes or more get @p alignment
   * @throws rmm::logic_error when @p upstream is null or @p alignment is not a power of two
   * of at least 256 (the message names the value)
   */
  explicit aligned_resource_adaptor(Upstream* upstream,
                                    std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT,
                                    std::size_t alignment_threshold = default_alignment_threshold)
    : detail::upstream_resource<Upstream>{upstream, &create, alignment, alignment_threshold}
  {
  }

  /**
   * @brief Creates the adaptor over @p upstream.
   * @param upstream Reference to the upstream resource (not owned; must outlive the adaptor)
   * @param alignment Alignment of large allocations (a power of two, at least 256)
   * @param alignment_threshold Allocations of this many bytes or more get @p alignment
   * @throws rmm::logic_error when @p upstream is null or @p alignment is not a power of two
   * of at least 256 (the message names the value)
   */
  explicit aligned_resource_adaptor(device_async_resource_ref upstream,
                                    std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT,
                                    std::size_t alignment_threshold = default_alignment_threshold)
    : detail::upstream_resource<Upstream>{upstream, &create, alignment, alignment_threshold}
  {
  }

 private:
  static rmm_status_t create(rmm_resource_t upstream,
                             std::size_t alignment,
                             std::size_t alignment_threshold,
                             rmm_resource_t* out)
  {
    // RMM 25.10 raises smaller power-of-two alignments to the device's 256 bytes; RMM 25.02
    // accepts them and its memory is 256-byte aligned anyway, so the same holds for 25.02.
    if (rmm::is_pow2(alignment)) {
      alignment = std::max(alignment, rmm::CUDA_ALLOCATION_ALIGNMENT);
    }
    return rmm_aligned_adaptor_create(upstream, alignment, alignment_threshold, out);
  }
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
