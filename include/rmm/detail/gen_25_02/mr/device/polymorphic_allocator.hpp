/**
 * @file detail/gen_25_02/mr/device/polymorphic_allocator.hpp
 * @brief Stream-ordered allocator over a device resource, and its adaptor to the standard
 * Allocator interface (RMM's `rmm/mr/device/polymorphic_allocator.hpp`).
 */
#pragma once

#include <rmm/detail/export.hpp>
#include <rmm/mr/detail/stream_allocator_adaptor.hpp>

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

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
