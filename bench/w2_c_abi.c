// W2 ("churn": 1 000 live blocks, log-uniform 256 B - 1 MiB, each step frees a random one and
// allocates another) through librmm's C ABI on a pool, timed per operation: compares
// librmm.so builds (run it with LD_LIBRARY_PATH pointing at each), e.g. with and without the
// memory history's check on the allocation path. Prints "w2_c_abi pool|vmm_pool NS ns/op",
// the median of ROUNDS runs of STEPS steps.
//   gcc -O2 -I PREFIX/include bench/w2_c_abi.c -L PREFIX/lib -lrmm -lm -o w2_c_abi
//   ./w2_c_abi pool|vmm_pool [STEPS] [ROUNDS] [POOL_MIB]
// POOL_MIB is the pool's initial size (256 by default; rmm-bench's churn uses 8192).
#include <rmm/rmm.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng = 7;
static uint64_t next(void)
{
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 0x2545f4914f6cdd1dULL;
}
static size_t log_uniform(void)
{
  double const u = (double)(next() >> 11) / (double)(1ULL << 53);
  double const a = log(256.0), b = log(1048576.0);
  return (size_t)exp(a + u * (b - a));
}
static double now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}
static int cmp(void const* x, void const* y)
{
  double const a = *(double const*)x, b = *(double const*)y;
  return (a > b) - (a < b);
}
#define CHECK(call)                                                        \
  do {                                                                     \
    if ((call) != RMM_STATUS_SUCCESS) {                                    \
      fprintf(stderr, "%s failed: %s\n", #call, rmm_last_error_message()); \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

enum { LIVE = 1000 };
int main(int argc, char** argv)
{
  char const* kind  = argc > 1 ? argv[1] : "pool";
  long const steps  = argc > 2 ? atol(argv[2]) : 1000000;
  int const rounds  = argc > 3 ? atoi(argv[3]) : 7;
  size_t const mib  = argc > 4 ? (size_t)atol(argv[4]) : 256;
  rmm_resource_t mr = NULL;
  if (strcmp(kind, "vmm_pool") == 0) {
    CHECK(rmm_vmm_pool_create(NULL, &mr));
  } else {
    rmm_resource_t up = NULL;
    CHECK(rmm_cuda_create(&up));
    CHECK(rmm_pool_create(up, mib << 20, 0, &mr));
    rmm_resource_release(up);
  }
  static void* ptr[LIVE];
  static size_t size[LIVE];
  uint32_t* pick = malloc(sizeof(uint32_t) * steps);
  size_t* want   = malloc(sizeof(size_t) * steps);
  double times[64];
  for (int r = 0; r <= rounds && r < 64; r++) {
    rng = 7;
    for (int i = 0; i < LIVE; i++) {
      size[i] = log_uniform();
      CHECK(rmm_allocate_async(mr, size[i], NULL, &ptr[i]));
    }
    for (long s = 0; s < steps; s++) {
      pick[s] = (uint32_t)(next() % LIVE);
      want[s] = log_uniform();
    }
    double const t0 = now_ns();
    for (long s = 0; s < steps; s++) {
      uint32_t const i = pick[s];
      CHECK(rmm_deallocate_async(mr, ptr[i], size[i], NULL));
      size[i] = want[s];
      CHECK(rmm_allocate_async(mr, size[i], NULL, &ptr[i]));
    }
    times[r] = (now_ns() - t0) / (2.0 * steps);
    for (int i = 0; i < LIVE; i++) {
      CHECK(rmm_deallocate_async(mr, ptr[i], size[i], NULL));
    }
  }
  // Round 0 warms up.
  qsort(times + 1, rounds, sizeof(double), cmp);
  printf("w2_c_abi %s %.1f ns/op\n", kind, times[1 + rounds / 2]);
  rmm_resource_release(mr);
  free(pick);
  free(want);
  return 0;
}
