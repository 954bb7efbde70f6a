// rmm/detail/nvtx/ranges.hpp: compiles with or without NVTX, ranges nest and do nothing visible.
#include <rmm/detail/nvtx/ranges.hpp>

#include <gtest/gtest.h>

#include <string>
#include <type_traits>

static_assert(!std::is_copy_constructible_v<rmm::scoped_range>);

namespace {
int traced_function(int x)
{
  RMM_FUNC_RANGE();
  return x + 1;
}
}  // namespace

TEST(NvtxRangesCompat, DomainAndRanges)
{
  EXPECT_EQ(std::string{rmm::librmm_domain::name}, "librmm");
  {
    rmm::scoped_range outer{"outer"};
    rmm::scoped_range inner{"inner"};
    EXPECT_EQ(traced_function(1), 2);
  }
  rmm::scoped_range unnamed{};
  (void)unnamed;
}
