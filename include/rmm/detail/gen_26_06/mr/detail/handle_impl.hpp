/**
 * @file detail/gen_26_06/mr/detail/handle_impl.hpp
 * @brief The machinery shared by RMM 26.06's resources in rmm-rs: each one owns an
 * `rmm_resource_t` of librmm and forwards the `cuda::mr` resource interface to the C ABI.
 *
 * - handle_base: owns one reference to a handle; copies share the handle (and a move copies:
 *   a moved-from resource stays usable, so no resource object of this layer is ever empty).
 * - upstream_holder: how a sub-allocator or adaptor reaches the upstream it was given as a
 *   `cuda::mr::any_resource<device_accessible>`: one of this layer's resources hands its own
 *   handle to the C ABI (no callback in between); any other resource is reached through a
 *   callback resource whose context is the any_resource itself, kept alive by that handle.
 * - find_handle: recognises this layer's resources inside an any_resource or a resource_ref
 *   (defined in mr/detail/known_resources.hpp, which knows every resource type).
 *
 * Only for translation units of the 26.06 generation.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/aligned.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/resource_handle.hpp>
#include <rmm/error.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/// @brief The owning, type-erased upstream type of RMM 26.06's adaptors.
using any_device_resource = cuda::mr::any_resource<cuda::mr::device_accessible>;

/**
 * @brief The C ABI's stream value of @p stream (the runtime's stream handle, unchanged).
 * @param stream The stream
 * @return The same stream as an `rmm_stream_t`
 */
inline rmm_stream_t c_stream(cuda::stream_ref stream) noexcept
{
  return reinterpret_cast<rmm_stream_t>(stream.get());
}

/**
 * @brief Reports a deallocation the C ABI refused (a pointer the resource did not hand out,
 * a size that does not match, ...). Deallocation is `noexcept` in RMM 26.06, so the message
 * goes to stderr instead of an exception, and the memory is left where it is.
 * @param ptr The pointer
 * @param bytes Its size as given
 * @param status The status of the refusal
 */
[[gnu::cold]] inline void report_failed_deallocate(void* ptr,
                                                   std::size_t bytes,
                                                   rmm_status_t status) noexcept
{
  char const* message = rmm_last_error_message();
  if (message == nullptr || *message == '\0') { message = rmm_status_string(status); }
  std::fprintf(stderr,
               "rmm: deallocate(%p, %zu bytes) failed and was ignored: %s; pass a pointer this "
               "resource allocated, with the size it was allocated with\n",
               ptr,
               bytes,
               message);
}

/// @brief Stream-ordered allocation from @p handle (throws what the C ABI reports).
inline void* handle_allocate(rmm_resource_t handle, cuda::stream_ref stream, std::size_t bytes)
{
  void* ptr           = nullptr;
  rmm_status_t status = rmm_allocate_async(handle, bytes, c_stream(stream), &ptr);
  if (status != RMM_STATUS_SUCCESS) { rmm::detail::throw_status(status); }
  return ptr;
}

/// @brief Stream-ordered free to @p handle; a refusal is reported on stderr (noexcept).
inline void handle_deallocate(rmm_resource_t handle,
                              cuda::stream_ref stream,
                              void* ptr,
                              std::size_t bytes) noexcept
{
  rmm_status_t status = rmm_deallocate_async(handle, ptr, bytes, c_stream(stream));
  if (status != RMM_STATUS_SUCCESS) { report_failed_deallocate(ptr, bytes, status); }
}

/// @brief Allocation from @p handle on the default stream, synchronized.
inline void* handle_allocate_sync(rmm_resource_t handle, std::size_t bytes)
{
  void* ptr           = nullptr;
  rmm_status_t status = rmm_allocate(handle, bytes, &ptr);
  if (status != RMM_STATUS_SUCCESS) { rmm::detail::throw_status(status); }
  return ptr;
}

/// @brief Free to @p handle on the default stream; a refusal is reported on stderr.
inline void handle_deallocate_sync(rmm_resource_t handle, void* ptr, std::size_t bytes) noexcept
{
  rmm_status_t status = rmm_deallocate(handle, ptr, bytes);
  if (status != RMM_STATUS_SUCCESS) { report_failed_deallocate(ptr, bytes, status); }
}

/**
 * @brief The `cuda::mr` allocation interface over a librmm handle, for a class whose
 * `handle()` returns it (CRTP): stream-ordered and synchronous allocation, and frees that
 * report a refusal on stderr instead of throwing.
 * @tparam Derived The class with the handle
 */
template <typename Derived>
class handle_allocation {
 public:
  /**
   * @brief Allocates @p bytes, usable in stream order on @p stream.
   * @param stream The stream
   * @param bytes The size (not rounded up: RMM 26.06 passes sizes through)
   * @param alignment Ignored, as by RMM 26.06's resources: every allocation is 256-byte aligned
   * @return The memory (null for 0 bytes)
   * @throws rmm::out_of_memory / rmm::bad_alloc / rmm::logic_error as the C ABI reports
   */
  void* allocate(cuda::stream_ref stream,
                 std::size_t bytes,
                 [[maybe_unused]] std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT)
  {
    return handle_allocate(self().handle(), stream, bytes);
  }

  /**
   * @brief Frees @p ptr in stream order on @p stream; a refusal is reported on stderr.
   * @param stream The stream
   * @param ptr The memory (null is a no-op)
   * @param bytes The size it was allocated with
   * @param alignment Ignored
   */
  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  [[maybe_unused]] std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) noexcept
  {
    handle_deallocate(self().handle(), stream, ptr, bytes);
  }

  /**
   * @brief Allocates @p bytes on the default stream.
   * @param bytes The size
   * @param alignment Ignored
   * @return The memory
   */
  void* allocate_sync(std::size_t bytes,
                      [[maybe_unused]] std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT)
  {
    return handle_allocate_sync(self().handle(), bytes);
  }

  /**
   * @brief Frees @p ptr on the default stream; a refusal is reported on stderr.
   * @param ptr The memory
   * @param bytes The size it was allocated with
   * @param alignment Ignored
   */
  void deallocate_sync(
    void* ptr,
    std::size_t bytes,
    [[maybe_unused]] std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) noexcept
  {
    handle_deallocate_sync(self().handle(), ptr, bytes);
  }

 private:
  [[nodiscard]] Derived const& self() const noexcept { return static_cast<Derived const&>(*this); }
};

/**
 * @brief Owner of one reference to a librmm resource, with the `cuda::mr` resource interface
 * over it. Copies (and moves) share the handle.
 */
class handle_base : public handle_allocation<handle_base> {
 public:
  /**
   * @brief Takes over the reference @p handle owns.
   * @param handle A handle owning one reference
   */
  handle_base(adopt_handle_t, rmm_resource_t handle) noexcept : handle_{handle} {}

  /**
   * @brief Shares the handle of @p other.
   * @param other The resource to copy
   */
  handle_base(handle_base const& other) noexcept : handle_{other.handle_}
  {
    if (handle_ != nullptr) { (void)rmm_resource_retain(handle_); }
  }

  /**
   * @brief Shares the handle of @p other.
   * @param other The resource to copy
   * @return *this
   */
  handle_base& operator=(handle_base const& other) noexcept
  {
    if (this != &other) {
      handle_base copy{other};
      std::swap(handle_, copy.handle_);
    }
    return *this;
  }

  ~handle_base()
  {
    if (handle_ != nullptr) { (void)rmm_resource_release(handle_); }
  }

  /**
   * @brief Whether memory of one may be freed by the other (librmm's judgement).
   * @param other The other resource
   * @return true when equal
   */
  [[nodiscard]] bool operator==(handle_base const& other) const noexcept
  {
    // RMM 26.06: a resource equals its copies (one shared object) and nothing else; the
    // async resources and sam_headroom compare what they allocate from instead
    // (librmm_equal).
    return handle_ == other.handle_;
  }

  /**
   * @brief Negation of operator==.
   * @param other The other resource
   * @return true when not equal
   */
  [[nodiscard]] bool operator!=(handle_base const& other) const noexcept
  {
    return !(*this == other);
  }

  /**
   * @brief librmm's judgement of equality: the async resources are equal when they allocate
   * from the same pool, sam_headroom resources when their headroom is the same.
   * @param other The other resource
   * @return true when equal
   */
  [[nodiscard]] bool librmm_equal(handle_base const& other) const noexcept
  {
    if (handle_ == other.handle_) { return true; }
    bool equal = false;
    return rmm_resource_is_equal(handle_, other.handle_, &equal) == RMM_STATUS_SUCCESS && equal;
  }

  /**
   * @brief The librmm handle (borrowed: retain it to keep it beyond this object).
   * @return The handle
   */
  [[nodiscard]] rmm_resource_t handle() const noexcept { return handle_; }

  /// @brief librmm resources hand out device-accessible memory.
  friend void get_property(handle_base const&, cuda::mr::device_accessible) noexcept {}

 private:
  rmm_resource_t handle_{nullptr};
};

/**
 * @brief The handle of a resource holding one directly (cuda_memory_resource, ...).
 * @param resource The resource
 * @return Its handle (borrowed)
 */
inline rmm_resource_t handle_of(handle_base const& resource) noexcept { return resource.handle(); }

/**
 * @brief The handle of a resource over `cuda::mr::shared_resource` (pool_memory_resource, ...).
 * @param resource The resource
 * @return Its handle (borrowed)
 */
template <typename Impl>
rmm_resource_t handle_of(cuda::mr::shared_resource<Impl> const& resource) noexcept
{
  return resource.get().handle();
}

/**
 * @brief The handle of the librmm resource behind @p resource when it is one of this layer's
 * resources (directly, or through a resource_ref to one), else null. Borrowed.
 *
 * Defined in mr/detail/known_resources.hpp, which every resource header includes last.
 * @param resource The resource
 * @return The handle, or null
 */
inline rmm_resource_t find_handle(any_device_resource const& resource) noexcept;

/**
 * @brief As find_handle(any_device_resource const&), for a reference.
 * @param ref The reference
 * @return The handle, or null
 */
inline rmm_resource_t find_handle(device_async_resource_ref ref) noexcept;

/**
 * @brief The callbacks through which librmm reaches a resource that is not one of this
 * layer's: the context is a heap `any_device_resource`, destroyed with the handle. Requests
 * ask for 256-byte alignment: the sub-allocators over it hand out 256-byte-aligned blocks.
 */
struct any_bridge {
  /// @brief Vtable allocate entry.
  static std::uint32_t allocate(void* ctx,
                                std::size_t bytes,
                                rmm_stream_t stream,
                                void** out) noexcept
  {
    return translate_exceptions([&] {
      *out = static_cast<any_device_resource*>(ctx)->allocate(
        cuda::stream_ref{reinterpret_cast<cudaStream_t>(stream)},
        bytes,
        rmm::CUDA_ALLOCATION_ALIGNMENT);
    });
  }

  /// @brief Vtable deallocate entry.
  static std::uint32_t deallocate(void* ctx,
                                  void* ptr,
                                  std::size_t bytes,
                                  rmm_stream_t stream) noexcept
  {
    static_cast<any_device_resource*>(ctx)->deallocate(
      cuda::stream_ref{reinterpret_cast<cudaStream_t>(stream)},
      ptr,
      bytes,
      rmm::CUDA_ALLOCATION_ALIGNMENT);
    return RMM_STATUS_SUCCESS;
  }

  /// @brief Vtable destroy entry: the last reference to the handle is gone.
  static void destroy(void* ctx) noexcept { delete static_cast<any_device_resource*>(ctx); }
};

/**
 * @brief A new callback resource over @p resource (moved into a heap object that the handle
 * owns).
 * @param resource A non-empty resource
 * @return A handle owning one reference
 */
inline rmm_resource_t make_any_bridge(any_device_resource&& resource)
{
  auto owned = std::make_unique<any_device_resource>(std::move(resource));
  rmm_callback_vtable vtable{};
  vtable.allocate       = &any_bridge::allocate;
  vtable.deallocate     = &any_bridge::deallocate;
  vtable.destroy        = &any_bridge::destroy;
  rmm_resource_t handle = nullptr;
  // destroy() runs even when the creation fails after the vtable was checked: the handle owns
  // the context from here on.
  rmm_status_t status = rmm_callback_create_with_vtable(&vtable, owned.release(), &handle);
  rmm::detail::check(status);
  return handle;
}

/**
 * @brief Throws a clear rmm::logic_error when @p resource is empty (default-constructed or
 * moved from): CCCL would crash calling into it.
 * @param resource The resource
 * @param what The class and argument it was given as, for the message
 */
inline void expect_non_empty(any_device_resource const& resource, char const* what)
{
  if (!resource.has_value()) {
    throw rmm::logic_error(std::string{what} +
                           ": the upstream resource is empty (a default-constructed or moved-from "
                           "cuda::mr::any_resource); pass a live memory resource");
  }
}

/**
 * @brief A handle (one reference owned by the caller) through which librmm reaches
 * @p resource: its own handle when it is one of this layer's, else a callback resource that
 * takes @p resource over.
 * @param resource A non-empty resource (moved from only when bridged)
 * @return The handle
 */
inline rmm_resource_t to_handle(any_device_resource&& resource)
{
  if (rmm_resource_t own = find_handle(resource); own != nullptr) {
    rmm::detail::check(rmm_resource_retain(own));
    return own;
  }
  return make_any_bridge(std::move(resource));
}

/**
 * @brief The upstream of an adaptor or sub-allocator: the any_resource it was given (kept, so
 * that `get_upstream_resource()` refers to it) and the handle librmm reaches it through.
 *
 * Resources inherit from it before handle_base, so that the upstream's handle exists when
 * their own handle is created and is released only after their own.
 */
class upstream_holder {
 public:
  /**
   * @brief Takes @p upstream over.
   * @param upstream The upstream
   * @param what Names the class and argument in the error for an empty @p upstream
   * @throws rmm::logic_error when @p upstream is empty
   */
  upstream_holder(any_device_resource upstream, char const* what)
  {
    expect_non_empty(upstream, what);
    if (rmm_resource_t own = find_handle(upstream); own != nullptr) {
      rmm::detail::check(rmm_resource_retain(own));
      handle_   = own;
      upstream_ = std::make_unique<any_device_resource>(std::move(upstream));
      target_   = upstream_.get();
    } else {
      handle_             = make_any_bridge(std::move(upstream));
      void* ctx           = nullptr;
      rmm_status_t status = rmm_callback_get_context(handle_, &ctx);
      if (status != RMM_STATUS_SUCCESS) {
        (void)rmm_resource_release(handle_);
        rmm::detail::check(status);
      }
      target_ = static_cast<any_device_resource*>(ctx);
    }
  }

  ~upstream_holder() { (void)rmm_resource_release(handle_); }

  upstream_holder(upstream_holder const&)            = delete;
  upstream_holder& operator=(upstream_holder const&) = delete;
  upstream_holder(upstream_holder&&)                 = delete;
  upstream_holder& operator=(upstream_holder&&)      = delete;

  /**
   * @brief The handle librmm reaches the upstream through (borrowed).
   * @return The handle
   */
  [[nodiscard]] rmm_resource_t upstream_handle() const noexcept { return handle_; }

  /**
   * @brief A reference to the upstream (the very object allocations go to).
   * @return The reference
   */
  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept
  {
    return device_async_resource_ref{*target_};
  }

 private:
  rmm_resource_t handle_{nullptr};
  // Our own resource: kept here. A bridged one lives in the bridge's context instead (one
  // object, so a stateful user resource is not copied).
  std::unique_ptr<any_device_resource> upstream_;
  any_device_resource* target_{nullptr};
};

/**
 * @brief Base of the impl of a resource with an upstream: the upstream, then the resource's
 * own handle, created by @p create from the upstream's handle.
 */
class adaptor_impl_base : public upstream_holder, public handle_base {
 public:
  /**
   * @brief Creates the resource over @p upstream.
   * @param upstream The upstream
   * @param what Names the class and argument for errors
   * @param create Callable `rmm_resource_t(rmm_resource_t upstream_handle)`
   */
  template <typename Create>
  adaptor_impl_base(any_device_resource upstream, char const* what, Create&& create)
    : upstream_holder{std::move(upstream), what},
      handle_base{adopt_handle, create(upstream_handle())}
  {
  }

  adaptor_impl_base(adaptor_impl_base const&)            = delete;
  adaptor_impl_base& operator=(adaptor_impl_base const&) = delete;

  using handle_base::operator==;
  using handle_base::operator!=;
};

/**
 * @brief The resource of a registry entry set without a 26.06 object (from RMM 25.02/25.10
 * code, C, Python or Rust): it allocates through the entry's handle, whatever resource that
 * is. Copies share the handle.
 */
class registry_resource final : public handle_base {
 public:
  /**
   * @brief Takes over the reference @p handle owns.
   * @param handle A handle owning one reference
   */
  registry_resource(adopt_handle_t, rmm_resource_t handle) noexcept
    : handle_base{adopt_handle, handle}
  {
  }

  /// @brief Device-accessible memory.
  friend void get_property(registry_resource const&, cuda::mr::device_accessible) noexcept {}
};

}  // namespace detail
}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#endif  // RMM_API_GENERATION
