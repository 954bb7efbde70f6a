// rmm/detail/stack_trace.hpp: capture and print.
#include <rmm/detail/stack_trace.hpp>

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace {
__attribute__((noinline)) rmm::detail::stack_trace capture_here()
{
  return rmm::detail::stack_trace{};
}
}  // namespace

TEST(StackTraceCompat, PrintsFrames)
{
  auto const trace = capture_here();
  std::ostringstream out;
  out << trace;
  std::string const text = out.str();
#if defined(RMM_ENABLE_STACK_TRACES)
  EXPECT_EQ(text.rfind("#0 in ", 0), 0U) << text;
  EXPECT_NE(text.find("#1 in "), std::string::npos) << text;
#else
  EXPECT_EQ(text, "stack traces disabled\n");
#endif
}
