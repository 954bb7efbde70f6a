/**
 * @file detail/gen_25_02/device_uvector.hpp
 * @brief RMM 25.02's `rmm::device_uvector<T>`: the constructor set over
 * rmm/detail/basic_device_uvector.hpp. The resource is held as a `device_async_resource_ref`
 * (it must outlive the vector); constructors take a reference or a resource pointer.
 */
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/basic_device_uvector.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/exec_check_disable.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/detail/gen_25_02/container_policy.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/mr/device/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace rmm {
RMM_API_NAMESPACE_BEGIN

/**
 * @brief An array of `T` in device memory whose elements are not initialized at construction
 * (RMM 25.02; see detail::basic_device_uvector for the operations).
 * @tparam T Element type; must be trivially copyable
 */
template <typename T>
class device_uvector
  : public detail::basic_device_uvector<T, device_buffer, detail::container_policy> {
 public:
  /**
   * @brief Allocates @p size uninitialized elements on @p stream.
   * @param size Number of elements
   * @param stream Stream of the allocation (and of later operations)
   * @param mr Resource to allocate from (must outlive the vector)
   * @throws rmm::bad_alloc when the allocation fails or the byte count overflows
   */
  explicit device_uvector(std::size_t size,
                          cuda_stream_view stream,
                          mr::device_memory_resource* mr = mr::get_current_device_resource())
    : base{std::in_place, base::elements_to_bytes(size), stream, mr}
  {
  }

  /**
   * @brief A deep copy of @p other's elements, enqueued on @p stream.
   * @param other Vector to copy
   * @param stream Stream of the allocation and the copy
   * @param mr Resource to allocate from (must outlive the vector)
   * @throws rmm::bad_alloc when the allocation fails
   */
  explicit device_uvector(device_uvector const& other,
                          cuda_stream_view stream,
                          mr::device_memory_resource* mr = mr::get_current_device_resource())
    : base{std::in_place, other.storage(), stream, mr}
  {
  }

  /**
   * @brief As the pointer form, with the resource given as a reference (RMM 25.02's form).
   * @param size Number of elements
   * @param stream Stream of the allocation (and of later operations)
   * @param mr The resource (must outlive the vector)
   */
  device_uvector(std::size_t size, cuda_stream_view stream, device_async_resource_ref mr)
    : base{std::in_place, base::elements_to_bytes(size), stream, mr}
  {
  }

  /**
   * @brief As the pointer form, with the resource given as a reference (RMM 25.02's form).
   * @param other Vector to copy
   * @param stream Stream of the allocation and the copy
   * @param mr The resource (must outlive the vector)
   */
  device_uvector(device_uvector const& other, cuda_stream_view stream, device_async_resource_ref mr)
    : base{std::in_place, other.storage(), stream, mr}
  {
  }

  /**
   * @brief The resource the storage comes from.
   * @return A reference to it (RMM 25.02's return type)
   */
  [[nodiscard]] device_async_resource_ref memory_resource() const noexcept
  {
    return this->storage().memory_resource();
  }

 private:
  using base = detail::basic_device_uvector<T, device_buffer, detail::container_policy>;
};

RMM_API_NAMESPACE_END
}  // namespace rmm
