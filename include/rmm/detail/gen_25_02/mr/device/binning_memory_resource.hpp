/**
 * @file detail/gen_25_02/mr/device/binning_memory_resource.hpp
 * @brief Sub-allocator routing each request to the smallest bin that fits, or to the
 * upstream (implemented by the Rust core).
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
#include <rmm/mr/device/fixed_size_memory_resource.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <algorithm>
#include <cassert>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief Serves each allocation from the smallest bin whose size fits it; larger ones go to
 * @p Upstream.
 *
 * Bins are fixed_size resources over the upstream (one per power of two between the
 * exponents given), or resources added with add_bin(). The upstream and every bin resource
 * passed to add_bin() must outlive this resource. Not copyable or movable.
 *
 * @tparam Upstream Type of the upstream resource (a device_memory_resource)
 */
template <typename Upstream>
class binning_memory_resource final : public detail::upstream_resource<Upstream> {
 public:
  /**
   * @brief Creates the resource over @p upstream with no bins (add them with add_bin()).
   * @param upstream The upstream resource (not owned; must outlive this resource)
   * @throws rmm::logic_error when @p upstream is null
   */
  explicit binning_memory_resource(Upstream* upstream)
    : detail::upstream_resource<Upstream>{upstream, rmm_binning_create, -1, -1}
  {
  }

  /**
   * @brief Creates the resource over @p upstream with no bins (add them with add_bin()).
   * @param upstream Reference to the upstream resource (not owned; must outlive this resource)
   * @throws rmm::logic_error when @p upstream is null
   */
  explicit binning_memory_resource(device_async_resource_ref upstream)
    : detail::upstream_resource<Upstream>{upstream, rmm_binning_create, -1, -1}
  {
  }

  /**
   * @brief Creates the resource over @p upstream with fixed-size bins of
   * 2^min_size_exponent ..= 2^max_size_exponent bytes.
   * @param upstream The upstream resource (not owned; must outlive this resource)
   * @param min_size_exponent Exponent of the smallest bin
   * @param max_size_exponent Exponent of the largest bin
   * @throws rmm::logic_error when @p upstream is null or the exponents are invalid
   */
  binning_memory_resource(Upstream* upstream,
                          std::int8_t min_size_exponent,
                          std::int8_t max_size_exponent)
    : detail::upstream_resource<Upstream>{upstream,
                                          rmm_binning_create,
                                          checked_exponent(min_size_exponent),
                                          checked_exponents(min_size_exponent, max_size_exponent)}
  {
  }

  /**
   * @brief Creates the resource over @p upstream with fixed-size bins of
   * 2^min_size_exponent ..= 2^max_size_exponent bytes.
   * @param upstream Reference to the upstream resource (not owned; must outlive this resource)
   * @param min_size_exponent Exponent of the smallest bin
   * @param max_size_exponent Exponent of the largest bin
   * @throws rmm::logic_error when @p upstream is null or the exponents are invalid
   */
  binning_memory_resource(device_async_resource_ref upstream,
                          std::int8_t min_size_exponent,
                          std::int8_t max_size_exponent)
    : detail::upstream_resource<Upstream>{upstream,
                                          rmm_binning_create,
                                          checked_exponent(min_size_exponent),
                                          checked_exponents(min_size_exponent, max_size_exponent)}
  {
  }

  /**
   * @brief Adds a bin serving requests of up to @p allocation_size bytes.
   * @param allocation_size The largest request of the bin
   * @param bin_resource The bin's resource (not owned; must outlive this resource), or null
   * for a new fixed_size resource of that block size over the upstream
   * @throws rmm::logic_error when the size is invalid
   */
  void add_bin(std::size_t allocation_size, device_memory_resource* bin_resource)
  {
    rmm_resource_t bin = bin_resource == nullptr ? nullptr : this->keep_handle(bin_resource);
    rmm::detail::check(rmm_binning_add_bin(this->handle(), allocation_size, bin));
  }

  /**
   * @brief Adds a bin serving requests of up to @p allocation_size bytes (RMM 25.02's form).
   * @param allocation_size The largest request of the bin
   * @param bin_resource Reference to the bin's resource (which must outlive this resource), or
   * none for a new fixed_size resource of that block size over the upstream
   * @throws rmm::logic_error when the size is invalid
   */
  void add_bin(std::size_t allocation_size,
               std::optional<device_async_resource_ref> bin_resource = std::nullopt)
  {
    rmm_resource_t bin = bin_resource.has_value() ? this->keep_handle(*bin_resource) : nullptr;
    rmm::detail::check(rmm_binning_add_bin(this->handle(), allocation_size, bin));
  }

 private:
  static std::int32_t checked_exponent(std::int8_t exponent)
  {
    RMM_EXPECTS(exponent >= 0 && exponent < 64,
                "size exponent out of range: " + std::to_string(int{exponent}));
    return exponent;
  }

  static std::int32_t checked_exponents(std::int8_t min_size_exponent,
                                        std::int8_t max_size_exponent)
  {
    RMM_EXPECTS(min_size_exponent <= max_size_exponent,
                "min_size_exponent (" + std::to_string(int{min_size_exponent}) +
                  ") must not exceed max_size_exponent (" + std::to_string(int{max_size_exponent}) +
                  ")");
    return checked_exponent(max_size_exponent);
  }
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
