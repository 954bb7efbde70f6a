// rmm/mr/device/polymorphic_allocator.hpp: polymorphic_allocator, stream_allocator_adaptor.
#include "test_resources.hpp"

#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/per_device_resource.hpp>
#include <rmm/mr/device/polymorphic_allocator.hpp>
#include <rmm/rmm.h>

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

namespace {

/// Device memory is host memory only on the host-emulation runtime.
bool device_memory_is_host_accessible()
{
  const char* name = nullptr;
  return rmm_runtime_name(&name) == RMM_STATUS_SUCCESS && name != nullptr &&
         std::string{name} == "host";
}

using int_adaptor = rmm::mr::stream_allocator_adaptor<rmm::mr::polymorphic_allocator<int>>;

static_assert(std::is_same_v<int_adaptor::value_type, int>);
static_assert(
  std::is_same_v<std::allocator_traits<int_adaptor>::rebind_alloc<double>,
                 rmm::mr::stream_allocator_adaptor<rmm::mr::polymorphic_allocator<double>>>);
static_assert(!std::is_default_constructible_v<int_adaptor>);

class allocator : public ::testing::Test {
 protected:
  void TearDown() override { rmm::mr::reset_current_device_resource(); }
};

TEST_F(allocator, DefaultUsesCurrentDeviceResource)
{
  rmm::mr::polymorphic_allocator<int> alloc;
  EXPECT_EQ(alloc.resource(), rmm::mr::get_current_device_resource());
  EXPECT_EQ(alloc.get_upstream_resource(), rmm::mr::get_current_device_resource_ref());
  int* p = alloc.allocate(100, rmm::cuda_stream_view{});
  ASSERT_NE(p, nullptr);
  alloc.deallocate(p, 100, rmm::cuda_stream_view{});
}

TEST_F(allocator, ExplicitResourceAndEquality)
{
  rmm::mr::cuda_memory_resource upstream;
  rmm_test::counting_resource mr{&upstream};
  rmm::mr::polymorphic_allocator<int> from_ptr{&mr};
  rmm::mr::polymorphic_allocator<int> from_ref{rmm::device_async_resource_ref{mr}};
  rmm::mr::polymorphic_allocator<double> other_type{from_ptr};
  EXPECT_EQ(from_ptr, from_ref);
  EXPECT_TRUE(from_ptr == other_type);
  EXPECT_EQ(other_type.resource(), &mr);
  rmm::mr::polymorphic_allocator<int> def;
  EXPECT_NE(from_ptr, def);

  double* d = other_type.allocate(10, rmm::cuda_stream_per_thread);
  EXPECT_EQ(mr.outstanding_bytes.load(), 10 * sizeof(double));
  other_type.deallocate(d, 10, rmm::cuda_stream_per_thread);
  EXPECT_EQ(mr.outstanding_bytes.load(), 0U);
  EXPECT_THROW(
    rmm::mr::polymorphic_allocator<int>{static_cast<rmm::mr::device_memory_resource*>(nullptr)},
    rmm::logic_error);
}

TEST_F(allocator, AdaptorAllocatesOnStoredStream)
{
  rmm::mr::cuda_memory_resource upstream;
  rmm_test::counting_resource mr{&upstream};
  rmm::mr::polymorphic_allocator<int> alloc{&mr};
  int_adaptor adapted{alloc, rmm::cuda_stream_per_thread};
  EXPECT_EQ(adapted.stream(), rmm::cuda_stream_per_thread);
  EXPECT_EQ(adapted.underlying_allocator(), alloc);
  int* p = adapted.allocate(25);
  // Through the allocator's resource reference: 100 bytes rounded up to 16, as in RMM.
  EXPECT_EQ(mr.outstanding_bytes.load(), 112U);
  adapted.deallocate(p, 25);
  EXPECT_EQ(mr.outstanding_bytes.load(), 0U);
}

TEST_F(allocator, ClassTemplateArgumentDeduction)
{
  rmm::mr::polymorphic_allocator<int> alloc;
  rmm::mr::stream_allocator_adaptor adapted{alloc, rmm::cuda_stream_view{}};
  static_assert(std::is_same_v<decltype(adapted), int_adaptor>);
  auto old_style = rmm::mr::make_stream_allocator_adaptor(alloc, rmm::cuda_stream_view{});
  static_assert(std::is_same_v<decltype(old_style), int_adaptor>);
  EXPECT_EQ(adapted, old_style);
}

TEST_F(allocator, RebindKeepsResourceAndStream)
{
  rmm::mr::cuda_memory_resource upstream;
  rmm_test::counting_resource mr{&upstream};
  int_adaptor adapted{rmm::mr::polymorphic_allocator<int>{&mr}, rmm::cuda_stream_per_thread};
  using double_adaptor = int_adaptor::rebind<double>::other;
  double_adaptor rebound{adapted};
  EXPECT_EQ(rebound.stream(), rmm::cuda_stream_per_thread);
  EXPECT_EQ(rebound.underlying_allocator().resource(), &mr);
  EXPECT_TRUE(rebound == adapted);
  double* d = rebound.allocate(4);
  EXPECT_EQ(mr.outstanding_bytes.load(), 4 * sizeof(double));
  rebound.deallocate(d, 4);
  EXPECT_EQ(mr.outstanding_bytes.load(), 0U);
}

TEST_F(allocator, StdVectorThroughAdaptor)
{
  rmm::mr::cuda_memory_resource upstream;
  rmm_test::counting_resource mr{&upstream};
  int_adaptor adapted{rmm::mr::polymorphic_allocator<int>{&mr}, rmm::cuda_stream_view{}};
  if (!device_memory_is_host_accessible()) {
    // Only allocate: elements of device memory cannot be touched from the host here.
    int* p = std::allocator_traits<int_adaptor>::allocate(adapted, 1000);
    std::allocator_traits<int_adaptor>::deallocate(adapted, p, 1000);
    EXPECT_EQ(mr.outstanding_bytes.load(), 0U);
    GTEST_SKIP() << "device memory is not host accessible on this runtime";
  }
  {
    std::vector<int, int_adaptor> v(1000, 0, adapted);
    EXPECT_EQ(mr.outstanding_bytes.load(), 1000 * sizeof(int));
    std::iota(v.begin(), v.end(), 0);
    EXPECT_EQ(std::accumulate(v.begin(), v.end(), 0L), 999L * 1000L / 2L);
    v.push_back(1000);
    EXPECT_EQ(v.back(), 1000);
    auto copy = v;
    EXPECT_EQ(copy, v);
    EXPECT_EQ(copy.get_allocator(), adapted);
  }
  EXPECT_EQ(mr.outstanding_bytes.load(), 0U);
  EXPECT_EQ(mr.allocations.load(), mr.deallocations.load());
}

}  // namespace
