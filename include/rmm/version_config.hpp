/**
 * @file version_config.hpp
 * @brief Which RMM API generation this translation unit compiles against (RMM's
 * `rmm/version_config.hpp`: `RMM_VERSION_MAJOR`, `RMM_VERSION_MINOR`, `RMM_VERSION_PATCH`).
 *
 * One rmm-rs install serves code written for RMM 25.02 (= hipMM 3.0), RMM 25.10 (= hipMM
 * 4.0) and RMM 26.06 (CCCL-native resources). Each translation unit chooses one by defining
 * `RMM_API_VERSION` to the release it was written for, as YYMM:
 *
 * | RMM_API_VERSION | generation | what the headers provide |
 * | --- | --- | --- |
 * | 2502 | 25.02 | `device_memory_resource` and templates of RMM 25.02 / hipMM 3.0 |
 * | 2504, 2506, 2508, 2510 | 25.10 | 25.02's classes plus 25.10's additions (hipMM 4.0) |
 * | 2512, 2602, 2604, 2606 | 26.06 | non-template `cuda::mr::shared_resource` classes (needs CCCL >= 3.4) |
 *
 * `find_package(rmm <version>)` defines it on `rmm::rmm`. Without a choice the newest
 * generation the toolchain can compile is used: 26.06 when CCCL's `cuda::mr::shared_resource`
 * is on the include path, else 25.10. Any other value stops the build with an error naming
 * the supported range.
 *
 * Each generation lives in its own inline namespace (`rmm::api_25_02`, `rmm::api_25_10`,
 * `rmm::api_26_06`), so libraries compiled against different generations link into one
 * program without ODR clashes; all of them share librmm.so's one per-device registry.
 */
#pragma once

#if defined(RMM_API_VERSION)
#if RMM_API_VERSION == 2502
#define RMM_API_GENERATION 2502
#elif RMM_API_VERSION == 2504 || RMM_API_VERSION == 2506 || RMM_API_VERSION == 2508 || \
  RMM_API_VERSION == 2510
#define RMM_API_GENERATION 2510
#elif RMM_API_VERSION == 2512 || RMM_API_VERSION == 2602 || RMM_API_VERSION == 2604 || \
  RMM_API_VERSION == 2606
#define RMM_API_GENERATION 2606
#else
#error "rmm-rs: RMM_API_VERSION must name an RMM release from 25.02 to 26.06 as YYMM (2502, 2504, 2506, 2508, 2510, 2512, 2602, 2604 or 2606)"
#endif
#else
#if defined(__has_include)
#if __has_include(<cuda/__memory_resource/shared_resource.h>)
#define RMM_API_VERSION 2606
#define RMM_API_GENERATION 2606
#endif
#endif
#if !defined(RMM_API_VERSION)
#define RMM_API_VERSION 2510
#define RMM_API_GENERATION 2510
#endif
#endif

/// @brief Major version of the RMM API this translation unit compiles against (e.g. 25).
#define RMM_VERSION_MAJOR (RMM_API_VERSION / 100)
/// @brief Minor version of the RMM API this translation unit compiles against (e.g. 10).
#define RMM_VERSION_MINOR (RMM_API_VERSION % 100)
/// @brief Patch level of the RMM API (always 0: rmm-rs follows the release's API).
#define RMM_VERSION_PATCH 0

// The generation's inline namespace: every rmm:: name of the C++ layer is declared inside it.
#if RMM_API_GENERATION == 2502
#define RMM_API_NAMESPACE_NAME api_25_02
#elif RMM_API_GENERATION == 2510
#define RMM_API_NAMESPACE_NAME api_25_10
#else
#define RMM_API_NAMESPACE_NAME api_26_06
#endif
/// @brief Opens the generation's inline namespace (inside `namespace rmm`).
#define RMM_API_NAMESPACE_BEGIN inline namespace RMM_API_NAMESPACE_NAME {
/// @brief Closes what RMM_API_NAMESPACE_BEGIN opened.
#define RMM_API_NAMESPACE_END }
