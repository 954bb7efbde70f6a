/**
 * @file version_config.hpp
 * @brief Which RMM API generation this translation unit compiles against (RMM's
 * `rmm/version_config.hpp`: `RMM_VERSION_MAJOR`, `RMM_VERSION_MINOR`, `RMM_VERSION_PATCH`), the
 * knobs that say what each generation changes, and each generation's registry key.
 *
 * One rmm-rs install serves code written for RMM 25.02 (= hipMM 3.0), RMM 25.10 (= hipMM
 * 4.0) and RMM 26.06 (CCCL-native resources). Each translation unit chooses one by defining
 * `RMM_API_VERSION` to the release it was written for, as YYMM:
 *
 * | RMM_API_VERSION | generation | what the headers provide |
 * | --- | --- | --- |
 * | 2502 | 25.02 | `device_memory_resource` and templates of RMM 25.02 / hipMM 3.0 |
 * | 2504, 2506, 2508, 2510 | 25.10 | 25.02's classes plus 25.10's additions (hipMM 4.0) |
 * | 2512, 2602, 2604, 2606 | 26.06 | non-template `cuda::mr::shared_resource` classes (needs CCCL
 * >= 3.4) |
 * | 2608 | 26.08 | 26.06's classes less the names 26.08 removed, plus its additions and
 * behaviours (C++20) |
 * | 2610 | 26.10 | every API on `cuda::stream_ref`; `cuda_stream_view` deprecated (C++20, CCCL
 * >= 3.5) |
 *
 * `find_package(rmm <version>)` defines it on `rmm::rmm`. Without a choice the newest
 * generation the toolchain can compile is used: 26.10 when CCCL >= 3.5 is on the include path
 * and the unit is C++20, 26.06 when CCCL's `cuda::mr::shared_resource` is, else 25.10. Any
 * other value stops the build with an error naming the supported range.
 *
 * Each generation lives in its own inline namespace (`rmm::api_25_02`, `rmm::api_25_10`,
 * `rmm::api_26_06`, `rmm::api_26_08`, `rmm::api_26_10`), so libraries compiled against
 * different generations link into one program without ODR clashes; all of them share
 * librmm.so's one per-device registry. RMM 26.08's own ABI namespace macros
 * (`RMM_NAMESPACE_BEGIN`, ...) name the generation's namespace (rmm/detail/export.hpp).
 *
 * ## Layout: where a generation's differences live (checked by scripts/check-include-layout.py)
 *
 * Code that all generations share is written once, at RMM's path (or, for helpers of ours, in
 * `rmm/detail/` and `rmm/mr/detail/`). What differs lives in one of two places, nowhere else:
 * - Whole headers of a generation's own (RMM 25.02's `device_memory_resource` family, RMM
 *   26.06's `shared_resource` family, each container's constructor set and policy) live in
 *   `rmm/detail/gen_<yy>_<mm>/` of the generation that introduced them, under RMM's path
 *   (`rmm/mr/device/pool_memory_resource.hpp` ->
 *   `rmm/detail/gen_25_02/mr/device/pool_memory_resource.hpp`). A folder serves its
 *   generation and the later ones until a newer folder replaces a header. The public header
 *   at RMM's path only selects: a block of includes under `#if RMM_API_GENERATION >= <yymm>`,
 *   newest first, `#else` the oldest. A generation folder includes shared headers, its own
 *   folder and older ones, never a newer one; a shared header includes a generation folder
 *   only in such a selection block. The headers of a folder newer than 25.02 are guarded by
 *   `#if RMM_API_GENERATION >= <yymm>`, the only generation test in a folder (the header
 *   checks compile every header in 25.x translation units).
 * - A few lines that differ inside a shared header sit under a knob `RMM_DETAIL_API_*`
 *   defined below, once; shared code tests the knob, never `RMM_API_GENERATION`.
 * The registry keys are defined here too (RMM_DETAIL_REGISTRY_KEY), nowhere else.
 *
 * A new generation adds: its releases to the checks below, its namespace name and registry
 * key (the next one; librmm keeps TAG_KEYS of them), a knob line for each small change in
 * shared code, and `rmm/detail/gen_<yy>_<mm>/` for what it rewrites, each header with its
 * `#if RMM_API_GENERATION >= <yymm>` line in the public header's selection block
 * (docs/architecture.md, "Checklist: add an API generation").
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
#elif RMM_API_VERSION == 2608
#define RMM_API_GENERATION 2608
#elif RMM_API_VERSION == 2610
#define RMM_API_GENERATION 2610
#else
#error \
  "rmm-rs: RMM_API_VERSION must name an RMM release from 25.02 to 26.10 as YYMM (2502, 2504, 2506, 2508, 2510, 2512, 2602, 2604, 2606, 2608 or 2610)"
#endif
#else
#if defined(__has_include)
#if __has_include(<cuda/__memory_resource/shared_resource.h>)
#include <cuda/version>
#if CCCL_VERSION >= 3005000 && __cplusplus >= 202002L
#define RMM_API_VERSION    2610
#define RMM_API_GENERATION 2610
#else
#define RMM_API_VERSION    2606
#define RMM_API_GENERATION 2606
#endif
#endif
#endif
#if !defined(RMM_API_VERSION)
#define RMM_API_VERSION    2510
#define RMM_API_GENERATION 2510
#endif
#endif

/// @brief Major version of the RMM API this translation unit compiles against (e.g. 25).
#define RMM_VERSION_MAJOR (RMM_API_VERSION / 100)
/// @brief Minor version of the RMM API this translation unit compiles against (e.g. 10).
#define RMM_VERSION_MINOR (RMM_API_VERSION % 100)
/// @brief Patch level of the RMM API (always 0: rmm-rs follows the release's API).
#define RMM_VERSION_PATCH 0

// The generation's inline namespace (every rmm:: name of the C++ layer is declared inside it)
// and its key in librmm's per-device registry: each generation keeps its own C++ object per
// entry under its key (the C ABI has keys 0 to 4).
#if RMM_API_GENERATION == 2502
#define RMM_API_NAMESPACE_NAME  api_25_02
#define RMM_DETAIL_REGISTRY_KEY 0
#elif RMM_API_GENERATION == 2510
#define RMM_API_NAMESPACE_NAME  api_25_10
#define RMM_DETAIL_REGISTRY_KEY 1
#elif RMM_API_GENERATION == 2606
#define RMM_API_NAMESPACE_NAME  api_26_06
#define RMM_DETAIL_REGISTRY_KEY 2
#elif RMM_API_GENERATION == 2608
#define RMM_API_NAMESPACE_NAME  api_26_08
#define RMM_DETAIL_REGISTRY_KEY 3
#else
#define RMM_API_NAMESPACE_NAME  api_26_10
#define RMM_DETAIL_REGISTRY_KEY 4
#endif
/// @brief Opens the generation's inline namespace (inside `namespace rmm`).
#define RMM_API_NAMESPACE_BEGIN inline namespace RMM_API_NAMESPACE_NAME {
/// @brief Closes what RMM_API_NAMESPACE_BEGIN opened.
#define RMM_API_NAMESPACE_END }

// ---- Knobs: the small differences inside shared headers (1 where the generation has it) ----

// RMM 25.10 (hipMM 4.0)
/// Out-of-memory messages give the reason and the size ("Maximum pool size exceeded (failed
/// to allocate 2.0 MiB): ..."): rmm/detail/alloc_error.hpp.
#define RMM_DETAIL_API_OOM_REASON_TEXT (RMM_API_GENERATION >= 2510)
/// The logger's classes are also `rapids_logger::` names: rmm/logger.hpp.
#define RMM_DETAIL_API_RAPIDS_LOGGER (RMM_API_GENERATION >= 2510)
/// The resource references are built on `rmm::detail::cccl_*_resource_ref`:
/// rmm/detail/gen_25_02/resource_ref.hpp.
#define RMM_DETAIL_API_CCCL_REF_WRAPPERS (RMM_API_GENERATION >= 2510)

// RMM 26.06
/// `cuda_stream_view` accepts the literals `0` and `nullptr` (26.06 deletes those
/// constructors): rmm/cuda_stream_view.hpp.
#define RMM_DETAIL_API_STREAM_FROM_LITERAL (RMM_API_GENERATION < 2606)
/// `cuda_stream` converts to `cuda::stream_ref`: rmm/cuda_stream.hpp.
#define RMM_DETAIL_API_CUDA_STREAM_TO_STREAM_REF (RMM_API_GENERATION >= 2606)
/// `rmm::invalid_argument` exists: rmm/error.hpp.
#define RMM_DETAIL_API_INVALID_ARGUMENT (RMM_API_GENERATION >= 2606)
/// `RMM_ASSERT_CUDA_SUCCESS_SAFE_SHUTDOWN` exists: rmm/detail/error.hpp.
#define RMM_DETAIL_API_SAFE_SHUTDOWN_ASSERT (RMM_API_GENERATION >= 2606)
/// `runtime_async_managed_alloc` and `device_integrated_memory`:
/// rmm/detail/runtime_capabilities.hpp.
#define RMM_DETAIL_API_MANAGED_POOL_CAPABILITIES (RMM_API_GENERATION >= 2606)
/// `prefetch` has a C++20 `std::span` overload besides the `cuda::std::span` one (26.06 has
/// only the latter): rmm/prefetch.hpp.
#define RMM_DETAIL_API_STD_SPAN_PREFETCH (RMM_API_GENERATION < 2606)
/// APIs that keep a resource take it by value as `cuda::mr::any_resource` (25.x: a
/// `device_async_resource_ref` the caller keeps alive): rmm/exec_policy.hpp.
#define RMM_DETAIL_API_OWNING_RESOURCE_ARGS (RMM_API_GENERATION >= 2606)

// RMM 26.08
/// C++20 is required, and RMM's ABI namespace macros (`RMM_NAMESPACE_BEGIN`, `RMM_NAMESPACE`,
/// ...) exist: rmm/detail/export.hpp.
#define RMM_DETAIL_API_ABI_NAMESPACE_MACROS (RMM_API_GENERATION >= 2608)
/// Names 26.08 removed: `set_/reset_{per_device,current_device}_resource_ref`
/// (rmm/detail/gen_26_06/mr/per_device_resource.hpp), `cuda_async_memory_resource::
/// mempool_usage` (rmm/detail/gen_26_06/mr/cuda_async_memory_resource.hpp),
/// rmm/mr/is_resource_adaptor.hpp, and `RMM_MIN_HWDECOMPRESS_CUDA_DRIVER_VERSION` (renamed
/// `RMM_MIN_HWDECOMPRESS_CUDA_VERSION`: rmm/detail/runtime_capabilities.hpp).
#define RMM_DETAIL_API_REMOVED_IN_26_08 (RMM_API_GENERATION >= 2608)
/// `rmm::is_supported_base_resource_alignment` exists, and the base resources (cuda, managed,
/// pinned host, system, async view) refuse an alignment beyond 256 bytes with `rmm::bad_alloc`
/// and give no memory for zero bytes: rmm/aligned.hpp, rmm/detail/gen_26_06/mr/.
#define RMM_DETAIL_API_BASE_ALIGNMENT_CHECK (RMM_API_GENERATION >= 2608)
/// A size whose bytes overflow `std::size_t` throws `rmm::invalid_argument` (25.x to 26.06:
/// `rmm::bad_alloc` from the allocation): rmm/detail/basic_device_uvector.hpp.
#define RMM_DETAIL_API_UVECTOR_SIZE_CHECK (RMM_API_GENERATION >= 2608)
/// The failure-callback adaptor passes the caller's alignment upstream, defaults it to 256
/// bytes, and its `_sync` calls synchronize: rmm/detail/gen_26_06/mr/
/// failure_callback_resource_adaptor.hpp.
#define RMM_DETAIL_API_FAILURE_CALLBACK_ALIGNMENT (RMM_API_GENERATION >= 2608)

// RMM 26.10
/// Every API takes and returns `cuda::stream_ref` where it took `rmm::cuda_stream_view`
/// (rmm/detail/stream_arg.hpp's `stream_arg`); `cuda_stream_view` is deprecated, with `get()`,
/// `sync()` and comparisons with `cuda::stream_ref`, and `cuda_stream_default`/`_legacy`/
/// `_per_thread` are `cuda::stream_ref` constants: rmm/cuda_stream_view.hpp.
#define RMM_DETAIL_API_STREAM_REF (RMM_API_GENERATION >= 2610)
