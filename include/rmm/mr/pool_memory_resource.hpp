/**
 * @file pool_memory_resource.hpp
 * @brief Coalescing pool sub-allocator over an upstream resource (implemented by the Rust
 * core).
 *
 * Each API generation has its own implementation; this header picks the translation unit's
 * (rmm/version_config.hpp).
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_API_GENERATION >= 2606
#include <rmm/detail/gen_26_06/mr/pool_memory_resource.hpp>
#else
#include <rmm/detail/gen_25_02/mr/device/pool_memory_resource.hpp>
#endif
