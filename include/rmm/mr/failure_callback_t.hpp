/**
 * @file failure_callback_t.hpp
 * @brief RMM 26.06's `rmm::mr::failure_callback_t`: the callback of a
 * failure_callback_resource_adaptor.
 *
 * A 25.02/25.10 translation unit gets the same name from
 * `rmm/mr/device/failure_callback_resource_adaptor.hpp`.
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_API_GENERATION >= 2606

#include <cstddef>
#include <functional>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief Called with the size of a failed allocation and the adaptor's argument; returns true
 * to retry the allocation, false to let the failure through.
 */
using failure_callback_t = std::function<bool(std::size_t, void*)>;

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#else
#include <rmm/mr/device/failure_callback_resource_adaptor.hpp>
#endif
