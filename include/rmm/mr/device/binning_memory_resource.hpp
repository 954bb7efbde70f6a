/**
 * @file binning_memory_resource.hpp
 * @brief Sub-allocator routing each request to the smallest bin that fits, or to the upstream
 * (implemented by the Rust core).
 *
 * Each API generation has its own implementation; this header picks the translation unit's
 * (rmm/version_config.hpp).
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_API_GENERATION >= 2606
#include <rmm/detail/gen_26_06/mr/binning_memory_resource.hpp>
#else
#include <rmm/detail/gen_25_02/mr/device/binning_memory_resource.hpp>
#endif
