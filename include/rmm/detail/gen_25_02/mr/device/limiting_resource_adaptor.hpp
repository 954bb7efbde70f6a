/**
 * @file detail/gen_25_02/mr/device/limiting_resource_adaptor.hpp
 * @brief Caps the bytes outstanding from an upstream (implemented by the Rust core).
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
#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/mr/device/per_device_resource.hpp>

#include <cstddef>
#include <type_traits>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief Resource adaptor that fails with rmm::out_of_memory (naming the request, the limit
 * and the bytes allocated) when an allocation would take the bytes outstanding past
 * `allocation_limit`. Each request is counted rounded up to `alignment`.
 *
 * A limit of 0 is allowed (as in hipMM): every non-empty allocation then fails. The upstream
 * must outlive the adaptor. Not copyable or movable.
 *
 * @tparam Upstream Type of the upstream resource (a device_memory_resource)
 */
template <typename Upstream>
class limiting_resource_adaptor final : public detail::upstream_resource<Upstream> {
 public:
  /**
   * @brief Creates the adaptor over @p upstream.
   * @param upstream The upstream resource (not owned; must outlive the adaptor)
   * @param allocation_limit Bytes that may be outstanding at once
   * @param alignment Requests are counted rounded up to this (a power of two)
   * @throws rmm::logic_error when @p upstream is null or @p alignment is not a power of two
   */
  limiting_resource_adaptor(Upstream* upstream,
                            std::size_t allocation_limit,
                            std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT)
    : detail::upstream_resource<Upstream>{
        upstream, rmm_limiting_adaptor_create, allocation_limit, alignment}
  {
  }

  /**
   * @brief Creates the adaptor over @p upstream.
   * @param upstream Reference to the upstream resource (not owned; must outlive the adaptor)
   * @param allocation_limit Bytes that may be outstanding at once
   * @param alignment Requests are counted rounded up to this (a power of two)
   * @throws rmm::logic_error when @p upstream is null or @p alignment is not a power of two
   */
  limiting_resource_adaptor(device_async_resource_ref upstream,
                            std::size_t allocation_limit,
                            std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT)
    : detail::upstream_resource<Upstream>{
        upstream, rmm_limiting_adaptor_create, allocation_limit, alignment}
  {
  }

  /**
   * @brief Bytes currently allocated (each request rounded up to the alignment).
   * @return Bytes
   */
  [[nodiscard]] std::size_t get_allocated_bytes() const
  {
    std::size_t bytes = 0;
    rmm::detail::check(rmm_limiting_adaptor_get_allocated_bytes(this->handle(), &bytes));
    return bytes;
  }

  /**
   * @brief The limit given at construction.
   * @return Bytes
   */
  [[nodiscard]] std::size_t get_allocation_limit() const
  {
    std::size_t limit = 0;
    rmm::detail::check(rmm_limiting_adaptor_get_allocation_limit(this->handle(), &limit));
    return limit;
  }
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
