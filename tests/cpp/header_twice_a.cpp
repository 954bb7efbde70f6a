// Every public header included in two translation units linked into one program: a
// non-inline definition in a header fails the link.
#include "rmm_all_headers.hpp"
#include "rmm_all_headers.hpp"

#include <gtest/gtest.h>

rmm::mr::device_memory_resource* current_resource_from_tu_b();
rmm::mr::device_memory_resource* set_resource_from_tu_b(rmm::mr::device_memory_resource* mr);

namespace {

TEST(HeadersTwice, BothUnitsShareTheRegistry)
{
  auto* initial = rmm::mr::get_current_device_resource();
  EXPECT_EQ(current_resource_from_tu_b(), initial);
  rmm::mr::cuda_memory_resource mine;
  EXPECT_EQ(set_resource_from_tu_b(&mine), initial);
  EXPECT_EQ(rmm::mr::get_current_device_resource(), &mine);
  EXPECT_EQ(rmm::mr::set_current_device_resource(nullptr), &mine);
  EXPECT_EQ(current_resource_from_tu_b(), initial);
}

}  // namespace
