/**
 * @file mr/is_resource_adaptor.hpp
 * @brief `rmm::mr::is_resource_adaptor<R>`: whether @p R is a memory resource that adapts an
 * upstream resource (RMM's `rmm/mr/is_resource_adaptor.hpp`).
 *
 * Each API generation has its own implementation; this header picks the translation unit's
 * (rmm/version_config.hpp).
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_DETAIL_API_REMOVED_IN_26_08
#error \
  "rmm/mr/is_resource_adaptor.hpp: RMM 26.08 removed this header (and rmm::mr::is_resource_adaptor); a resource's upstream is its get_upstream_resource(). Compile this file for RMM 26.06 or older (-DRMM_API_VERSION=2606)"
#endif

#if RMM_API_GENERATION >= 2606
#include <rmm/detail/gen_26_06/mr/is_resource_adaptor.hpp>
#else
#include <rmm/detail/gen_25_02/mr/is_resource_adaptor.hpp>
#endif
