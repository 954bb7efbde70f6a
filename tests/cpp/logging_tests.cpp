// logging_resource_adaptor and the debug logger (rmm/logger.hpp).
#include "test_resources.hpp"

#include <rmm/logger.hpp>
#include <rmm/mr/device/logging_resource_adaptor.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using logging_mr = rmm::mr::logging_resource_adaptor<rmm::mr::cuda_memory_resource>;

std::vector<std::string> read_lines(std::string const& path)
{
  std::ifstream in{path};
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> fields(std::string const& line)
{
  std::vector<std::string> out;
  std::stringstream ss{line};
  for (std::string f; std::getline(ss, f, ',');) {
    out.push_back(f);
  }
  return out;
}

TEST(LoggingAdaptor, WritesRmmCsv)
{
  auto const path = rmm_test::temp_log_path("rmm_logging_csv");
  rmm::mr::cuda_memory_resource upstream;
  {
    logging_mr mr{&upstream, path};
    EXPECT_EQ(mr.header(), "Thread,Time,Action,Pointer,Size,Stream");
    EXPECT_EQ(mr.get_upstream(), &upstream);
    void* p = mr.allocate(1000);
    mr.deallocate(p, 1000);
    EXPECT_THROW((void)mr.allocate(std::size_t{1} << 62), rmm::out_of_memory);
  }
  auto const lines = read_lines(path);
  ASSERT_EQ(lines.size(), 4U);
  EXPECT_EQ(lines[0], "Thread,Time,Action,Pointer,Size,Stream");
  auto const a = fields(lines[1]);
  ASSERT_EQ(a.size(), 6U);
  EXPECT_EQ(a[2], "allocate");
  EXPECT_EQ(a[3].substr(0, 2), "0x");
  EXPECT_EQ(a[4], "1000");
  EXPECT_EQ(a[5], "0");
  EXPECT_EQ(a[1].size(), 15U);  // HH:MM:SS.uuuuuu
  auto const f = fields(lines[2]);
  EXPECT_EQ(f[2], "free");
  EXPECT_EQ(f[3], a[3]);
  auto const fail = fields(lines[3]);
  EXPECT_EQ(fail[2], "allocate failure");
  EXPECT_EQ(fail[3], "(nil)");
  std::remove(path.c_str());
}

TEST(LoggingAdaptor, FlushAndAutoFlush)
{
  rmm::mr::cuda_memory_resource upstream;
  auto const path = rmm_test::temp_log_path("rmm_logging_flush");
  logging_mr buffered{&upstream, path};
  void* p = buffered.allocate(256);
  EXPECT_EQ(read_lines(path).size(), 0U);
  buffered.flush();
  EXPECT_EQ(read_lines(path).size(), 2U);
  buffered.deallocate(p, 256);

  auto const path2 = rmm_test::temp_log_path("rmm_logging_auto");
  logging_mr autoflushed{&upstream, path2, true};
  void* q = autoflushed.allocate(256);
  EXPECT_EQ(read_lines(path2).size(), 2U);
  autoflushed.deallocate(q, 256);
  EXPECT_EQ(read_lines(path2).size(), 3U);
  std::remove(path.c_str());
  std::remove(path2.c_str());
}

TEST(LoggingAdaptor, OstreamReceivesRows)
{
  rmm::mr::cuda_memory_resource upstream;
  std::ostringstream os;
  {
    logging_mr mr{&upstream, os};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&mr] {
        for (int i = 0; i < 100; ++i) {
          void* p = mr.allocate(512);
          mr.deallocate(p, 512);
        }
      });
    }
    for (auto& t : threads) {
      t.join();
    }
  }
  std::stringstream ss{os.str()};
  std::size_t n = 0;
  for (std::string line; std::getline(ss, line); ++n) {
    if (n > 0) { EXPECT_EQ(fields(line).size(), 6U) << line; }
  }
  EXPECT_EQ(n, 1U + 4 * 100 * 2);
}

TEST(LoggingAdaptor, DefaultFileAndErrors)
{
  rmm::mr::cuda_memory_resource upstream;
  ::unsetenv("RMM_LOG_FILE");
  EXPECT_THROW(logging_mr{&upstream}, rmm::logic_error);
  auto const path = rmm_test::temp_log_path("rmm_logging_env");
  ::setenv("RMM_LOG_FILE", path.c_str(), 1);
  {
    logging_mr mr{&upstream};
    mr.deallocate(mr.allocate(256), 256);
  }
  ::unsetenv("RMM_LOG_FILE");
  EXPECT_EQ(read_lines(path).size(), 3U);
  std::remove(path.c_str());
  try {
    logging_mr bad{&upstream, "/nonexistent-dir-rmm/x.csv"};
    FAIL() << "expected an exception";
  } catch (rmm::logic_error const& e) {
    EXPECT_NE(std::string{e.what()}.find("/nonexistent-dir-rmm/x.csv"), std::string::npos)
      << e.what();
  }
  EXPECT_THROW((rmm::mr::logging_resource_adaptor<rmm::mr::cuda_memory_resource>{nullptr, "x.csv"}),
               rmm::logic_error);
}

TEST(DebugLogger, LevelIsSettable)
{
  // Read when the library first logs: under ctest each test is its own process.
  auto const path = rmm_test::temp_log_path("rmm_debug_log");
  ::setenv("RMM_DEBUG_LOG_FILE", path.c_str(), 1);
  auto& log = rmm::default_logger();
  log.set_level(rmm::level_enum::trace);
  EXPECT_EQ(log.level(), rmm::level_enum::trace);
  EXPECT_TRUE(log.should_log(rmm::level_enum::debug));
  log.set_level(rmm::level_enum::critical);
  EXPECT_EQ(rmm::default_logger().level(), rmm::level_enum::critical);
  EXPECT_FALSE(log.should_log(rmm::level_enum::error));
  log.set_level(rmm::level_enum::off);
  EXPECT_FALSE(log.should_log(rmm::level_enum::critical));
  RMM_LOG_INFO("not written at level off: %d", 42);
  log.set_level(rmm::level_enum::info);
  RMM_LOG_DEBUG("below the level");
  RMM_LOG_WARN("a warning from the C++ test: %s %zu", "size", std::size_t{7});
  log.flush();
  EXPECT_EQ(log.level(), rmm::level_enum::info);
  std::ifstream in{path};
  if (in) {  // absent when another test of this process initialized the log first
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_NE(text.str().find("a warning from the C++ test: size 7"), std::string::npos)
      << text.str();
    EXPECT_EQ(text.str().find("not written"), std::string::npos) << text.str();
    EXPECT_EQ(text.str().find("below the level"), std::string::npos) << text.str();
  }
  std::remove(path.c_str());
}

}  // namespace
