/**
 * @file logging_resource_adaptor.hpp
 * @brief Resource adaptor that logs every allocation and free to a CSV file (implemented by
 * the Rust core), in RMM's format: `Thread,Time,Action,Pointer,Size,Stream`.
 */
#pragma once

#include <rmm/detail/check.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/device/detail/handle_resource.hpp>
#include <rmm/mr/device/detail/upstream_handle.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/rmm.h>

#include <cstddef>
#include <cstdlib>
#include <ostream>
#include <string>
#include <type_traits>

namespace rmm::mr {

/**
 * @brief Logs each allocation (`allocate` / `allocate failure`) and free of @p Upstream as a
 * CSV row that RMM's replay benchmark and `rmm-replay` read.
 *
 * Rows are buffered; they are written on flush(), on destruction and at process exit, or
 * after every row with `auto_flush`. Safe for concurrent use (rows are never torn). The
 * upstream (and an ostream given) must outlive this resource. Not copyable or movable.
 *
 * @tparam Upstream Type of the upstream resource (a device_memory_resource)
 */
template <typename Upstream>
class logging_resource_adaptor final : private detail::upstream_handle_holder,
                                       public detail::handle_resource {
  static_assert(std::is_base_of_v<device_memory_resource, Upstream>,
                "Upstream must derive from rmm::mr::device_memory_resource");

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
    : detail::upstream_handle_holder{upstream},
      handle_resource{detail::adopt_handle, create_file(upstream_handle(), filename, auto_flush)},
      upstream_{upstream}
  {
  }

  /**
   * @brief Logs to @p stream (RMM's ostream constructor).
   * @param upstream The upstream resource (not owned; must outlive the adaptor)
   * @param stream Receives the CSV text (must outlive the adaptor)
   * @param auto_flush Flush after every row (slower)
   * @throws rmm::logic_error when @p upstream is null
   */
  logging_resource_adaptor(Upstream* upstream, std::ostream& stream, bool auto_flush = false)
    : detail::upstream_handle_holder{upstream},
      handle_resource{detail::adopt_handle,
                      create_stream(upstream_handle(), &stream, auto_flush)},
      upstream_{upstream}
  {
  }

  logging_resource_adaptor(logging_resource_adaptor const&)            = delete;
  logging_resource_adaptor(logging_resource_adaptor&&)                 = delete;
  logging_resource_adaptor& operator=(logging_resource_adaptor const&) = delete;
  logging_resource_adaptor& operator=(logging_resource_adaptor&&)      = delete;
  ~logging_resource_adaptor() override                                 = default;

  /**
   * @brief The upstream resource given at construction.
   * @return The upstream
   */
  [[nodiscard]] Upstream* get_upstream() const noexcept { return upstream_; }

  /**
   * @brief The upstream resource given at construction.
   * @return The upstream
   */
  [[nodiscard]] Upstream* get_upstream_resource() const noexcept { return upstream_; }

  /**
   * @brief Writes buffered rows out.
   */
  void flush() { rmm::detail::check(rmm_logging_flush(handle())); }

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
  static rmm_resource_t create_file(rmm_resource_t upstream,
                                    std::string const& filename,
                                    bool auto_flush)
  {
    rmm_resource_t out = nullptr;
    rmm::detail::check(
      rmm_logging_create(upstream, filename.c_str(), auto_flush ? 1 : 0, &out));
    return out;
  }

  static void write_to_ostream(char const* data, std::size_t len, void* arg) noexcept
  {
    auto* os = static_cast<std::ostream*>(arg);
    try {
      if (data == nullptr) {
        os->flush();
      } else {
        os->write(data, static_cast<std::streamsize>(len));
      }
    } catch (...) {
      // An ostream that throws loses the row; nothing may unwind into the Rust core.
    }
  }

  static rmm_resource_t create_stream(rmm_resource_t upstream, std::ostream* os, bool auto_flush)
  {
    rmm_resource_t out = nullptr;
    rmm::detail::check(rmm_logging_create_with_callback(
      upstream, &write_to_ostream, static_cast<void*>(os), auto_flush ? 1 : 0, &out));
    return out;
  }

  Upstream* upstream_;
};

}  // namespace rmm::mr
