/**
 * @file detail/gen_25_02/mr/device/detail/upstream_resource.hpp
 * @brief Base class of RMM 25.02's adaptors and sub-allocators implemented by the Rust core:
 * what every one of them has (the upstream reached through a handle, its own handle made from
 * it, RMM's two upstream accessors, no copy and no move), so each class holds only its own
 * constructor arguments and queries.
 */
#pragma once

#include <rmm/detail/export.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/handle_resource.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/upstream_handle.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief A Rust-backed resource over an upstream of type @p Upstream.
 *
 * The upstream's handle is made first and released last (upstream_handle_holder is the first
 * base), so the resource's own handle never outlives what it allocates from. The upstream
 * must outlive the resource.
 *
 * @tparam Upstream The upstream type of the class template (a device_memory_resource, or any
 * type a device_async_resource_ref accepts)
 */
template <typename Upstream>
class upstream_resource : protected upstream_handle_holder, public handle_resource {
 public:
  upstream_resource(upstream_resource const&)            = delete;
  upstream_resource(upstream_resource&&)                 = delete;
  upstream_resource& operator=(upstream_resource const&) = delete;
  upstream_resource& operator=(upstream_resource&&)      = delete;
  ~upstream_resource() override                          = default;

  /**
   * @brief The upstream resource given at construction.
   * @return The upstream
   */
  [[nodiscard]] rmm::device_async_resource_ref get_upstream_resource() const noexcept
  {
    return upstream_ref();
  }

  /**
   * @brief The upstream resource given at construction (hipMM's older name).
   * @return The upstream, or null when it was given as a reference to another type
   */
  [[nodiscard]] Upstream* get_upstream() const noexcept { return upstream_; }

 protected:
  /**
   * @brief Creates the resource over @p upstream.
   * @param upstream The upstream resource (not owned; must outlive the resource)
   * @param create The C ABI constructor, `rmm_status_t(rmm_resource_t upstream, args...,
   * rmm_resource_t* out)`
   * @param args Its arguments after the upstream's handle
   * @throws rmm::logic_error "Unexpected null upstream pointer." when @p upstream is null
   */
  template <typename Create, typename... Args>
  upstream_resource(Upstream* upstream, Create create, Args... args)
    : upstream_handle_holder{upstream},
      handle_resource{adopt_handle, make_handle(create, upstream_handle(), args...)},
      upstream_{upstream}
  {
  }

  /**
   * @brief Creates the resource over the resource @p upstream refers to.
   * @param upstream Reference to the upstream resource (which must outlive the resource)
   * @param create As for the pointer form
   * @param args As for the pointer form
   */
  template <typename Create, typename... Args>
  upstream_resource(device_async_resource_ref upstream, Create create, Args... args)
    : upstream_handle_holder{upstream},
      handle_resource{adopt_handle, make_handle(create, upstream_handle(), args...)},
      upstream_{upstream_ptr<Upstream>()}
  {
  }

 private:
  Upstream* upstream_;
};

}  // namespace detail
}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
