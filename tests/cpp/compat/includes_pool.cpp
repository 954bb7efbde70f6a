// Only rmm/mr/device/pool_memory_resource.hpp: the names RMM's pool header brings along.
#include <rmm/mr/device/pool_memory_resource.hpp>

#include <gtest/gtest.h>

TEST(TransitiveIncludes, Pool)
{
  std::map<int, std::set<int>> m;               // <map>, <set>
  std::unordered_map<int, std::vector<int>> u;  // <unordered_map>, <vector>
  std::mutex mu;                                // <mutex>
  std::lock_guard<std::mutex> g{mu};
  int const v[] = {1, 2, 3};
  EXPECT_EQ(std::accumulate(v, v + 3, 0), 6);                         // <numeric>
  EXPECT_EQ(rmm::detail::format_bytes(2048), "2.000000 KiB");         // rmm/detail/format.hpp
  EXPECT_EQ(rmm::align_up(1, rmm::CUDA_ALLOCATION_ALIGNMENT), 256U);  // rmm/aligned.hpp
  RMM_LOGGING_ASSERT(m.empty() && u.empty());
  EXPECT_NE(std::this_thread::get_id(), std::thread::id{});  // <thread>
}
