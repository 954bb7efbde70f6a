/**
 * @file detail/upstream_handle.hpp
 * @brief Holder of the C ABI handles through which a Rust-backed sub-allocator reaches its
 * C++ upstream (and any other C++ resources it uses, such as the bins of a binning resource).
 */
#pragma once

#include <rmm/detail/error.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/device/detail/resource_bridge.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/rmm.h>

#include <utility>
#include <vector>

namespace rmm::mr::detail {

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
   * @param upstream The upstream resource (not owned; must outlive this object)
   * @throws rmm::logic_error "Unexpected null upstream pointer." when @p upstream is null
   */
  explicit upstream_handle_holder(device_memory_resource* upstream)
    : upstream_handle_{checked_handle(upstream)}
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
   * @brief Makes (and keeps until destruction) a handle for another resource @p mr.
   * @param mr The resource (not owned; must outlive this object)
   * @return The handle (borrowed)
   */
  rmm_resource_t keep_handle(device_memory_resource* mr)
  {
    extra_handles_.reserve(extra_handles_.size() + 1);
    rmm_resource_t handle = to_handle(mr);
    extra_handles_.push_back(handle);
    return handle;
  }

 private:
  static rmm_resource_t checked_handle(device_memory_resource* upstream)
  {
    RMM_EXPECTS(upstream != nullptr, "Unexpected null upstream pointer.");
    return to_handle(upstream);
  }

  rmm_resource_t upstream_handle_{nullptr};
  std::vector<rmm_resource_t> extra_handles_;
};

}  // namespace rmm::mr::detail
