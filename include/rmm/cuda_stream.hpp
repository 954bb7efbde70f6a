/**
 * @file cuda_stream.hpp
 * @brief Owning, move-only GPU stream (RMM's `rmm::cuda_stream`).
 *
 * The stream is created through the C ABI (`rmm_stream_create`) on the device that is current
 * at construction and destroyed (`rmm_stream_destroy`) by the destructor.
 */
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/stream_arg.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/detail/logging_assert.hpp>
#include <rmm/rmm.h>

#if RMM_DETAIL_API_CUDA_STREAM_TO_STREAM_REF
#include <cuda/stream_ref>
#endif

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <utility>

#if RMM_DETAIL_API_STREAM_REF
#define RMM_DETAIL_CUDA_STREAM_VIEW_DEPRECATED \
  [[deprecated("Use conversion to cuda::stream_ref instead.")]]
#else
#define RMM_DETAIL_CUDA_STREAM_VIEW_DEPRECATED
#endif

namespace rmm {
RMM_API_NAMESPACE_BEGIN

/**
 * @brief An owning wrapper of a GPU stream: creates a stream at construction and destroys it
 * at destruction. Move-only; a moved-from object owns no stream (`is_valid()` is false).
 */
class cuda_stream {
 public:
  /**
   * @brief Stream creation flags (values match the runtime's stream flags).
   */
  enum class flags : std::uint32_t {
    sync_default = 0x0,                      ///< Synchronizes with the legacy default stream
    non_blocking = RMM_STREAM_NON_BLOCKING,  ///< Does not synchronize with the default stream
  };

  /**
   * @brief Creates a new stream on the current device.
   * @param fl Creation flags
   * @throws rmm::cuda_error when the runtime cannot create the stream
   */
  // Not explicit, as in RMM 25.10 and 26.06: `rmm::cuda_stream s = {};` and
  // `rmm::cuda_stream s = rmm::cuda_stream::flags::non_blocking;` compile.
  cuda_stream(flags fl = flags::sync_default)  // NOLINT(google-explicit-constructor)
  {
    rmm_stream_t created = nullptr;
    detail::check(rmm_stream_create(static_cast<std::uint32_t>(fl), &created));
    stream_ = detail::from_c_stream(created);
  }

  /// @brief Destroys the owned stream, if any (its pending work still completes).
  ~cuda_stream() noexcept { destroy(); }

  cuda_stream(cuda_stream const&)            = delete;
  cuda_stream& operator=(cuda_stream const&) = delete;

  /**
   * @brief Takes ownership of @p other's stream; @p other is left owning none.
   * @param other The stream to move from
   */
  cuda_stream(cuda_stream&& other) noexcept : stream_{std::exchange(other.stream_, nullptr)} {}

  /**
   * @brief Destroys the owned stream and takes ownership of @p other's.
   * @param other The stream to move from (left owning none)
   * @return *this
   */
  cuda_stream& operator=(cuda_stream&& other) noexcept
  {
    if (this != &other) {
      destroy();
      stream_ = std::exchange(other.stream_, nullptr);
    }
    return *this;
  }

  /**
   * @brief Whether this object owns a stream (false after being moved from).
   * @return true when a stream is owned
   */
  [[nodiscard]] bool is_valid() const noexcept { return stream_ != nullptr; }

  /**
   * @brief The owned stream handle.
   * @return The handle (null after being moved from)
   */
  [[nodiscard]] detail::stream_type value() const noexcept { return stream_; }

  /**
   * @brief Explicit conversion to the stream handle (explicit as in RMM, so that comparing
   * two streams, or printing one, resolves through cuda_stream_view unambiguously).
   * @return The handle
   */
  explicit operator detail::stream_type() const noexcept { return value(); }

  /**
   * @brief A non-owning view of the owned stream.
   * @return The view
   */
  RMM_DETAIL_ALLOW_DEPRECATED_BEGIN
  [[nodiscard]] RMM_DETAIL_CUDA_STREAM_VIEW_DEPRECATED cuda_stream_view view() const noexcept
  {
    return cuda_stream_view{stream_};
  }

  /**
   * @brief Implicit conversion to a non-owning view.
   * @return The view
   */
  RMM_DETAIL_CUDA_STREAM_VIEW_DEPRECATED operator cuda_stream_view() const noexcept
  {
    return cuda_stream_view{stream_};
  }
  RMM_DETAIL_ALLOW_DEPRECATED_END

#if RMM_DETAIL_API_CUDA_STREAM_TO_STREAM_REF
  /**
   * @brief The owned stream as a CCCL `cuda::stream_ref` (RMM 26.06), e.g. for a resource's
   * stream-ordered `allocate(stream, bytes, alignment)`.
   * @return A reference to the stream
   */
  operator ::cuda::stream_ref() const noexcept { return ::cuda::stream_ref{value()}; }
#endif

  /**
   * @brief Waits until all work enqueued on the stream has completed.
   * @throws rmm::cuda_error when the runtime reports an error
   */
  void synchronize() const { detail::synchronize_arg(detail::stream_arg{value()}); }

  /**
   * @brief Waits for the stream, reporting a failure on stderr instead of throwing.
   */
  void synchronize_no_throw() const noexcept
  {
    detail::synchronize_arg_no_throw(detail::stream_arg{value()});
  }

 private:
  void destroy() noexcept
  {
    if (stream_ != nullptr) {
      if (rmm_stream_destroy(detail::to_c_stream(stream_)) != RMM_STATUS_SUCCESS) {
        std::fprintf(stderr, "rmm: stream destroy failed: %s\n", rmm_last_error_message());
      }
      stream_ = nullptr;
    }
  }

  detail::stream_type stream_{nullptr};
};

RMM_API_NAMESPACE_END
}  // namespace rmm
