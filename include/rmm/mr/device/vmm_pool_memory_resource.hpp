/**
 * @file vmm_pool_memory_resource.hpp
 * @brief A pool on virtual memory: one reserved address range, physical memory mapped into it
 * in granules (implemented by the Rust core; RMM has no such class).
 *
 * Each API generation has its own implementation; this header picks the translation unit's
 * (rmm/version_config.hpp).
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_API_GENERATION >= 2606
#include <rmm/detail/gen_26_06/mr/vmm_pool_memory_resource.hpp>
#else
#include <rmm/detail/gen_25_02/mr/device/vmm_pool_memory_resource.hpp>
#endif
