/**
 * @file detail/aligned.hpp
 * @brief Aligned host allocation helpers (RMM's `rmm/detail/aligned.hpp`).
 *
 * RMM 25.02 has `aligned_host_allocate` / `aligned_host_deallocate` here. Older RMM/hipMM
 * releases (hipMM's `main`, RMM 23.12) also had the alignment helpers in `rmm::detail` and
 * named the allocation helpers `aligned_allocate` / `aligned_deallocate`: those names are
 * kept too, so code written for either compiles.
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/detail/export.hpp>

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <utility>

namespace RMM_EXPORT rmm {
RMM_API_NAMESPACE_BEGIN
namespace detail {

// The alignment helpers under their older rmm::detail names (RMM <= 24.02, hipMM main).
using rmm::align_down;
using rmm::align_up;
using rmm::CUDA_ALLOCATION_ALIGNMENT;
using rmm::is_aligned;
using rmm::is_pointer_aligned;
using rmm::is_pow2;
using rmm::is_supported_alignment;
using rmm::RMM_DEFAULT_HOST_ALIGNMENT;

/**
 * @brief Allocates @p bytes aligned to @p alignment using a plain allocation function.
 *
 * @p alloc is called once with a larger size; the distance from what it returned to the
 * aligned pointer is stored just below the aligned pointer, so aligned_host_deallocate()
 * can find the original allocation again.
 *
 * @tparam Alloc Callable `void* (std::size_t)`
 * @param bytes Bytes to allocate
 * @param alignment A power of two
 * @param alloc The underlying allocation function
 * @return The aligned pointer (free it with aligned_host_deallocate())
 */
template <typename Alloc>
void* aligned_host_allocate(std::size_t bytes, std::size_t alignment, Alloc alloc)
{
  assert(rmm::is_supported_alignment(alignment));
  std::size_t space = bytes + alignment + sizeof(std::ptrdiff_t);
  char* const base  = static_cast<char*>(alloc(space));
  // Room for the offset first, then the first aligned address after it.
  void* result     = base + sizeof(std::ptrdiff_t);
  std::size_t room = space - sizeof(std::ptrdiff_t);
  std::align(alignment, bytes, result, room);
  auto const distance = static_cast<char*>(result) - base;
  std::memcpy(static_cast<char*>(result) - sizeof(std::ptrdiff_t), &distance, sizeof(distance));
  return result;
}

/**
 * @brief Frees memory obtained from aligned_host_allocate().
 *
 * @tparam Dealloc Callable `void (void*)`
 * @param ptr The aligned pointer
 * @param bytes Bytes that were requested (unused)
 * @param alignment The alignment that was requested (checked in debug builds)
 * @param dealloc The deallocation function matching the allocation function
 */
template <typename Dealloc>
void aligned_host_deallocate(void* ptr,
                             [[maybe_unused]] std::size_t bytes,
                             [[maybe_unused]] std::size_t alignment,
                             Dealloc dealloc) noexcept
{
  assert(rmm::is_supported_alignment(alignment));
  // Null is a no-op (RMM 26.06), like free(nullptr): there is no offset stored before it.
  if (ptr == nullptr) { return; }
  std::ptrdiff_t distance{};
  std::memcpy(&distance, static_cast<char*>(ptr) - sizeof(std::ptrdiff_t), sizeof(distance));
  dealloc(static_cast<char*>(ptr) - distance);
}

/**
 * @brief Older name of aligned_host_allocate() (RMM <= 24.02, hipMM main).
 * @tparam Alloc Callable `void* (std::size_t)`
 * @param bytes Bytes to allocate
 * @param alignment A power of two
 * @param alloc The underlying allocation function
 * @return The aligned pointer (free it with aligned_deallocate())
 */
template <typename Alloc>
void* aligned_allocate(std::size_t bytes, std::size_t alignment, Alloc alloc)
{
  return aligned_host_allocate(bytes, alignment, std::move(alloc));
}

/**
 * @brief Older name of aligned_host_deallocate() (RMM <= 24.02, hipMM main).
 * @tparam Dealloc Callable `void (void*)`
 * @param ptr The aligned pointer
 * @param bytes Bytes that were requested
 * @param alignment The alignment that was requested
 * @param dealloc The deallocation function
 */
template <typename Dealloc>
void aligned_deallocate(void* ptr,
                        std::size_t bytes,
                        std::size_t alignment,
                        Dealloc dealloc) noexcept
{
  aligned_host_deallocate(ptr, bytes, alignment, std::move(dealloc));
}

}  // namespace detail
RMM_API_NAMESPACE_END
}  // namespace rmm
