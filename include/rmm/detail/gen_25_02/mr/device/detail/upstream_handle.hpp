/**
 * @file detail/upstream_handle.hpp
 * @brief Holder of the C ABI handles through which a Rust-backed sub-allocator reaches its
 * C++ upstream (and any other C++ resources it uses, such as the bins of a binning resource).
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/detail/error.hpp>
#include <rmm/error.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/resource_bridge.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>

#include <type_traits>
#include <utility>
#include <vector>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief Owns one reference to the handle of an upstream resource (its own handle, retained,
 * for a Rust-backed resource; else a bridge), plus references to further resources added
 * later.
 *
 * Sub-allocators inherit from it *before* handle_resource, so that the upstream handle exists
 * when their own handle is created and is released only after their own handle is.
 */
class upstream_handle_holder {
 public:
  /**
   * @brief Makes the handle through which the Rust core reaches @p upstream.
   * @param upstream The upstream resource: a device_memory_resource or any type a
   * device_async_resource_ref accepts (not owned; must outlive this object)
   * @throws rmm::logic_error "Unexpected null upstream pointer." when @p upstream is null
   */
  template <typename Upstream>
  explicit upstream_handle_holder(Upstream* upstream)
    : upstream_ref_{checked_ref(upstream)}, upstream_handle_{to_handle(upstream_ref_)}
  {
  }

  /**
   * @brief Makes the handle through which the Rust core reaches the resource @p upstream
   * refers to (RMM 25.02's constructors taking a `device_async_resource_ref`).
   * @param upstream Reference to the upstream resource (which must outlive this object)
   */
  explicit upstream_handle_holder(rmm::device_async_resource_ref upstream)
    : upstream_ref_{upstream}, upstream_handle_{to_handle(upstream_ref_)}
  {
  }

  ~upstream_handle_holder()
  {
    for (auto it = extra_handles_.rbegin(); it != extra_handles_.rend(); ++it) {
      (void)rmm_resource_release(*it);
    }
    if (upstream_handle_ != nullptr) { (void)rmm_resource_release(upstream_handle_); }
  }

  upstream_handle_holder(upstream_handle_holder const&)            = delete;
  upstream_handle_holder& operator=(upstream_handle_holder const&) = delete;
  upstream_handle_holder(upstream_handle_holder&&)                 = delete;
  upstream_handle_holder& operator=(upstream_handle_holder&&)      = delete;

  /**
   * @brief The upstream's handle (borrowed).
   * @return The handle
   */
  [[nodiscard]] rmm_resource_t upstream_handle() const noexcept { return upstream_handle_; }

  /**
   * @brief The upstream, as RMM 25.02's `get_upstream_resource()` returns it.
   * @return Reference to the upstream resource
   */
  [[nodiscard]] rmm::device_async_resource_ref upstream_ref() const noexcept
  {
    return upstream_ref_;
  }

  /**
   * @brief The upstream as a pointer to @p Upstream (the older API's `get_upstream()`).
   * @tparam Upstream The adaptor's upstream type
   * @return The upstream, or nullptr when it is not a device_memory_resource of that type
   */
  template <typename Upstream>
  [[nodiscard]] Upstream* upstream_ptr() const noexcept
  {
    if constexpr (std::is_base_of_v<device_memory_resource, Upstream>) {
      return dynamic_cast<Upstream*>(upstream_ref_.as_device_memory_resource());
    } else {
      return nullptr;
    }
  }

  /**
   * @brief Makes (and keeps until destruction) a handle for another resource @p mr.
   * @param mr The resource (not owned; must outlive this object)
   * @return The handle (borrowed)
   */
  rmm_resource_t keep_handle(device_memory_resource* mr)
  {
    RMM_EXPECTS(mr != nullptr, "Unexpected null resource pointer.");
    return keep_handle(rmm::device_async_resource_ref{*mr});
  }

  /**
   * @brief Makes (and keeps until destruction) a handle for the resource @p ref refers to.
   * @param ref Reference to the resource (which must outlive this object)
   * @return The handle (borrowed)
   */
  rmm_resource_t keep_handle(rmm::device_async_resource_ref ref)
  {
    extra_handles_.reserve(extra_handles_.size() + 1);
    rmm_resource_t handle = to_handle(ref);
    extra_handles_.push_back(handle);
    return handle;
  }

 private:
  template <typename Upstream>
  static rmm::device_async_resource_ref checked_ref(Upstream* upstream)
  {
    RMM_EXPECTS(upstream != nullptr, "Unexpected null upstream pointer.");
    return rmm::device_async_resource_ref{*upstream};
  }

  rmm::device_async_resource_ref upstream_ref_;
  rmm_resource_t upstream_handle_{nullptr};
  std::vector<rmm_resource_t> extra_handles_;
};

}  // namespace detail
}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
