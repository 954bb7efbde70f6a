/**
 * @file mr/detail/vmm_pool_accessors.hpp
 * @brief The statistics accessors of every generation's vmm_pool_memory_resource, read from
 * the class's one-snapshot `stats()`.
 */
#pragma once

#include <rmm/detail/export.hpp>
#include <rmm/rmm.h>

#include <cstddef>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief The accessors of a vmm pool whose `stats()` returns an `rmm_vmm_pool_stats` (CRTP).
 * @tparam Pool The vmm_pool_memory_resource class
 */
template <typename Pool>
class vmm_pool_accessors {
 public:
  /**
   * @brief Bytes mapped now (allocated and free).
   * @return The pool size
   */
  [[nodiscard]] std::size_t pool_size() const { return stats().pool_size; }

  /**
   * @brief The most bytes the pool maps at once: the maximum given (rounded down to the
   * granularity), else the reservation.
   * @return Bytes
   */
  [[nodiscard]] std::size_t maximum_pool_size() const { return stats().maximum_pool_size; }

  /**
   * @brief Bytes of address space reserved.
   * @return Bytes
   */
  [[nodiscard]] std::size_t reserved_size() const { return stats().reserved_size; }

  /**
   * @brief Bytes per mapping: the unit of growth and of release.
   * @return Bytes
   */
  [[nodiscard]] std::size_t granularity() const { return stats().granularity; }

  /**
   * @brief Bytes mapped and not allocated, all streams together.
   * @return Bytes
   */
  [[nodiscard]] std::size_t bytes_free() const { return stats().bytes_free; }

  /**
   * @brief Number of free blocks.
   * @return The count
   */
  [[nodiscard]] std::size_t free_block_count() const { return stats().free_block_count; }

  /**
   * @brief Size of the largest free block.
   * @return Bytes
   */
  [[nodiscard]] std::size_t largest_free_block() const { return stats().largest_free_block; }

  /**
   * @brief 1 - largest free block / bytes free; 0 when nothing is free.
   * @return The fragmentation, in [0, 1)
   */
  [[nodiscard]] double fragmentation() const { return stats().fragmentation; }

 private:
  [[nodiscard]] rmm_vmm_pool_stats stats() const { return static_cast<Pool const&>(*this).stats(); }
};

}  // namespace detail
}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
