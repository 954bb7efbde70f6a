/**
 * @file detail/handle_resource.hpp
 * @brief Base class of the resources implemented in the Rust core: it owns one reference to
 * an `rmm_resource_t` and forwards allocation to the C ABI.
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/alloc_error.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/resource_handle.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/rmm.h>

#include <cstddef>
#include <string>
#include <typeinfo>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief A device_memory_resource implemented by the Rust core through an `rmm_resource_t`.
 *
 * Owns one reference to the handle: copies retain it, moves transfer it, the destructor
 * releases it. Allocation goes through `rmm_allocate_async` / `rmm_deallocate_async`.
 */
class handle_resource : public device_memory_resource {
 public:
  /**
   * @brief Takes over the reference @p handle owns.
   * @param handle A handle owning one reference (may be null: the object is then unusable)
   */
  handle_resource(adopt_handle_t, rmm_resource_t handle) noexcept : handle_{handle} {}

  ~handle_resource() override
  {
    if (handle_ != nullptr) { (void)rmm_resource_release(handle_); }
  }

  /**
   * @brief Shares the handle of @p other (one more reference).
   * @param other The resource to copy
   */
  handle_resource(handle_resource const& other)
    : device_memory_resource{other}, handle_{other.handle_}
  {
    if (handle_ != nullptr) { rmm::detail::check(rmm_resource_retain(handle_)); }
  }

  /**
   * @brief Takes the handle of @p other, which is left empty.
   * @param other The resource to move from
   */
  handle_resource(handle_resource&& other) noexcept
    : device_memory_resource{std::move(other)}, handle_{std::exchange(other.handle_, nullptr)}
  {
  }

  /**
   * @brief Shares the handle of @p other.
   * @param other The resource to copy
   * @return *this
   */
  handle_resource& operator=(handle_resource const& other)
  {
    if (this != &other) {
      handle_resource copy{other};
      std::swap(handle_, copy.handle_);
    }
    return *this;
  }

  /**
   * @brief Takes the handle of @p other, releasing the current one.
   * @param other The resource to move from
   * @return *this
   */
  handle_resource& operator=(handle_resource&& other) noexcept
  {
    if (this != &other) {
      handle_resource old{std::move(*this)};
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }

  /**
   * @brief The C ABI handle (borrowed: retain it to keep it beyond this object's lifetime).
   * @return The handle
   */
  [[nodiscard]] rmm_resource_t handle() const noexcept { return handle_; }

  /**
   * @brief The Rust core's name of this resource, e.g. "cuda_memory_resource".
   * @return The name
   */
  [[nodiscard]] std::string resource_name() const
  {
    const char* name = nullptr;
    rmm::detail::check(rmm_resource_name(handle_, &name));
    return std::string{name != nullptr ? name : ""};
  }

  /// @brief Rust resources order their work on streams.
  /// @return true
  [[nodiscard]] bool supports_streams() const noexcept override { return true; }

 private:
  void* do_allocate(std::size_t bytes, cuda_stream_view stream) override
  {
    void* ptr = nullptr;
    rmm::detail::check_alloc(
      rmm_allocate_async(handle_, bytes, rmm::detail::to_c_stream(stream.value()), &ptr), bytes);
    return ptr;
  }

  void do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) override
  {
    rmm::detail::check(
      rmm_deallocate_async(handle_, ptr, bytes, rmm::detail::to_c_stream(stream.value())));
  }

  [[nodiscard]] bool do_is_equal(device_memory_resource const& other) const noexcept override
  {
    if (this == &other) { return true; }
    // As RMM's dynamic_cast to its own class: resources of different C++ types (e.g. an
    // adaptor templated on another upstream type) never compare equal.
    if (typeid(*this) != typeid(other)) { return false; }
    auto const* other_handle = dynamic_cast<handle_resource const*>(&other);
    if (other_handle == nullptr || handle_ == nullptr || other_handle->handle_ == nullptr) {
      return false;
    }
    bool equal = false;
    return rmm_resource_is_equal(handle_, other_handle->handle_, &equal) == RMM_STATUS_SUCCESS &&
           equal;
  }

  rmm_resource_t handle_{nullptr};
};

}  // namespace detail
}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
