/**
 * @file resource_ref.hpp
 * @brief Non-owning, type-erased references to memory resources (RMM's `rmm/resource_ref.hpp`).
 *
 * Each API generation has its own implementation; this header picks the translation unit's
 * (rmm/version_config.hpp).
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_API_GENERATION >= 2606
#include <rmm/detail/gen_26_06/resource_ref.hpp>
#else
#include <rmm/detail/gen_25_02/resource_ref.hpp>
#endif
