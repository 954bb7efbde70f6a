/**
 * @file detail/cccl_adaptors.hpp
 * @brief `rmm::detail::cccl_resource_ref` and `rmm::detail::cccl_async_resource_ref` (RMM
 * 25.10's `rmm/detail/cccl_adaptors.hpp`): a resource reference type with every spelling of
 * its operations, whatever interface the wrapped reference type has.
 *
 * CCCL 3.1 renamed the memory-resource interface (synchronous `allocate_sync` /
 * `deallocate_sync`; stream-ordered `allocate(stream, bytes, alignment)` /
 * `deallocate(stream, ptr, bytes, alignment)`), while code written for RMM 25.02 uses
 * `allocate(bytes[, alignment])` and `allocate_async(bytes[, alignment], stream)`. RMM 25.10's
 * reference aliases (`rmm::device_async_resource_ref`, ...) are these wrappers, so both
 * spellings work on them. The wrapped type may be rmm-rs's own reference
 * (rmm/resource_ref.hpp), or CCCL's `cuda::mr::resource_ref` / `async_resource_ref` of any
 * CCCL release: each operation goes to the member the wrapped type has.
 */
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/cuda_memory_resource.hpp>
#include <rmm/detail/export.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace RMM_EXPORT rmm {
RMM_API_NAMESPACE_BEGIN
// 25.10 names over cuda_stream_view, which RMM 26.10 deprecated (no 26.10 unit uses them).
RMM_DETAIL_ALLOW_DEPRECATED_BEGIN
namespace detail {

/// @cond
// Which spelling a wrapped reference type offers.
template <typename R, typename = void>
struct ref_has_allocate_sync : std::false_type {
};
template <typename R>
struct ref_has_allocate_sync<
  R,
  std::void_t<decltype(std::declval<R&>().allocate_sync(std::size_t{}, std::size_t{}))>>
  : std::true_type {
};

template <typename R, typename = void>
struct ref_has_allocate_async : std::false_type {
};
template <typename R>
struct ref_has_allocate_async<R,
                              std::void_t<decltype(std::declval<R&>().allocate_async(
                                std::size_t{}, std::size_t{}, std::declval<cuda_stream_view>()))>>
  : std::true_type {
};
/// @endcond

/// @brief The alignment the wrappers ask for when none is given (CCCL's default).
inline constexpr std::size_t cccl_ref_default_alignment = alignof(std::max_align_t);

/**
 * @brief A synchronous resource reference @p ResourceType with both interfaces:
 * `allocate(bytes[, alignment])` / `deallocate(ptr, bytes[, alignment])` and CCCL 3.1's
 * `allocate_sync` / `deallocate_sync`.
 * @tparam ResourceType The wrapped reference type
 */
template <typename ResourceType>
class cccl_resource_ref : public ResourceType {
 public:
  using base = ResourceType;  ///< The wrapped reference type
  using base::base;

  /// @brief Wraps a copy of @p other. @param other A reference of the wrapped type
  cccl_resource_ref(base const& other) : base(other) {}  // NOLINT(google-explicit-constructor)
  /// @brief Wraps @p other. @param other A reference of the wrapped type
  cccl_resource_ref(base&& other) : base(std::move(other)) {}  // NOLINT

  /// @brief Allocates @p bytes synchronously. @param bytes Size @param alignment Power of two
  /// @return The memory
  void* allocate_sync(std::size_t bytes, std::size_t alignment = cccl_ref_default_alignment) const
  {
    if constexpr (ref_has_allocate_sync<base>::value) {
      return self().allocate_sync(bytes, alignment);
    } else {
      return self().allocate(bytes, alignment);
    }
  }
  /// @brief Frees memory from allocate_sync(). @param ptr Memory @param bytes Size
  /// @param alignment The alignment it was allocated with
  void deallocate_sync(void* ptr,
                       std::size_t bytes,
                       std::size_t alignment = cccl_ref_default_alignment) const
  {
    if constexpr (ref_has_allocate_sync<base>::value) {
      self().deallocate_sync(ptr, bytes, alignment);
    } else {
      self().deallocate(ptr, bytes, alignment);
    }
  }
  /// @brief RMM 25.02's name of allocate_sync(). @param bytes Size @return The memory
  void* allocate(std::size_t bytes) const { return allocate_sync(bytes); }
  /// @brief RMM 25.02's name of allocate_sync(). @param bytes Size @param alignment Power of
  /// two @return The memory
  void* allocate(std::size_t bytes, std::size_t alignment) const
  {
    return allocate_sync(bytes, alignment);
  }
  /// @brief RMM 25.02's name of deallocate_sync(). @param ptr Memory @param bytes Size
  void deallocate(void* ptr, std::size_t bytes) const { deallocate_sync(ptr, bytes); }
  /// @brief RMM 25.02's name of deallocate_sync(). @param ptr Memory @param bytes Size
  /// @param alignment The alignment it was allocated with
  void deallocate(void* ptr, std::size_t bytes, std::size_t alignment) const
  {
    deallocate_sync(ptr, bytes, alignment);
  }

 private:
  // A reference is a handle: calling through a const one changes no state of the handle, but
  // CCCL's reference types (up to 3.0) declare their functions non-const.
  base& self() const noexcept
  {
    return const_cast<base&>(static_cast<base const&>(*this));  // NOLINT
  }
};

/**
 * @brief A stream-ordered resource reference @p ResourceType with both interfaces: RMM
 * 25.02's (`allocate(bytes)`, `allocate_async(bytes[, alignment], stream)`, ...) and CCCL
 * 3.1's (`allocate_sync`, `allocate(stream, bytes[, alignment])`, ...).
 * @tparam ResourceType The wrapped reference type
 */
template <typename ResourceType>
class cccl_async_resource_ref : public ResourceType {
 public:
  using base = ResourceType;  ///< The wrapped reference type
  using base::base;

  /// @brief Wraps a copy of @p other. @param other A reference of the wrapped type
  cccl_async_resource_ref(base const& other) : base(other) {}  // NOLINT
  /// @brief Wraps @p other. @param other A reference of the wrapped type
  cccl_async_resource_ref(base&& other) : base(std::move(other)) {}  // NOLINT

  /// @brief Allocates @p bytes synchronously. @param bytes Size @param alignment Power of two
  /// @return The memory
  void* allocate_sync(std::size_t bytes, std::size_t alignment = cccl_ref_default_alignment) const
  {
    if constexpr (ref_has_allocate_sync<base>::value) {
      return self().allocate_sync(bytes, alignment);
    } else {
      return self().allocate(bytes, alignment);
    }
  }
  /// @brief Frees memory from allocate_sync(). @param ptr Memory @param bytes Size
  /// @param alignment The alignment it was allocated with
  void deallocate_sync(void* ptr,
                       std::size_t bytes,
                       std::size_t alignment = cccl_ref_default_alignment) const
  {
    if constexpr (ref_has_allocate_sync<base>::value) {
      self().deallocate_sync(ptr, bytes, alignment);
    } else {
      self().deallocate(ptr, bytes, alignment);
    }
  }
  /// @brief Allocates @p bytes ordered on @p stream. @param stream Stream @param bytes Size
  /// @param alignment Power of two @return The memory
  void* allocate(cuda_stream_view stream,
                 std::size_t bytes,
                 std::size_t alignment = cccl_ref_default_alignment) const
  {
    if constexpr (ref_has_allocate_async<base>::value) {
      return self().allocate_async(bytes, alignment, stream);
    } else {
      return self().allocate(stream, bytes, alignment);
    }
  }
  /// @brief Frees memory from allocate(stream, ...), ordered on @p stream. @param stream
  /// Stream @param ptr Memory @param bytes Size @param alignment Alignment it was allocated with
  void deallocate(cuda_stream_view stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment = cccl_ref_default_alignment) const
  {
    if constexpr (ref_has_allocate_async<base>::value) {
      self().deallocate_async(ptr, bytes, alignment, stream);
    } else {
      self().deallocate(stream, ptr, bytes, alignment);
    }
  }
  /// @brief RMM 25.02's name of allocate_sync(). @param bytes Size @return The memory
  void* allocate(std::size_t bytes) const { return allocate_sync(bytes); }
  /// @brief RMM 25.02's name of allocate_sync(). @param bytes Size @param alignment Power of
  /// two @return The memory
  void* allocate(std::size_t bytes, std::size_t alignment) const
  {
    return allocate_sync(bytes, alignment);
  }
  /// @brief RMM 25.02's name of deallocate_sync(). @param ptr Memory @param bytes Size
  void deallocate(void* ptr, std::size_t bytes) const { deallocate_sync(ptr, bytes); }
  /// @brief RMM 25.02's name of deallocate_sync(). @param ptr Memory @param bytes Size
  /// @param alignment The alignment it was allocated with
  void deallocate(void* ptr, std::size_t bytes, std::size_t alignment) const
  {
    deallocate_sync(ptr, bytes, alignment);
  }
  /// @brief RMM 25.02's name of allocate(stream, bytes). @param bytes Size @param stream
  /// Stream @return The memory
  void* allocate_async(std::size_t bytes, cuda_stream_view stream) const
  {
    return allocate(stream, bytes);
  }
  /// @brief RMM 25.02's name of allocate(stream, bytes, alignment). @param bytes Size
  /// @param alignment Power of two @param stream Stream @return The memory
  void* allocate_async(std::size_t bytes, std::size_t alignment, cuda_stream_view stream) const
  {
    return allocate(stream, bytes, alignment);
  }
  /// @brief RMM 25.02's name of deallocate(stream, ptr, bytes). @param ptr Memory
  /// @param bytes Size @param stream Stream
  void deallocate_async(void* ptr, std::size_t bytes, cuda_stream_view stream) const
  {
    deallocate(stream, ptr, bytes);
  }
  /// @brief RMM 25.02's name of deallocate(stream, ptr, bytes, alignment). @param ptr Memory
  /// @param bytes Size @param alignment Alignment it was allocated with @param stream Stream
  void deallocate_async(void* ptr,
                        std::size_t bytes,
                        std::size_t alignment,
                        cuda_stream_view stream) const
  {
    deallocate(stream, ptr, bytes, alignment);
  }

 private:
  // A reference is a handle: calling through a const one changes no state of the handle, but
  // CCCL's reference types (up to 3.0) declare their functions non-const.
  base& self() const noexcept
  {
    return const_cast<base&>(static_cast<base const&>(*this));  // NOLINT
  }
};

}  // namespace detail
RMM_DETAIL_ALLOW_DEPRECATED_END
RMM_API_NAMESPACE_END
}  // namespace rmm
