// RMM 25.02's logger API (rmm/logger.hpp: loggers, sinks, levels, patterns, the default
// logger and the RMM_LOG_* macros) and every logging_resource_adaptor constructor.
#include "test_resources.hpp"

#include <rmm/logger.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/logging_resource_adaptor.hpp>
#include <rmm/resource_ref.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iostream>
#include <mutex>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using cuda_mr    = rmm::mr::cuda_memory_resource;
using logging_mr = rmm::mr::logging_resource_adaptor<cuda_mr>;

std::string slurp(std::string const& path)
{
  std::ifstream in{path};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> split(std::string const& text, char sep)
{
  std::vector<std::string> out;
  std::stringstream ss{text};
  for (std::string item; std::getline(ss, item, sep);) {
    out.push_back(item);
  }
  return out;
}

std::string ptr_text(void const* p)
{
  char buf[64];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

/// One parsed CSV row of a logging_resource_adaptor.
struct row {
  std::string thread, time, action, pointer, size, stream;
};

/// Parses the CSV text back, checking the header and the shape of every row.
std::vector<row> parse_csv(std::string const& text)
{
  auto const lines = split(text, '\n');
  EXPECT_FALSE(lines.empty());
  if (lines.empty()) { return {}; }
  EXPECT_EQ(lines[0], "Thread,Time,Action,Pointer,Size,Stream");
  std::regex const time_re{R"(\d\d:\d\d:\d\d\.\d{6})"};
  std::vector<row> rows;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    auto const f = split(lines[i], ',');
    EXPECT_EQ(f.size(), 6U) << lines[i];
    if (f.size() != 6) { continue; }
    EXPECT_FALSE(f[0].empty());
    EXPECT_EQ(f[0].find_first_not_of("0123456789"), std::string::npos) << f[0];
    EXPECT_TRUE(std::regex_match(f[1], time_re)) << f[1];
    rows.push_back(row{f[0], f[1], f[2], f[3], f[4], f[5]});
  }
  return rows;
}

/// Allocates and frees twice, and checks the rows logged for it.
template <typename MR>
void exercise_and_check(MR& mr, std::function<std::string()> const& text)
{
  void* p0 = mr.allocate(100);
  void* p1 = mr.allocate(42);
  mr.deallocate(p0, 100);
  mr.deallocate(p1, 42);
  mr.flush();
  auto const rows = parse_csv(text());
  ASSERT_EQ(rows.size(), 4U) << text();
  EXPECT_EQ(rows[0].action, "allocate");
  EXPECT_EQ(rows[0].pointer, ptr_text(p0));
  EXPECT_EQ(rows[0].size, "100");
  EXPECT_EQ(rows[0].stream, "0");
  EXPECT_EQ(rows[1].action, "allocate");
  EXPECT_EQ(rows[1].pointer, ptr_text(p1));
  EXPECT_EQ(rows[1].size, "42");
  EXPECT_EQ(rows[2].action, "free");
  EXPECT_EQ(rows[2].pointer, ptr_text(p0));
  EXPECT_EQ(rows[3].action, "free");
  EXPECT_EQ(rows[3].pointer, ptr_text(p1));
  EXPECT_EQ(rows[3].size, "42");
}

/// Unsets the logger's environment variables for a test and restores them after.
class env_guard {
 public:
  explicit env_guard(std::vector<std::string> names) : names_{std::move(names)}
  {
    for (auto const& n : names_) {
      auto const* v = std::getenv(n.c_str());
      saved_.emplace_back(v != nullptr, v != nullptr ? v : "");
      ::unsetenv(n.c_str());
    }
  }
  ~env_guard()
  {
    for (std::size_t i = 0; i < names_.size(); ++i) {
      if (saved_[i].first) {
        ::setenv(names_[i].c_str(), saved_[i].second.c_str(), 1);
      } else {
        ::unsetenv(names_[i].c_str());
      }
    }
  }
  env_guard(env_guard const&)            = delete;
  env_guard& operator=(env_guard const&) = delete;

 private:
  std::vector<std::string> names_;
  std::vector<std::pair<bool, std::string>> saved_;
};

env_guard logger_env()
{
  return env_guard{{"RMM_DEFAULT_LOGGING_LEVEL", "RMM_DEFAULT_FLUSH_LEVEL"}};
}

// ---------------------------------------------------------------------------------------------
// Levels and macros

TEST(LoggerApi, LevelsAndMacros)
{
  static_assert(std::is_same_v<std::underlying_type_t<rmm::level_enum>, std::int32_t>);
  EXPECT_EQ(static_cast<int>(rmm::level_enum::trace), RMM_LOG_LEVEL_TRACE);
  EXPECT_EQ(static_cast<int>(rmm::level_enum::debug), RMM_LOG_LEVEL_DEBUG);
  EXPECT_EQ(static_cast<int>(rmm::level_enum::info), RMM_LOG_LEVEL_INFO);
  EXPECT_EQ(static_cast<int>(rmm::level_enum::warn), RMM_LOG_LEVEL_WARN);
  EXPECT_EQ(static_cast<int>(rmm::level_enum::error), RMM_LOG_LEVEL_ERROR);
  EXPECT_EQ(static_cast<int>(rmm::level_enum::critical), RMM_LOG_LEVEL_CRITICAL);
  EXPECT_EQ(static_cast<int>(rmm::level_enum::off), RMM_LOG_LEVEL_OFF);
  EXPECT_EQ(static_cast<int>(rmm::level_enum::n_levels), 7);
  EXPECT_EQ(RMM_LOG_ACTIVE_LEVEL, RMM_LOG_LEVEL_INFO);
  static_assert(std::is_same_v<rmm::sink_ptr, std::shared_ptr<rmm::sink>>);
  EXPECT_EQ(rmm::default_pattern(), "[%6t][%H:%M:%S:%f][%-6l] %v");
}

// ---------------------------------------------------------------------------------------------
// Loggers and sinks

TEST(LoggerApi, OstreamLoggerFormatsPrintfStyle)
{
  auto env = logger_env();
  std::ostringstream os;
  rmm::logger log{"test", os};
  log.set_pattern("%v");
  EXPECT_EQ(log.level(), rmm::level_enum::info);
  log.info("a %d %s %zu", 1, std::string{"two"}, std::size_t{3});
  log.debug("filtered %d", 1);
  log.warn("only text");
  log.log(rmm::level_enum::error, "100% literal without arguments");
  log.log(rmm::level_enum::critical, "%s=%.2f", "x", 0.5);
  EXPECT_EQ(os.str(), "a 1 two 3\nonly text\n100% literal without arguments\nx=0.50\n");
}

TEST(LoggerApi, LevelFiltering)
{
  auto env = logger_env();
  std::ostringstream os;
  rmm::logger log{"levels", os};
  log.set_pattern("%L:%v");
  EXPECT_TRUE(log.should_log(rmm::level_enum::info));
  EXPECT_FALSE(log.should_log(rmm::level_enum::debug));
  log.set_level(rmm::level_enum::trace);
  EXPECT_EQ(log.level(), rmm::level_enum::trace);
  EXPECT_TRUE(log.should_log(rmm::level_enum::trace));
  log.trace("t");
  log.debug("d");
  log.set_level(rmm::level_enum::error);
  EXPECT_FALSE(log.should_log(rmm::level_enum::warn));
  log.info("i");
  log.warn("w");
  log.error("e");
  log.critical("c");
  log.set_level(rmm::level_enum::off);
  EXPECT_FALSE(log.should_log(rmm::level_enum::critical));
  EXPECT_FALSE(log.should_log(rmm::level_enum::off));
  log.critical("not written");
  EXPECT_EQ(os.str(), "T:t\nD:d\nE:e\nC:c\n");
}

TEST(LoggerApi, EnvironmentLevels)
{
  auto env = logger_env();
  std::ostringstream os;
  ::setenv("RMM_DEFAULT_LOGGING_LEVEL", "ERROR", 1);
  ::setenv("RMM_DEFAULT_FLUSH_LEVEL", "WARN", 1);
  rmm::logger log{"env", os};
  EXPECT_EQ(log.level(), rmm::level_enum::error);
  EXPECT_EQ(log.flush_level(), rmm::level_enum::warn);
  ::setenv("RMM_DEFAULT_LOGGING_LEVEL", "LOUD", 1);
  EXPECT_THROW((rmm::logger{"bad", os}), std::invalid_argument);
}

TEST(LoggerApi, FileLoggerFlushAndFlushOn)
{
  auto env        = logger_env();
  auto const path = rmm_test::temp_log_path("rmm_logger_file");
  {
    std::ofstream{path} << "old content\n";
    rmm::logger log{"file", path};  // truncates
    log.set_pattern("%n %l %v");
    EXPECT_EQ(log.flush_level(), rmm::level_enum::off);
    log.info("first");
    EXPECT_EQ(slurp(path), "") << "buffered until flushed";
    log.flush();
    EXPECT_EQ(slurp(path), "file info first\n");
    log.flush_on(rmm::level_enum::warn);
    EXPECT_EQ(log.flush_level(), rmm::level_enum::warn);
    log.info("second");
    EXPECT_EQ(slurp(path), "file info first\n");
    log.warn("third");
    EXPECT_EQ(slurp(path), "file info first\nfile info second\nfile warning third\n");
  }
  std::remove(path.c_str());
}

TEST(LoggerApi, FileSinkTruncateOrAppend)
{
  auto env        = logger_env();
  auto const dir  = std::filesystem::temp_directory_path() / "rmm_logger_api_dir";
  auto const path = (dir / "nested" / "sink.log").string();
  std::filesystem::remove_all(dir);
  {
    rmm::logger log{"a", {std::make_shared<rmm::basic_file_sink_mt>(path, true)}};
    log.set_pattern("%v");
    log.info("one");
  }
  {
    rmm::logger log{"b", {std::make_shared<rmm::basic_file_sink_mt>(path)}};  // appends
    log.set_pattern("%v");
    log.info("two");
  }
  EXPECT_EQ(slurp(path), "one\ntwo\n");
  {
    rmm::logger log{
      "c", std::vector<rmm::sink_ptr>{std::make_shared<rmm::basic_file_sink_mt>(path, true)}};
    log.set_pattern("%v");
    log.info("three");
  }
  EXPECT_EQ(slurp(path), "three\n");
  std::filesystem::remove_all(dir);
  EXPECT_THROW(rmm::basic_file_sink_mt("/proc/rmm-no-such-dir/x.log", true), std::runtime_error);
}

TEST(LoggerApi, SinkVectorOperations)
{
  auto env = logger_env();
  std::ostringstream a;
  std::ostringstream b;
  auto sink_a = std::make_shared<rmm::ostream_sink_mt>(a);
  auto sink_b = std::make_shared<rmm::ostream_sink_mt>(b, true);
  rmm::logger log{"sinks", {sink_a}};
  EXPECT_EQ(log.sinks().size(), 1U);
  log.sinks().push_back(sink_b);
  rmm::sink_ptr null_sink = std::make_shared<rmm::null_sink_mt>();
  log.sinks().push_back(std::move(null_sink));
  EXPECT_EQ(log.sinks().size(), 3U);
  std::size_t n = 0;
  for (auto const& s : log.sinks()) {
    EXPECT_NE(s, nullptr);
    ++n;
  }
  EXPECT_EQ(n, 3U);
  rmm::logger const& clog = log;
  EXPECT_EQ(std::distance(clog.sinks().begin(), clog.sinks().end()), 3);
  EXPECT_EQ(std::distance(clog.sinks().cbegin(), clog.sinks().cend()), 3);
  log.set_pattern("%v");
  log.info("both");
  log.sinks().pop_back();
  log.sinks().pop_back();
  log.info("only a");
  log.sinks().clear();
  log.info("nowhere");
  log.flush();
  EXPECT_EQ(a.str(), "both\nonly a\n");
  EXPECT_EQ(b.str(), "both\n");
}

std::mutex callback_mutex;
std::vector<std::pair<int, std::string>> callback_lines;
int callback_flushes = 0;

TEST(LoggerApi, CallbackSink)
{
  auto env                   = logger_env();
  rmm::log_callback_t on_log = [](int lvl, char const* msg) {
    std::lock_guard<std::mutex> lock{callback_mutex};
    callback_lines.emplace_back(lvl, msg);
  };
  rmm::flush_callback_t on_flush = [] {
    std::lock_guard<std::mutex> lock{callback_mutex};
    ++callback_flushes;
  };
  rmm::logger log{"cb", {std::make_shared<rmm::callback_sink_mt>(on_log, on_flush)}};
  log.set_pattern("[%n] %v");
  log.warn("value %d", 7);
  log.flush();
  ASSERT_EQ(callback_lines.size(), 1U);
  EXPECT_EQ(callback_lines[0].first, static_cast<int>(rmm::level_enum::warn));
  EXPECT_EQ(callback_lines[0].second, "[cb] value 7\n");
  EXPECT_EQ(callback_flushes, 1);
}

TEST(LoggerApi, StderrAndStdoutSinks)
{
  auto env = logger_env();
  testing::internal::CaptureStderr();
  {
    rmm::logger log{"err", {std::make_shared<rmm::stderr_sink_mt>()}};
    log.set_pattern("%v");
    log.error("to stderr %d", 2);
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "to stderr 2\n");
  testing::internal::CaptureStdout();
  {
    rmm::logger log{"out", {std::make_shared<rmm::stdout_sink_mt>()}};
    log.set_pattern("%v");
    log.info("to stdout");
  }
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "to stdout\n");
}

TEST(LoggerApi, PatternFlags)
{
  auto env = logger_env();
  std::ostringstream os;
  rmm::logger log{"pat", os};
  // A fresh sink uses spdlog's default pattern.
  log.info("plain");
  std::regex const full{R"(\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] \[pat\] \[info\] plain\n)"};
  EXPECT_TRUE(std::regex_match(os.str(), full)) << os.str();
  os.str("");
  log.set_pattern(rmm::default_pattern());
  log.warn("patterned");
  std::regex const dflt{R"(\[ *\d+\]\[\d\d:\d\d:\d\d:\d{6}\]\[warning\] patterned\n)"};
  EXPECT_TRUE(std::regex_match(os.str(), dflt)) << os.str();
  os.str("");
  log.set_pattern("%n|%L|%l|%=8l|%-6l|%6l|%3!v|%%|%q|%T");
  log.info("abcdef");
  std::regex const flags{R"(pat\|I\|info\|  info  \|info  \|  info\|abc\|%\|%q\|\d\d:\d\d:\d\d\n)"};
  EXPECT_TRUE(std::regex_match(os.str(), flags)) << os.str();
  os.str("");
  log.set_pattern("%t");
  log.info("x");
  EXPECT_EQ(os.str(), std::to_string(rmm::detail::os_thread_id()) + "\n");
}

TEST(LoggerApi, MovedLoggerKeepsSinks)
{
  auto env = logger_env();
  std::ostringstream os;
  rmm::logger first{"moved", os};
  first.set_pattern("%n:%v");
  first.set_level(rmm::level_enum::debug);
  rmm::logger second{std::move(first)};
  second.debug("after move");
  EXPECT_EQ(second.level(), rmm::level_enum::debug);
  std::ostringstream other;
  rmm::logger third{"third", other};
  third = std::move(second);
  third.info("after assignment");
  EXPECT_EQ(os.str(), "moved:after move\nmoved:after assignment\n");
  EXPECT_EQ(other.str(), "");
}

TEST(LoggerApi, ConcurrentLoggingNeverTearsLines)
{
  auto env = logger_env();
  std::ostringstream os;
  rmm::logger log{"mt", os};
  log.set_pattern("%v");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&log, t] {
      for (int i = 0; i < 200; ++i) {
        log.info("thread %d line %d end", t, i);
      }
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  auto const lines = split(os.str(), '\n');
  ASSERT_EQ(lines.size(), 800U);
  std::regex const re{R"(thread \d line \d+ end)"};
  for (auto const& l : lines) {
    EXPECT_TRUE(std::regex_match(l, re)) << l;
  }
}

// ---------------------------------------------------------------------------------------------
// The default logger: the Rust core's debug log

TEST(DefaultLogger, SharesTheCoreLevel)
{
  auto& log = rmm::default_logger();
  EXPECT_EQ(&log, &rmm::default_logger());
  log.set_level(rmm::level_enum::warn);
  int lvl = -1;
  ASSERT_EQ(rmm_get_debug_log_level(&lvl), RMM_STATUS_SUCCESS);
  EXPECT_EQ(lvl, RMM_LOG_LEVEL_WARN);
  ASSERT_EQ(rmm_set_debug_log_level(RMM_LOG_LEVEL_DEBUG), RMM_STATUS_SUCCESS);
  EXPECT_EQ(log.level(), rmm::level_enum::debug);
  EXPECT_TRUE(log.should_log(rmm::level_enum::debug));
  {
    rmm::log_level_setter scoped{rmm::level_enum::critical};
    EXPECT_EQ(log.level(), rmm::level_enum::critical);
    EXPECT_FALSE(log.should_log(rmm::level_enum::error));
  }
  EXPECT_EQ(log.level(), rmm::level_enum::debug);
  log.set_level(rmm::level_enum::info);
  EXPECT_EQ(log.flush_level(), rmm::level_enum::off);
}

TEST(DefaultLogger, WritesTheDebugLogFile)
{
  // Under ctest each test runs in its own process: the core opens the file on first use.
  auto const path = rmm_test::temp_log_path("rmm_default_logger");
  ::setenv("RMM_DEBUG_LOG_FILE", path.c_str(), 1);
  EXPECT_EQ(rmm::detail::default_log_filename(), path);
  auto& log = rmm::default_logger();
  log.set_level(rmm::level_enum::trace);
  RMM_LOG_WARN("macro warning %d", 5);
  RMM_LOG_INFO("macro info %s", "text");
  RMM_LOG_ERROR("macro error");
  RMM_LOG_CRITICAL("macro critical %zu", std::size_t{9});
  RMM_LOG_DEBUG("compiled out at RMM_LOG_ACTIVE_LEVEL info");
  RMM_LOG_TRACE("compiled out too");
  log.debug("logged through the object %d", 1);
  std::ostringstream extra;
  auto extra_sink = std::make_shared<rmm::ostream_sink_mt>(extra);
  log.sinks().push_back(extra_sink);
  log.set_pattern("%l %v");  // the core sink keeps its own format
  RMM_LOG_WARN("to both %d", 2);
  log.sinks().pop_back();
  RMM_LOG_WARN("core only");
  // Another logger with the default sink reaches the same file.
  rmm::logger other{"other", {rmm::default_sink()}};
  other.error("from another logger");
  log.flush();
  log.set_level(rmm::level_enum::info);
  EXPECT_EQ(extra.str(), "warning to both 2\n");

  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << "the debug log was opened earlier in this process (run under ctest)";
  }
  auto const text = slurp(path);
  for (char const* expected : {"macro warning 5",
                               "macro info text",
                               "macro error",
                               "macro critical 9",
                               "logged through the object 1",
                               "to both 2",
                               "core only",
                               "from another logger"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << " in\n" << text;
  }
  EXPECT_EQ(text.find("compiled out"), std::string::npos) << text;
  std::regex const line{R"(\[ *\d+\]\[\d\d:\d\d:\d\d:\d{6}\]\[warn *\] macro warning 5)"};
  EXPECT_TRUE(std::regex_search(text, line)) << text;
  std::remove(path.c_str());
}

TEST(DefaultLogger, DefaultLogFilenameFallback)
{
  env_guard env{{"RMM_DEBUG_LOG_FILE"}};
  EXPECT_EQ(rmm::detail::default_log_filename(), "rmm_log.txt");
}

// ---------------------------------------------------------------------------------------------
// logging_resource_adaptor: every constructor

TEST(LoggingAdaptorCtors, FilenameFromPointerAndRef)
{
  cuda_mr upstream;
  auto const path1 = rmm_test::temp_log_path("rmm_ctor_file_ptr");
  auto const path2 = rmm_test::temp_log_path("rmm_ctor_file_ref");
  {
    logging_mr mr{&upstream, path1};
    EXPECT_EQ(mr.header(), "Thread,Time,Action,Pointer,Size,Stream");
    EXPECT_EQ(mr.get_upstream_resource(), rmm::device_async_resource_ref{upstream});
    EXPECT_EQ(mr.get_upstream(), &upstream);
    exercise_and_check(mr, [&] { return slurp(path1); });
  }
  {
    logging_mr mr{rmm::device_async_resource_ref{upstream}, path2, true};
    EXPECT_EQ(mr.get_upstream_resource(), rmm::device_async_resource_ref{upstream});
    void* p = mr.allocate(64);
    EXPECT_EQ(parse_csv(slurp(path2)).size(), 1U) << "auto_flush";
    mr.deallocate(p, 64);
    EXPECT_EQ(parse_csv(slurp(path2)).size(), 2U) << "auto_flush";
  }
  {
    auto mr = rmm::mr::logging_resource_adaptor(&upstream, path2);  // CTAD, truncates
    exercise_and_check(mr, [&] { return slurp(path2); });
  }
  std::remove(path1.c_str());
  std::remove(path2.c_str());
  EXPECT_THROW((logging_mr{static_cast<cuda_mr*>(nullptr), path1}), rmm::logic_error);
}

TEST(LoggingAdaptorCtors, EnvironmentFile)
{
  env_guard env{{"RMM_LOG_FILE"}};
  cuda_mr upstream;
  EXPECT_THROW(rmm::mr::logging_resource_adaptor{&upstream}, rmm::logic_error);
  EXPECT_THROW((logging_mr{rmm::device_async_resource_ref{upstream}}), rmm::logic_error);
  EXPECT_THROW(logging_mr::get_default_filename(), rmm::logic_error);
  auto const path = rmm_test::temp_log_path("rmm_ctor_env");
  ::setenv("RMM_LOG_FILE", path.c_str(), 1);
  EXPECT_EQ(logging_mr::get_default_filename(), path);
  {
    auto mr = rmm::mr::logging_resource_adaptor(&upstream);
    exercise_and_check(mr, [&] { return slurp(path); });
  }
  {
    logging_mr mr{rmm::device_async_resource_ref{upstream}};
    exercise_and_check(mr, [&] { return slurp(path); });
  }
  std::remove(path.c_str());
}

TEST(LoggingAdaptorCtors, OstreamFromPointerAndRef)
{
  cuda_mr upstream;
  std::ostringstream os1;
  std::ostringstream os2;
  {
    logging_mr mr{&upstream, os1};
    EXPECT_EQ(os1.str(), "Thread,Time,Action,Pointer,Size,Stream\n") << "header at once";
    exercise_and_check(mr, [&] { return os1.str(); });
  }
  {
    logging_mr mr{rmm::device_async_resource_ref{upstream}, os2, true};
    exercise_and_check(mr, [&] { return os2.str(); });
  }
}

TEST(LoggingAdaptorCtors, StdoutWithoutFlush)
{
  // As RMM's own test: the header reaches std::cout before any flush.
  cuda_mr upstream;
  testing::internal::CaptureStdout();
  auto mr = rmm::mr::logging_resource_adaptor(&upstream, std::cout);
  mr.deallocate(mr.allocate(100), 100);
  auto const out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(out.substr(0, out.find('\n')), mr.header());
  EXPECT_EQ(split(out, '\n').size(), 3U) << out;
}

TEST(LoggingAdaptorCtors, SinksFromPointerAndRef)
{
  cuda_mr upstream;
  auto const path1 = rmm_test::temp_log_path("rmm_ctor_sink_1");
  auto const path2 = rmm_test::temp_log_path("rmm_ctor_sink_2");
  std::ostringstream os;
  {
    auto file1 = std::make_shared<rmm::basic_file_sink_mt>(path1, true);
    auto file2 = std::make_shared<rmm::basic_file_sink_mt>(path2, true);
    logging_mr mr{&upstream, {file1, file2, std::make_shared<rmm::null_sink_mt>()}};
    exercise_and_check(mr, [&] { return slurp(path1); });
    EXPECT_EQ(slurp(path1), slurp(path2));
  }
  {
    logging_mr mr{rmm::device_async_resource_ref{upstream},
                  {std::make_shared<rmm::ostream_sink_mt>(os)}};
    exercise_and_check(mr, [&] { return os.str(); });
  }
  std::remove(path1.c_str());
  std::remove(path2.c_str());
}

TEST(LoggingAdaptorCtors, SinkBufferingAndAutoFlush)
{
  cuda_mr upstream;
  auto const path1 = rmm_test::temp_log_path("rmm_sink_buffered");
  auto const path2 = rmm_test::temp_log_path("rmm_sink_autoflush");
  {
    logging_mr mr{&upstream, {std::make_shared<rmm::basic_file_sink_mt>(path1, true)}};
    void* p = mr.allocate(128);
    EXPECT_EQ(slurp(path1), "") << "the file sink buffers";
    mr.flush();
    EXPECT_EQ(parse_csv(slurp(path1)).size(), 1U);
    mr.deallocate(p, 128);
  }
  EXPECT_EQ(parse_csv(slurp(path1)).size(), 2U) << "destruction flushes";
  {
    logging_mr mr{&upstream, {std::make_shared<rmm::basic_file_sink_mt>(path2, true)}, true};
    void* p = mr.allocate(128);
    EXPECT_EQ(parse_csv(slurp(path2)).size(), 1U) << "auto_flush";
    mr.deallocate(p, 128);
    EXPECT_EQ(parse_csv(slurp(path2)).size(), 2U) << "auto_flush";
  }
  std::remove(path1.c_str());
  std::remove(path2.c_str());
}

TEST(LoggingAdaptorCtors, CallbackSinkReceivesRawRows)
{
  static std::vector<std::string> got;
  got.clear();
  cuda_mr upstream;
  {
    logging_mr mr{&upstream,
                  {std::make_shared<rmm::callback_sink_mt>(
                    [](int, char const* msg) { got.emplace_back(msg); }, [] {})}};
    mr.deallocate(mr.allocate(32), 32);
  }
  ASSERT_EQ(got.size(), 3U);
  EXPECT_EQ(got[0], "Thread,Time,Action,Pointer,Size,Stream\n");
  std::string all;
  for (auto const& g : got) {
    EXPECT_EQ(g.back(), '\n');
    all += g;
  }
  auto const rows = parse_csv(all);
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0].action, "allocate");
  EXPECT_EQ(rows[1].action, "free");
}

TEST(LoggingAdaptorCtors, FailureRowAndThreads)
{
  cuda_mr upstream;
  std::ostringstream os;
  {
    logging_mr mr{&upstream, {std::make_shared<rmm::ostream_sink_mt>(os)}};
    EXPECT_THROW((void)mr.allocate(std::size_t{1} << 62), rmm::out_of_memory);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&mr] {
        for (int i = 0; i < 50; ++i) {
          mr.deallocate(mr.allocate(256), 256);
        }
      });
    }
    for (auto& th : threads) {
      th.join();
    }
  }
  auto const rows = parse_csv(os.str());
  ASSERT_EQ(rows.size(), 1U + 4 * 50 * 2);
  EXPECT_EQ(rows[0].action, "allocate failure");
  EXPECT_EQ(rows[0].pointer, "(nil)");
  EXPECT_EQ(rows[0].size, std::to_string(std::size_t{1} << 62));
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST(LoggingAdaptorCtors, DeprecatedFactory)
{
  cuda_mr upstream;
  auto const path = rmm_test::temp_log_path("rmm_factory");
  std::ostringstream os;
  {
    auto by_file = rmm::mr::make_logging_adaptor(&upstream, path);
    exercise_and_check(by_file, [&] { return slurp(path); });
    auto by_stream = rmm::mr::make_logging_adaptor(&upstream, os, true);
    exercise_and_check(by_stream, [&] { return os.str(); });
  }
  std::remove(path.c_str());
}
#pragma GCC diagnostic pop

}  // namespace
