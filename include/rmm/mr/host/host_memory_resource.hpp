/**
 * @file host_memory_resource.hpp
 * @brief Base class of host memory resources (not stream ordered; takes an alignment).
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/detail/cuda_memory_resource.hpp>
#include <rmm/detail/cuda_mr.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/detail/nvtx/ranges.hpp>

#include <cstddef>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

namespace detail {
/**
 * @brief The alignment a host resource uses for @p alignment: itself when supported (a power
 * of two), else RMM's default host alignment, as RMM's host resources do.
 * @param alignment The requested alignment
 * @return The alignment to use
 */
[[nodiscard]] constexpr std::size_t host_alignment(std::size_t alignment) noexcept
{
  return rmm::is_supported_alignment(alignment) ? alignment : rmm::RMM_DEFAULT_HOST_ALIGNMENT;
}
}  // namespace detail

/**
 * @brief Base class of host memory resources, like `std::pmr::memory_resource`.
 *
 * Derived classes override the private virtuals `do_allocate`, `do_deallocate` and
 * optionally `do_is_equal`.
 */
class host_memory_resource {
 public:
  host_memory_resource()                                           = default;
  virtual ~host_memory_resource()                                  = default;
  host_memory_resource(host_memory_resource const&)                = default;  ///< Copyable
  host_memory_resource(host_memory_resource&&) noexcept            = default;  ///< Movable
  host_memory_resource& operator=(host_memory_resource const&)     = default;  ///< Copyable
  host_memory_resource& operator=(host_memory_resource&&) noexcept = default;  ///< Movable

  /**
   * @brief Allocates at least @p bytes aligned to @p alignment.
   * @param bytes The size
   * @param alignment A power of two
   * @return The memory
   * @throws std::bad_alloc (or a derived exception) on failure
   */
  void* allocate(std::size_t bytes, std::size_t alignment = alignof(std::max_align_t))
  {
    return do_allocate(bytes, alignment);
  }

  /**
   * @brief Frees memory from allocate() with the same size and alignment.
   * @param ptr The memory
   * @param bytes The size it was allocated with
   * @param alignment The alignment it was allocated with
   */
  void deallocate(void* ptr, std::size_t bytes, std::size_t alignment = alignof(std::max_align_t))
  {
    do_deallocate(ptr, bytes, alignment);
  }

  /**
   * @brief True when memory from this resource may be freed by @p other and vice versa.
   * @param other The other resource
   * @return Whether they are interchangeable
   */
  [[nodiscard]] bool is_equal(host_memory_resource const& other) const noexcept
  {
    return do_is_equal(other);
  }

  /**
   * @brief Same as is_equal().
   * @param other The other resource
   * @return Whether they are interchangeable
   */
  [[nodiscard]] bool operator==(host_memory_resource const& other) const noexcept
  {
    return do_is_equal(other);
  }

  /**
   * @brief Negation of is_equal().
   * @param other The other resource
   * @return Whether they differ
   */
  [[nodiscard]] bool operator!=(host_memory_resource const& other) const noexcept
  {
    return !do_is_equal(other);
  }

#if defined(RMM_HAS_CUDA_MR)
  /**
   * @brief Host resources hand out host-accessible memory (`cuda::mr` property), so every
   * host resource satisfies `cuda::mr::resource_with<R, cuda::mr::host_accessible>`.
   */
  friend void get_property(host_memory_resource const&, ::cuda::mr::host_accessible) noexcept {}

#endif

  /**
   * @brief Allocates @p bytes aligned to @p alignment (CCCL 3.1's name, which RMM 25.10's
   * host resources have): the same as allocate(bytes, alignment).
   * @param bytes The size
   * @param alignment A power of two (default alignof(std::max_align_t))
   * @return The memory
   */
  void* allocate_sync(std::size_t bytes, std::size_t alignment = alignof(std::max_align_t))
  {
    return allocate(bytes, alignment);
  }

  /**
   * @brief Frees memory from allocate_sync() (CCCL 3.1's name).
   * @param ptr The memory
   * @param bytes The size it was allocated with
   * @param alignment The alignment it was allocated with
   */
  void deallocate_sync(void* ptr,
                       std::size_t bytes,
                       std::size_t alignment = alignof(std::max_align_t))
  {
    deallocate(ptr, bytes, alignment);
  }

 private:
  virtual void* do_allocate(std::size_t bytes,
                            std::size_t alignment = alignof(std::max_align_t)) = 0;

  virtual void do_deallocate(void* ptr,
                             std::size_t bytes,
                             std::size_t alignment = alignof(std::max_align_t)) = 0;

  [[nodiscard]] virtual bool do_is_equal(host_memory_resource const& other) const noexcept
  {
    return this == &other;
  }
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
