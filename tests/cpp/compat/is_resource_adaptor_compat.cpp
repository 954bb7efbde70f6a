// rmm/mr/is_resource_adaptor.hpp: the trait as RMM 25.02 defines it (a variable template).
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/limiting_resource_adaptor.hpp>
#include <rmm/mr/device/statistics_resource_adaptor.hpp>
#include <rmm/mr/device/thread_safe_resource_adaptor.hpp>
#include <rmm/mr/is_resource_adaptor.hpp>

#include <gtest/gtest.h>

#include <cstddef>

namespace {
// Has get_upstream_resource() but is no memory resource.
struct not_a_resource {
  int get_upstream_resource() const { return 0; }
};
}  // namespace

using cuda_mr = rmm::mr::cuda_memory_resource;

static_assert(!rmm::mr::is_resource_adaptor<cuda_mr>);
static_assert(!rmm::mr::is_resource_adaptor<int>);
static_assert(!rmm::mr::is_resource_adaptor<not_a_resource>);
static_assert(rmm::mr::is_resource_adaptor<rmm::mr::statistics_resource_adaptor<cuda_mr>>);
static_assert(rmm::mr::is_resource_adaptor<rmm::mr::limiting_resource_adaptor<cuda_mr>>);
static_assert(rmm::mr::is_resource_adaptor<rmm::mr::thread_safe_resource_adaptor<cuda_mr>>);

// Usable in if constexpr, the way downstream code walks adaptor chains.
template <typename Resource>
constexpr bool adapts()
{
  if constexpr (rmm::mr::is_resource_adaptor<Resource>) {
    return true;
  } else {
    return false;
  }
}

TEST(IsResourceAdaptorCompat, ValuesAtRunTime)
{
  EXPECT_TRUE(adapts<rmm::mr::statistics_resource_adaptor<cuda_mr>>());
  EXPECT_FALSE(adapts<cuda_mr>());
}
