/**
 * @file detail/export.hpp
 * @brief Symbol visibility macros (RMM's `rmm/detail/export.hpp`).
 *
 * `RMM_EXPORT` gives a declaration default visibility and `RMM_HIDDEN` hidden visibility on
 * compilers with GCC-style attributes (ELF platforms); elsewhere both are empty.
 * `RMM_NAMESPACE` names the `rmm` namespace with default visibility, so code may write
 * `namespace RMM_NAMESPACE { ... }` to (re)open `rmm`, even when compiled with
 * `-fvisibility=hidden`.
 *
 * From RMM 26.08 on, RMM puts its names in an inline ABI namespace and code opens it with
 * `RMM_NAMESPACE_BEGIN` / `RMM_NAMESPACE_END` (or `namespace RMM_NAMESPACE { ... }`, which
 * is then `rmm::<abi namespace>`). Here the ABI namespace is the generation's own
 * (`rmm::api_26_08`, `rmm::api_26_10`), so such code declares its names beside the
 * generation's. Those generations need C++20, as RMM 26.08 does.
 */
#pragma once

#include <rmm/version_config.hpp>

#if defined(__GNUC__) && !defined(__MINGW32__) && !defined(__MINGW64__)
/// @brief Default (exported) symbol visibility.
#define RMM_EXPORT __attribute__((visibility("default")))
/// @brief Hidden symbol visibility.
#define RMM_HIDDEN __attribute__((visibility("hidden")))
#else
#define RMM_EXPORT
#define RMM_HIDDEN
#endif

#if RMM_DETAIL_API_ABI_NAMESPACE_MACROS
#if !defined(__cplusplus) || __cplusplus < 202002L
#error \
  "rmm-rs: RMM 26.08 and later need C++20 (-std=c++20, or CXX_STANDARD 20): compile as C++20, or choose RMM_API_VERSION 2606 or older"
#endif
/// @brief The ABI namespace inside `rmm` (the generation's inline namespace).
#define RMM_ABI_NAMESPACE RMM_API_NAMESPACE_NAME
/// @brief `rmm` and its ABI namespace: `namespace RMM_NAMESPACE { ... }`.
#define RMM_NAMESPACE rmm::RMM_ABI_NAMESPACE
/// @brief Opens `rmm` (with default visibility) and its ABI namespace.
#define RMM_NAMESPACE_BEGIN  \
  namespace RMM_EXPORT rmm { \
  inline namespace RMM_ABI_NAMESPACE {
/// @brief Closes what RMM_NAMESPACE_BEGIN opened.
#define RMM_NAMESPACE_END \
  }                       \
  }
#elif defined(__GNUC__) && !defined(__MINGW32__) && !defined(__MINGW64__)
/// @brief The `rmm` namespace, with default visibility: `namespace RMM_NAMESPACE { ... }`.
#define RMM_NAMESPACE RMM_EXPORT rmm
#else
#define RMM_NAMESPACE rmm
#endif

#if !defined(RMM_CONSTEXPR_FRIEND)
/// @brief `constexpr friend` (RMM's spelling for hidden-friend property queries such as
/// `get_property`; documentation builds that define DOXYGEN get plain `friend`).
#if defined(DOXYGEN)
#define RMM_CONSTEXPR_FRIEND friend
#else
#define RMM_CONSTEXPR_FRIEND constexpr friend
#endif
#endif
