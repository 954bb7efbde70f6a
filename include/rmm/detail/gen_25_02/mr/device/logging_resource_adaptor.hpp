/**
 * @file detail/gen_25_02/mr/device/logging_resource_adaptor.hpp
 * @brief Resource adaptor that logs every allocation and free as a CSV row (implemented by the
 * Rust core), in RMM's format: `Thread,Time,Action,Pointer,Size,Stream`.
 *
 * The destinations of RMM 25.02 are all offered: a file (by name, or `RMM_LOG_FILE`), a
 * std::ostream, or a list of rmm::sink_ptr (rmm/logger.hpp). The rows are written by the
 * Rust core in every case (one CSV writer); for a stream or sinks, the C++ side receives the
 * bytes through `rmm_logging_create_with_callback`.
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/detail/export.hpp>

#include <rmm/detail/check.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/error.hpp>
#include <rmm/logger.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/handle_resource.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/upstream_handle.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/upstream_resource.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>

#include <cstddef>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

namespace detail {

/**
 * @brief The sinks a logging_resource_adaptor writes to (on the heap, so that the address
 * given to the Rust core stays put), and the callback that feeds them.
 */
struct logging_sink_list {
  std::vector<rmm::sink_ptr> sinks;  ///< The destinations

  /**
   * @brief `rmm_log_write_fn` writing whole CSV rows to every sink (`data` null: flush).
   * @param data The bytes, or null to flush
   * @param len Number of bytes
   * @param arg The logging_sink_list
   */
  static void write(char const* data, std::size_t len, void* arg) noexcept
  {
    auto* self = static_cast<logging_sink_list*>(arg);
    for (auto const& s : self->sinks) {
      if (!s) { continue; }
      try {
        if (data == nullptr) {
          rmm::detail::impl_of(*s).flush();
        } else {
          rmm::detail::impl_of(*s).write_raw(std::string_view{data, len});
        }
      } catch (...) {
        // A sink that throws loses the rows; nothing may unwind into the Rust core.
      }
    }
  }
};

/**
 * @brief Owns the logging_sink_list; a base of logging_resource_adaptor placed before
 * handle_resource so that the list exists before, and outlives, the Rust adaptor's handle.
 */
class logging_sink_holder {
 public:
  /**
   * @brief Keeps @p sinks.
   * @param sinks The destinations (may be empty: file and ostream adaptors)
   */
  explicit logging_sink_holder(std::vector<rmm::sink_ptr> sinks)
    : list_{std::make_unique<logging_sink_list>(logging_sink_list{std::move(sinks)})}
  {
  }

  /// @brief The list (stable address). @return The list
  [[nodiscard]] logging_sink_list* sink_list() const noexcept { return list_.get(); }

 private:
  std::unique_ptr<logging_sink_list> list_;
};

/// @brief `rmm_log_write_fn` writing to a std::ostream (`data` null: flush).
/// @param data The bytes, or null to flush @param len Number of bytes @param arg The ostream
inline void write_log_to_ostream(char const* data, std::size_t len, void* arg) noexcept
{
  auto* os = static_cast<std::ostream*>(arg);
  try {
    if (data == nullptr) {
      os->flush();
    } else {
      os->write(data, static_cast<std::streamsize>(len));
    }
  } catch (...) {
    // An ostream that throws loses the rows; nothing may unwind into the Rust core.
  }
}

}  // namespace detail

/**
 * @brief Logs each allocation (`allocate` / `allocate failure`) and free of its upstream as a
 * CSV row that RMM's replay benchmark and `rmm-replay` read.
 *
 * Rows are buffered; they are written on flush(), on destruction and at process exit, or
 * after every row with `auto_flush`. Safe for concurrent use (rows are never torn). The
 * upstream (and an ostream or sinks given) must outlive this resource. Not copyable or
 * movable (RMM 25.02's is movable; `auto mr = logging_resource_adaptor{...};` works anyway).
 *
 * @tparam Upstream Type of the upstream resource
 */
template <typename Upstream>
class logging_resource_adaptor final : private detail::logging_sink_holder,
                                       public detail::upstream_resource<Upstream> {
 public:
  /**
   * @brief Logs to @p filename (created or truncated).
   * @param upstream The upstream resource (not owned; must outlive the adaptor)
   * @param filename The log file; by default the value of `RMM_LOG_FILE`
   * @param auto_flush Flush after every row (slower)
   * @throws rmm::logic_error when @p upstream is null, `RMM_LOG_FILE` is unset and no file
   * is given, or the file cannot be opened (the message names it)
   */
  logging_resource_adaptor(Upstream* upstream,
                           std::string const& filename = get_default_filename(),
                           bool auto_flush             = false)
    : detail::logging_sink_holder{{}},
      detail::upstream_resource<Upstream>{upstream, &create_file, filename.c_str(), auto_flush}
  {
  }

  /**
   * @brief Logs to @p stream.
   * @param upstream The upstream resource (not owned; must outlive the adaptor)
   * @param stream Receives the CSV text (must outlive the adaptor)
   * @param auto_flush Flush after every row (slower)
   * @throws rmm::logic_error when @p upstream is null
   */
  logging_resource_adaptor(Upstream* upstream, std::ostream& stream, bool auto_flush = false)
    : detail::logging_sink_holder{{}},
      detail::upstream_resource<Upstream>{upstream, &create_stream, &stream, auto_flush}
  {
  }

  /**
   * @brief Logs to every sink of @p sinks (each receives the CSV text, header first).
   * @param upstream The upstream resource (not owned; must outlive the adaptor)
   * @param sinks The destinations, e.g. `{std::make_shared<rmm::basic_file_sink_mt>(f, true)}`
   * @param auto_flush Flush after every row (slower)
   * @throws rmm::logic_error when @p upstream is null
   */
  logging_resource_adaptor(Upstream* upstream,
                           std::initializer_list<sink_ptr> sinks,
                           bool auto_flush = false)
    : detail::logging_sink_holder{std::vector<sink_ptr>{sinks}},
      detail::upstream_resource<Upstream>{upstream, &create_sinks, sink_list(), auto_flush}
  {
  }

  /**
   * @brief Logs to @p filename (created or truncated).
   * @param upstream The upstream resource (must outlive the adaptor)
   * @param filename The log file; by default the value of `RMM_LOG_FILE`
   * @param auto_flush Flush after every row (slower)
   * @throws rmm::logic_error when `RMM_LOG_FILE` is unset and no file is given, or the file
   * cannot be opened
   */
  logging_resource_adaptor(device_async_resource_ref upstream,
                           std::string const& filename = get_default_filename(),
                           bool auto_flush             = false)
    : detail::logging_sink_holder{{}},
      detail::upstream_resource<Upstream>{upstream, &create_file, filename.c_str(), auto_flush}
  {
  }

  /**
   * @brief Logs to @p stream.
   * @param upstream The upstream resource (must outlive the adaptor)
   * @param stream Receives the CSV text (must outlive the adaptor)
   * @param auto_flush Flush after every row (slower)
   */
  logging_resource_adaptor(device_async_resource_ref upstream,
                           std::ostream& stream,
                           bool auto_flush = false)
    : detail::logging_sink_holder{{}},
      detail::upstream_resource<Upstream>{upstream, &create_stream, &stream, auto_flush}
  {
  }

  /**
   * @brief Logs to every sink of @p sinks.
   * @param upstream The upstream resource (must outlive the adaptor)
   * @param sinks The destinations
   * @param auto_flush Flush after every row (slower)
   */
  logging_resource_adaptor(device_async_resource_ref upstream,
                           std::initializer_list<sink_ptr> sinks,
                           bool auto_flush = false)
    : detail::logging_sink_holder{std::vector<sink_ptr>{sinks}},
      detail::upstream_resource<Upstream>{upstream, &create_sinks, sink_list(), auto_flush}
  {
  }

  /**
   * @brief Writes buffered rows out.
   */
  void flush() { rmm::detail::check(rmm_logging_flush(this->handle())); }

  /**
   * @brief The CSV header.
   * @return `Thread,Time,Action,Pointer,Size,Stream`
   */
  [[nodiscard]] std::string header() const
  {
    return std::string{"Thread,Time,Action,Pointer,Size,Stream"};
  }

  /**
   * @brief The value of `RMM_LOG_FILE`.
   * @return The file name
   * @throws rmm::logic_error when `RMM_LOG_FILE` is unset
   */
  static std::string get_default_filename()
  {
    auto* filename = std::getenv("RMM_LOG_FILE");
    RMM_EXPECTS(filename != nullptr && *filename != '\0',
                "RMM logging requested without an explicit file name, but RMM_LOG_FILE is unset");
    return std::string{filename};
  }

 private:
  static rmm_status_t create_file(rmm_resource_t upstream,
                                  char const* filename,
                                  bool auto_flush,
                                  rmm_resource_t* out)
  {
    return rmm_logging_create(upstream, filename, auto_flush ? 1 : 0, out);
  }

  static rmm_status_t create_stream(rmm_resource_t upstream,
                                    std::ostream* os,
                                    bool auto_flush,
                                    rmm_resource_t* out)
  {
    return rmm_logging_create_with_callback(
      upstream, &detail::write_log_to_ostream, static_cast<void*>(os), auto_flush ? 1 : 0, out);
  }

  static rmm_status_t create_sinks(rmm_resource_t upstream,
                                   detail::logging_sink_list* list,
                                   bool auto_flush,
                                   rmm_resource_t* out)
  {
    return rmm_logging_create_with_callback(upstream,
                                            &detail::logging_sink_list::write,
                                            static_cast<void*>(list),
                                            auto_flush ? 1 : 0,
                                            out);
  }
};

/**
 * @brief Makes a logging_resource_adaptor over @p upstream writing to @p filename (RMM 24.x;
 * removed in RMM 25.02, kept here deprecated).
 * @param upstream The upstream resource
 * @param filename The log file; by default the value of `RMM_LOG_FILE`
 * @param auto_flush Flush after every row
 * @return The adaptor
 */
template <typename Upstream>
[[deprecated(
  "make_logging_adaptor (deprecated since RMM 24.10, gone in 25.02): construct a "
  "logging_resource_adaptor directly")]] logging_resource_adaptor<Upstream>
make_logging_adaptor(
  Upstream* upstream,
  std::string const& filename = logging_resource_adaptor<Upstream>::get_default_filename(),
  bool auto_flush             = false)
{
  return logging_resource_adaptor<Upstream>{upstream, filename, auto_flush};
}

/**
 * @brief Makes a logging_resource_adaptor over @p upstream writing to @p stream (RMM 24.x;
 * removed in RMM 25.02, kept here deprecated).
 * @param upstream The upstream resource
 * @param stream Receives the CSV text
 * @param auto_flush Flush after every row
 * @return The adaptor
 */
template <typename Upstream>
[[deprecated(
  "make_logging_adaptor (deprecated since RMM 24.10, gone in 25.02): construct a "
  "logging_resource_adaptor directly")]] logging_resource_adaptor<Upstream>
make_logging_adaptor(Upstream* upstream, std::ostream& stream, bool auto_flush = false)
{
  return logging_resource_adaptor<Upstream>{upstream, stream, auto_flush};
}

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
