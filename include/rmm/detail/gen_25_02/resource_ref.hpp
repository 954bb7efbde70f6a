/**
 * @file detail/gen_25_02/resource_ref.hpp
 * @brief Non-owning, type-erased references to memory resources (RMM's `rmm/resource_ref.hpp`).
 *
 * RMM 25.02 defines these names as aliases of CCCL's `cuda::mr::resource_ref` family. rmm-rs
 * has its own lightweight implementation so that the headers need neither CCCL nor libhipcxx:
 *
 * | type | operations | accessible from |
 * | --- | --- | --- |
 * | rmm::device_async_resource_ref | allocate, deallocate, allocate_async, deallocate_async |
 * device | | rmm::device_resource_ref | allocate, deallocate | device | | rmm::host_resource_ref |
 * allocate, deallocate | host | | rmm::host_async_resource_ref | allocate, deallocate,
 * allocate_async, deallocate_async | host | | rmm::host_device_async_resource_ref | allocate,
 * deallocate, allocate_async, deallocate_async | host and device |
 *
 * A reference is constructible (implicitly) from a pointer or a reference to a resource:
 * - any rmm::mr::device_memory_resource (all five kinds: rmm-rs cannot check at compile time
 *   whether a device resource's memory is host accessible, so the caller decides);
 * - any rmm::mr::host_memory_resource (the synchronous host kinds only);
 * - any other object with the member functions the kind needs (duck typing), for example a
 *   user resource written against the `cuda::mr` interface:
 *   `allocate(bytes, alignment)`, `deallocate(ptr, bytes, alignment)` and, for the async
 *   kinds, `allocate_async(bytes, alignment, stream)` and
 *   `deallocate_async(ptr, bytes, alignment, stream)`.
 * An async reference also converts to the synchronous reference of the same accessibility,
 * and a host_device reference converts to the device and host ones.
 *
 * Two references of the same kind are equal when they refer to resources that compare equal: for
 * device (or host) memory resources through `is_equal()`, for other objects when they have the same
 * type and `operator==` holds (or they are the same object when the type has no `operator==`).
 *
 * When CCCL's or libhipcxx's `<cuda/memory_resource>` is available (with the experimental
 * memory resource enabled, or CCCL 3), each reference type also has `get_property` friends for
 * `cuda::mr::device_accessible` / `cuda::mr::host_accessible` and `cuda::stream_ref` overloads of
 * the async functions, so that `cuda::mr` concept checks accept it. Define
 * `RMM_DISABLE_CUDA_MR` to turn this off.
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/mr/host/host_memory_resource.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

#include <rmm/detail/cccl_adaptors.hpp>
#include <rmm/detail/cuda_mr.hpp>

namespace rmm {
RMM_API_NAMESPACE_BEGIN

namespace detail {

/// @brief Function table of a referenced resource type.
struct resource_ref_vtable {
  void* (*allocate)(void* obj, std::size_t bytes, std::size_t alignment);
  void (*deallocate)(void* obj, void* ptr, std::size_t bytes, std::size_t alignment);
  void* (*allocate_async)(void* obj,
                          std::size_t bytes,
                          std::size_t alignment,
                          cuda_stream_view stream);
  void (*deallocate_async)(
    void* obj, void* ptr, std::size_t bytes, std::size_t alignment, cuda_stream_view stream);
  bool (*equal)(void const* lhs, void const* rhs);           ///< both objects of this vtable's type
  rmm::mr::device_memory_resource* (*as_device)(void* obj);  ///< null unless a device resource
};

/// @brief The alignment a reference asks for when none is given: CCCL's
/// (`alignof(max_align_t)`), which RMM 25.02's references use. A device_memory_resource then
/// sees sizes rounded up to it; its memory is 256-byte aligned anyway.
inline constexpr std::size_t ref_default_alignment = alignof(std::max_align_t);

/**
 * @brief Table for device_memory_resource (and every class derived from it).
 *
 * Every call goes through the resource's alignment-taking functions, as CCCL's references do
 * in RMM 25.02: the resource sees the size rounded up to the alignment (16 bytes for the
 * references' default), and so do the statistics, tracking and logging adaptors.
 */
inline resource_ref_vtable const* device_mr_vtable() noexcept
{
  using dmr = rmm::mr::device_memory_resource;
  static constexpr resource_ref_vtable table{
    [](void* obj, std::size_t bytes, std::size_t alignment) -> void* {
      return static_cast<dmr*>(obj)->allocate_async(bytes, alignment, cuda_stream_view{});
    },
    [](void* obj, void* ptr, std::size_t bytes, std::size_t alignment) {
      static_cast<dmr*>(obj)->deallocate_async(ptr, bytes, alignment, cuda_stream_view{});
    },
    [](void* obj, std::size_t bytes, std::size_t alignment, cuda_stream_view stream) -> void* {
      return static_cast<dmr*>(obj)->allocate_async(bytes, alignment, stream);
    },
    [](void* obj, void* ptr, std::size_t bytes, std::size_t alignment, cuda_stream_view stream) {
      static_cast<dmr*>(obj)->deallocate_async(ptr, bytes, alignment, stream);
    },
    [](void const* lhs, void const* rhs) -> bool {
      return static_cast<dmr const*>(lhs)->is_equal(*static_cast<dmr const*>(rhs));
    },
    [](void* obj) -> dmr* { return static_cast<dmr*>(obj); }};
  return &table;
}

/// @brief Table for host_memory_resource (and every class derived from it): synchronous only.
inline resource_ref_vtable const* host_mr_vtable() noexcept
{
  using hmr = rmm::mr::host_memory_resource;
  static constexpr resource_ref_vtable table{
    [](void* obj, std::size_t bytes, std::size_t alignment) -> void* {
      // Host resources take any alignment (an unsupported one means the default), as in RMM.
      return static_cast<hmr*>(obj)->allocate(bytes, alignment);
    },
    [](void* obj, void* ptr, std::size_t bytes, std::size_t alignment) {
      static_cast<hmr*>(obj)->deallocate(ptr, bytes, alignment);
    },
    nullptr,
    nullptr,
    [](void const* lhs, void const* rhs) -> bool {
      return static_cast<hmr const*>(lhs)->is_equal(*static_cast<hmr const*>(rhs));
    },
    [](void*) -> rmm::mr::device_memory_resource* { return nullptr; }};
  return &table;
}

/// @cond
// The member functions a duck-typed resource may offer: RMM 25.02's / CCCL 2.x's names
// (allocate(bytes, alignment), allocate_async(bytes, alignment, stream)) or CCCL 3.1's
// (allocate_sync(bytes, alignment), allocate(stream, bytes, alignment)).
template <typename R, typename = void>
struct has_classic_sync : std::false_type {
};
template <typename R>
struct has_classic_sync<R,
                        std::void_t<decltype(static_cast<void*>(
                                      std::declval<R&>().allocate(std::size_t{}, std::size_t{}))),
                                    decltype(std::declval<R&>().deallocate(
                                      static_cast<void*>(nullptr), std::size_t{}, std::size_t{}))>>
  : std::true_type {
};

template <typename R, typename = void>
struct has_named_sync : std::false_type {
};
template <typename R>
struct has_named_sync<R,
                      std::void_t<decltype(static_cast<void*>(std::declval<R&>().allocate_sync(
                                    std::size_t{}, std::size_t{}))),
                                  decltype(std::declval<R&>().deallocate_sync(
                                    static_cast<void*>(nullptr), std::size_t{}, std::size_t{}))>>
  : std::true_type {
};

template <typename R, typename = void>
struct has_classic_async : std::false_type {
};
template <typename R>
struct has_classic_async<
  R,
  std::void_t<decltype(static_cast<void*>(std::declval<R&>().allocate_async(
                std::size_t{}, std::size_t{}, cuda_stream_view{}))),
              decltype(std::declval<R&>().deallocate_async(
                static_cast<void*>(nullptr), std::size_t{}, std::size_t{}, cuda_stream_view{}))>>
  : std::true_type {
};

template <typename R, typename = void>
struct has_stream_first_async : std::false_type {
};
#if defined(RMM_HAS_CUDA_MR)
template <typename R>
struct has_stream_first_async<
  R,
  std::void_t<decltype(static_cast<void*>(std::declval<R&>().allocate(
                std::declval<::cuda::stream_ref>(), std::size_t{}, std::size_t{}))),
              decltype(std::declval<R&>().deallocate(std::declval<::cuda::stream_ref>(),
                                                     static_cast<void*>(nullptr),
                                                     std::size_t{},
                                                     std::size_t{}))>> : std::true_type {
};
#endif

template <typename R>
struct has_sync_members
  : std::bool_constant<has_classic_sync<R>::value || has_named_sync<R>::value> {
};

template <typename R>
struct has_async_members
  : std::bool_constant<has_classic_async<R>::value || has_stream_first_async<R>::value> {
};

template <typename R, typename = void>
struct has_equality : std::false_type {
};
template <typename R>
struct has_equality<
  R,
  std::void_t<decltype(static_cast<bool>(std::declval<R const&>() == std::declval<R const&>()))>>
  : std::true_type {
};
/// @endcond

/// @brief Table for a duck-typed resource type @p R (not derived from either base class).
template <typename R>
inline resource_ref_vtable const* generic_vtable() noexcept
{
  static constexpr resource_ref_vtable table{
    [](void* obj, std::size_t bytes, std::size_t alignment) -> void* {
      if constexpr (has_classic_sync<R>::value) {
        return static_cast<R*>(obj)->allocate(bytes, alignment);
      } else {
        return static_cast<R*>(obj)->allocate_sync(bytes, alignment);
      }
    },
    [](void* obj, void* ptr, std::size_t bytes, std::size_t alignment) {
      if constexpr (has_classic_sync<R>::value) {
        static_cast<R*>(obj)->deallocate(ptr, bytes, alignment);
      } else {
        static_cast<R*>(obj)->deallocate_sync(ptr, bytes, alignment);
      }
    },
    [](void* obj, std::size_t bytes, std::size_t alignment, cuda_stream_view stream) -> void* {
      if constexpr (has_classic_async<R>::value) {
        return static_cast<R*>(obj)->allocate_async(bytes, alignment, stream);
      } else if constexpr (has_stream_first_async<R>::value) {
#if defined(RMM_HAS_CUDA_MR)
        return static_cast<R*>(obj)->allocate(::cuda::stream_ref{stream.value()}, bytes, alignment);
#else
        return nullptr;
#endif
      } else {
        (void)obj, (void)bytes, (void)alignment, (void)stream;
        RMM_FAIL("resource has no allocate_async");
      }
    },
    [](void* obj, void* ptr, std::size_t bytes, std::size_t alignment, cuda_stream_view stream) {
      if constexpr (has_classic_async<R>::value) {
        static_cast<R*>(obj)->deallocate_async(ptr, bytes, alignment, stream);
      } else if constexpr (has_stream_first_async<R>::value) {
#if defined(RMM_HAS_CUDA_MR)
        static_cast<R*>(obj)->deallocate(::cuda::stream_ref{stream.value()}, ptr, bytes, alignment);
#endif
      } else {
        (void)obj, (void)ptr, (void)bytes, (void)alignment, (void)stream;
      }
    },
    [](void const* lhs, void const* rhs) -> bool {
      if constexpr (has_equality<R>::value) {
        return *static_cast<R const*>(lhs) == *static_cast<R const*>(rhs);
      } else {
        return lhs == rhs;
      }
    },
    [](void*) -> rmm::mr::device_memory_resource* { return nullptr; }};
  return &table;
}

/// @brief Kinds of memory a reference type promises.
enum class ref_access : unsigned { device = 1U, host = 2U, host_device = 3U };

template <ref_access Access, bool Async>
class basic_resource_ref;

/// @cond
// A reference type is never referred to as a resource, also when derived from
// basic_resource_ref (RMM 25.10's aliases wrap it, rmm/detail/cccl_adaptors.hpp): a copy of a
// reference must stay a reference to the same resource.
template <ref_access A, bool S>
std::true_type is_basic_resource_ref_test(basic_resource_ref<A, S> const*);
std::false_type is_basic_resource_ref_test(...);
template <typename T>
struct is_basic_resource_ref
  : decltype(is_basic_resource_ref_test(static_cast<T const*>(nullptr))) {
};
/// @endcond

/**
 * @brief Whether a resource of type @p R can be referred to by a reference of the given kind.
 */
template <typename R, ref_access Access, bool Async>
inline constexpr bool is_referable_v =
  !is_basic_resource_ref<std::remove_cv_t<R>>::value &&
  (std::is_base_of_v<rmm::mr::device_memory_resource, R> ||
   (std::is_base_of_v<rmm::mr::host_memory_resource, R> && Access == ref_access::host && !Async) ||
   // Host resources with stream-ordered members (pinned_memory_resource) serve every kind,
   // as in RMM, where they are device accessible too.
   (std::is_base_of_v<rmm::mr::host_memory_resource, R> && has_async_members<R>::value) ||
   (!std::is_base_of_v<rmm::mr::device_memory_resource, R> &&
    !std::is_base_of_v<rmm::mr::host_memory_resource, R> && has_sync_members<R>::value &&
    (!Async || has_async_members<R>::value)));

/**
 * @brief The common implementation of the reference types.
 * @tparam Access Where the referenced memory is accessible
 * @tparam Async Whether the stream-ordered functions are available
 */
template <ref_access Access, bool Async>
class basic_resource_ref {
  template <ref_access, bool>
  friend class basic_resource_ref;

 public:
  /**
   * @brief Refers to @p res (not owned: it must outlive every use of the reference).
   * @param res The resource
   */
  template <typename R,
            std::enable_if_t<!std::is_const_v<R> && is_referable_v<R, Access, Async>, int> = 0>
  basic_resource_ref(R& res) noexcept  // NOLINT(google-explicit-constructor)
    : basic_resource_ref{init(std::addressof(res))}
  {
  }

  /**
   * @brief Refers to @p *res (not owned: it must outlive every use of the reference).
   * @param res Pointer to the resource; must not be null (see
   * to_device_async_resource_ref_checked())
   */
  template <typename R,
            std::enable_if_t<!std::is_const_v<R> && is_referable_v<R, Access, Async>, int> = 0>
  basic_resource_ref(R* res) noexcept  // NOLINT(google-explicit-constructor)
    : basic_resource_ref{init(res)}
  {
  }

  /**
   * @brief Converts a reference offering at least this one's accessibility and operations.
   * @param other The reference to convert
   */
  template <ref_access OtherAccess,
            bool OtherAsync,
            std::enable_if_t<(OtherAccess != Access || OtherAsync != Async) &&
                               ((static_cast<unsigned>(OtherAccess) &
                                 static_cast<unsigned>(Access)) == static_cast<unsigned>(Access)) &&
                               (OtherAsync || !Async),
                             int> = 0>
  basic_resource_ref(basic_resource_ref<OtherAccess, OtherAsync> const& other) noexcept
    : obj_{other.obj_}, vtable_{other.vtable_}
  {
  }

  basic_resource_ref(basic_resource_ref const&)                = default;  ///< @brief Copy
  basic_resource_ref(basic_resource_ref&&) noexcept            = default;  ///< @brief Move
  basic_resource_ref& operator=(basic_resource_ref const&)     = default;  ///< @brief Copy
  basic_resource_ref& operator=(basic_resource_ref&&) noexcept = default;  ///< @brief Move
  ~basic_resource_ref()                                        = default;

  /**
   * @brief Allocates @p bytes aligned to @p alignment (synchronously, on the default stream
   * for device resources).
   * @param bytes The size
   * @param alignment A power of two (default `alignof(std::max_align_t)`)
   * @return The memory
   * @throws rmm::logic_error for an unsupported alignment; rmm::bad_alloc /
   * rmm::out_of_memory when the memory cannot be allocated
   */
  [[nodiscard]] void* allocate(std::size_t bytes,
                               std::size_t alignment = detail::ref_default_alignment) const
  {
    return vtable_->allocate(obj_, bytes, alignment);
  }

  /**
   * @brief Frees memory from allocate() with the same size and alignment.
   * @param ptr The memory
   * @param bytes The size it was allocated with
   * @param alignment The alignment it was allocated with
   */
  void deallocate(void* ptr,
                  std::size_t bytes,
                  std::size_t alignment = detail::ref_default_alignment) const
  {
    vtable_->deallocate(obj_, ptr, bytes, alignment);
  }

  /**
   * @brief Allocates @p bytes aligned to @p alignment, ordered on @p stream.
   * @param bytes The size
   * @param alignment A power of two
   * @param stream The stream
   * @return The memory
   */
  template <bool A = Async, std::enable_if_t<A, int> = 0>
  [[nodiscard]] void* allocate_async(std::size_t bytes,
                                     std::size_t alignment,
                                     cuda_stream_view stream) const
  {
    return vtable_->allocate_async(obj_, bytes, alignment, stream);
  }

  /**
   * @brief Allocates @p bytes with the default alignment (`alignof(std::max_align_t)`), ordered
   * on @p stream.
   * @param bytes The size
   * @param stream The stream
   * @return The memory
   */
  template <bool A = Async, std::enable_if_t<A, int> = 0>
  [[nodiscard]] void* allocate_async(std::size_t bytes, cuda_stream_view stream) const
  {
    return vtable_->allocate_async(obj_, bytes, detail::ref_default_alignment, stream);
  }

  /**
   * @brief Frees memory from allocate_async(bytes, alignment, stream), ordered on @p stream.
   * @param ptr The memory
   * @param bytes The size it was allocated with
   * @param alignment The alignment it was allocated with
   * @param stream The stream
   */
  template <bool A = Async, std::enable_if_t<A, int> = 0>
  void deallocate_async(void* ptr,
                        std::size_t bytes,
                        std::size_t alignment,
                        cuda_stream_view stream) const
  {
    vtable_->deallocate_async(obj_, ptr, bytes, alignment, stream);
  }

  /**
   * @brief Frees memory from allocate_async(bytes, stream), ordered on @p stream.
   * @param ptr The memory
   * @param bytes The size it was allocated with
   * @param stream The stream
   */
  template <bool A = Async, std::enable_if_t<A, int> = 0>
  void deallocate_async(void* ptr, std::size_t bytes, cuda_stream_view stream) const
  {
    vtable_->deallocate_async(obj_, ptr, bytes, detail::ref_default_alignment, stream);
  }

#if defined(RMM_HAS_CUDA_MR)
  /// @cond
  // Templates matching exactly cuda::stream_ref, so that raw stream handles, 0 and nullptr
  // still select the cuda_stream_view overloads without ambiguity.
  template <typename S,
            bool A                                                            = Async,
            std::enable_if_t<A && std::is_same_v<S, ::cuda::stream_ref>, int> = 0>
  [[nodiscard]] void* allocate_async(std::size_t bytes, std::size_t alignment, S stream) const
  {
    return allocate_async(bytes, alignment, cuda_stream_view{stream.get()});
  }
  template <typename S,
            bool A                                                            = Async,
            std::enable_if_t<A && std::is_same_v<S, ::cuda::stream_ref>, int> = 0>
  [[nodiscard]] void* allocate_async(std::size_t bytes, S stream) const
  {
    return allocate_async(bytes, cuda_stream_view{stream.get()});
  }
  template <typename S,
            bool A                                                            = Async,
            std::enable_if_t<A && std::is_same_v<S, ::cuda::stream_ref>, int> = 0>
  void deallocate_async(void* ptr, std::size_t bytes, std::size_t alignment, S stream) const
  {
    deallocate_async(ptr, bytes, alignment, cuda_stream_view{stream.get()});
  }
  template <typename S,
            bool A                                                            = Async,
            std::enable_if_t<A && std::is_same_v<S, ::cuda::stream_ref>, int> = 0>
  void deallocate_async(void* ptr, std::size_t bytes, S stream) const
  {
    deallocate_async(ptr, bytes, cuda_stream_view{stream.get()});
  }
  // CCCL 3.1 renamed the interface: allocate_sync/deallocate_sync for the synchronous
  // functions, allocate/deallocate with the stream first for the stream-ordered ones.
  [[nodiscard]] void* allocate_sync(std::size_t bytes,
                                    std::size_t alignment = detail::ref_default_alignment) const
  {
    return allocate(bytes, alignment);
  }
  void deallocate_sync(void* ptr,
                       std::size_t bytes,
                       std::size_t alignment = detail::ref_default_alignment) const noexcept
  {
    deallocate(ptr, bytes, alignment);
  }
  template <typename S,
            bool A                                                            = Async,
            std::enable_if_t<A && std::is_same_v<S, ::cuda::stream_ref>, int> = 0>
  [[nodiscard]] void* allocate(S stream,
                               std::size_t bytes,
                               std::size_t alignment = detail::ref_default_alignment) const
  {
    return allocate_async(bytes, alignment, cuda_stream_view{stream.get()});
  }
  template <typename S,
            bool A                                                            = Async,
            std::enable_if_t<A && std::is_same_v<S, ::cuda::stream_ref>, int> = 0>
  void deallocate(S stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment = detail::ref_default_alignment) const noexcept
  {
    deallocate_async(ptr, bytes, alignment, cuda_stream_view{stream.get()});
  }
  template <ref_access X = Access, std::enable_if_t<(static_cast<unsigned>(X) & 1U) != 0U, int> = 0>
  friend void get_property(basic_resource_ref const&, ::cuda::mr::device_accessible) noexcept
  {
  }
  template <ref_access X = Access, std::enable_if_t<(static_cast<unsigned>(X) & 2U) != 0U, int> = 0>
  friend void get_property(basic_resource_ref const&, ::cuda::mr::host_accessible) noexcept
  {
  }
  /// @endcond
#endif

  /**
   * @brief The referenced object when it is a device_memory_resource.
   * @return The resource, or nullptr when the reference is to another kind of object
   */
  [[nodiscard]] rmm::mr::device_memory_resource* as_device_memory_resource() const noexcept
  {
    return vtable_->as_device(obj_);
  }

  /**
   * @brief Whether both refer to resources that compare equal.
   *
   * References of different kinds compare after converting one to the other's kind, e.g.
   * `device_async_resource_ref{a} == device_async_resource_ref{b}`.
   * @param lhs A reference
   * @param rhs Another reference
   * @return true when equal
   */
  friend bool operator==(basic_resource_ref const& lhs, basic_resource_ref const& rhs)
  {
    if (lhs.obj_ == rhs.obj_) { return true; }
    return lhs.vtable_ == rhs.vtable_ && lhs.vtable_->equal(lhs.obj_, rhs.obj_);
  }

  /**
   * @brief Negation of ==.
   * @param lhs A reference
   * @param rhs Another reference
   * @return true when not equal
   */
  friend bool operator!=(basic_resource_ref const& lhs, basic_resource_ref const& rhs)
  {
    return !(lhs == rhs);
  }

 private:
  struct init_tag {
    void* obj;
    resource_ref_vtable const* vtable;
  };
  explicit basic_resource_ref(init_tag init) noexcept : obj_{init.obj}, vtable_{init.vtable} {}

  template <typename R>
  static init_tag init(R* res) noexcept
  {
    if constexpr (std::is_base_of_v<rmm::mr::device_memory_resource, R>) {
      return {static_cast<void*>(static_cast<rmm::mr::device_memory_resource*>(res)),
              device_mr_vtable()};
    } else if constexpr (std::is_base_of_v<rmm::mr::host_memory_resource, R> &&
                         !has_async_members<R>::value) {
      return {static_cast<void*>(static_cast<rmm::mr::host_memory_resource*>(res)),
              host_mr_vtable()};
    } else {
      return {static_cast<void*>(res), generic_vtable<R>()};
    }
  }

  void* obj_;
  resource_ref_vtable const* vtable_;
};

}  // namespace detail

#if RMM_DETAIL_API_CCCL_REF_WRAPPERS
// RMM 25.10 defines the aliases as detail::cccl_resource_ref / detail::cccl_async_resource_ref
// over the reference types, so both RMM 25.02's and CCCL 3.1's spellings work on them.

/// @brief Reference to a stream-ordered resource of device-accessible memory.
using device_async_resource_ref =
  detail::cccl_async_resource_ref<detail::basic_resource_ref<detail::ref_access::device, true>>;

/// @brief Reference to a resource of device-accessible memory (synchronous functions only).
using device_resource_ref =
  detail::cccl_resource_ref<detail::basic_resource_ref<detail::ref_access::device, false>>;

/// @brief Reference to a resource of host-accessible memory (synchronous functions only).
using host_resource_ref =
  detail::cccl_resource_ref<detail::basic_resource_ref<detail::ref_access::host, false>>;

/// @brief Reference to a stream-ordered resource of host-accessible memory.
using host_async_resource_ref =
  detail::cccl_async_resource_ref<detail::basic_resource_ref<detail::ref_access::host, true>>;

/// @brief Reference to a stream-ordered resource of memory accessible from host and device.
using host_device_async_resource_ref = detail::cccl_async_resource_ref<
  detail::basic_resource_ref<detail::ref_access::host_device, true>>;

/// @brief Reference to a resource of memory accessible from host and device (synchronous).
using host_device_resource_ref =
  detail::cccl_resource_ref<detail::basic_resource_ref<detail::ref_access::host_device, false>>;
#else
/// @brief Reference to a stream-ordered resource of device-accessible memory.
using device_async_resource_ref = detail::basic_resource_ref<detail::ref_access::device, true>;

/// @brief Reference to a resource of device-accessible memory (synchronous functions only).
using device_resource_ref = detail::basic_resource_ref<detail::ref_access::device, false>;

/// @brief Reference to a resource of host-accessible memory (synchronous functions only).
using host_resource_ref = detail::basic_resource_ref<detail::ref_access::host, false>;

/// @brief Reference to a stream-ordered resource of host-accessible memory.
using host_async_resource_ref = detail::basic_resource_ref<detail::ref_access::host, true>;

/// @brief Reference to a stream-ordered resource of memory accessible from host and device.
using host_device_async_resource_ref =
  detail::basic_resource_ref<detail::ref_access::host_device, true>;

/// @brief Reference to a resource of memory accessible from host and device (synchronous).
using host_device_resource_ref = detail::basic_resource_ref<detail::ref_access::host_device, false>;
#endif

/**
 * @brief A device_async_resource_ref to @p *res, checking the pointer.
 * @param res Pointer to a device memory resource
 * @return The reference
 * @throws rmm::logic_error when @p res is null
 */
inline device_async_resource_ref to_device_async_resource_ref_checked(
  rmm::mr::device_memory_resource* res)
{
  RMM_EXPECTS(res != nullptr, "Unexpected null resource pointer.");
  return device_async_resource_ref{*res};
}

RMM_API_NAMESPACE_END
}  // namespace rmm
