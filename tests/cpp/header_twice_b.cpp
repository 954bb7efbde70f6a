// Second translation unit of the include-everything-twice test.
#include "rmm_all_headers.hpp"
#include "rmm_all_headers.hpp"

rmm::mr::device_memory_resource* current_resource_from_tu_b();
rmm::mr::device_memory_resource* set_resource_from_tu_b(rmm::mr::device_memory_resource* mr);

rmm::mr::device_memory_resource* current_resource_from_tu_b()
{
  return rmm::mr::get_current_device_resource();
}

rmm::mr::device_memory_resource* set_resource_from_tu_b(rmm::mr::device_memory_resource* mr)
{
  return rmm::mr::set_current_device_resource(mr);
}
