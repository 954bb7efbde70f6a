// Alternates the generations' pool paths round by round (so drift of the machine hits each
// alike) and prints each path's median ns per allocate+free pair and its ratio to 25.02's.
#include "churn.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

double churn_25_02(churn::plan const& p, std::size_t live, std::size_t pool_bytes);
double churn_25_02_ref(churn::plan const& p, std::size_t live, std::size_t pool_bytes);
double churn_26_06_any(churn::plan const& p, std::size_t live, std::size_t pool_bytes);
double churn_26_06_ref(churn::plan const& p, std::size_t live, std::size_t pool_bytes);

namespace {
double median(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
}  // namespace

int main(int argc, char** argv)
{
  std::size_t steps = 1000000;
  int rounds        = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string const arg{argv[i]};
    if (arg == "--steps") { steps = std::strtoull(argv[i + 1], nullptr, 10); }
    if (arg == "--rounds") { rounds = std::atoi(argv[i + 1]); }
  }
  constexpr std::size_t live       = 1000;
  constexpr std::size_t pool_bytes = std::size_t{2} << 30;
  churn::plan const plan{live, steps, 42};
  // One warm-up round of each, then timed rounds in alternating order.
  churn_25_02(plan, live, pool_bytes);
  churn_26_06_any(plan, live, pool_bytes);
  churn_26_06_ref(plan, live, pool_bytes);
  churn_25_02_ref(plan, live, pool_bytes);
  std::vector<double> v2502, v2502ref, vany, vref;
  for (int r = 0; r < rounds; ++r) {
    if (r % 2 == 0) {
      v2502.push_back(churn_25_02(plan, live, pool_bytes));
      v2502ref.push_back(churn_25_02_ref(plan, live, pool_bytes));
      vany.push_back(churn_26_06_any(plan, live, pool_bytes));
      vref.push_back(churn_26_06_ref(plan, live, pool_bytes));
    } else {
      vref.push_back(churn_26_06_ref(plan, live, pool_bytes));
      vany.push_back(churn_26_06_any(plan, live, pool_bytes));
      v2502ref.push_back(churn_25_02_ref(plan, live, pool_bytes));
      v2502.push_back(churn_25_02(plan, live, pool_bytes));
    }
  }
  double const base = median(v2502);
  std::printf(
    "W2 churn, pool, %zu steps, median of %d rounds (ns per allocate+free pair)\n", steps, rounds);
  std::printf("| path | ns/pair | ratio to 25.02 |\n| --- | --- | --- |\n");
  std::printf("| 25.02 pool_memory_resource<cuda_memory_resource>, direct | %.1f | 1.000 |\n",
              base);
  std::printf(
    "| 25.02 pool_memory_resource<cuda_memory_resource> through device_async_resource_ref | %.1f | "
    "%.3f |\n",
    median(v2502ref),
    median(v2502ref) / base);
  std::printf("| 26.06 pool_memory_resource through any_resource | %.1f | %.3f |\n",
              median(vany),
              median(vany) / base);
  std::printf("| 26.06 pool_memory_resource through device_async_resource_ref | %.1f | %.3f |\n",
              median(vref),
              median(vref) / base);
  return 0;
}
