/**
 * @file managed_memory_resource.hpp
 * @brief Device memory resource allocating managed (unified) memory with
 * cudaMallocManaged/hipMallocManaged.
 *
 * Each API generation has its own implementation; this header picks the translation unit's
 * (rmm/version_config.hpp).
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_API_GENERATION >= 2606
#include <rmm/detail/gen_26_06/mr/managed_memory_resource.hpp>
#else
#include <rmm/detail/gen_25_02/mr/device/managed_memory_resource.hpp>
#endif
