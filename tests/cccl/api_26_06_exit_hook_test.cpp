// rmm::detail::register_process_exit_hook (through rmm::mr::detail::get_ref_map, as RMM 26.06
// arms it): an exit handler registered before the hook runs after it, so it must see
// rmm::process_is_exiting() true -- even when librmm loaded the runtime (and registered its
// own hook) earlier than that handler. Exit status 0 when it does, 1 when it does not.
#include <rmm/cuda_device.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/process_is_exiting.hpp>

#include <cstdio>
#include <cstdlib>

namespace {
void expect_exiting() noexcept
{
  if (!rmm::process_is_exiting()) {
    std::fputs("process_is_exiting() is false in an exit handler registered before the hook\n",
               stderr);
    std::_Exit(1);  // inside exit handlers: report without running them again
  }
}
}  // namespace

int main()
{
  // Load the runtime first: librmm's own hook is then registered before expect_exiting and
  // runs after it, so only the front end's hook can set the flag in time.
  (void)rmm::get_current_cuda_device();
  if (rmm::process_is_exiting()) { return 3; }
  if (std::atexit(expect_exiting) != 0) { return 2; }
  [[maybe_unused]] auto const& map = rmm::mr::detail::get_ref_map();
  [[maybe_unused]] auto ref        = map[rmm::get_current_cuda_device()];
  return rmm::process_is_exiting() ? 4 : 0;
}
