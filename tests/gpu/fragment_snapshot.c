/* Fragmentation, seen and avoided, through the C ABI on any runtime.
 *
 * rmm-bench's W6 sequence on a device of 128 MiB: three rounds of allocations (12 blocks of
 * 2 MiB, 12 of 4 MiB, 6 of 8 MiB), each round asking for more than the pool has free, all but
 * every fourth block of each round freed before the next (scattered survivors), then one
 * request of 24 MiB: larger than any chunk the chunked pool took, smaller than the bytes it
 * holds free.
 *
 *   fragment_snapshot pool      the chunked pool (growing from 0) over a limiting adaptor of
 *                               128 MiB over the cuda resource: the 24 MiB request is served
 *                               once the pool has given its entirely free chunks back
 *   fragment_snapshot vmm_pool  the pool on virtual memory, at most 128 MiB mapped: it is
 *                               served from the free memory merged across growths
 *
 *   fragment_snapshot KIND SNAPSHOT  also records the memory history and writes a snapshot
 *                               to SNAPSHOT after the request, while the survivors are live
 *                               (the pool's segments cut by them, and the failed request)
 * Everything is freed and released before the end. Prints what happened and the pool's free
 * bytes; exit status 0 when the request is served, 1 when it is not, 2 on any other error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmm/rmm.h>

#define RK(x)                                                                               \
  do {                                                                                      \
    if ((x) != RMM_STATUS_SUCCESS) {                                                        \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, rmm_last_error_message()); \
      exit(2);                                                                              \
    }                                                                                       \
  } while (0)

#define MIB ((size_t)1 << 20)

int main(int argc, char** argv)
{
  const char* kind = argc > 1 ? argv[1] : "pool";
  int const vmm    = strcmp(kind, "vmm_pool") == 0;
  if (!vmm && strcmp(kind, "pool") != 0) {
    fprintf(stderr, "usage: %s pool|vmm_pool [SNAPSHOT]\n", argv[0]);
    return 2;
  }
  const char* snapshot = argc > 2 ? argv[2] : NULL;
  if (snapshot != NULL) { RK(rmm_memory_history_enable(0, 0)); }
  rmm_resource_t cuda = NULL, limit = NULL, mr = NULL;
  if (vmm) {
    rmm_vmm_pool_options o;
    RK(rmm_vmm_pool_options_init(&o));
    o.maximum_pool_size = 128 * MIB;
    o.reserved_size     = 1024 * MIB;
    RK(rmm_vmm_pool_create(&o, &mr));
  } else {
    RK(rmm_cuda_create(&cuda));
    RK(rmm_limiting_adaptor_create(cuda, 128 * MIB, 256, &limit));
    RK(rmm_pool_create(limit, 0, 0, &mr));
  }
  static const size_t rounds[3][2] = {{2 * MIB, 12}, {4 * MIB, 12}, {8 * MIB, 6}};
  void* kept[8];
  size_t kept_size[8], nkept = 0, kept_bytes = 0;
  for (int r = 0; r < 3; ++r) {
    void* blocks[12];
    size_t const size = rounds[r][0], n = rounds[r][1];
    for (size_t i = 0; i < n; ++i) {
      RK(rmm_allocate(mr, size, &blocks[i]));
    }
    for (size_t i = 0; i < n; ++i) {
      if (i % 4 == 0) {
        kept[nkept]        = blocks[i];
        kept_size[nkept++] = size;
        kept_bytes += size;
      } else {
        RK(rmm_deallocate(mr, blocks[i], size));
      }
    }
  }
  size_t held = 0;
  if (vmm) {
    rmm_vmm_pool_stats st;
    RK(rmm_vmm_pool_get_stats(mr, &st));
    held = st.pool_size;
  } else {
    RK(rmm_limiting_adaptor_get_allocated_bytes(limit, &held));
  }
  size_t const large   = 24 * MIB;
  void* p              = NULL;
  rmm_status_t const s = rmm_allocate(mr, large, &p);
  printf("%s: %zu survivors (%zu MiB) in %zu MiB held, %zu MiB free; allocate(%zu MiB): %s\n",
         kind,
         nkept,
         kept_bytes / MIB,
         held / MIB,
         (held - kept_bytes) / MIB,
         large / MIB,
         s == RMM_STATUS_SUCCESS ? "served" : rmm_last_error_message());
  if (snapshot != NULL) { RK(rmm_snapshot_write(snapshot)); }
  if (s == RMM_STATUS_SUCCESS) { RK(rmm_deallocate(mr, p, large)); }
  for (size_t i = 0; i < nkept; ++i) {
    RK(rmm_deallocate(mr, kept[i], kept_size[i]));
  }
  RK(rmm_resource_release(mr));
  RK(rmm_resource_release(limit));
  RK(rmm_resource_release(cuda));
  return s == RMM_STATUS_SUCCESS ? 0 : 1;
}
