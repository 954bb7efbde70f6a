// Only rmm/mr/device/tracking_resource_adaptor.hpp: stack_trace, logger, <sstream>, locks.
#include <rmm/mr/device/tracking_resource_adaptor.hpp>

#include <gtest/gtest.h>

TEST(TransitiveIncludes, TrackingAdaptor)
{
  std::ostringstream out;  // <sstream>
  out << rmm::detail::stack_trace{};
  EXPECT_FALSE(out.str().empty());
  std::shared_mutex m;  // <shared_mutex>
  std::unique_lock<std::shared_mutex> lock{m};
  rmm::default_logger().flush();  // rmm/logger.hpp
  rmm::device_async_resource_ref ref = rmm::mr::get_current_device_resource_ref();
  (void)ref;
}
