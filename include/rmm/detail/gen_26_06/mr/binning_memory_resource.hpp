/**
 * @file detail/gen_26_06/mr/binning_memory_resource.hpp
 * @brief RMM 26.06's `rmm::mr::binning_memory_resource`: requests routed by size to bins,
 * larger ones to the upstream, through librmm's binning resource.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/detail/error.hpp>
#include <rmm/detail/gen_26_06/mr/detail/resource_bases.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief The shared state of a binning_memory_resource.
 */
class binning_memory_resource_impl final : public adaptor_impl_base {
 public:
  /**
   * @brief Creates the resource over @p upstream with fixed-size bins of 2^min ..= 2^max bytes
   * (-1 and -1: no bins).
   * @param upstream The upstream
   * @param min_size_exponent Exponent of the smallest bin
   * @param max_size_exponent Exponent of the largest bin
   */
  binning_memory_resource_impl(any_device_resource upstream,
                               int8_t min_size_exponent,
                               int8_t max_size_exponent)
    : adaptor_impl_base{
        std::move(upstream), "binning_memory_resource(upstream, ...)", [&](rmm_resource_t up) {
          RMM_EXPECTS(min_size_exponent <= max_size_exponent,
                      "binning_memory_resource: min_size_exponent (" +
                        std::to_string(min_size_exponent) + ") exceeds max_size_exponent (" +
                        std::to_string(max_size_exponent) + ")");
          return make_handle(rmm_binning_create,
                             up,
                             static_cast<int32_t>(min_size_exponent),
                             static_cast<int32_t>(max_size_exponent));
        }}
  {
  }

  /**
   * @brief Adds a bin for requests up to @p allocation_size bytes.
   * @param allocation_size The largest request of the bin
   * @param bin_resource Serves the bin (must outlive this resource); none: a new fixed-size
   * resource of that block size over the upstream
   */
  void add_bin(std::size_t allocation_size, std::optional<device_async_resource_ref> bin_resource)
  {
    if (!bin_resource.has_value()) {
      rmm::detail::check(rmm_binning_add_bin(handle(), allocation_size, nullptr));
      return;
    }
    if (rmm_resource_t own = find_handle(*bin_resource); own != nullptr) {
      rmm::detail::check(rmm_binning_add_bin(handle(), allocation_size, own));
      return;
    }
    // Another kind of resource: a callback resource over the reference (librmm keeps it).
    rmm_resource_t bridge = make_any_bridge(any_device_resource{*bin_resource});
    rmm_status_t status   = rmm_binning_add_bin(handle(), allocation_size, bridge);
    (void)rmm_resource_release(bridge);
    rmm::detail::check(status);
  }
};

}  // namespace detail

/**
 * @brief Routes each request to the smallest bin that fits (bins are resources of their own,
 * usually fixed-size ones), and larger requests to the upstream. Copies share the bins.
 */
class RMM_EXPORT binning_memory_resource
  : public detail::shared_adaptor<detail::binning_memory_resource_impl> {
 public:
  /**
   * @brief A binning resource with no bins yet (add them with add_bin).
   * @param upstream The upstream
   * @throws rmm::logic_error for an empty upstream
   */
  explicit binning_memory_resource(cuda::mr::any_resource<cuda::mr::device_accessible> upstream)
    : shared_adaptor{std::in_place, std::move(upstream), int8_t{-1}, int8_t{-1}}
  {
  }

  /**
   * @brief A binning resource with fixed-size bins of 2^min_size_exponent ..=
   * 2^max_size_exponent bytes over @p upstream.
   * @param upstream The upstream
   * @param min_size_exponent Exponent of the smallest bin
   * @param max_size_exponent Exponent of the largest bin
   * @throws rmm::logic_error for an empty upstream or min > max
   */
  binning_memory_resource(cuda::mr::any_resource<cuda::mr::device_accessible> upstream,
                          int8_t min_size_exponent,  // NOLINT(bugprone-easily-swappable-parameters)
                          int8_t max_size_exponent)
    : shared_adaptor{std::in_place, std::move(upstream), min_size_exponent, max_size_exponent}
  {
  }

  /**
   * @brief Adds a bin for requests up to @p allocation_size bytes.
   * @param allocation_size The largest request of the bin
   * @param bin_resource Serves the bin (must outlive this resource); none: a fixed-size
   * resource over the upstream
   */
  void add_bin(std::size_t allocation_size,
               std::optional<device_async_resource_ref> bin_resource = std::nullopt)
  {
    get().add_bin(allocation_size, bin_resource);
  }
};

static_assert(cuda::mr::resource_with<binning_memory_resource, cuda::mr::device_accessible>);

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
