/**
 * @file cuda_stream_pool.hpp
 * @brief A fixed-size pool of owned streams handed out round robin (RMM's
 * `rmm::cuda_stream_pool`).
 */
#pragma once

#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/stream_arg.hpp>
#include <rmm/error.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>

#include <atomic>
#include <cstddef>
#include <vector>

namespace rmm {
RMM_API_NAMESPACE_BEGIN

/**
 * @brief Owns a fixed number of streams, created at construction, and returns views of them
 * in round-robin order. `get_stream()` may be called from several threads at once.
 */
class cuda_stream_pool {
 public:
  /// @brief The number of streams of a default-constructed pool.
  static constexpr std::size_t default_size{16};

  /**
   * @brief Creates @p pool_size streams on the current device.
   * @param pool_size Number of streams (at least 1)
   * @param fl Creation flags of every stream
   * @throws rmm::logic_error when @p pool_size is 0
   * @throws rmm::cuda_error when a stream cannot be created
   */
  explicit cuda_stream_pool(std::size_t pool_size = default_size,
                            cuda_stream::flags fl = cuda_stream::flags::sync_default)
  {
    if (pool_size == 0) { throw rmm::logic_error{"Stream pool size must be greater than zero"}; }
    streams_.reserve(pool_size);
    for (std::size_t i = 0; i < pool_size; ++i) {
      streams_.emplace_back(fl);
    }
  }
  ~cuda_stream_pool() = default;

  cuda_stream_pool(cuda_stream_pool&&)                 = delete;
  cuda_stream_pool(cuda_stream_pool const&)            = delete;
  cuda_stream_pool& operator=(cuda_stream_pool&&)      = delete;
  cuda_stream_pool& operator=(cuda_stream_pool const&) = delete;

  /**
   * @brief The next stream of the pool, round robin. Thread-safe.
   * @return A view of a stream owned by the pool
   */
  [[nodiscard]] detail::stream_arg get_stream() const noexcept
  {
    std::size_t const index = next_.fetch_add(1, std::memory_order_relaxed);
    return streams_[index % streams_.size()].value();
  }

  /**
   * @brief The stream with index @p stream_id modulo the pool size.
   * @param stream_id Any index; taken modulo get_pool_size()
   * @return A view of a stream owned by the pool
   */
  [[nodiscard]] detail::stream_arg get_stream(std::size_t stream_id) const
  {
    return streams_[stream_id % streams_.size()].value();
  }

  /**
   * @brief The number of streams in the pool.
   * @return The pool size
   */
  [[nodiscard]] std::size_t get_pool_size() const noexcept { return streams_.size(); }

 private:
  std::vector<cuda_stream> streams_;
  mutable std::atomic<std::size_t> next_{0};
};

RMM_API_NAMESPACE_END
}  // namespace rmm
