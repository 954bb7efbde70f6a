// The RMM 26.06 half of a program mixing API generations (RMM_API_VERSION=2606); see
// mixed_generations_a.cpp (25.02). Both halves link into one executable and share librmm's
// registry: what one sets, the other's getters return and allocate from.
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>
#include <rmm/rmm.h>

#include <cuda/memory_resource>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#if RMM_API_GENERATION != 2606
#error "mixed_generations_b.cpp must be compiled with RMM_API_VERSION=2606"
#endif

std::uint64_t a_set_pool_current();
bool a_current_is_the_pool();
void a_reset_and_free_pool();
std::uint64_t a_allocate_from_current(std::size_t bytes);
void a_reset_current();

namespace {
std::uint64_t id_of(rmm::device_async_resource_ref ref)
{
  std::uint64_t id = 0;
  EXPECT_EQ(rmm_resource_id(rmm::mr::detail::find_handle(ref), &id), RMM_STATUS_SUCCESS);
  return id;
}
}  // namespace

// 25.02 sets a pool (a pointer); 26.06's getters return it, and allocate from it.
TEST(MixedGenerations, Set2502Get2606)
{
  std::uint64_t const pool_id = a_set_pool_current();
  auto ref                    = rmm::mr::get_current_device_resource_ref();
  EXPECT_EQ(id_of(ref), pool_id);
  EXPECT_EQ(rmm::mr::get_current_device_resource_ref(), ref);  // one object per entry
  void* p = ref.allocate(cuda::stream_ref{cudaStream_t{}}, 4096, 256);
  ASSERT_NE(p, nullptr);
  ref.deallocate(cuda::stream_ref{cudaStream_t{}}, p, 4096, 256);
  EXPECT_TRUE(a_current_is_the_pool());  // 26.06's wrapper did not disturb 25.02's object
  a_reset_and_free_pool();
  auto after = rmm::mr::get_current_device_resource_ref();
  EXPECT_NE(cuda::mr::resource_cast<rmm::mr::cuda_memory_resource>(&after), nullptr);
}

// 26.06 sets an adaptor (by value); 25.02's getter returns a device_memory_resource* that
// allocates from it. 25.02 then replaces the entry: 26.06's object for it is released.
TEST(MixedGenerations, Set2606Get2502)
{
  rmm::mr::cuda_memory_resource cuda;
  rmm::mr::statistics_resource_adaptor stats{cuda};
  auto previous            = rmm::mr::set_current_device_resource(stats);
  std::uint64_t const seen = a_allocate_from_current(1000);
  EXPECT_EQ(stats.get_allocations_counter().total, 1);
  EXPECT_EQ(stats.get_bytes_counter().peak, 1000);
  EXPECT_EQ(seen, id_of(rmm::device_async_resource_ref{stats}));
  a_reset_current();
  auto now = rmm::mr::get_current_device_resource_ref();
  EXPECT_NE(cuda::mr::resource_cast<rmm::mr::cuda_memory_resource>(&now), nullptr);
  // The statistics adaptor is ours alone again: set, the registry shared it.
  a_allocate_from_current(64);
  EXPECT_EQ(stats.get_allocations_counter().total, 1);
}
