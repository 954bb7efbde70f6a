/**
 * @file mr/detail/callback_types.hpp
 * @brief The function types of every generation's callback_memory_resource.
 */
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/stream_arg.hpp>
#include <rmm/detail/export.hpp>

#include <cstddef>
#include <functional>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief Allocation callback: `void* (std::size_t bytes, cuda_stream_view stream, void* arg)`.
 *
 * Returns the allocation (at least 256-byte aligned) or throws. As in RMM, what it returns is
 * what callback_memory_resource::allocate() returns, nullptr included, and what it throws
 * propagates unchanged. (Only when the resource is used through the C ABI handle, e.g. as the
 * upstream of a resource implemented in rmm-rs's core, a nullptr for a non-zero size is
 * reported as an allocation failure, since the C ABI has no "null on success".)
 */
using allocate_callback_t = std::function<void*(std::size_t, rmm::detail::stream_arg, void*)>;

/**
 * @brief Deallocation callback: `void (void* ptr, std::size_t bytes, cuda_stream_view stream,
 * void* arg)`.
 */
using deallocate_callback_t =
  std::function<void(void*, std::size_t, rmm::detail::stream_arg, void*)>;

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
