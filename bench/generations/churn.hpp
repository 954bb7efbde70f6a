// The W2 "churn" loop (BENCH.md), written once for any allocate/deallocate pair: a working
// set of 1 000 live blocks, sizes log-uniform in [256 B, 1 MiB] from a fixed seed; each step
// frees a uniformly chosen block and allocates a new one. Returns ns per allocate+free pair.
#pragma once

#include <chrono>
#include <cmath>
#include <cstddef>
#include <random>
#include <utility>
#include <vector>

namespace churn {

/// Sizes and victims drawn before timing, so the loop times the resource alone.
struct plan {
  std::vector<std::size_t> sizes;
  std::vector<std::size_t> victims;
  plan(std::size_t live, std::size_t steps, unsigned seed)
  {
    std::mt19937_64 gen{seed};
    std::uniform_real_distribution<double> exponent{std::log(256.0), std::log(1048576.0)};
    std::uniform_int_distribution<std::size_t> victim{0, live - 1};
    sizes.reserve(live + steps);
    for (std::size_t i = 0; i < live + steps; ++i) {
      sizes.push_back(static_cast<std::size_t>(std::exp(exponent(gen))));
    }
    victims.reserve(steps);
    for (std::size_t i = 0; i < steps; ++i) {
      victims.push_back(victim(gen));
    }
  }
};

template <typename Alloc, typename Free>
double run(plan const& p, std::size_t live, Alloc&& alloc, Free&& free)
{
  std::vector<std::pair<void*, std::size_t>> blocks(live);
  for (std::size_t i = 0; i < live; ++i) {
    blocks[i] = {alloc(p.sizes[i]), p.sizes[i]};
  }
  auto const start = std::chrono::steady_clock::now();
  for (std::size_t s = 0; s < p.victims.size(); ++s) {
    auto& b = blocks[p.victims[s]];
    free(b.first, b.second);
    b = {alloc(p.sizes[live + s]), p.sizes[live + s]};
  }
  auto const stop = std::chrono::steady_clock::now();
  for (auto& b : blocks) {
    free(b.first, b.second);
  }
  return std::chrono::duration<double, std::nano>(stop - start).count() /
         static_cast<double>(p.victims.size());
}

}  // namespace churn
