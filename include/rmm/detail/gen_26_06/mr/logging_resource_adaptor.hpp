/**
 * @file detail/gen_26_06/mr/logging_resource_adaptor.hpp
 * @brief RMM 26.06's `rmm::mr::logging_resource_adaptor`: a CSV row per allocation and free
 * of its upstream, written by librmm's logging adaptor.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/detail/error.hpp>
#include <rmm/logger.hpp>
#include <rmm/detail/gen_26_06/mr/detail/resource_bases.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>

#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief Where the rows of a stream or sink adaptor go: an ostream or a list of sinks, on the
 * heap of the impl, which outlives librmm's use of it.
 */
struct logging_destination {
  std::ostream* stream{nullptr};     ///< The ostream, or null
  std::vector<rmm::sink_ptr> sinks;  ///< The sinks (when no ostream)

  /**
   * @brief `rmm_log_write_fn`: whole rows (`data` null: flush). Never unwinds.
   * @param data The bytes, or null
   * @param len Their number
   * @param arg The logging_destination
   */
  static void write(char const* data, std::size_t len, void* arg) noexcept
  {
    auto* self = static_cast<logging_destination*>(arg);
    try {
      if (self->stream != nullptr) {
        if (data == nullptr) {
          self->stream->flush();
        } else {
          self->stream->write(data, static_cast<std::streamsize>(len));
        }
        return;
      }
      for (auto const& s : self->sinks) {
        if (!s) { continue; }
        if (data == nullptr) {
          rmm::detail::impl_of(*s).flush();
        } else {
          rmm::detail::impl_of(*s).write_raw(std::string_view{data, len});
        }
      }
    } catch (...) {
      // A destination that throws loses the rows: nothing may unwind into librmm.
    }
  }
};

/**
 * @brief The shared state of a logging_resource_adaptor.
 */
class logging_resource_adaptor_impl final : private std::unique_ptr<logging_destination>,
                                            public adaptor_impl_base {
  using destination_ptr = std::unique_ptr<logging_destination>;

 public:
  /**
   * @brief Logs to the file @p filename.
   * @param upstream The upstream
   * @param filename The file (created or truncated)
   * @param auto_flush Whether every row is flushed
   */
  logging_resource_adaptor_impl(any_device_resource upstream,
                                std::string const& filename,
                                bool auto_flush)
    : destination_ptr{},
      adaptor_impl_base{
        std::move(upstream), "logging_resource_adaptor(upstream, ...)", [&](rmm_resource_t up) {
          return make_handle(rmm_logging_create, up, filename.c_str(), auto_flush ? 1 : 0);
        }}
  {
  }

  /**
   * @brief Logs to @p destination (an ostream or sinks).
   * @param upstream The upstream
   * @param destination Where rows go
   * @param auto_flush Whether every row is flushed
   */
  logging_resource_adaptor_impl(any_device_resource upstream,
                                std::unique_ptr<logging_destination> destination,
                                bool auto_flush)
    : destination_ptr{std::move(destination)},
      adaptor_impl_base{
        std::move(upstream), "logging_resource_adaptor(upstream, ...)", [&](rmm_resource_t up) {
          return make_handle(rmm_logging_create_with_callback,
                             up,
                             &logging_destination::write,
                             static_cast<void*>(destination_ptr::get()),
                             auto_flush ? 1 : 0);
        }}
  {
  }

  /// @brief Writes the buffered rows out.
  void flush() { rmm::detail::check(rmm_logging_flush(handle())); }
};

}  // namespace detail

/**
 * @brief Logs every allocation and free of its upstream as a CSV row (the format RMM's replay
 * tools read). Copies share one adaptor and one log.
 */
class RMM_EXPORT logging_resource_adaptor
  : public detail::shared_adaptor<detail::logging_resource_adaptor_impl> {
 public:
  /**
   * @brief Logs to a file.
   * @param upstream The upstream
   * @param filename The file; by default `RMM_LOG_FILE`'s value
   * @param auto_flush Whether every row is flushed at once
   * @throws rmm::logic_error when no file name is given and RMM_LOG_FILE is unset, or the
   * file cannot be created
   */
  logging_resource_adaptor(cuda::mr::any_resource<cuda::mr::device_accessible> upstream,
                           std::string const& filename = get_default_filename(),
                           bool auto_flush             = false)
    : shared_adaptor{std::in_place, std::move(upstream), filename, auto_flush}
  {
  }

  /**
   * @brief Logs to @p stream (which must outlive the adaptor).
   * @param upstream The upstream
   * @param stream The destination
   * @param auto_flush Whether every row is flushed at once
   */
  logging_resource_adaptor(cuda::mr::any_resource<cuda::mr::device_accessible> upstream,
                           std::ostream& stream,
                           bool auto_flush = false)
    : shared_adaptor{
        std::in_place,
        std::move(upstream),
        std::make_unique<detail::logging_destination>(detail::logging_destination{&stream, {}}),
        auto_flush}
  {
  }

  /**
   * @brief Logs to every sink of @p sinks.
   * @param upstream The upstream
   * @param sinks The destinations
   * @param auto_flush Whether every row is flushed at once
   */
  logging_resource_adaptor(cuda::mr::any_resource<cuda::mr::device_accessible> upstream,
                           std::initializer_list<rmm::sink_ptr> sinks,
                           bool auto_flush = false)
    : shared_adaptor{std::in_place,
                     std::move(upstream),
                     std::make_unique<detail::logging_destination>(
                       detail::logging_destination{nullptr, std::vector<rmm::sink_ptr>{sinks}}),
                     auto_flush}
  {
  }

  /// @brief Writes the buffered rows out.
  void flush() { get().flush(); }

  /**
   * @brief The CSV header line.
   * @return "Thread,Time,Action,Pointer,Size,Stream"
   */
  [[nodiscard]] std::string header() const
  {
    return std::string{"Thread,Time,Action,Pointer,Size,Stream"};
  }

  /**
   * @brief The value of `RMM_LOG_FILE`.
   * @return The file name
   * @throws rmm::logic_error when RMM_LOG_FILE is unset or empty
   */
  static std::string get_default_filename()
  {
    char const* filename = std::getenv("RMM_LOG_FILE");
    RMM_EXPECTS(filename != nullptr && *filename != '\0',
                "RMM logging requested without an explicit file name, but RMM_LOG_FILE is unset; "
                "pass a file name or set RMM_LOG_FILE");
    return std::string{filename};
  }
};

static_assert(cuda::mr::resource_with<logging_resource_adaptor, cuda::mr::device_accessible>);

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
