/**
 * @file aligned.hpp
 * @brief Alignment constants and helpers (RMM's `rmm/aligned.hpp`).
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <cassert>
#include <cstddef>
#include <cstdint>

namespace rmm {
RMM_API_NAMESPACE_BEGIN

/**
 * @brief Alignment of every device allocation: 256 bytes, as guaranteed by cudaMalloc/hipMalloc.
 */
static constexpr std::size_t CUDA_ALLOCATION_ALIGNMENT{256};

/**
 * @brief Default alignment of host allocations.
 */
static constexpr std::size_t RMM_DEFAULT_HOST_ALIGNMENT{alignof(std::max_align_t)};

/**
 * @brief Whether @p value is a (non-zero) power of two.
 * @param value The value to test
 * @return true when @p value is a power of two
 */
[[nodiscard]] constexpr bool is_pow2(std::size_t value) noexcept
{
  return value != 0 && (value & (value - 1)) == 0;
}

/**
 * @brief Whether @p alignment can be used as an allocation alignment (a power of two).
 * @param alignment The alignment to test
 * @return true when supported
 */
[[nodiscard]] constexpr bool is_supported_alignment(std::size_t alignment) noexcept
{
  return is_pow2(alignment);
}

#if RMM_DETAIL_API_BASE_ALIGNMENT_CHECK
/**
 * @brief Whether the base resources (cuda, managed, pinned host, system) can give
 * @p alignment: a power of two no larger than CUDA_ALLOCATION_ALIGNMENT (RMM 26.08).
 * @param alignment The alignment
 * @return true when supported
 */
[[nodiscard]] constexpr bool is_supported_base_resource_alignment(std::size_t alignment) noexcept
{
  return is_pow2(alignment) && alignment <= CUDA_ALLOCATION_ALIGNMENT;
}
#endif

/**
 * @brief Rounds @p value up to a multiple of @p alignment (a power of two).
 * @param value The value to round
 * @param alignment A power of two
 * @return The smallest multiple of @p alignment not less than @p value
 */
[[nodiscard]] constexpr std::size_t align_up(std::size_t value, std::size_t alignment) noexcept
{
  assert(is_supported_alignment(alignment));
  return (value + (alignment - 1)) & ~(alignment - 1);
}

/**
 * @brief Rounds @p value down to a multiple of @p alignment (a power of two).
 * @param value The value to round
 * @param alignment A power of two
 * @return The largest multiple of @p alignment not greater than @p value
 */
[[nodiscard]] constexpr std::size_t align_down(std::size_t value, std::size_t alignment) noexcept
{
  assert(is_supported_alignment(alignment));
  return value & ~(alignment - 1);
}

/**
 * @brief Whether @p value is a multiple of @p alignment (a power of two).
 * @param value The value to test
 * @param alignment A power of two
 * @return true when aligned
 */
[[nodiscard]] constexpr bool is_aligned(std::size_t value, std::size_t alignment) noexcept
{
  return value == align_down(value, alignment);
}

/**
 * @brief Whether the address @p ptr is a multiple of @p alignment.
 * @param ptr The pointer to test
 * @param alignment A power of two (default 256)
 * @return true when aligned
 */
[[nodiscard]] inline bool is_pointer_aligned(
  void* ptr, std::size_t alignment = CUDA_ALLOCATION_ALIGNMENT) noexcept
{
  return is_aligned(reinterpret_cast<std::uintptr_t>(ptr), alignment);
}

/**
 * @brief Whether the address @p ptr is a multiple of @p alignment (pointer form of
 * is_aligned(); a template so that a literal `0` still selects the integer form).
 * @param ptr The pointer to test
 * @param alignment A power of two
 * @return true when aligned
 */
template <typename T>
[[nodiscard]] inline bool is_aligned(T* ptr, std::size_t alignment) noexcept
{
  return is_aligned(reinterpret_cast<std::uintptr_t>(ptr), alignment);
}

RMM_API_NAMESPACE_END
}  // namespace rmm
