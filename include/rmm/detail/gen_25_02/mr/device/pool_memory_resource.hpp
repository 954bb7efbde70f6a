/**
 * @file detail/gen_25_02/mr/device/pool_memory_resource.hpp
 * @brief Coalescing pool sub-allocator over an upstream resource (implemented by the Rust core).
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
#include <rmm/detail/format.hpp>
#include <rmm/detail/logging_assert.hpp>
#include <rmm/detail/thrust_namespace.h>
#include <rmm/logger.hpp>
#include <rmm/mr/device/per_device_resource.hpp>

#include <cstddef>
#include <optional>
#include <type_traits>
#include <algorithm>
#include <iostream>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief A coalescing best-fit pool sub-allocator taking memory from @p Upstream.
 *
 * Starts with `initial_pool_size` bytes and grows on demand (bounded by
 * `maximum_pool_size`, when given); beyond the maximum, allocation throws rmm::out_of_memory
 * naming the request size. All memory goes back to the upstream on destruction. The
 * upstream must outlive this resource. Not copyable or movable.
 *
 * @tparam Upstream Type of the upstream resource (a device_memory_resource)
 */
namespace detail {
/**
 * @brief The `cuda::mr` accessibility of a pool follows its upstream's (RMM 25.02): a pool over
 * a resource without `device_accessible` does not claim it (a deleted, more specific
 * `get_property` hides the one every device_memory_resource has), and a pool over a host-
 * accessible resource (pinned memory) is host accessible too.
 */
template <typename Pool, typename Upstream, typename = void>
struct pool_properties {
};

#if defined(RMM_HAS_CUDA_MR)
template <typename Upstream>
inline constexpr bool upstream_device_accessible =
  std::is_base_of_v<device_memory_resource, Upstream> ||
  cuda::has_property<Upstream, cuda::mr::device_accessible>;
template <typename Upstream>
inline constexpr bool upstream_host_accessible =
  cuda::has_property<Upstream, cuda::mr::host_accessible>;

/// @cond
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnon-template-friend"
#endif
template <typename Pool, typename Upstream>
struct pool_properties<
  Pool,
  Upstream,
  std::enable_if_t<!upstream_device_accessible<Upstream> && !upstream_host_accessible<Upstream>>> {
  friend void get_property(Pool const&, cuda::mr::device_accessible) = delete;
};
template <typename Pool, typename Upstream>
struct pool_properties<
  Pool,
  Upstream,
  std::enable_if_t<!upstream_device_accessible<Upstream> && upstream_host_accessible<Upstream>>> {
  friend void get_property(Pool const&, cuda::mr::device_accessible) = delete;
  friend void get_property(Pool const&, cuda::mr::host_accessible) noexcept {}
};
template <typename Pool, typename Upstream>
struct pool_properties<
  Pool,
  Upstream,
  std::enable_if_t<upstream_device_accessible<Upstream> && upstream_host_accessible<Upstream>>> {
  friend void get_property(Pool const&, cuda::mr::host_accessible) noexcept {}
};
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
/// @endcond
#endif
}  // namespace detail

template <typename Upstream>
class pool_memory_resource final
  : public detail::upstream_resource<Upstream>,
    public detail::pool_properties<pool_memory_resource<Upstream>, Upstream> {
 public:
  /**
   * @brief Creates a pool over @p upstream.
   * @param upstream The upstream resource (not owned; must outlive the pool)
   * @param initial_pool_size Bytes taken from the upstream now (a multiple of 256)
   * @param maximum_pool_size Bound of the pool's growth (a multiple of 256), none by default
   * @throws rmm::logic_error when @p upstream is null or a size is not a multiple of 256
   * @throws rmm::out_of_memory / rmm::bad_alloc when the initial allocation fails
   */
  pool_memory_resource(Upstream* upstream,
                       std::size_t initial_pool_size,
                       std::optional<std::size_t> maximum_pool_size = std::nullopt)
    : detail::upstream_resource<Upstream>{upstream, &create, initial_pool_size, maximum_pool_size}
  {
  }

  /**
   * @brief Creates a pool over @p upstream.
   * @param upstream Reference to the upstream resource (not owned; must outlive the pool)
   * @param initial_pool_size Bytes taken from the upstream now (a multiple of 256)
   * @param maximum_pool_size Bound of the pool's growth (a multiple of 256), none by default
   * @throws rmm::logic_error when @p upstream is null or a size is not a multiple of 256
   * @throws rmm::out_of_memory / rmm::bad_alloc when the initial allocation fails
   */
  pool_memory_resource(device_async_resource_ref upstream,
                       std::size_t initial_pool_size,
                       std::optional<std::size_t> maximum_pool_size = std::nullopt)
    : detail::upstream_resource<Upstream>{upstream, &create, initial_pool_size, maximum_pool_size}
  {
  }

  /**
   * @brief Bytes the pool currently holds from its upstream.
   * @return The pool size
   */
  [[nodiscard]] std::size_t pool_size() const { return stats().pool_size; }

  /**
   * @brief The maximum pool size, when one was given.
   * @return The maximum, or std::nullopt
   */
  [[nodiscard]] std::optional<std::size_t> maximum_pool_size() const
  {
    auto const max = stats().maximum_pool_size;
    return max == 0 ? std::nullopt : std::optional<std::size_t>{max};
  }

  /**
   * @brief Number of free blocks in the pool (beyond RMM).
   * @return The count
   */
  [[nodiscard]] std::size_t free_block_count() const { return stats().free_block_count; }

  /**
   * @brief Size of the largest free block (beyond RMM).
   * @return Bytes
   */
  [[nodiscard]] std::size_t largest_free_block() const { return stats().largest_free_block; }

  /**
   * @brief Bytes free in the pool, all streams together (beyond RMM).
   * @return Bytes
   */
  [[nodiscard]] std::size_t bytes_free() const { return stats().bytes_free; }

  /**
   * @brief 1 - largest free block / bytes free; 0 when nothing is free (beyond RMM).
   * @return The fragmentation, in [0, 1)
   */
  [[nodiscard]] double fragmentation() const { return stats().fragmentation; }

  /**
   * @brief All statistics at once, from one consistent snapshot (beyond RMM).
   * @return The statistics
   */
  [[nodiscard]] rmm_pool_stats stats() const
  {
    rmm_pool_stats s{};
    rmm::detail::check(rmm_pool_get_stats(this->handle(), &s));
    return s;
  }

  /**
   * @brief Returns the upstream blocks that are entirely free to the upstream (beyond RMM).
   * @return Bytes returned
   */
  std::size_t release()
  {
    std::size_t released = 0;
    rmm::detail::check(rmm_pool_release(this->handle(), &released));
    return released;
  }

 private:
  static rmm_status_t create(rmm_resource_t upstream,
                             std::size_t initial_pool_size,
                             std::optional<std::size_t> maximum_pool_size,
                             rmm_resource_t* out)
  {
    RMM_EXPECTS(!maximum_pool_size.has_value() || *maximum_pool_size != 0,
                "maximum_pool_size must be positive");
    return rmm_pool_create(upstream, initial_pool_size, maximum_pool_size.value_or(0), out);
  }
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
