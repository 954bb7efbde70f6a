// rmm/cuda_stream.hpp and rmm/cuda_stream_view.hpp: every comparison and print that RMM accepts.
#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_view.hpp>

#include <gtest/gtest.h>

#include <sstream>
#include <type_traits>

// As in RMM the owning stream converts to its handle only explicitly.
static_assert(!std::is_convertible_v<rmm::cuda_stream const&,
                                     decltype(std::declval<rmm::cuda_stream_view>().value())>);
static_assert(std::is_convertible_v<rmm::cuda_stream const&, rmm::cuda_stream_view>);
static_assert(std::is_constructible_v<decltype(std::declval<rmm::cuda_stream_view>().value()),
                                      rmm::cuda_stream const&>);
static_assert(!std::is_copy_constructible_v<rmm::cuda_stream>);
static_assert(std::is_nothrow_move_constructible_v<rmm::cuda_stream>);

TEST(CudaStreamCompat, Comparisons)
{
  rmm::cuda_stream stream_a;
  rmm::cuda_stream stream_b;
  rmm::cuda_stream_view view_a = stream_a;
  EXPECT_NE(stream_a, stream_b);
  EXPECT_EQ(stream_a, stream_a);
  EXPECT_EQ(stream_a, view_a);
  EXPECT_EQ(view_a, stream_a);
  EXPECT_NE(stream_b, view_a);
  EXPECT_NE(view_a, stream_b);
  EXPECT_NE(view_a, rmm::cuda_stream_default);
  EXPECT_EQ(rmm::cuda_stream_view{}, rmm::cuda_stream_default);
  EXPECT_TRUE(stream_a == view_a);
  EXPECT_FALSE(stream_a != stream_a.view());
  EXPECT_TRUE(stream_a.view() != stream_b.view());
}

TEST(CudaStreamCompat, Print)
{
  rmm::cuda_stream stream;
  std::ostringstream a;
  std::ostringstream b;
  a << stream;
  b << stream.view();
  EXPECT_EQ(a.str(), b.str());
  EXPECT_FALSE(a.str().empty());
  std::ostringstream c;
  c << rmm::cuda_stream_per_thread << ' ' << rmm::cuda_stream_legacy;
  EXPECT_FALSE(c.str().empty());
}

TEST(CudaStreamCompat, ExplicitHandleConversionAndViews)
{
  rmm::cuda_stream stream;
  auto handle = static_cast<decltype(stream.value())>(stream);
  EXPECT_EQ(handle, stream.value());
  rmm::cuda_stream_view view{stream};
  EXPECT_EQ(view.value(), handle);
  EXPECT_TRUE(stream.is_valid());
  EXPECT_FALSE(view.is_default());
  EXPECT_FALSE(view.is_per_thread_default());
  stream.synchronize();
  view.synchronize_no_throw();
}
