/**
 * @file detail/gen_25_02/mr/device/polymorphic_allocator.hpp
 * @brief Stream-ordered allocator over a device resource, and its adaptor to the standard
 * Allocator interface (RMM's `rmm/mr/device/polymorphic_allocator.hpp`).
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/mr/device/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/detail/export.hpp>

#include <cstddef>
#include <memory>
#include <type_traits>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief A stream-ordered allocator of objects of type @p T, drawing from a device memory
 * resource chosen at run time.
 *
 * Unlike a standard Allocator, allocate() and deallocate() take a stream: use
 * stream_allocator_adaptor to pass one to containers that expect a standard Allocator.
 *
 * The resource is not owned; it must outlive the allocator and its copies.
 * @tparam T The value type
 */
template <typename T>
class polymorphic_allocator {
 public:
  using value_type = T;  ///< @brief The type allocated

  /// @brief Uses the resource current on the current device at construction time.
  polymorphic_allocator() : mr_{rmm::mr::get_current_device_resource_ref()} {}

  /**
   * @brief Uses the resource @p mr refers to.
   * @param mr A reference to the resource (a device_memory_resource pointer or reference
   * converts implicitly)
   */
  polymorphic_allocator(device_async_resource_ref mr) noexcept  // NOLINT
    : mr_{mr}
  {
  }

  /**
   * @brief Uses the resource @p mr (older API, pointer form).
   * @param mr The resource; must not be null
   * @throws rmm::logic_error when @p mr is null
   */
  polymorphic_allocator(device_memory_resource* mr)  // NOLINT
    : mr_{to_device_async_resource_ref_checked(mr)}
  {
  }

  /**
   * @brief Uses the same resource as @p other (allocator of another type).
   * @param other The allocator to copy the resource from
   */
  template <typename U>
  polymorphic_allocator(polymorphic_allocator<U> const& other) noexcept  // NOLINT
    : mr_{other.get_upstream_resource()}
  {
  }

  /**
   * @brief Allocates room for @p n objects of type T, ordered on @p stream.
   * @param n The number of objects
   * @param stream The stream
   * @return Pointer to the (uninitialized) storage
   * @throws rmm::bad_alloc (or rmm::out_of_memory) when the memory cannot be allocated
   */
  [[nodiscard]] value_type* allocate(std::size_t n, cuda_stream_view stream)
  {
    return static_cast<value_type*>(mr_.allocate_async(n * sizeof(T), stream));
  }

  /**
   * @brief Frees storage from allocate(), ordered on @p stream.
   * @param ptr The storage
   * @param n The number of objects it was allocated for
   * @param stream The stream
   */
  void deallocate(value_type* ptr, std::size_t n, cuda_stream_view stream) noexcept
  {
    mr_.deallocate_async(ptr, n * sizeof(T), stream);
  }

  /**
   * @brief The resource the allocator draws from.
   * @return A reference to it
   */
  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept { return mr_; }

  /**
   * @brief (older API) The resource the allocator draws from, as a pointer.
   * @return The device_memory_resource, or nullptr when the reference is to another kind of
   * object
   */
  [[nodiscard]] device_memory_resource* resource() const noexcept
  {
    return mr_.as_device_memory_resource();
  }

 private:
  device_async_resource_ref mr_;
};

/**
 * @brief Whether memory allocated by one allocator can be freed by the other (their resources
 * compare equal).
 * @param lhs An allocator
 * @param rhs Another allocator
 * @return true when equal
 */
template <typename T, typename U>
bool operator==(polymorphic_allocator<T> const& lhs, polymorphic_allocator<U> const& rhs)
{
  return lhs.get_upstream_resource() == rhs.get_upstream_resource();
}

/**
 * @brief Negation of ==.
 * @param lhs An allocator
 * @param rhs Another allocator
 * @return true when not equal
 */
template <typename T, typename U>
bool operator!=(polymorphic_allocator<T> const& lhs, polymorphic_allocator<U> const& rhs)
{
  return !(lhs == rhs);
}

/**
 * @brief Adapts a stream-ordered allocator (allocate(n, stream)) to the standard Allocator
 * interface (allocate(n)) by storing a stream.
 *
 * Every allocation and deallocation is ordered on the stored stream, so the container must
 * only use the memory on that stream (or after synchronizing it).
 * @tparam Allocator A stream-ordered allocator such as polymorphic_allocator
 */
template <typename Allocator>
class stream_allocator_adaptor {
 public:
  using value_type = typename std::allocator_traits<Allocator>::value_type;  ///< @brief Type

  stream_allocator_adaptor() = delete;

  /**
   * @brief Adapts @p allocator to allocate on @p stream.
   * @param allocator The stream-ordered allocator (copied)
   * @param stream The stream used for every (de)allocation
   */
  stream_allocator_adaptor(Allocator const& allocator, cuda_stream_view stream)
    : alloc_{allocator}, stream_{stream}
  {
  }

  /**
   * @brief Converts an adaptor of another value type (rebinding its allocator).
   * @param other The adaptor to convert
   */
  template <typename OtherAllocator>
  stream_allocator_adaptor(stream_allocator_adaptor<OtherAllocator> const& other)  // NOLINT
    : stream_allocator_adaptor{Allocator{other.underlying_allocator()}, other.stream()}
  {
  }

  /**
   * @brief The adaptor of the rebound allocator for objects of type @p T.
   * @tparam T The new value type
   */
  template <typename T>
  struct rebind {
    /// @brief The rebound adaptor type.
    using other =
      stream_allocator_adaptor<typename std::allocator_traits<Allocator>::template rebind_alloc<T>>;
  };

  /**
   * @brief Allocates room for @p n objects on the stored stream.
   * @param n The number of objects
   * @return Pointer to the storage
   * @throws rmm::bad_alloc (or rmm::out_of_memory) when the memory cannot be allocated
   */
  [[nodiscard]] value_type* allocate(std::size_t n) { return alloc_.allocate(n, stream()); }

  /**
   * @brief Frees storage from allocate() on the stored stream.
   * @param ptr The storage
   * @param n The number of objects it was allocated for
   */
  void deallocate(value_type* ptr, std::size_t n) noexcept { alloc_.deallocate(ptr, n, stream()); }

  /**
   * @brief The stream (de)allocations are ordered on.
   * @return The stream
   */
  [[nodiscard]] cuda_stream_view stream() const noexcept { return stream_; }

  /**
   * @brief The adapted allocator.
   * @return It
   */
  [[nodiscard]] Allocator underlying_allocator() const noexcept { return alloc_; }

 private:
  Allocator alloc_;
  cuda_stream_view stream_;
};

/// @cond
template <typename Allocator>
stream_allocator_adaptor(Allocator const&, cuda_stream_view) -> stream_allocator_adaptor<Allocator>;
/// @endcond

/**
 * @brief Whether the adapted allocators compare equal.
 * @param lhs An adaptor
 * @param rhs Another adaptor
 * @return true when the underlying allocators are equal
 */
template <typename A, typename O>
bool operator==(stream_allocator_adaptor<A> const& lhs, stream_allocator_adaptor<O> const& rhs)
{
  return lhs.underlying_allocator() == rhs.underlying_allocator();
}

/**
 * @brief Negation of ==.
 * @param lhs An adaptor
 * @param rhs Another adaptor
 * @return true when not equal
 */
template <typename A, typename O>
bool operator!=(stream_allocator_adaptor<A> const& lhs, stream_allocator_adaptor<O> const& rhs)
{
  return !(lhs == rhs);
}

/**
 * @brief (older API, removed in RMM 25.02) Adapts @p allocator to allocate on @p stream.
 * @param allocator The stream-ordered allocator
 * @param stream The stream
 * @return The adaptor
 */
template <typename Allocator>
auto make_stream_allocator_adaptor(Allocator const& allocator, cuda_stream_view stream)
{
  return stream_allocator_adaptor<Allocator>{allocator, stream};
}

}
RMM_API_NAMESPACE_END
}  // namespace rmm::mr
