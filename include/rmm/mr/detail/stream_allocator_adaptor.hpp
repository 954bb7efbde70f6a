/**
 * @file mr/detail/stream_allocator_adaptor.hpp
 * @brief `rmm::mr::stream_allocator_adaptor`: the standard Allocator over a stream-ordered one,
 * the same class in every generation (each generation's polymorphic_allocator.hpp brings it).
 */
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/stream_arg.hpp>
#include <rmm/detail/export.hpp>

#include <cstddef>
#include <memory>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

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
  stream_allocator_adaptor(Allocator const& allocator, rmm::detail::stream_arg stream)
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
  value_type* allocate(std::size_t n) { return alloc_.allocate(n, stream()); }

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
  [[nodiscard]] rmm::detail::stream_arg stream() const noexcept { return stream_; }

  /**
   * @brief The adapted allocator.
   * @return It
   */
  [[nodiscard]] Allocator underlying_allocator() const noexcept { return alloc_; }

 private:
  Allocator alloc_;
  rmm::detail::stream_arg stream_;
};

/// @cond
template <typename Allocator>
stream_allocator_adaptor(Allocator const&, rmm::detail::stream_arg)
  -> stream_allocator_adaptor<Allocator>;
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

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
