// Examples of hipMM's README, written against rmm-rs: stream_allocator_adaptor and
// logging_resource_adaptor.
#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/logging_resource_adaptor.hpp>
#include <rmm/mr/device/per_device_resource.hpp>
#include <rmm/mr/device/polymorphic_allocator.hpp>
#include <rmm/rmm.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

TEST(ReadmeExamples, StreamAllocatorAdaptor)
{
  rmm_stream_t raw = nullptr;
  ASSERT_EQ(rmm_stream_create(0, &raw), RMM_STATUS_SUCCESS);
  rmm::cuda_stream_view stream{rmm::detail::from_c_stream(raw)};

  rmm::mr::polymorphic_allocator<int> stream_alloc;
  // Constructs an adaptor that forwards all (de)allocations to `stream_alloc` on `stream`.
  auto adapted = rmm::mr::stream_allocator_adaptor(stream_alloc, stream);
  // Allocates 100 ints using `stream_alloc` on `stream`.
  auto p = adapted.allocate(100);
  EXPECT_NE(p, nullptr);
  // Deallocates using `stream_alloc` on `stream`.
  adapted.deallocate(p, 100);

  // The older spelling.
  auto old_style = rmm::mr::make_stream_allocator_adaptor(stream_alloc, stream);
  EXPECT_EQ(old_style.stream(), stream);

  stream.synchronize();
  ASSERT_EQ(rmm_stream_destroy(raw), RMM_STATUS_SUCCESS);
}

TEST(ReadmeExamples, LoggingResourceAdaptor)
{
  int marker = 0;
  std::filesystem::path const file =
    std::filesystem::temp_directory_path() /
    ("rmm_readme_log_" + std::to_string(reinterpret_cast<std::uintptr_t>(&marker)) + ".csv");
  {
    rmm::mr::cuda_memory_resource upstream;
    rmm::mr::logging_resource_adaptor<rmm::mr::cuda_memory_resource> log_mr{&upstream,
                                                                            file.string()};
    // Every (de)allocation through log_mr is logged, in CSV.
    void* p = log_mr.allocate(100);
    log_mr.deallocate(p, 100);
    log_mr.flush();
  }
  std::ifstream in{file};
  ASSERT_TRUE(in.good());
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header, "Thread,Time,Action,Pointer,Size,Stream");
  std::stringstream rest;
  rest << in.rdbuf();
  EXPECT_NE(rest.str().find("allocate"), std::string::npos);
  EXPECT_NE(rest.str().find("free"), std::string::npos);
  in.close();
  std::filesystem::remove(file);
}

}  // namespace
