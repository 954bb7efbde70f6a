/**
 * @file aligned_resource_adaptor.hpp
 * @brief Larger alignment for large allocations (implemented by the Rust core).
 *
 * Each API generation has its own implementation; this header picks the translation unit's
 * (rmm/version_config.hpp).
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_API_GENERATION >= 2606
#include <rmm/detail/gen_26_06/mr/aligned_resource_adaptor.hpp>
#else
#include <rmm/detail/gen_25_02/mr/device/aligned_resource_adaptor.hpp>
#endif
