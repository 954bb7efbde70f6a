/**
 * @file detail/gen_26_06/device_uvector.hpp
 * @brief RMM 26.06's `rmm::device_uvector<T>`: the constructor set over
 * rmm/detail/basic_device_uvector.hpp, stored in a 26.06 `rmm::device_buffer` (owning
 * `cuda::mr::any_resource`, aligned to `alignof(T)` at least), with conversions to
 * `cuda::std::span`.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/stream_arg.hpp>
#include <rmm/detail/basic_device_uvector.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/exec_check_disable.hpp>
#include <rmm/detail/gen_26_06/container_policy.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>

#include <cuda/memory_resource>
#include <cuda/std/iterator>
#include <cuda/std/span>

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN

/**
 * @brief An array of `T` in device memory whose elements are not initialized at construction
 * (RMM 26.06; see detail::basic_device_uvector for the operations).
 * @tparam T Element type; must be trivially copyable
 */
template <typename T>
class device_uvector
  : public detail::basic_device_uvector<T, rmm::device_buffer, detail::container_policy> {
 public:
  /**
   * @brief Allocates @p size uninitialized elements on @p stream.
   * @param size Number of elements
   * @param stream Stream of the allocation (and of later operations)
   * @param mr The resource to allocate from; the vector keeps it
   * @throws rmm::bad_alloc when `size * sizeof(T)` overflows or the allocation fails
   * @throws rmm::logic_error when @p mr is empty
   */
  explicit device_uvector(
    std::size_t size,
    detail::stream_arg stream,
    cuda::mr::any_resource<cuda::mr::device_accessible> mr = mr::get_current_device_resource_ref())
    : base{
        std::in_place, base::elements_to_bytes(size), std::alignment_of_v<T>, stream, std::move(mr)}
  {
  }

  /**
   * @brief A copy of @p other's elements in new memory from @p mr, copied on @p stream.
   * @param other Vector to copy
   * @param stream Stream of the allocation and the copy
   * @param mr The resource to allocate from
   */
  explicit device_uvector(
    device_uvector const& other,
    detail::stream_arg stream,
    cuda::mr::any_resource<cuda::mr::device_accessible> mr = mr::get_current_device_resource_ref())
    : base{std::in_place, other.storage(), stream, std::move(mr)}
  {
  }

  /// @brief The elements as a span of const (device memory). @return The span
  [[nodiscard]] operator cuda::std::span<T const>() const noexcept
  {
    return cuda::std::span<T const>(this->data(), this->size());
  }

  /// @brief The elements as a span (device memory). @return The span
  [[nodiscard]] operator cuda::std::span<T>() noexcept
  {
    return cuda::std::span<T>(this->data(), this->size());
  }

  /// @brief A reference to the resource the storage holds. @return The reference
  [[nodiscard]] rmm::device_async_resource_ref memory_resource() noexcept
  {
    return this->storage().memory_resource();
  }

 private:
  using base = detail::basic_device_uvector<T, rmm::device_buffer, detail::container_policy>;
};

RMM_API_NAMESPACE_END
}  // namespace rmm

#endif  // RMM_API_GENERATION
