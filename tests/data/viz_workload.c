/* A small program for scripts/check-viz.sh: allocations from a few call sites through the
 * C ABI, recorded by RMM_MEMORY_HISTORY (with RMM_MEMORY_HISTORY_STACKS=1) and written as a
 * snapshot at exit. The counts per site are what the script expects in rmm-viz's sites
 * table:
 *   load_batch     3 calls x 8 allocations = 24 (kept until the end of their phase)
 *   scratch        40 allocations (each freed at once)
 *   build_cache    6 allocations (live at exit)
 *   stream_work    10 allocations on a stream of its own (5 live at exit)
 *   small_objects  64 allocations from a fixed-size resource (16 live at exit)
 * plus one failed allocation (over the pool's maximum) and one refused free (a double
 * free). The resources are not released: the snapshot written at exit shows their
 * segments.
 *
 * `viz_workload --many N` instead makes N allocations and frees of pseudo-random sizes
 * from four sites, up to 3000 live at once (a large snapshot: with
 * RMM_MEMORY_HISTORY_MAX_ENTRIES below N the oldest events are dropped).
 *
 * Build: cc -g -O0 -I include tests/data/viz_workload.c -L<dir> -lrmm.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmm/rmm.h>

#define CHECK(call)                                                                   \
  do {                                                                                \
    rmm_status_t s_ = (call);                                                         \
    if (s_ != RMM_STATUS_SUCCESS) {                                                   \
      fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #call, (int)s_); \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

#define MiB ((size_t)1 << 20)
#define KiB ((size_t)1 << 10)

static void load_batch(rmm_resource_t pool, void** out, size_t* sizes, int batch)
{
  for (int i = 0; i < 8; i++) {
    sizes[i] = (size_t)(i + 1 + batch) * 256 * KiB;
    CHECK(rmm_allocate(pool, sizes[i], &out[i]));
  }
}

static void unload_batch(rmm_resource_t pool, void** bufs, size_t* sizes)
{
  for (int i = 0; i < 8; i++)
    CHECK(rmm_deallocate(pool, bufs[i], sizes[i]));
}

static void scratch(rmm_resource_t pool, int i)
{
  void* p  = NULL;
  size_t n = (size_t)(i % 5 + 1) * 64 * KiB;
  CHECK(rmm_allocate(pool, n, &p));
  CHECK(rmm_deallocate(pool, p, n));
}

static void* build_cache(rmm_resource_t pool, size_t bytes)
{
  void* p = NULL;
  CHECK(rmm_allocate(pool, bytes, &p));
  return p;
}

static void stream_work(rmm_resource_t pool, rmm_stream_t stream, void** keep)
{
  void* tmp[10];
  for (int i = 0; i < 10; i++) {
    CHECK(rmm_allocate_async(pool, (size_t)(i + 1) * 128 * KiB, stream, &tmp[i]));
  }
  for (int i = 0; i < 10; i += 2) {
    CHECK(rmm_deallocate_async(pool, tmp[i], (size_t)(i + 1) * 128 * KiB, stream));
  }
  for (int i = 0; i < 5; i++)
    keep[i] = tmp[2 * i + 1];
}

static void small_objects(rmm_resource_t fixed, void** keep)
{
  void* p[64];
  for (int i = 0; i < 64; i++)
    CHECK(rmm_allocate(fixed, 4 * KiB, &p[i]));
  for (int i = 0; i < 64; i++) {
    if (i % 4 == 0) {
      keep[i / 4] = p[i];
    } else {
      CHECK(rmm_deallocate(fixed, p[i], 4 * KiB));
    }
  }
}

static unsigned long long lcg = 88172645463325252ull;
static unsigned next_random(void)
{
  lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
  return (unsigned)(lcg >> 33);
}

struct block {
  void* p;
  size_t n;
};

static void* tiny_object(rmm_resource_t pool, size_t n)
{
  void* p = NULL;
  CHECK(rmm_allocate(pool, n, &p));
  return p;
}

static void* medium_buffer(rmm_resource_t pool, size_t n)
{
  void* p = NULL;
  CHECK(rmm_allocate(pool, n, &p));
  return p;
}

static void* large_tensor(rmm_resource_t pool, size_t n)
{
  void* p = NULL;
  CHECK(rmm_allocate(pool, n, &p));
  return p;
}

static void* workspace(rmm_resource_t pool, size_t n)
{
  void* p = NULL;
  CHECK(rmm_allocate(pool, n, &p));
  return p;
}

static int many(size_t ops)
{
  rmm_resource_t up = NULL, pool = NULL;
  CHECK(rmm_cuda_create(&up));
  CHECK(rmm_pool_create(up, 64 * MiB, 0, &pool));
  enum { MAX_LIVE = 3000 };
  static struct block live[MAX_LIVE];
  size_t nlive = 0;
  for (size_t i = 0; i < ops; i++) {
    unsigned r = next_random();
    int grow   = nlive < 10 || (nlive < MAX_LIVE && (r % 100) < 52);
    if (grow) {
      unsigned kind = (r >> 8) % 16;
      struct block b;
      if (kind < 9) {
        b.n = 256 + (r >> 12) % (16 * KiB);
        b.p = tiny_object(pool, b.n);
      } else if (kind < 14) {
        b.n = 64 * KiB + (r >> 12) % MiB;
        b.p = medium_buffer(pool, b.n);
      } else if (kind < 15) {
        b.n = 4 * MiB + (r >> 12) % (12 * MiB);
        b.p = large_tensor(pool, b.n);
      } else {
        b.n = 1 * MiB;
        b.p = workspace(pool, b.n);
      }
      live[nlive++] = b;
    } else {
      size_t k = (r >> 8) % nlive;
      CHECK(rmm_deallocate(pool, live[k].p, live[k].n));
      live[k] = live[--nlive];
    }
  }
  printf("viz_workload: %zu operations, %zu live at exit\n", ops, nlive);
  return 0;
}

int main(int argc, char** argv)
{
  if (argc == 3 && strcmp(argv[1], "--many") == 0) return many((size_t)strtoull(argv[2], NULL, 10));
  if (argc != 1) {
    fprintf(stderr, "usage: %s [--many N]\n", argv[0]);
    return 2;
  }
  rmm_resource_t up = NULL, pool = NULL, fixed = NULL;
  rmm_stream_t stream = NULL;
  CHECK(rmm_cuda_create(&up));
  CHECK(rmm_pool_create(up, 8 * MiB, 64 * MiB, &pool));
  CHECK(rmm_fixed_size_create(up, 4 * KiB, 32, &fixed));
  CHECK(rmm_stream_create(0, &stream));

  void* bufs[8];
  size_t sizes[8];
  static void *cache[6], *kept_stream[5], *kept_small[16];
  for (int batch = 0; batch < 3; batch++) {
    load_batch(pool, bufs, sizes, batch);
    for (int i = 0; i < 40 / 3 + (batch == 0); i++)
      scratch(pool, batch * 14 + i);
    if (batch == 1) {
      for (int i = 0; i < 6; i++)
        cache[i] = build_cache(pool, (size_t)(i + 2) * 512 * KiB);
    }
    unload_batch(pool, bufs, sizes);
  }
  stream_work(pool, stream, kept_stream);
  small_objects(fixed, kept_small);

  /* Over the pool's maximum: refused, recorded as allocate_failed. */
  void* huge = NULL;
  if (rmm_allocate(pool, 256 * MiB, &huge) == RMM_STATUS_SUCCESS) {
    fprintf(stderr, "a 256 MiB allocation from a 64 MiB pool succeeded\n");
    return 1;
  }
  /* A double free: refused, recorded as free_failed. */
  void* twice = NULL;
  CHECK(rmm_allocate(pool, 1 * MiB, &twice));
  CHECK(rmm_deallocate(pool, twice, 1 * MiB));
  if (rmm_deallocate(pool, twice, 1 * MiB) == RMM_STATUS_SUCCESS) {
    fprintf(stderr, "a double free succeeded\n");
    return 1;
  }
  (void)cache;
  (void)kept_stream;
  (void)kept_small;
  printf("viz_workload: done\n");
  return 0;
}
