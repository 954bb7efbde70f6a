/**
 * @file detail/gen_26_06/mr/detail/resource_bases.hpp
 * @brief The bases RMM 26.06's resource classes are written with, so that each class holds
 * only its own constructor arguments and queries:
 *
 * - interchangeable_resource: a resource made by a C ABI constructor without arguments, any two
 *   of which compare equal (cuda, managed, system, pinned host);
 * - librmm_equal_impl: the shared state of a resource that librmm compares (the async
 *   resources, sam_headroom);
 * - shared_copies, shared_handle_resource, shared_adaptor: a `cuda::mr::shared_resource<Impl>`
 *   whose move copies, that allocates through the handle it caches, and that has an upstream;
 * - c_adaptor_impl: the shared state of an adaptor that only needs its C ABI constructor.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/aligned.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/gen_26_06/mr/detail/handle_impl.hpp>
#include <rmm/detail/resource_handle.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <cstddef>
#include <string>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief A librmm handle with the allocation rules of RMM's base resources (cuda, managed,
 * pinned host, system, async view): from RMM 26.08 on (knob
 * RMM_DETAIL_API_BASE_ALIGNMENT_CHECK) zero bytes give null without a call, and an alignment
 * beyond `rmm::CUDA_ALLOCATION_ALIGNMENT` (or not a power of two) throws `rmm::bad_alloc`.
 */
class base_resource_handle : public handle_base {
 public:
  using handle_base::handle_base;

#if RMM_DETAIL_API_BASE_ALIGNMENT_CHECK
  /**
   * @brief Allocates @p bytes in stream order on @p stream.
   * @param stream The stream
   * @param bytes The size (0 gives null)
   * @param alignment At most 256 bytes, a power of two
   * @return The memory
   * @throws rmm::bad_alloc for an unsupported alignment; what the C ABI reports otherwise
   */
  void* allocate(cuda::stream_ref stream,
                 std::size_t bytes,
                 std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT)
  {
    if (bytes == 0) { return nullptr; }
    check_alignment(bytes, alignment);
    return handle_base::allocate(stream, bytes, alignment);
  }

  /**
   * @brief Allocates @p bytes on the default stream.
   * @param bytes The size (0 gives null)
   * @param alignment At most 256 bytes, a power of two
   * @return The memory
   * @throws rmm::bad_alloc for an unsupported alignment; what the C ABI reports otherwise
   */
  void* allocate_sync(std::size_t bytes, std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT)
  {
    if (bytes == 0) { return nullptr; }
    check_alignment(bytes, alignment);
    return handle_base::allocate_sync(bytes, alignment);
  }

 private:
  static void check_alignment(std::size_t bytes, std::size_t alignment)
  {
    RMM_EXPECTS(rmm::is_supported_base_resource_alignment(alignment),
                "allocation of " + std::to_string(bytes) + " bytes aligned to " +
                  std::to_string(alignment) +
                  " bytes: this memory resource gives at most 256-byte alignment (a power of "
                  "two); over-align with aligned_resource_adaptor",
                rmm::bad_alloc);
  }
#endif
};

/**
 * @brief Base of a resource made by a C ABI constructor without arguments, any two of which
 * are interchangeable: they compare equal, as RMM 26.06's do.
 * @tparam Resource The class (CRTP)
 */
template <typename Resource>
class interchangeable_resource : public base_resource_handle {
 public:
  /// @brief Any two are interchangeable. @return true
  [[nodiscard]] bool operator==(Resource const&) const noexcept { return true; }
  /// @brief Any two are interchangeable. @return false
  [[nodiscard]] bool operator!=(Resource const&) const noexcept { return false; }

  /// @brief Device-accessible memory.
  friend void get_property(Resource const&, cuda::mr::device_accessible) noexcept {}

  /// @brief Takes over the reference a handle owns.
  using base_resource_handle::base_resource_handle;

 protected:
  /**
   * @brief Creates the resource.
   * @param create The C ABI constructor
   */
  explicit interchangeable_resource(rmm_status_t (*create)(rmm_resource_t*))
    : base_resource_handle{adopt_handle, make_handle(create)}
  {
  }
};

/**
 * @brief Base of the shared state of a resource that librmm judges equal to another (the async
 * resources: same pool; sam_headroom: same headroom), as RMM 26.06's impls compare. The state
 * is shared, never copied.
 * @tparam Impl The shared state (CRTP)
 */
template <typename Impl>
class librmm_equal_impl : public handle_base {
 public:
  librmm_equal_impl(librmm_equal_impl const&)            = delete;
  librmm_equal_impl& operator=(librmm_equal_impl const&) = delete;

  /// @brief Equal when librmm says so. @param other The other state @return true when equal
  [[nodiscard]] bool operator==(Impl const& other) const noexcept { return librmm_equal(other); }

  /// @brief Negation of operator==. @param other The other state @return true when not equal
  [[nodiscard]] bool operator!=(Impl const& other) const noexcept { return !librmm_equal(other); }

 protected:
  /**
   * @brief Takes over the reference @p handle owns.
   * @param handle A handle owning one reference
   */
  explicit librmm_equal_impl(rmm_resource_t handle) noexcept : handle_base{adopt_handle, handle} {}
};

/**
 * @brief Base of 26.06's resource classes over `cuda::mr::shared_resource<Impl>`: copies share
 * one Impl, and a move copies too (one more reference), so a moved-from resource is still the
 * same usable resource, never empty.
 * @tparam Impl The shared state
 */
template <typename Impl>
class shared_copies : public cuda::mr::shared_resource<Impl> {
  using shared_base = cuda::mr::shared_resource<Impl>;

 public:
  /// @brief Shares @p other's state. @param other The resource
  shared_copies(shared_copies const& other) noexcept = default;
  /// @brief Shares @p other's state (which stays usable). @param other The resource
  shared_copies(shared_copies&& other) noexcept
    : shared_base{static_cast<shared_base const&>(other)}
  {
  }
  /// @brief Shares @p other's state. @param other The resource @return *this
  shared_copies& operator=(shared_copies const& other) noexcept = default;
  /// @brief Shares @p other's state (which stays usable). @param other The resource
  /// @return *this
  shared_copies& operator=(shared_copies&& other) noexcept
  {
    shared_base::operator=(static_cast<shared_base const&>(other));
    return *this;
  }
  ~shared_copies() = default;

 protected:
  /**
   * @brief Makes the shared state from @p args.
   * @param args Impl's constructor arguments
   */
  template <typename... Args>
  explicit shared_copies(std::in_place_t, Args&&... args)
    : shared_base{cuda::std::in_place_type<Impl>, std::forward<Args>(args)...}
  {
  }
};

/**
 * @brief A shared resource whose Impl is a handle_base: it keeps the handle beside the shared
 * block and allocates through it, so the calls that `cuda::mr::any_resource` and the
 * references dispatch to skip the load of the shared block (one dependent load per allocation
 * and per free on the hot path). The handle never changes for the life of the shared object,
 * so the copy is always current.
 * @tparam Impl The shared state (derived from handle_base)
 */
template <typename Impl>
class shared_handle_resource : public shared_copies<Impl>,
                               public handle_allocation<shared_handle_resource<Impl>> {
  using allocation = handle_allocation<shared_handle_resource<Impl>>;
  friend allocation;

 public:
  // These hide shared_resource's members of the same names (which go through the shared block).
  using allocation::allocate;
  using allocation::allocate_sync;
  using allocation::deallocate;
  using allocation::deallocate_sync;

  /// @brief librmm resources hand out device-accessible memory.
  friend void get_property(shared_handle_resource const&, cuda::mr::device_accessible) noexcept {}

 protected:
  using shared_copies<Impl>::shared_copies;

  /// @brief The librmm handle (borrowed). @return The handle
  [[nodiscard]] rmm_resource_t handle() const noexcept { return handle_; }

 private:
  rmm_resource_t handle_ = this->get().handle();
};

/**
 * @brief A shared resource over an upstream (an adaptor or a sub-allocator): Impl derives from
 * adaptor_impl_base.
 * @tparam Impl The shared state
 */
template <typename Impl>
class shared_adaptor : public shared_handle_resource<Impl> {
 public:
  /**
   * @brief The upstream.
   * @return A reference to it
   */
  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept
  {
    return this->get().get_upstream_resource();
  }

 protected:
  using shared_handle_resource<Impl>::shared_handle_resource;
};

/**
 * @brief The shared state of an adaptor that only needs its C ABI constructor: librmm's
 * adaptor made by @p Create from the upstream's handle and the arguments given.
 * @tparam Create `rmm_status_t(rmm_resource_t upstream, args..., rmm_resource_t* out)`
 */
template <auto Create>
class c_adaptor_impl final : public adaptor_impl_base {
 public:
  /**
   * @brief Creates the adaptor over @p upstream.
   * @param upstream The upstream
   * @param what Names the class and argument in the error for an empty upstream
   * @param args @p Create's arguments after the upstream's handle
   */
  template <typename... Args>
  c_adaptor_impl(any_device_resource upstream, char const* what, Args... args)
    : adaptor_impl_base{std::move(upstream), what, [&](rmm_resource_t up) {
                          return make_handle(Create, up, args...);
                        }}
  {
  }
};

}  // namespace detail
}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#endif  // RMM_API_GENERATION
