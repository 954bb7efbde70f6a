// rmm/detail/format.hpp and rmm/detail/logging_assert.hpp.
#include <rmm/cuda_stream.hpp>
#include <rmm/detail/format.hpp>
#include <rmm/detail/logging_assert.hpp>

#include <gtest/gtest.h>

#include <string>

TEST(FormatCompat, Bytes)
{
  EXPECT_EQ(rmm::detail::format_bytes(0), "0.000000 B");
  EXPECT_EQ(rmm::detail::format_bytes(1000), "1000.000000 B");
  EXPECT_EQ(rmm::detail::format_bytes(1536), "1.500000 KiB");
  EXPECT_EQ(rmm::detail::format_bytes(std::size_t{3} << 30), "3.000000 GiB");
}

TEST(FormatCompat, Stream)
{
  rmm::cuda_stream stream{};
  std::string const text = rmm::detail::format_stream(stream.view());
  EXPECT_FALSE(text.empty());
  std::ostringstream expected;
  expected << std::hex << static_cast<void const*>(stream.value());
  EXPECT_EQ(text, expected.str());
}

TEST(FormatCompat, FormattedLog)
{
  EXPECT_EQ(rmm::detail::formatted_log("plain"), "plain");
  EXPECT_EQ(rmm::detail::formatted_log("%d-%s", 7, std::string{"x"}), "7-x");
  EXPECT_EQ(rmm::detail::formatted_log("%zu bytes", std::size_t{256}), "256 bytes");
}

TEST(FormatCompat, LoggingAssertPasses)
{
  int evaluated = 0;
  RMM_LOGGING_ASSERT((++evaluated, true));
#ifdef NDEBUG
  EXPECT_EQ(evaluated, 0);  // not evaluated in release builds, as in RMM
#else
  EXPECT_EQ(evaluated, 1);
#endif
}
