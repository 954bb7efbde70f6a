/**
 * @file logger.hpp
 * @brief RMM's logger API, as RMM 25.02 declares it (the header rapids-logger generates for
 * the `rmm` namespace): `rmm::logger`, `rmm::level_enum`, the sinks (`basic_file_sink_mt`,
 * `ostream_sink_mt`, `null_sink_mt`, `stderr_sink_mt`, `callback_sink_mt`),
 * `rmm::default_logger()`, `rmm::log_level_setter` and the `RMM_LOG_*` macros.
 *
 * Implemented here, header-only, without spdlog: sinks are small thread-safe writers and
 * patterns use spdlog's flag syntax (`%v`, `%t`, `%H:%M:%S.%f`, `%l`, padding such as `%-6l`).
 *
 * The default logger is the library's debug log, which lives in the Rust core: its sink
 * (`default_sink()`) forwards messages through the C ABI (`rmm_debug_log`), and its level is
 * the core's (`rmm_set_debug_log_level` / `rmm_get_debug_log_level`). So C, C++ and Rust share
 * one destination (`RMM_DEBUG_LOG_FILE`, else stderr) and one level. The core formats those
 * lines itself (`[thread][HH:MM:SS:us][level] message`); set_pattern() affects the other sinks.
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/detail/check.hpp>
#include <rmm/rmm.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

// Level numbers (the same as spdlog's and as the C ABI's debug log levels).
#define RMM_LOG_LEVEL_TRACE    0
#define RMM_LOG_LEVEL_DEBUG    1
#define RMM_LOG_LEVEL_INFO     2
#define RMM_LOG_LEVEL_WARN     3
#define RMM_LOG_LEVEL_ERROR    4
#define RMM_LOG_LEVEL_CRITICAL 5
#define RMM_LOG_LEVEL_OFF      6

// The same numbers under rapids-logger's names, which RMM 25.10 builds use to pick the
// compile-time level (`-DRMM_LOG_ACTIVE_LEVEL=RAPIDS_LOGGER_LOG_LEVEL_INFO`).
#if !defined(RAPIDS_LOGGER_LOG_LEVEL_TRACE)
#define RAPIDS_LOGGER_LOG_LEVEL_TRACE    RMM_LOG_LEVEL_TRACE
#define RAPIDS_LOGGER_LOG_LEVEL_DEBUG    RMM_LOG_LEVEL_DEBUG
#define RAPIDS_LOGGER_LOG_LEVEL_INFO     RMM_LOG_LEVEL_INFO
#define RAPIDS_LOGGER_LOG_LEVEL_WARN     RMM_LOG_LEVEL_WARN
#define RAPIDS_LOGGER_LOG_LEVEL_ERROR    RMM_LOG_LEVEL_ERROR
#define RAPIDS_LOGGER_LOG_LEVEL_CRITICAL RMM_LOG_LEVEL_CRITICAL
#define RAPIDS_LOGGER_LOG_LEVEL_OFF      RMM_LOG_LEVEL_OFF
#endif

namespace rmm {
RMM_API_NAMESPACE_BEGIN

/**
 * @brief The severity levels of the logger.
 */
enum class level_enum : int32_t {
  trace    = RMM_LOG_LEVEL_TRACE,     ///< Everything
  debug    = RMM_LOG_LEVEL_DEBUG,     ///< Debugging detail
  info     = RMM_LOG_LEVEL_INFO,      ///< Informational messages (the default level)
  warn     = RMM_LOG_LEVEL_WARN,      ///< Warnings
  error    = RMM_LOG_LEVEL_ERROR,     ///< Errors
  critical = RMM_LOG_LEVEL_CRITICAL,  ///< Critical errors
  off      = RMM_LOG_LEVEL_OFF,       ///< Nothing
  n_levels                            ///< Number of levels
};

class logger;
class sink;
/// @brief Shared pointer to a sink (what a logger holds).
using sink_ptr = std::shared_ptr<sink>;

namespace detail {

class sink_impl;
sink_impl& impl_of(sink& s);

/**
 * @brief One message on its way to the sinks.
 */
struct log_record {
  level_enum level;                            ///< Severity
  std::string_view logger_name;                ///< Name of the logger
  std::string_view payload;                    ///< The message (already printf-formatted)
  std::chrono::system_clock::time_point time;  ///< When it was logged
  std::uint64_t thread_id;                     ///< OS thread id of the caller
};

/// @brief The calling thread's OS thread id (what spdlog's `%t` prints).
inline std::uint64_t os_thread_id() noexcept
{
#if defined(__linux__) && defined(SYS_gettid)
  return static_cast<std::uint64_t>(::syscall(SYS_gettid));
#else
  return static_cast<std::uint64_t>(std::hash<std::thread::id>{}(std::this_thread::get_id()));
#endif
}

/// @brief spdlog's full level names (`%l`).
inline std::string_view level_name(level_enum lvl) noexcept
{
  switch (lvl) {
    case level_enum::trace:
      return "trace";
    case level_enum::debug:
      return "debug";
    case level_enum::info:
      return "info";
    case level_enum::warn:
      return "warning";
    case level_enum::error:
      return "error";
    case level_enum::critical:
      return "critical";
    default:
      return "off";
  }
}

/// @brief spdlog's one-letter level names (`%L`).
inline std::string_view short_level_name(level_enum lvl) noexcept
{
  switch (lvl) {
    case level_enum::trace:
      return "T";
    case level_enum::debug:
      return "D";
    case level_enum::info:
      return "I";
    case level_enum::warn:
      return "W";
    case level_enum::error:
      return "E";
    case level_enum::critical:
      return "C";
    default:
      return "O";
  }
}

/// @brief Appends @p value in decimal, zero-padded to @p width digits.
inline void append_padded(std::string& out, long long value, int width)
{
  auto digits = std::to_string(value < 0 ? -value : value);
  if (value < 0) { out.push_back('-'); }
  for (auto n = static_cast<int>(digits.size()); n < width; ++n) {
    out.push_back('0');
  }
  out += digits;
}

/**
 * @brief Formats @p rec with an spdlog-style @p pattern and appends a newline.
 *
 * Supported flags: `%v` message, `%t` thread id, `%P` process id, `%n` logger name, `%l` /
 * `%L` level, `%Y %y %m %d %H %I %M %S %p %e %f %F %E %T %R %D %a %A %b %B`, `%+` (spdlog's
 * default pattern), `%%`, and `%^` / `%$` (colour range markers, printing nothing). Each may
 * carry a width with optional alignment (`%6t` right, `%-6l` left, `%=6l` centred) and `!` to
 * truncate. Unknown flags print as written.
 *
 * @param pattern The pattern
 * @param rec The record
 * @return The formatted line
 */
inline std::string format_record(std::string_view pattern, log_record const& rec)
{
  static constexpr char const* weekdays[]      = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr char const* full_weekdays[] = {
    "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};
  static constexpr char const* months[] = {
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  static constexpr char const* full_months[] = {"January",
                                                "February",
                                                "March",
                                                "April",
                                                "May",
                                                "June",
                                                "July",
                                                "August",
                                                "September",
                                                "October",
                                                "November",
                                                "December"};

  auto const since_epoch = rec.time.time_since_epoch();
  auto const secs        = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
  auto const nanos =
    std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch - secs).count();
  std::time_t const tt = static_cast<std::time_t>(secs.count());
  std::tm tm{};
  (void)::localtime_r(&tt, &tm);

  std::string out;
  out.reserve(pattern.size() + rec.payload.size() + 32);
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    char const c = pattern[i];
    if (c != '%' || i + 1 >= pattern.size()) {
      out.push_back(c);
      continue;
    }
    std::size_t j     = i + 1;
    char align        = '>';
    bool has_width    = false;
    std::size_t width = 0;
    bool truncate     = false;
    if (pattern[j] == '-' || pattern[j] == '=') {
      align = pattern[j] == '-' ? '<' : '=';
      ++j;
    }
    while (j < pattern.size() && pattern[j] >= '0' && pattern[j] <= '9') {
      has_width = true;
      width = std::min<std::size_t>(width * 10 + static_cast<std::size_t>(pattern[j] - '0'), 64);
      ++j;
    }
    if (has_width && j < pattern.size() && pattern[j] == '!') {
      truncate = true;
      ++j;
    }
    if (j >= pattern.size()) {
      out.append(pattern.substr(i));
      break;
    }
    char const flag = pattern[j];
    i               = j;

    std::string field;
    switch (flag) {
      case 'v':
        field.assign(rec.payload);
        break;
      case 't':
        field = std::to_string(rec.thread_id);
        break;
      case 'P':
#if defined(__linux__)
        field = std::to_string(static_cast<long long>(::getpid()));
#endif
        break;
      case 'n':
        field.assign(rec.logger_name);
        break;
      case 'l':
        field.assign(level_name(rec.level));
        break;
      case 'L':
        field.assign(short_level_name(rec.level));
        break;
      case 'Y':
        field = std::to_string(tm.tm_year + 1900);
        break;
      case 'y':
        append_padded(field, tm.tm_year % 100, 2);
        break;
      case 'm':
        append_padded(field, tm.tm_mon + 1, 2);
        break;
      case 'd':
        append_padded(field, tm.tm_mday, 2);
        break;
      case 'H':
        append_padded(field, tm.tm_hour, 2);
        break;
      case 'I':
        append_padded(field, tm.tm_hour % 12 == 0 ? 12 : tm.tm_hour % 12, 2);
        break;
      case 'M':
        append_padded(field, tm.tm_min, 2);
        break;
      case 'S':
        append_padded(field, tm.tm_sec, 2);
        break;
      case 'p':
        field = tm.tm_hour >= 12 ? "PM" : "AM";
        break;
      case 'e':
        append_padded(field, nanos / 1000000, 3);
        break;
      case 'f':
        append_padded(field, nanos / 1000, 6);
        break;
      case 'F':
        append_padded(field, nanos, 9);
        break;
      case 'E':
        field = std::to_string(static_cast<long long>(secs.count()));
        break;
      case 'a':
        field = weekdays[tm.tm_wday % 7];
        break;
      case 'A':
        field = full_weekdays[tm.tm_wday % 7];
        break;
      case 'b':
      case 'h':
        field = months[tm.tm_mon % 12];
        break;
      case 'B':
        field = full_months[tm.tm_mon % 12];
        break;
      case 'T':
        append_padded(field, tm.tm_hour, 2);
        field.push_back(':');
        append_padded(field, tm.tm_min, 2);
        field.push_back(':');
        append_padded(field, tm.tm_sec, 2);
        break;
      case 'R':
        append_padded(field, tm.tm_hour, 2);
        field.push_back(':');
        append_padded(field, tm.tm_min, 2);
        break;
      case 'D':
        append_padded(field, tm.tm_mon + 1, 2);
        field.push_back('/');
        append_padded(field, tm.tm_mday, 2);
        field.push_back('/');
        append_padded(field, tm.tm_year % 100, 2);
        break;
      case '+': {
        field.push_back('[');
        field += std::to_string(tm.tm_year + 1900);
        field.push_back('-');
        append_padded(field, tm.tm_mon + 1, 2);
        field.push_back('-');
        append_padded(field, tm.tm_mday, 2);
        field.push_back(' ');
        append_padded(field, tm.tm_hour, 2);
        field.push_back(':');
        append_padded(field, tm.tm_min, 2);
        field.push_back(':');
        append_padded(field, tm.tm_sec, 2);
        field.push_back('.');
        append_padded(field, nanos / 1000000, 3);
        field += "] [";
        field.append(rec.logger_name);
        field += "] [";
        field.append(level_name(rec.level));
        field += "] ";
        field.append(rec.payload);
        break;
      }
      case '%':
        field = "%";
        break;
      case '^':
      case '$':
        break;
      default:
        field.push_back('%');
        field.push_back(flag);
        break;
    }
    if (has_width) {
      if (field.size() > width && truncate) { field.resize(width); }
      if (field.size() < width) {
        auto const pad = width - field.size();
        if (align == '<') {
          field.append(pad, ' ');
        } else if (align == '=') {
          field.insert(0, pad / 2, ' ');
          field.append(pad - pad / 2, ' ');
        } else {
          field.insert(0, pad, ' ');
        }
      }
    }
    out += field;
  }
  out.push_back('\n');
  return out;
}

/**
 * @brief What a sink does: the base of the sink implementations. Every operation takes the
 * sink's mutex, so one sink may serve many loggers and threads (the `_mt` sinks).
 */
class sink_impl {
 public:
  sink_impl()                            = default;
  virtual ~sink_impl()                   = default;
  sink_impl(sink_impl const&)            = delete;
  sink_impl& operator=(sink_impl const&) = delete;
  sink_impl(sink_impl&&)                 = delete;
  sink_impl& operator=(sink_impl&&)      = delete;

  /**
   * @brief Formats @p rec with this sink's pattern and writes it.
   * @param rec The record
   */
  virtual void log(log_record const& rec)
  {
    std::lock_guard<std::mutex> lock{mutex_};
    auto const line = format_record(pattern_, rec);
    write(rec.level, line);
  }

  /**
   * @brief Writes @p text as is (whole lines, already formatted: the CSV rows of a
   * logging_resource_adaptor).
   * @param text The text
   */
  virtual void write_raw(std::string_view text)
  {
    std::lock_guard<std::mutex> lock{mutex_};
    write(level_enum::info, text);
  }

  /// @brief Writes buffered output out.
  virtual void flush()
  {
    std::lock_guard<std::mutex> lock{mutex_};
    flush_unlocked();
  }

  /**
   * @brief Sets the pattern of the lines this sink writes (spdlog flag syntax).
   * @param pattern The pattern
   */
  void set_pattern(std::string pattern)
  {
    std::lock_guard<std::mutex> lock{mutex_};
    pattern_ = std::move(pattern);
  }

 protected:
  /**
   * @brief Writes one formatted line (the mutex is held).
   * @param lvl Level of the line
   * @param text The line, newline included
   */
  virtual void write(level_enum lvl, std::string_view text) = 0;
  /// @brief Flushes (the mutex is held).
  virtual void flush_unlocked() = 0;

 private:
  std::mutex mutex_;
  std::string pattern_{"%+"};  // spdlog's default pattern for a fresh sink
};

/// @brief Writes to a C stream it owns (basic_file_sink_mt).
class file_sink_impl final : public sink_impl {
 public:
  file_sink_impl(std::string const& filename, bool truncate)
  {
    auto const parent = std::filesystem::path{filename}.parent_path();
    if (!parent.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(parent, ec);
    }
    file_ = std::fopen(filename.c_str(), truncate ? "wb" : "ab");
    if (file_ == nullptr) {
      throw std::runtime_error("Failed opening file " + filename + " for writing");
    }
  }
  ~file_sink_impl() override
  {
    if (file_ != nullptr) { (void)std::fclose(file_); }
  }
  file_sink_impl(file_sink_impl const&)            = delete;
  file_sink_impl& operator=(file_sink_impl const&) = delete;
  file_sink_impl(file_sink_impl&&)                 = delete;
  file_sink_impl& operator=(file_sink_impl&&)      = delete;

 protected:
  void write(level_enum, std::string_view text) override
  {
    (void)std::fwrite(text.data(), 1, text.size(), file_);
  }
  void flush_unlocked() override { (void)std::fflush(file_); }

 private:
  std::FILE* file_{nullptr};
};

/// @brief Writes to a C stream it does not own, flushing every line (stderr / stdout sinks).
class c_stream_sink_impl final : public sink_impl {
 public:
  explicit c_stream_sink_impl(std::FILE* file) : file_{file} {}

 protected:
  void write(level_enum, std::string_view text) override
  {
    (void)std::fwrite(text.data(), 1, text.size(), file_);
    (void)std::fflush(file_);
  }
  void flush_unlocked() override { (void)std::fflush(file_); }

 private:
  std::FILE* file_;
};

/// @brief Writes to a std::ostream (ostream_sink_mt).
class ostream_sink_impl final : public sink_impl {
 public:
  ostream_sink_impl(std::ostream& os, bool force_flush) : os_{os}, force_flush_{force_flush} {}

 protected:
  void write(level_enum, std::string_view text) override
  {
    os_.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (force_flush_) { os_.flush(); }
  }
  void flush_unlocked() override { os_.flush(); }

 private:
  std::ostream& os_;
  bool force_flush_;
};

/// @brief Discards everything (null_sink_mt).
class null_sink_impl final : public sink_impl {
 public:
  void log(log_record const&) override {}
  void write_raw(std::string_view) override {}
  void flush() override {}

 protected:
  void write(level_enum, std::string_view) override {}
  void flush_unlocked() override {}
};

/// @brief Calls a function with each line (callback_sink_mt).
class callback_sink_impl final : public sink_impl {
 public:
  callback_sink_impl(void (*callback)(int, char const*), void (*flush)())
    : callback_{callback}, flush_{flush}
  {
  }

 protected:
  void write(level_enum lvl, std::string_view text) override
  {
    std::string const line{text};
    if (callback_ != nullptr) {
      callback_(static_cast<int>(lvl), line.c_str());
    } else {
      std::cout << line;
    }
  }
  void flush_unlocked() override
  {
    if (flush_ != nullptr) {
      flush_();
    } else {
      std::cout << std::flush;
    }
  }

 private:
  void (*callback_)(int, char const*);
  void (*flush_)();
};

/**
 * @brief Forwards to the debug log of the Rust core (which formats, filters by its level and
 * writes to `RMM_DEBUG_LOG_FILE` or stderr): the sink of the default logger.
 */
class core_sink_impl final : public sink_impl {
 public:
  void log(log_record const& rec) override
  {
    std::string const msg{rec.payload};
    (void)rmm_debug_log(static_cast<int>(rec.level), msg.c_str());
  }
  void write_raw(std::string_view text) override
  {
    // Whole lines: one debug-log message each, without the newline.
    while (!text.empty()) {
      auto const nl = text.find('\n');
      std::string const line{text.substr(0, nl)};
      (void)rmm_debug_log(static_cast<int>(level_enum::info), line.c_str());
      if (nl == std::string_view::npos) { break; }
      text.remove_prefix(nl + 1);
    }
  }
  void flush() override { (void)rmm_debug_log_flush(); }

 protected:
  void write(level_enum, std::string_view) override {}
  void flush_unlocked() override {}
};

/**
 * @brief Parses a level name as the `RMM_DEFAULT_LOGGING_LEVEL` / `RMM_DEFAULT_FLUSH_LEVEL`
 * variables spell it (`TRACE`, `DEBUG`, `INFO`, `WARN`, `ERROR`, `CRITICAL`, `OFF`).
 * @param name The name
 * @return The level
 * @throws std::invalid_argument for any other name
 */
inline level_enum string_to_level(std::string_view name)
{
  if (name == "TRACE") { return level_enum::trace; }
  if (name == "DEBUG") { return level_enum::debug; }
  if (name == "INFO") { return level_enum::info; }
  if (name == "WARN") { return level_enum::warn; }
  if (name == "ERROR") { return level_enum::error; }
  if (name == "CRITICAL") { return level_enum::critical; }
  if (name == "OFF") { return level_enum::off; }
  throw std::invalid_argument("Invalid logging level: " + std::string{name});
}

/**
 * @brief The state of a logger (kept behind a pointer so that loggers can move).
 */
class logger_impl {
 public:
  explicit logger_impl(std::string logger_name) : name{std::move(logger_name)} {}

  std::string name;                                 ///< Name (`%n`)
  std::atomic<int> level{RMM_LOG_LEVEL_INFO};       ///< Level (unless core-bound)
  std::atomic<int> flush_level{RMM_LOG_LEVEL_OFF};  ///< Flush on this level and above
  bool core_bound{false};  ///< Level kept by the Rust core (the default logger)
};

/**
 * @brief The file name RMM (up to 24.12) used for the debug log: `RMM_DEBUG_LOG_FILE`, else
 * `rmm_log.txt`. (RMM 25.02 logs to stderr when the variable is unset, as this library does.)
 * @return The file name
 */
inline std::string default_log_filename()
{
  auto* filename = std::getenv("RMM_DEBUG_LOG_FILE");
  return (filename == nullptr) ? std::string{"rmm_log.txt"} : std::string{filename};
}

}  // namespace detail

/**
 * @brief A logger: a name, a level, a flush level and a set of sinks.
 *
 * Messages use printf-style formats (RMM 25.02 / rapids-logger). Logging is thread-safe;
 * changing the set of sinks while other threads log is not (as with spdlog).
 */
class logger {
 public:
  logger()                         = delete;  ///< Not default constructible
  logger(logger const&)            = delete;  ///< Not copy constructible
  logger& operator=(logger const&) = delete;  ///< Not copy assignable

  /**
   * @brief Takes over the state and sinks of @p other.
   * @param other The logger to move from (left without state)
   */
  logger(logger&& other)
    : impl{std::move(other.impl)}, sinks_{*this, std::move(other.sinks_.sinks_)}
  {
  }

  /**
   * @brief Takes over the state and sinks of @p other.
   * @param other The logger to move from (left without state)
   * @return This logger
   */
  logger& operator=(logger&& other)
  {
    impl = std::move(other.impl);
    sinks_.clear();
    for (auto const& s : other.sinks_) {
      sinks_.push_back(s);
    }
    return *this;
  }

  /**
   * @brief The sinks of a logger, with vector-like operations.
   */
  class sink_vector {
   public:
    using Iterator      = std::vector<sink_ptr>::iterator;        ///< The iterator type
    using ConstIterator = std::vector<sink_ptr>::const_iterator;  ///< The const iterator type

    /**
     * @brief Makes the sink list of @p parent.
     * @param parent The logger owning the list
     * @param sinks The initial sinks
     */
    explicit sink_vector(logger& parent, std::vector<sink_ptr> sinks = {})
      : parent{&parent}, sinks_{std::move(sinks)}
    {
    }

    /// @brief Adds a sink. @param sink The sink
    void push_back(sink_ptr const& sink) { sinks_.push_back(sink); }
    /// @brief Adds a sink. @param sink The sink
    void push_back(sink_ptr&& sink) { sinks_.push_back(std::move(sink)); }
    /// @brief Removes the last sink.
    void pop_back() { sinks_.pop_back(); }
    /// @brief Removes every sink.
    void clear() { sinks_.clear(); }

    /// @brief Begin iterator. @return The iterator
    Iterator begin() { return sinks_.begin(); }
    /// @brief End iterator. @return The iterator
    Iterator end() { return sinks_.end(); }
    /// @brief Begin iterator. @return The iterator
    [[nodiscard]] ConstIterator begin() const { return sinks_.begin(); }
    /// @brief End iterator. @return The iterator
    [[nodiscard]] ConstIterator end() const { return sinks_.end(); }
    /// @brief Begin iterator. @return The iterator
    [[nodiscard]] ConstIterator cbegin() const { return sinks_.cbegin(); }
    /// @brief End iterator. @return The iterator
    [[nodiscard]] ConstIterator cend() const { return sinks_.cend(); }

    /// @brief Number of sinks. @return The count
    [[nodiscard]] std::size_t size() const noexcept { return sinks_.size(); }
    /// @brief Whether there are no sinks. @return True when empty
    [[nodiscard]] bool empty() const noexcept { return sinks_.empty(); }
    /// @brief The sink at @p i. @param i Index @return The sink
    [[nodiscard]] sink_ptr const& operator[](std::size_t i) const { return sinks_[i]; }

    /// @brief The logger owning this list. @return The logger
    [[nodiscard]] logger& owner() const noexcept { return *parent; }

   private:
    friend class logger;
    logger* parent;                ///< The logger this list belongs to
    std::vector<sink_ptr> sinks_;  ///< The sinks
  };

  /**
   * @brief Formats a message printf-style and logs it at @p lvl.
   *
   * `std::string` arguments are passed as their `c_str()`.
   *
   * @param lvl The level
   * @param format printf-style format
   * @param args The arguments
   * @throws std::runtime_error when formatting fails
   */
  template <typename... Args>
  void log(level_enum lvl, std::string const& format, Args&&... args)
  {
    if (!should_log(lvl)) { return; }
    auto as_c_arg = [](auto&& arg) -> decltype(auto) {
      using arg_t = std::decay_t<decltype(arg)>;
      if constexpr (std::is_same_v<arg_t, std::string>) {
        return arg.c_str();
      } else {
        return std::forward<decltype(arg)>(arg);
      }
    };
    // NOLINTBEGIN(cppcoreguidelines-pro-type-vararg)
    int const needed = std::snprintf(nullptr, 0, format.c_str(), as_c_arg(args)...);
    if (needed < 0) { throw std::runtime_error("Error during formatting."); }
    std::string buf(static_cast<std::size_t>(needed) + 1, '\0');
    (void)std::snprintf(buf.data(), buf.size(), format.c_str(), as_c_arg(args)...);
    // NOLINTEND(cppcoreguidelines-pro-type-vararg)
    buf.resize(static_cast<std::size_t>(needed));
    log(lvl, buf);
  }

  /// @brief Logs at trace level. @param format printf-style format @param args Arguments
  template <typename... Args>
  void trace(std::string const& format, Args&&... args)
  {
    log(level_enum::trace, format, std::forward<Args>(args)...);
  }
  /// @brief Logs at debug level. @param format printf-style format @param args Arguments
  template <typename... Args>
  void debug(std::string const& format, Args&&... args)
  {
    log(level_enum::debug, format, std::forward<Args>(args)...);
  }
  /// @brief Logs at info level. @param format printf-style format @param args Arguments
  template <typename... Args>
  void info(std::string const& format, Args&&... args)
  {
    log(level_enum::info, format, std::forward<Args>(args)...);
  }
  /// @brief Logs at warn level. @param format printf-style format @param args Arguments
  template <typename... Args>
  void warn(std::string const& format, Args&&... args)
  {
    log(level_enum::warn, format, std::forward<Args>(args)...);
  }
  /// @brief Logs at error level. @param format printf-style format @param args Arguments
  template <typename... Args>
  void error(std::string const& format, Args&&... args)
  {
    log(level_enum::error, format, std::forward<Args>(args)...);
  }
  /// @brief Logs at critical level. @param format printf-style format @param args Arguments
  template <typename... Args>
  void critical(std::string const& format, Args&&... args)
  {
    log(level_enum::critical, format, std::forward<Args>(args)...);
  }

  /**
   * @brief A logger writing to @p filename (created or truncated).
   * @param name The logger's name
   * @param filename The log file
   * @throws std::runtime_error when the file cannot be opened
   */
  logger(std::string name, std::string filename) : logger{std::move(name), std::vector<sink_ptr>{}}
  {
    sinks_.push_back(make_file_sink(filename));
  }

  /**
   * @brief A logger writing to @p stream.
   * @param name The logger's name
   * @param stream The stream (must outlive the logger)
   */
  logger(std::string name, std::ostream& stream) : logger{std::move(name), std::vector<sink_ptr>{}}
  {
    sinks_.push_back(make_ostream_sink(stream));
  }

  /**
   * @brief A logger writing to @p sinks.
   *
   * Reads `RMM_DEFAULT_LOGGING_LEVEL` and `RMM_DEFAULT_FLUSH_LEVEL` (`TRACE` .. `OFF`) as its
   * initial level and flush level, as RMM 25.02's loggers do.
   *
   * @param name The logger's name
   * @param sinks The sinks
   * @throws std::invalid_argument when one of those variables names no level
   */
  logger(std::string name, std::vector<sink_ptr> sinks)
    : impl{std::make_unique<detail::logger_impl>(std::move(name))}, sinks_{*this, std::move(sinks)}
  {
    if (auto const* lvl = std::getenv("RMM_DEFAULT_LOGGING_LEVEL"); lvl != nullptr) {
      set_level(detail::string_to_level(lvl));
    }
    if (auto const* lvl = std::getenv("RMM_DEFAULT_FLUSH_LEVEL"); lvl != nullptr) {
      flush_on(detail::string_to_level(lvl));
    }
  }

  /**
   * @brief A logger writing to @p sinks (also accepts a braced list of sinks).
   * @param name The logger's name
   * @param sinks The sinks
   */
  logger(std::string name, std::initializer_list<sink_ptr> sinks)
    : logger{std::move(name), std::vector<sink_ptr>{sinks}}
  {
  }

  ~logger() = default;

  /**
   * @brief Logs @p message (not formatted) at @p lvl.
   * @param lvl The level
   * @param message The message
   */
  void log(level_enum lvl, std::string const& message)
  {
    if (!should_log(lvl)) { return; }
    detail::log_record const rec{
      lvl, impl->name, message, std::chrono::system_clock::now(), detail::os_thread_id()};
    for (auto const& s : sinks_) {
      detail::impl_of(*s).log(rec);
    }
    if (lvl != level_enum::off && static_cast<int>(lvl) >= impl->flush_level.load()) { flush(); }
  }

  /// @brief The sinks. @return The sink list
  [[nodiscard]] sink_vector const& sinks() const { return sinks_; }
  /// @brief The sinks. @return The sink list
  sink_vector& sinks() { return sinks_; }

  /**
   * @brief The level below which messages are dropped.
   * @return The level
   */
  [[nodiscard]] level_enum level() const
  {
    if (impl->core_bound) {
      int lvl = RMM_LOG_LEVEL_INFO;
      rmm::detail::check(rmm_get_debug_log_level(&lvl));
      return static_cast<level_enum>(lvl);
    }
    return static_cast<level_enum>(impl->level.load());
  }

  /**
   * @brief Sets the level below which messages are dropped.
   * @param log_level The level
   */
  void set_level(level_enum log_level)
  {
    if (impl->core_bound) {
      rmm::detail::check(rmm_set_debug_log_level(static_cast<int>(log_level)));
    } else {
      impl->level.store(static_cast<int>(log_level));
    }
  }

  /// @brief Writes out what the sinks buffer.
  void flush()
  {
    for (auto const& s : sinks_) {
      detail::impl_of(*s).flush();
    }
  }

  /**
   * @brief Flushes after every message of @p log_level or above.
   * @param log_level The level (`off`: never)
   */
  void flush_on(level_enum log_level) { impl->flush_level.store(static_cast<int>(log_level)); }

  /**
   * @brief The level from which every message is flushed.
   * @return The level
   */
  [[nodiscard]] level_enum flush_level() const
  {
    return static_cast<level_enum>(impl->flush_level.load());
  }

  /**
   * @brief Whether a message of @p msg_level would be logged.
   * @param msg_level The level
   * @return True when it would
   */
  [[nodiscard]] bool should_log(level_enum msg_level) const
  {
    return msg_level != level_enum::off && static_cast<int>(msg_level) >= static_cast<int>(level());
  }

  /**
   * @brief Sets the line pattern (spdlog flags) of every current sink.
   * @param pattern The pattern, e.g. `"[%6t][%H:%M:%S:%f][%-6l] %v"`
   */
  void set_pattern(std::string pattern)
  {
    for (auto const& s : sinks_) {
      detail::impl_of(*s).set_pattern(pattern);
    }
  }

 private:
  friend logger& default_logger();

  static logger make_default();
  static sink_ptr make_file_sink(std::string const& filename);
  static sink_ptr make_ostream_sink(std::ostream& stream);

  std::unique_ptr<detail::logger_impl> impl;  ///< The logger's state
  sink_vector sinks_;                         ///< The logger's sinks
};

/**
 * @brief A destination of log lines: hold one in a sink_ptr and give it to loggers (or to a
 * logging_resource_adaptor).
 */
class sink {
 public:
  virtual ~sink()              = default;
  sink(sink const&)            = delete;  ///< Not copyable
  sink& operator=(sink const&) = delete;  ///< Not copy assignable
  sink(sink&&)                 = delete;  ///< Not movable
  sink& operator=(sink&&)      = delete;  ///< Not move assignable

 protected:
  /**
   * @brief Takes the implementation.
   * @param impl What the sink does
   */
  explicit sink(std::unique_ptr<detail::sink_impl> impl) : impl{std::move(impl)} {}
  std::unique_ptr<detail::sink_impl> impl;  ///< What the sink does

  friend detail::sink_impl& detail::impl_of(sink& s);
};

namespace detail {
/**
 * @brief The implementation behind a sink (how loggers and the logging adaptor reach it).
 * @param s The sink
 * @return Its implementation
 */
inline sink_impl& impl_of(sink& s) { return *s.impl; }
}  // namespace detail

/**
 * @brief Writes to a file (spdlog's basic_file_sink_mt).
 */
class basic_file_sink_mt : public sink {
 public:
  /**
   * @brief Opens @p filename (creating its directory) for writing.
   * @param filename The file
   * @param truncate Truncate the file (else append to it)
   * @throws std::runtime_error when the file cannot be opened
   */
  basic_file_sink_mt(std::string const& filename, bool truncate = false)
    : sink{std::make_unique<detail::file_sink_impl>(filename, truncate)}
  {
  }
};

/**
 * @brief Writes to a std::ostream (spdlog's ostream_sink_mt).
 */
class ostream_sink_mt : public sink {
 public:
  /**
   * @brief Writes to @p stream.
   * @param stream The stream (must outlive the sink)
   * @param force_flush Flush after every line
   */
  ostream_sink_mt(std::ostream& stream, bool force_flush = false)
    : sink{std::make_unique<detail::ostream_sink_impl>(stream, force_flush)}
  {
  }
};

/**
 * @brief Discards everything (spdlog's null_sink_mt).
 */
class null_sink_mt : public sink {
 public:
  null_sink_mt() : sink{std::make_unique<detail::null_sink_impl>()} {}
};

/**
 * @brief Writes to stderr, flushing every line (spdlog's stderr_sink_mt).
 */
class stderr_sink_mt : public sink {
 public:
  stderr_sink_mt() : sink{std::make_unique<detail::c_stream_sink_impl>(stderr)} {}
};

/**
 * @brief Writes to stdout, flushing every line (spdlog's stdout_sink_mt; not in RMM 25.02's
 * header, offered for symmetry).
 */
class stdout_sink_mt : public sink {
 public:
  stdout_sink_mt() : sink{std::make_unique<detail::c_stream_sink_impl>(stdout)} {}
};

/// @brief Receives each formatted line (newline included) and its level.
typedef void (*log_callback_t)(int lvl, const char* msg);
/// @brief Called when a callback sink is flushed.
typedef void (*flush_callback_t)();

/**
 * @brief Calls a function with every line (rapids-logger's callback_sink_mt).
 */
class callback_sink_mt : public sink {
 public:
  /**
   * @brief Calls @p callback with each line; @p flush on flush.
   * @param callback Receives lines (when null, lines go to std::cout)
   * @param flush Called on flush (when null, std::cout is flushed)
   */
  explicit callback_sink_mt(const log_callback_t& callback, const flush_callback_t& flush = nullptr)
    : sink{std::make_unique<detail::callback_sink_impl>(callback, flush)}
  {
  }
};

namespace detail {

/// @brief The sink forwarding to the Rust core's debug log (that of default_logger()).
class core_sink : public sink {
 public:
  core_sink() : sink{std::make_unique<core_sink_impl>()} {}
};

}  // namespace detail

inline sink_ptr logger::make_file_sink(std::string const& filename)
{
  return std::make_shared<basic_file_sink_mt>(filename, true);
}

inline sink_ptr logger::make_ostream_sink(std::ostream& stream)
{
  return std::make_shared<ostream_sink_mt>(stream);
}

/**
 * @brief The sink of the default logger: the library's debug log, which writes to the file
 * named by `RMM_DEBUG_LOG_FILE`, else to stderr (the Rust core owns the file, so C, C++ and
 * Rust messages share it).
 * @return The sink
 */
inline sink_ptr default_sink() { return std::make_shared<detail::core_sink>(); }

/**
 * @brief The pattern of the default logger's lines.
 * @return `[%6t][%H:%M:%S:%f][%-6l] %v`
 */
inline std::string default_pattern() { return "[%6t][%H:%M:%S:%f][%-6l] %v"; }

/**
 * @brief The default logger: RMM's debug log (`RMM_LOG_*` macros write to it). Its level is
 * the Rust core's debug log level, shared with C (`rmm_set_debug_log_level`) and Rust.
 * @return The logger
 */
inline logger& default_logger()
{
  static logger instance{logger::make_default()};
  return instance;
}

inline logger logger::make_default()
{
  logger lg{"RMM", {default_sink()}};
  lg.impl->core_bound = true;
  lg.set_pattern(default_pattern());
#if defined(RMM_LOG_ACTIVE_LEVEL) && RMM_LOG_ACTIVE_LEVEL <= RMM_LOG_LEVEL_DEBUG
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
  lg.debug("----- RMM LOG [PTDS ENABLED] -----");
#else
  lg.debug("----- RMM LOG [PTDS DISABLED] -----");
#endif
#endif
  return lg;
}

/**
 * @brief Sets the default logger's level for a scope, restoring the previous level on exit.
 */
struct log_level_setter {
  /// @brief Sets @p level. @param level The level for the scope
  explicit log_level_setter(level_enum level)
  {
    prev_level_ = default_logger().level();
    default_logger().set_level(level);
  }
  ~log_level_setter() { default_logger().set_level(prev_level_); }

 private:
  level_enum prev_level_;
};

RMM_API_NAMESPACE_END
}  // namespace rmm

#if RMM_DETAIL_API_RAPIDS_LOGGER
/**
 * @brief The logger classes under rapids-logger's namespace, where RMM 25.10 takes them from
 * (`rapids_logger::logger`, `rapids_logger::level_enum`, `rapids_logger::sink_ptr`,
 * `rapids_logger::basic_file_sink_mt`, ...): the same types as `rmm::logger` and friends, so
 * `rmm::default_logger()` is a `rapids_logger::logger&`.
 */
namespace rapids_logger {
using ::rmm::basic_file_sink_mt;
using ::rmm::callback_sink_mt;
using ::rmm::flush_callback_t;
using ::rmm::level_enum;
using ::rmm::log_callback_t;
using ::rmm::logger;
using ::rmm::null_sink_mt;
using ::rmm::ostream_sink_mt;
using ::rmm::sink;
using ::rmm::sink_ptr;
using ::rmm::stderr_sink_mt;
using ::rmm::stdout_sink_mt;
}  // namespace rapids_logger
#endif

#include <rmm/logger_macros.hpp>
