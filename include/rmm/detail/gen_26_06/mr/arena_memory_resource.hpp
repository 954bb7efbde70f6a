/**
 * @file detail/gen_26_06/mr/arena_memory_resource.hpp
 * @brief RMM 26.06's `rmm::mr::arena_memory_resource`: a global arena with per-thread and
 * per-stream arenas, through librmm's arena resource.
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
#include <optional>
#include <string>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief The shared state of a arena_memory_resource: librmm's arena resource over the upstream.
 */
class arena_memory_resource_impl final : public adaptor_impl_base {
 public:
  /**
   * @brief Creates the resource over @p upstream.
   * @param upstream The upstream
   * @param arena_size Size of the global arena; none: half the free device memory
   * @param dump_log_on_failure Whether a failure logs the arenas' state
   */
  arena_memory_resource_impl(any_device_resource upstream,
                             std::optional<std::size_t> arena_size,
                             bool dump_log_on_failure)
    : adaptor_impl_base{
        std::move(upstream), "arena_memory_resource(upstream, ...)", [&](rmm_resource_t up) {
          RMM_EXPECTS(
            !arena_size.has_value() ||
              (*arena_size > 0 && rmm::is_aligned(*arena_size, rmm::CUDA_ALLOCATION_ALIGNMENT)),
            "arena_memory_resource: arena_size (" + std::to_string(arena_size.value_or(0)) +
              " bytes) must be a positive multiple of 256 bytes");
          return make_handle(rmm_arena_create, up, arena_size.value_or(0), dump_log_on_failure);
        }}
  {
  }
};

}  // namespace detail

/**
 * @brief Sub-allocator for many threads: a global arena taken from the upstream in one allocation,
 * shared out through per-thread and per-stream arenas. Copies share one adaptor.
 */
class RMM_EXPORT arena_memory_resource
  : public detail::shared_handle_resource<detail::arena_memory_resource_impl> {
 public:
  /**
   * @brief Creates the resource.
   * @param upstream The upstream
   * @param arena_size Size of the global arena (a multiple of 256); none: half the free memory
   * @param dump_log_on_failure Whether an allocation failure logs the arenas' state
   * @throws rmm::logic_error for a bad size or an empty upstream
   */
  explicit arena_memory_resource(cuda::mr::any_resource<cuda::mr::device_accessible> upstream,
                                 std::optional<std::size_t> arena_size = std::nullopt,
                                 bool dump_log_on_failure              = false)
    : shared_handle_resource{std::in_place, std::move(upstream), arena_size, dump_log_on_failure}
  {
  }
};

static_assert(cuda::mr::resource_with<arena_memory_resource, cuda::mr::device_accessible>);

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
