/**
 * @file detail/gen_26_06/mr/failure_callback_t.hpp
 * @brief RMM 26.06's `rmm::mr::failure_callback_t`: the callback of a
 * failure_callback_resource_adaptor.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
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

#endif  // RMM_API_GENERATION
