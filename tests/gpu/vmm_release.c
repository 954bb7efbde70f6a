/* The pool on virtual memory gives memory back while blocks live, and the device sees it.
 *
 * For each of the vmm pool (rmm_vmm_pool_create) and the chunked pool (rmm_pool_create over
 * rmm_cuda_create, growing from 0): allocate GIB GiB in blocks of 3.25 MiB, fill each block
 * with its own byte, free all but every KEEP-th block (scattered survivors), call the pool's
 * release, and read the device's free memory (cudaMemGetInfo) before the pool was made,
 * when it was full, after the frees and after the release. Then every survivor is checked
 * (first, middle and last byte), the freed space is used again, and everything is freed.
 *
 * For the vmm pool the bytes still mapped after the release must be exactly the granules
 * the survivors touch (computed here from their addresses), and the device's free memory
 * must have grown by the bytes released. The chunked pool can give back only chunks with no
 * survivor in them. Exit status 0 when every check holds.
 *
 *   vmm_release [GIB] [KEEP]     (defaults 16 and 64)
 * Build: cc -O2 -I<prefix>/include -I<cuda>/include vmm_release.c -L<prefix>/lib -lrmm
 *        -L<cuda>/lib64 -lcudart
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <rmm/rmm.h>

#define CK(x)                                                                             \
  do {                                                                                    \
    cudaError_t e_ = (x);                                                                 \
    if (e_ != cudaSuccess) {                                                              \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(2);                                                                            \
    }                                                                                     \
  } while (0)
#define RK(x)                                                                               \
  do {                                                                                      \
    if ((x) != RMM_STATUS_SUCCESS) {                                                        \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, rmm_last_error_message()); \
      exit(2);                                                                              \
    }                                                                                       \
  } while (0)

static const size_t MIB = (size_t)1 << 20;

static size_t free_now(void)
{
  size_t f = 0, t = 0;
  CK(cudaDeviceSynchronize());
  CK(cudaMemGetInfo(&f, &t));
  return f;
}

static int cmp_size(const void* a, const void* b)
{
  size_t x = *(const size_t*)a, y = *(const size_t*)b;
  return x < y ? -1 : x > y;
}

/* The distinct granules (of g bytes) that [p, p + size) of the survivors touch. */
static size_t granules_touched(void** blocks, size_t n, size_t keep, size_t size, size_t g)
{
  size_t cap = (n / keep + 1) * (size / g + 2), count = 0, distinct = 0;
  size_t* idx = malloc(cap * sizeof(size_t));
  for (size_t i = 0; i < n; i += keep) {
    uintptr_t p = (uintptr_t)blocks[i];
    for (uintptr_t q = p / g; q <= (p + size - 1) / g; ++q) {
      idx[count++] = q;
    }
  }
  qsort(idx, count, sizeof(size_t), cmp_size);
  for (size_t i = 0; i < count; ++i) {
    if (i == 0 || idx[i] != idx[i - 1]) { ++distinct; }
  }
  free(idx);
  return distinct;
}

static int check_block(void* p, size_t size, unsigned char value)
{
  size_t at[3] = {0, size / 2, size - 1};
  for (int k = 0; k < 3; ++k) {
    unsigned char b = 0;
    CK(cudaMemcpy(&b, (char*)p + at[k], 1, cudaMemcpyDeviceToHost));
    if (b != value) {
      fprintf(stderr, "byte %zu of %p is %u, expected %u\n", at[k], p, b, value);
      return 1;
    }
  }
  return 0;
}

static int run(const char* kind, size_t gib, size_t keep)
{
  size_t const size      = 3 * MIB + MIB / 4;
  size_t const n         = (gib << 30) / size;
  void** blocks          = calloc(n, sizeof(void*));
  size_t const free0     = free_now();
  size_t const survivors = (n + keep - 1) / keep;
  rmm_resource_t mr = NULL, cuda = NULL;
  size_t g = 2 * MIB;
  int vmm  = strcmp(kind, "vmm_pool") == 0;
  if (vmm) {
    rmm_vmm_pool_options o;
    RK(rmm_vmm_pool_options_init(&o));
    RK(rmm_vmm_pool_create(&o, &mr));
    rmm_vmm_pool_stats st;
    RK(rmm_vmm_pool_get_stats(mr, &st));
    g = st.granularity;
  } else {
    RK(rmm_cuda_create(&cuda));
    RK(rmm_pool_create(cuda, 0, 0, &mr));
  }
  for (size_t i = 0; i < n; ++i) {
    RK(rmm_allocate(mr, size, &blocks[i]));
    CK(cudaMemset(blocks[i], (int)(i & 0xff), size));
  }
  size_t const free_full = free_now();
  size_t mapped_full = 0, mapped_after = 0, released = 0;
  if (vmm) {
    rmm_vmm_pool_stats st;
    RK(rmm_vmm_pool_get_stats(mr, &st));
    mapped_full = st.pool_size;
  }
  for (size_t i = 0; i < n; ++i) {
    if (i % keep != 0) { RK(rmm_deallocate(mr, blocks[i], size)); }
  }
  size_t const free_freed = free_now();
  if (vmm) {
    RK(rmm_vmm_pool_release(mr, &released));
  } else {
    RK(rmm_pool_release(mr, &released));
  }
  size_t const free_released = free_now();
  size_t const touched       = granules_touched(blocks, n, keep, size, g);
  int bad                    = 0;
  if (vmm) {
    rmm_vmm_pool_stats st;
    RK(rmm_vmm_pool_get_stats(mr, &st));
    mapped_after = st.pool_size;
    /* At most the survivors' granules stay mapped (exactly those, unless the pool kept a
     * free granule it could have unmapped: reported below as "extra"). */
    if (mapped_after > touched * g || mapped_after < survivors * size) {
      fprintf(stderr,
              "vmm_pool: %zu bytes mapped after release, the survivors touch %zu\n",
              mapped_after,
              touched * g);
      bad = 1;
    }
    if (mapped_full - mapped_after != released) {
      fprintf(stderr,
              "vmm_pool: released %zu, mapped went down by %zu\n",
              released,
              mapped_full - mapped_after);
      bad = 1;
    }
    /* The driver's own bookkeeping may move the device's free memory by a few MiB. */
    size_t const seen = free_released - free_freed;
    if (seen + 64 * MIB < released || seen > released + 64 * MIB) {
      fprintf(
        stderr, "vmm_pool: released %zu, the device's free memory grew by %zu\n", released, seen);
      bad = 1;
    }
  }
  for (size_t i = 0; i < n; i += keep) {
    bad |= check_block(blocks[i], size, (unsigned char)(i & 0xff));
  }
  /* The freed space serves again, survivors intact. */
  void* again = NULL;
  RK(rmm_allocate(mr, 64 * size, &again));
  CK(cudaMemset(again, 0x5a, 64 * size));
  bad |= check_block(again, 64 * size, 0x5a);
  RK(rmm_deallocate(mr, again, 64 * size));
  for (size_t i = 0; i < n; i += keep) {
    bad |= check_block(blocks[i], size, (unsigned char)(i & 0xff));
    RK(rmm_deallocate(mr, blocks[i], size));
  }
  RK(rmm_resource_release(mr));
  if (cuda != NULL) { RK(rmm_resource_release(cuda)); }
  size_t const free_end = free_now();
  printf(
    "%-9s %5zu blocks of %.2f MiB (%.2f GiB), %4zu kept | device free GiB: before %.2f, "
    "full %.2f, after frees %.2f, after release %.2f, at end %.2f | released %.3f GiB",
    kind,
    n,
    (double)size / MIB,
    (double)(n * size) / (1 << 30),
    survivors,
    (double)free0 / (1 << 30),
    (double)free_full / (1 << 30),
    (double)free_freed / (1 << 30),
    (double)free_released / (1 << 30),
    (double)free_end / (1 << 30),
    (double)released / (1 << 30));
  if (vmm) {
    printf(
      " | mapped %.3f -> %.3f GiB = %zu granules of %zu MiB; survivors touch %zu granules"
      " (extra %ld)",
      (double)mapped_full / (1 << 30),
      (double)mapped_after / (1 << 30),
      mapped_after / g,
      g / MIB,
      touched,
      (long)(mapped_after / g) - (long)touched);
  }
  printf(" | %s\n", bad ? "FAILED" : "ok");
  free(blocks);
  return bad;
}

int main(int argc, char** argv)
{
  size_t const gib  = argc > 1 ? strtoul(argv[1], NULL, 10) : 16;
  size_t const keep = argc > 2 ? strtoul(argv[2], NULL, 10) : 64;
  CK(cudaFree(NULL));
  int bad = run("vmm_pool", gib, keep);
  bad |= run("pool", gib, keep);
  return bad;
}
