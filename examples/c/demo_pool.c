/* The demo of scripts/demo.sh: an rmm pool serving a workload of mixed-size allocate/free
 * pairs, timed against the runtime's own allocation calls (cudaMalloc/cudaFree,
 * hipMalloc/hipFree, or the host emulation's) on the same workload.
 *
 * The runtime is the one RMM_RUNTIME selects (unset: auto, the GPU runtime found). When auto
 * finds no usable GPU runtime, the program says so in one line and runs itself again with
 * RMM_RUNTIME=host (a process chooses its runtime once, on first use).
 * Build: cc demo_pool.c $(pkg-config --cflags --libs rmm)
 * Exits 0 on success, 2 when the runtime asked for is not usable, 1 on any other failure. */
#define _POSIX_C_SOURCE 200809L

#include <rmm/rmm.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
  PAIRS     = 5000, /* allocate/free pairs per run */
  MAX_LIVE  = 64,   /* blocks alive at once, at most */
  MAX_SHIFT = 14,   /* sizes from 256 B to 256 << 14 = 4 MiB */
  RUNS      = 3     /* runs per resource; the best one is reported */
};

static const size_t pool_initial_bytes = (size_t)256 << 20;

/* Prints the failure of `call` and returns false from the enclosing function. */
#define CHECK(call)                             \
  do {                                          \
    rmm_status_t check_status_ = (call);        \
    if (check_status_ != RMM_STATUS_SUCCESS) {  \
      fprintf(stderr,                           \
              "%s failed: %s: %s\n",            \
              #call,                            \
              rmm_status_string(check_status_), \
              rmm_last_error_message());        \
      return false;                             \
    }                                           \
  } while (0)

/* A small deterministic generator, so that every run replays the same workload. */
static uint64_t next_random(uint64_t* state)
{
  *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
  return *state >> 33;
}

static double now_seconds(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One run of the workload on `mr`: PAIRS allocations of 256 B to 4 MiB (multiples of 256,
 * sizes spread over every power of two), freed in random order with up to MAX_LIVE blocks
 * alive. `seconds` gets the wall time, the final device synchronization included. */
static bool run_workload(rmm_resource_t mr, double* seconds)
{
  void* ptrs[MAX_LIVE];
  size_t sizes[MAX_LIVE];
  size_t live      = 0;
  size_t allocated = 0;
  uint64_t state   = 42;
  double start     = now_seconds();

  while (allocated < PAIRS || live > 0) {
    bool allocate =
      allocated < PAIRS && live < MAX_LIVE && (live == 0 || next_random(&state) % 2 == 0);
    if (allocate) {
      size_t shift = (size_t)(next_random(&state) % (MAX_SHIFT + 1));
      size_t bytes = (size_t)(next_random(&state) % ((uint64_t)1 << shift) + 1) * 256;
      CHECK(rmm_allocate(mr, bytes, &ptrs[live]));
      if (ptrs[live] == NULL || ((uintptr_t)ptrs[live]) % 256 != 0) {
        fprintf(stderr,
                "allocation of %zu bytes gave %p, not a 256-byte aligned block\n",
                bytes,
                ptrs[live]);
        return false;
      }
      sizes[live] = bytes;
      ++live;
      ++allocated;
    } else {
      size_t victim = (size_t)(next_random(&state) % live);
      CHECK(rmm_deallocate(mr, ptrs[victim], sizes[victim]));
      --live;
      ptrs[victim]  = ptrs[live];
      sizes[victim] = sizes[live];
    }
  }
  CHECK(rmm_device_synchronize());
  *seconds = now_seconds() - start;
  return true;
}

/* The runtime's allocation calls, by name, for the table. */
static const char* raw_calls(const char* runtime)
{
  if (strcmp(runtime, "cuda") == 0) { return "cudaMalloc/cudaFree"; }
  if (strcmp(runtime, "hip") == 0) { return "hipMalloc/hipFree"; }
  return "hostMalloc/hostFree (emulated)";
}

static bool demo(void)
{
  const char* runtime     = NULL;
  const char* description = NULL;
  char device_name[256]   = "";
  int32_t device          = 0;
  rmm_resource_t raw      = NULL;
  rmm_resource_t pool     = NULL;
  rmm_pool_stats stats;
  double best[2] = {0.0, 0.0};
  int run;
  int which;

  CHECK(rmm_runtime_name(&runtime));
  CHECK(rmm_runtime_description(&description));
  CHECK(rmm_get_current_device(&device));
  CHECK(rmm_device_get_name(device_name, sizeof device_name, device));
  printf("runtime: %s (%s), device %d: %s\n", runtime, description, (int)device, device_name);
  printf(
    "workload: %d allocate/free pairs of 256 B to 4 MiB, up to %d blocks live; best of %d "
    "runs\n\n",
    PAIRS,
    MAX_LIVE,
    RUNS);

  /* The runtime's malloc/free (cuda_memory_resource) and an rmm pool over it. */
  CHECK(rmm_cuda_create(&raw));
  CHECK(rmm_pool_create(raw, pool_initial_bytes, 0, &pool));

  /* Alternating, so that both see the same machine state. */
  for (run = 0; run < RUNS; ++run) {
    for (which = 0; which < 2; ++which) {
      double seconds = 0.0;
      if (!run_workload(which == 0 ? raw : pool, &seconds)) {
        (void)rmm_resource_release(pool);
        (void)rmm_resource_release(raw);
        return false;
      }
      if (run == 0 || seconds < best[which]) { best[which] = seconds; }
    }
  }

  printf("%-32s %10s %15s %10s\n", "resource", "time (ms)", "per pair (us)", "speed-up");
  printf(
    "%-32s %10.2f %15.3f %9.1fx\n", raw_calls(runtime), best[0] * 1e3, best[0] * 1e6 / PAIRS, 1.0);
  printf("%-32s %10.2f %15.3f %9.1fx\n",
         "rmm pool (over the same calls)",
         best[1] * 1e3,
         best[1] * 1e6 / PAIRS,
         best[0] / best[1]);

  memset(&stats, 0, sizeof stats);
  if (rmm_pool_get_stats(pool, &stats) == RMM_STATUS_SUCCESS) {
    printf(
      "\nthe pool took %zu MiB from the runtime (%zu MiB up front) and served all %d runs "
      "from it\n",
      stats.pool_size >> 20,
      pool_initial_bytes >> 20,
      RUNS);
  }
  (void)rmm_resource_release(pool);
  (void)rmm_resource_release(raw);
  return true;
}

int main(int argc, char** argv)
{
  const char* asked   = getenv("RMM_RUNTIME");
  const char* runtime = NULL;
  rmm_status_t status;
  (void)argc;

  /* The first call chooses the runtime. With auto and no usable GPU runtime, say so in one
   * line and start over on the host emulation. */
  status = rmm_runtime_name(&runtime);
  if (status == RMM_STATUS_NO_RUNTIME &&
      (asked == NULL || asked[0] == '\0' || strcmp(asked, "auto") == 0)) {
    printf(
      "no usable GPU runtime (HIP or CUDA with a device): running on the host emulation "
      "(RMM_RUNTIME=host, devices emulated in host memory)\n");
    fflush(stdout);
    if (setenv("RMM_RUNTIME", "host", 1) != 0) {
      perror("setenv");
      return 1;
    }
    execv("/proc/self/exe", argv);
    perror("execv /proc/self/exe");
    return 1;
  }
  if (status != RMM_STATUS_SUCCESS) {
    fprintf(stderr, "no runtime: %s: %s\n", rmm_status_string(status), rmm_last_error_message());
    return status == RMM_STATUS_NO_RUNTIME ? 2 : 1;
  }
  if (!demo()) {
    fprintf(stderr, "demo: failed\n");
    return 1;
  }
  return 0;
}
