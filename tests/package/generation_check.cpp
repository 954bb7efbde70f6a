// Compiled by a consumer that asked find_package(rmm <version>): the package must have
// selected that release's API for this translation unit, in that generation's namespace.
#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/cuda_stream.hpp>
#include <rmm/version_config.hpp>

#include <cstdio>
#include <type_traits>

static_assert(RMM_API_VERSION == RMM_EXPECTED_API_VERSION,
              "find_package(rmm <version>) must select that RMM release's API");
static_assert(RMM_VERSION_MAJOR * 100 + RMM_VERSION_MINOR == RMM_EXPECTED_API_VERSION,
              "rmm/version_config.hpp must report the selected release");

#if RMM_EXPECTED_API_VERSION == 2502
static_assert(RMM_API_GENERATION == 2502);
static_assert(std::is_same_v<rmm::cuda_stream_view, rmm::api_25_02::cuda_stream_view>);
#elif RMM_EXPECTED_API_VERSION <= 2510
static_assert(RMM_API_GENERATION == 2510);
static_assert(std::is_same_v<rmm::cuda_stream_view, rmm::api_25_10::cuda_stream_view>);
#elif RMM_EXPECTED_API_VERSION <= 2606
static_assert(RMM_API_GENERATION == 2606);
static_assert(std::is_same_v<rmm::cuda_stream_view, rmm::api_26_06::cuda_stream_view>);
#elif RMM_EXPECTED_API_VERSION == 2608
static_assert(RMM_API_GENERATION == 2608);
static_assert(std::is_same_v<rmm::cuda_stream_view, rmm::api_26_08::cuda_stream_view>);
#else
static_assert(RMM_API_GENERATION == 2610);
// cuda_stream_view is deprecated in RMM 26.10: check the namespace through a class it keeps.
static_assert(std::is_same_v<rmm::cuda_stream, rmm::api_26_10::cuda_stream>);
#endif

int main()
{
  std::printf(
    "RMM API %d.%02d (generation %d)\n", RMM_VERSION_MAJOR, RMM_VERSION_MINOR, RMM_API_GENERATION);
#if RMM_EXPECTED_API_VERSION >= 2610
  return rmm::detail::is_default_stream(cuda::stream_ref{cudaStream_t{}}) ? 0 : 1;
#else
  return rmm::cuda_stream_view{}.is_default() ? 0 : 1;
#endif
}
