/**
 * @file logging_resource_adaptor.hpp
 * @brief Resource adaptor that logs every allocation and free as a CSV row (implemented by the
 * Rust core), in RMM's format: `Thread,Time,Action,Pointer,Size,Stream`.
 *
 * Each API generation has its own implementation; this header picks the translation unit's
 * (rmm/version_config.hpp).
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_API_GENERATION >= 2606
#include <rmm/detail/gen_26_06/mr/logging_resource_adaptor.hpp>
#else
#include <rmm/detail/gen_25_02/mr/device/logging_resource_adaptor.hpp>
#endif
