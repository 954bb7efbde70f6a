/**
 * @file detail/gen_26_06/mr/aligned_resource_adaptor.hpp
 * @brief RMM 26.06's `rmm::mr::aligned_resource_adaptor`: aligns large allocations to a chosen
 * alignment, through librmm's aligned adaptor.
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

#include <algorithm>
#include <cstddef>
#include <string>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief The shared state of a aligned_resource_adaptor: librmm's aligned adaptor over the
 * upstream.
 */
class aligned_resource_adaptor_impl final : public adaptor_impl_base {
 public:
  /// @brief Allocations below this size are not aligned beyond 256 bytes.
  static constexpr std::size_t default_alignment_threshold = 0;

  /**
   * @brief Creates the adaptor over @p upstream.
   * @param upstream The upstream
   * @param alignment A power of two, at least 256
   * @param alignment_threshold Allocations of at least this size are aligned
   */
  aligned_resource_adaptor_impl(any_device_resource upstream,
                                std::size_t alignment,
                                std::size_t alignment_threshold)
    : adaptor_impl_base{
        std::move(upstream), "aligned_resource_adaptor(upstream, ...)", [&](rmm_resource_t up) {
          RMM_EXPECTS(rmm::is_supported_alignment(alignment),
                      "aligned_resource_adaptor: alignment " + std::to_string(alignment) +
                        " is not a power of two; pass a power of two (at least 256)");
          // Smaller alignments are raised to the device's 256 bytes, as RMM 26.06 does.
          return make_handle(rmm_aligned_adaptor_create,
                             up,
                             std::max(alignment, rmm::CUDA_ALLOCATION_ALIGNMENT),
                             alignment_threshold);
        }}
  {
  }
};

}  // namespace detail

/**
 * @brief Aligns allocations of at least `alignment_threshold` bytes to `alignment`. Copies share
 * one adaptor.
 */
class RMM_EXPORT aligned_resource_adaptor
  : public detail::shared_adaptor<detail::aligned_resource_adaptor_impl> {
 public:
  /// @brief The default threshold: every allocation is aligned.
  static constexpr std::size_t default_alignment_threshold =
    detail::aligned_resource_adaptor_impl::default_alignment_threshold;

  /**
   * @brief Creates the adaptor.
   * @param upstream The upstream
   * @param alignment The alignment (a power of two)
   * @param alignment_threshold Allocations of at least this size are aligned
   * @throws rmm::logic_error for an alignment that is not a power of two, an empty upstream
   */
  explicit aligned_resource_adaptor(cuda::mr::any_resource<cuda::mr::device_accessible> upstream,
                                    std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT,
                                    std::size_t alignment_threshold = default_alignment_threshold)
    : shared_adaptor{std::in_place, std::move(upstream), alignment, alignment_threshold}
  {
  }
};

static_assert(cuda::mr::resource_with<aligned_resource_adaptor, cuda::mr::device_accessible>);

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
