// rmm/detail/aligned.hpp and rmm/aligned.hpp: names of RMM 25.02 and the older rmm::detail ones.
#include <rmm/aligned.hpp>
#include <rmm/detail/aligned.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

static_assert(rmm::CUDA_ALLOCATION_ALIGNMENT == 256);
static_assert(rmm::RMM_DEFAULT_HOST_ALIGNMENT == alignof(std::max_align_t));
static_assert(rmm::is_pow2(64) && !rmm::is_pow2(0) && !rmm::is_pow2(96));
static_assert(rmm::align_up(1, 256) == 256 && rmm::align_down(511, 256) == 256);
static_assert(rmm::is_aligned(std::size_t{512}, 256));
// Older code (hipMM main / RMM 23.12) spells them in rmm::detail.
static_assert(rmm::detail::is_pow2(8) && rmm::detail::is_supported_alignment(16));
static_assert(rmm::detail::align_up(3, 4) == 4 && rmm::detail::align_down(7, 4) == 4);
static_assert(rmm::detail::is_aligned(std::size_t{8}, 4));
static_assert(rmm::detail::CUDA_ALLOCATION_ALIGNMENT == 256);

TEST(AlignedCompat, PointerAligned)
{
  alignas(256) static char buffer[512];
  EXPECT_TRUE(rmm::is_pointer_aligned(buffer));
  EXPECT_FALSE(rmm::is_pointer_aligned(buffer + 1));
  EXPECT_TRUE(rmm::detail::is_pointer_aligned(buffer + 8, 8));
}

TEST(AlignedCompat, HostAllocateHonoursAlignment)
{
  int frees = 0;
  for (std::size_t alignment : {8UL, 64UL, 256UL, 4096UL}) {
    void* p = rmm::detail::aligned_host_allocate(
      100, alignment, [](std::size_t n) { return std::malloc(n); });
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(rmm::is_pointer_aligned(p, alignment));
    std::memset(p, 0x5a, 100);
    rmm::detail::aligned_host_deallocate(p, 100, alignment, [&](void* q) {
      ++frees;
      std::free(q);
    });
  }
  EXPECT_EQ(frees, 4);
}

TEST(AlignedCompat, OlderAllocateNames)
{
  void* p = rmm::detail::aligned_allocate(33, 128, [](std::size_t n) { return ::operator new(n); });
  EXPECT_TRUE(rmm::is_pointer_aligned(p, 128));
  rmm::detail::aligned_deallocate(p, 33, 128, [](void* q) { ::operator delete(q); });
}
