/**
 * @file cuda_async_managed_memory_resource.hpp
 * @brief Device memory resource allocating managed memory in stream order from a managed memory
 * pool, where the runtime has managed pools.
 *
 * Each API generation has its own implementation; this header picks the translation unit's
 * (rmm/version_config.hpp).
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_API_GENERATION >= 2606
#include <rmm/detail/gen_26_06/mr/cuda_async_managed_memory_resource.hpp>
#else
#include <rmm/detail/gen_25_02/mr/device/cuda_async_managed_memory_resource.hpp>
#endif
