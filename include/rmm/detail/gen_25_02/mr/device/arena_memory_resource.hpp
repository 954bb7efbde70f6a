/**
 * @file detail/gen_25_02/mr/device/arena_memory_resource.hpp
 * @brief Arena sub-allocator built for many threads (implemented by the Rust core).
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/detail/check.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/handle_resource.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/upstream_handle.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/upstream_resource.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>
#include <rmm/aligned.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/detail/format.hpp>
#include <rmm/detail/logging_assert.hpp>
#include <rmm/logger.hpp>

#include <cstddef>
#include <optional>
#include <type_traits>
#include <utility>
#include <map>
#include <shared_mutex>
#include <thread>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief A global arena taken from @p Upstream in one allocation, with per-thread arenas for
 * the default stream and per-stream arenas for the others.
 *
 * The upstream must outlive this resource. Not copyable or movable.
 *
 * @tparam Upstream Type of the upstream resource (a device_memory_resource)
 */
template <typename Upstream>
class arena_memory_resource final : public detail::upstream_resource<Upstream> {
 public:
  /**
   * @brief Creates the resource over @p upstream.
   * @param upstream The upstream resource (not owned; must outlive this resource)
   * @param arena_size Size of the global arena (a multiple of 256); half of the device's free
   * memory by default
   * @param dump_log_on_failure Whether an allocation failure also logs the arenas' state
   * @throws rmm::logic_error when @p upstream is null or @p arena_size is invalid
   * @throws rmm::out_of_memory / rmm::bad_alloc when the global arena cannot be allocated
   */
  explicit arena_memory_resource(Upstream* upstream,
                                 std::optional<std::size_t> arena_size = std::nullopt,
                                 bool dump_log_on_failure              = false)
    : detail::upstream_resource<Upstream>{upstream, &create, arena_size, dump_log_on_failure}
  {
  }

  /**
   * @brief Creates the resource over @p upstream.
   * @param upstream Reference to the upstream resource (not owned; must outlive this resource)
   * @param arena_size Size of the global arena (a multiple of 256); half of the device's free
   * memory by default
   * @param dump_log_on_failure Whether an allocation failure also logs the arenas' state
   * @throws rmm::logic_error when @p upstream is null or @p arena_size is invalid
   * @throws rmm::out_of_memory / rmm::bad_alloc when the global arena cannot be allocated
   */
  explicit arena_memory_resource(device_async_resource_ref upstream,
                                 std::optional<std::size_t> arena_size = std::nullopt,
                                 bool dump_log_on_failure              = false)
    : detail::upstream_resource<Upstream>{upstream, &create, arena_size, dump_log_on_failure}
  {
  }

  /**
   * @brief Size of the global arena (beyond RMM).
   * @return Bytes
   */
  [[nodiscard]] std::size_t arena_size() const { return sizes().first; }

  /**
   * @brief Bytes free in all arenas (beyond RMM).
   * @return Bytes
   */
  [[nodiscard]] std::size_t bytes_free() const { return sizes().second; }

 private:
  [[nodiscard]] std::pair<std::size_t, std::size_t> sizes() const
  {
    std::size_t size = 0;
    std::size_t free = 0;
    rmm::detail::check(rmm_arena_get_sizes(this->handle(), &size, &free));
    return {size, free};
  }

  static rmm_status_t create(rmm_resource_t upstream,
                             std::optional<std::size_t> arena_size,
                             bool dump_log_on_failure,
                             rmm_resource_t* out)
  {
    RMM_EXPECTS(!arena_size.has_value() || *arena_size != 0, "arena_size must be positive");
    return rmm_arena_create(upstream, arena_size.value_or(0), dump_log_on_failure, out);
  }
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
