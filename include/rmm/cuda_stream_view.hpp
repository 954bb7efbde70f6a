/**
 * @file cuda_stream_view.hpp
 * @brief Non-owning view of a GPU stream (RMM's `rmm::cuda_stream_view`).
 *
 * The stream type is `hipStream_t` when compiling for AMD's HIP platform with HIP's runtime
 * header available, else `cudaStream_t` when CUDA's is, and otherwise an opaque pointer type
 * (rmm/detail/runtime_select.h). Values are passed unchanged to the C ABI
 * as `rmm_stream_t`, which accepts raw hipStream_t/cudaStream_t values. On HIP the runtime's
 * header comes through rmm/cuda_runtime_api.h, which also defines CUDA's names for HIP's (as
 * hipMM's headers do), so code written for hipMM may keep writing `cudaStream_t`.
 */
#pragma once

#include <rmm/detail/check.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/rmm.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <ostream>
#if __cplusplus >= 202002L
#include <concepts>
#endif

#include <rmm/detail/runtime_select.h>

/// @brief Lets the package's own headers name what RMM 26.10 deprecated (cuda_stream_view)
/// without warnings in the code that includes them.
#if defined(__GNUC__) || defined(__clang__)
#define RMM_DETAIL_ALLOW_DEPRECATED_BEGIN \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wdeprecated-declarations\"")
#define RMM_DETAIL_ALLOW_DEPRECATED_END _Pragma("GCC diagnostic pop")
#else
#define RMM_DETAIL_ALLOW_DEPRECATED_BEGIN
#define RMM_DETAIL_ALLOW_DEPRECATED_END
#endif

#if defined(RMM_FORCE_OPAQUE_STREAM)
#define RMM_DETAIL_STREAM_OPAQUE 1
#elif defined(RMM_DETAIL_RUNTIME_HIP)
#define RMM_DETAIL_STREAM_HIP 1
#elif defined(RMM_DETAIL_RUNTIME_CUDA)
#define RMM_DETAIL_STREAM_CUDA 1
#else
#define RMM_DETAIL_STREAM_OPAQUE 1
#endif

#if defined(RMM_DETAIL_STREAM_HIP) || defined(RMM_DETAIL_STREAM_CUDA)
// The runtime's header: CUDA's own with CUDA; HIP's with CUDA's names for it on HIP.
#include <rmm/cuda_runtime_api.h>
#endif

#if !defined(RMM_DETAIL_STREAM_OPAQUE)
#include <rmm/detail/cuda_mr.hpp>
#endif

/// @brief Opaque stream object type used when neither HIP nor CUDA headers are available.
struct rmm_opaque_stream;

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace detail {
#if defined(RMM_DETAIL_STREAM_HIP)
/// @brief The runtime's stream handle type.
using stream_type = hipStream_t;
#elif defined(RMM_DETAIL_STREAM_CUDA)
/// @brief The runtime's stream handle type.
using stream_type = cudaStream_t;
#else
/// @brief The runtime's stream handle type (opaque: no runtime headers were found).
using stream_type = ::rmm_opaque_stream*;
#endif

/**
 * @brief Converts a stream handle to the C ABI's representation.
 * @param stream A hipStream_t/cudaStream_t value
 * @return The same value as an rmm_stream_t
 */
inline rmm_stream_t to_c_stream(stream_type stream) noexcept
{
  return reinterpret_cast<rmm_stream_t>(stream);
}

/**
 * @brief Converts a C ABI stream to the runtime's stream handle type.
 * @param stream An rmm_stream_t value
 * @return The same value as a stream_type
 */
inline stream_type from_c_stream(rmm_stream_t stream) noexcept
{
  return reinterpret_cast<stream_type>(stream);
}
}  // namespace detail

#if RMM_DETAIL_API_STREAM_REF
#if !defined(RMM_HAS_CUDA_MR)
#error \
  "rmm-rs: RMM 26.10 passes streams as cuda::stream_ref: put CCCL >= 3.5 (cuda/stream_ref) and CUDA's runtime headers on the include path, or choose RMM_API_VERSION 2608 or older"
#endif
/// The class is deprecated in RMM 26.10 (in favour of `cuda::stream_ref`); the package's own
/// uses of it sit between RMM_DETAIL_ALLOW_DEPRECATED_BEGIN/END.
#define RMM_DETAIL_STREAM_VIEW_DEPRECATED [[deprecated("Use cuda::stream_ref instead.")]]
#else
#define RMM_DETAIL_STREAM_VIEW_DEPRECATED
#endif

/**
 * @brief Strongly-typed, non-owning wrapper of a GPU stream handle with a default constructor
 * that views the default stream.
 */
class RMM_DETAIL_STREAM_VIEW_DEPRECATED cuda_stream_view {
 public:
  /// @brief Views the default stream.
  constexpr cuda_stream_view()                        = default;
  ~cuda_stream_view()                                 = default;
  constexpr cuda_stream_view(cuda_stream_view const&) = default;  ///< @brief Copy constructor
  constexpr cuda_stream_view(cuda_stream_view&&)      = default;  ///< @brief Move constructor
  constexpr cuda_stream_view& operator=(cuda_stream_view const&) =
    default;                                                            ///< @brief Copy assignment
  constexpr cuda_stream_view& operator=(cuda_stream_view&&) = default;  ///< @brief Move assignment

#if RMM_DETAIL_API_STREAM_FROM_LITERAL
  /**
   * @brief Views the default stream; accepts the literal `nullptr`.
   */
  constexpr cuda_stream_view(std::nullptr_t) noexcept {}

  /**
   * @brief Views the default stream; accepts the literal `0` (hipMM code often passes `0`).
   *
   * Any integer is treated as the default stream: stream handles are pointers, not numbers.
   */
  constexpr cuda_stream_view(int) noexcept {}
#else
  // RMM 26.06 refuses `0` and `nullptr`: write cuda_stream_view{} for the default stream.
  cuda_stream_view(int)            = delete;  ///< @brief Refused: use cuda_stream_view{}
  cuda_stream_view(std::nullptr_t) = delete;  ///< @brief Refused: use cuda_stream_view{}
#endif

  /**
   * @brief Views @p stream.
   * @param stream The stream handle to view
   */
  constexpr cuda_stream_view(detail::stream_type stream) noexcept : stream_{stream} {}

  /**
   * @brief The viewed stream handle.
   * @return The handle
   */
  [[nodiscard]] constexpr detail::stream_type value() const noexcept { return stream_; }

  /**
   * @brief Implicit conversion to the stream handle.
   * @return The handle
   */
  constexpr operator detail::stream_type() const noexcept { return value(); }

#if defined(RMM_HAS_CUDA_MR)
  /**
   * @brief Views the stream of a CCCL `cuda::stream_ref`.
   * @param stream The stream
   */
  constexpr cuda_stream_view(::cuda::stream_ref stream) noexcept : stream_{stream.get()} {}
  /// @brief The stream as a CCCL `cuda::stream_ref`. @return The stream
  constexpr operator ::cuda::stream_ref() const noexcept { return ::cuda::stream_ref{value()}; }
#endif

  /**
   * @brief Whether this views the per-thread default stream.
   * @return true for the per-thread default stream (and for the default stream when compiled
   * with `CUDA_API_PER_THREAD_DEFAULT_STREAM`)
   */
  [[nodiscard]] bool is_per_thread_default() const noexcept
  {
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM) || defined(HIP_API_PER_THREAD_DEFAULT_STREAM)
    return detail::to_c_stream(value()) == RMM_STREAM_PER_THREAD || value() == nullptr;
#else
    return detail::to_c_stream(value()) == RMM_STREAM_PER_THREAD;
#endif
  }

  /**
   * @brief Whether this views the default (legacy or null) stream.
   * @return true for the default stream
   */
  [[nodiscard]] bool is_default() const noexcept
  {
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM) || defined(HIP_API_PER_THREAD_DEFAULT_STREAM)
    return detail::to_c_stream(value()) == RMM_STREAM_LEGACY;
#else
    return detail::to_c_stream(value()) == RMM_STREAM_LEGACY || value() == nullptr;
#endif
  }

  /**
   * @brief Waits until all work enqueued on the stream has completed.
   * @throws rmm::cuda_error when the runtime reports an error
   */
  void synchronize() const { detail::check(rmm_stream_synchronize(detail::to_c_stream(stream_))); }

#if RMM_DETAIL_API_STREAM_REF
  /// @brief The viewed handle (`cuda::stream_ref`'s spelling). @return The stream handle
  [[nodiscard]] constexpr detail::stream_type get() const noexcept { return stream_; }

  /// @brief Waits for the stream (`cuda::stream_ref`'s spelling of synchronize()).
  void sync() const { synchronize(); }
#endif

  /**
   * @brief Waits for the stream like synchronize(), reporting a failure on stderr instead of
   * throwing.
   */
  void synchronize_no_throw() const noexcept
  {
    rmm_status_t status = rmm_stream_synchronize(detail::to_c_stream(stream_));
    if (status != RMM_STATUS_SUCCESS) {
      std::fprintf(stderr, "rmm: stream synchronize failed: %s\n", rmm_last_error_message());
    }
  }

 private:
  detail::stream_type stream_{};
};

RMM_DETAIL_ALLOW_DEPRECATED_BEGIN

/**
 * @brief Equality of two stream views (same handle).
 * @param lhs First view
 * @param rhs Second view
 * @return true when both view the same handle
 */
inline bool operator==(cuda_stream_view lhs, cuda_stream_view rhs)
{
  return lhs.value() == rhs.value();
}

/**
 * @brief Inequality of two stream views.
 * @param lhs First view
 * @param rhs Second view
 * @return true when the handles differ
 */
inline bool operator!=(cuda_stream_view lhs, cuda_stream_view rhs) { return !(lhs == rhs); }

/**
 * @brief Writes the stream handle to @p os.
 * @param os Output stream
 * @param stream The view to print
 * @return @p os
 */
inline std::ostream& operator<<(std::ostream& os, cuda_stream_view stream)
{
  os << static_cast<const void*>(stream.value());
  return os;
}

#if RMM_DETAIL_API_STREAM_REF
/**
 * @brief Equality of a stream view and a `cuda::stream_ref` (same handle).
 * @param lhs The view
 * @param rhs The reference
 * @return true when both name the same handle
 */
template <std::same_as<::cuda::stream_ref> StreamRef>
bool operator==(cuda_stream_view lhs, StreamRef const& rhs)
{
  return lhs.value() == rhs.get();
}

/// @copydoc operator==(cuda_stream_view, StreamRef const&)
template <std::same_as<::cuda::stream_ref> StreamRef>
bool operator==(StreamRef const& lhs, cuda_stream_view rhs)
{
  return lhs.get() == rhs.value();
}

/**
 * @brief Inequality of a stream view and a `cuda::stream_ref`.
 * @param lhs The view
 * @param rhs The reference
 * @return true when the handles differ
 */
template <std::same_as<::cuda::stream_ref> StreamRef>
bool operator!=(cuda_stream_view lhs, StreamRef const& rhs)
{
  return lhs.value() != rhs.get();
}

/// @copydoc operator!=(cuda_stream_view, StreamRef const&)
template <std::same_as<::cuda::stream_ref> StreamRef>
bool operator!=(StreamRef const& lhs, cuda_stream_view rhs)
{
  return lhs.get() != rhs.value();
}

RMM_DETAIL_ALLOW_DEPRECATED_END

/// @brief The default stream (the null stream), as RMM 26.10 has it: a `cuda::stream_ref`.
[[deprecated("Use cuda::stream_ref{cudaStream_t{cudaStreamDefault}} instead.")]] inline constexpr ::
  cuda::stream_ref cuda_stream_default{detail::stream_type{nullptr}};

/// @brief The legacy default stream (cudaStreamLegacy) as a `cuda::stream_ref`.
[[deprecated("Use cuda::stream_ref{cudaStreamLegacy} instead.")]] inline const ::cuda::stream_ref
  cuda_stream_legacy{detail::from_c_stream(RMM_STREAM_LEGACY)};

/// @brief The per-thread default stream (cudaStreamPerThread) as a `cuda::stream_ref`.
[[deprecated("Use cuda::stream_ref{cudaStreamPerThread} instead.")]] inline const ::cuda::stream_ref
  cuda_stream_per_thread{detail::from_c_stream(RMM_STREAM_PER_THREAD)};
#else
RMM_DETAIL_ALLOW_DEPRECATED_END

/// @brief The default stream (the null stream).
inline const cuda_stream_view cuda_stream_default{};

#if defined(RMM_DETAIL_STREAM_HIP)
/// @brief The legacy default stream: on HIP, whose null stream is the legacy default stream
/// and whose older releases have no other handle for it, the null stream (hipMM's value).
inline const cuda_stream_view cuda_stream_legacy{};
#else
/// @brief The legacy default stream (cudaStreamLegacy).
inline const cuda_stream_view cuda_stream_legacy{detail::from_c_stream(RMM_STREAM_LEGACY)};
#endif

/// @brief The per-thread default stream (cudaStreamPerThread / hipStreamPerThread).
inline const cuda_stream_view cuda_stream_per_thread{detail::from_c_stream(RMM_STREAM_PER_THREAD)};
#endif

RMM_API_NAMESPACE_END
}  // namespace rmm
