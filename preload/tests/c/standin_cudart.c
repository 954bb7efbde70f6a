/* A stand-in CUDA runtime on host memory, for testing librmm_preload.so without a GPU.
 * Built by preload/tests/standin.rs as a shared library with soname libcudart.so.13.
 * It implements the entry points rmm's CUDA backend requires at load (src/runtime/gpu.rs)
 * plus the interposed ones, counts its calls and prints the counts at exit. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOTAL_BYTES ((size_t)1 << 30)

typedef struct node { void *p; size_t size; struct node *next; } node;
static node *live_list;
static size_t live_bytes;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long n_malloc, n_free, n_free_errors, n_sync, n_malloc_async, n_free_async;

static int do_malloc(void **p, size_t size) {
  if (!p) return 1;
  if (size == 0) { *p = NULL; return 0; }
  pthread_mutex_lock(&lock);
  if (live_bytes + size > TOTAL_BYTES) { pthread_mutex_unlock(&lock); return 2; }
  pthread_mutex_unlock(&lock);
  void *m = aligned_alloc(256, (size + 255) & ~(size_t)255);
  if (!m) return 2;
  node *n = malloc(sizeof *n);
  n->p = m; n->size = size;
  pthread_mutex_lock(&lock);
  n->next = live_list; live_list = n; live_bytes += size;
  pthread_mutex_unlock(&lock);
  *p = m;
  return 0;
}

static int do_free(void *p) {
  if (!p) return 0;
  pthread_mutex_lock(&lock);
  for (node **it = &live_list; *it; it = &(*it)->next) {
    if ((*it)->p == p) {
      node *n = *it; *it = n->next; live_bytes -= n->size;
      pthread_mutex_unlock(&lock);
      free(n->p); free(n);
      return 0;
    }
  }
  n_free_errors++;
  pthread_mutex_unlock(&lock);
  return 1; /* cudaErrorInvalidValue */
}

static int is_live(const void *p) {
  int found = 0;
  pthread_mutex_lock(&lock);
  for (node *n = live_list; n; n = n->next) if (n->p == p) { found = 1; break; }
  pthread_mutex_unlock(&lock);
  return found;
}

int cudaMalloc(void **p, size_t size) {
  __atomic_add_fetch(&n_malloc, 1, __ATOMIC_RELAXED);
  return do_malloc(p, size);
}
int cudaFree(void *p) { __atomic_add_fetch(&n_free, 1, __ATOMIC_RELAXED); return do_free(p); }
int cudaMallocAsync(void **p, size_t size, void *s) {
  (void)s; __atomic_add_fetch(&n_malloc_async, 1, __ATOMIC_RELAXED); return do_malloc(p, size);
}
int cudaFreeAsync(void *p, void *s) {
  (void)s; __atomic_add_fetch(&n_free_async, 1, __ATOMIC_RELAXED); return do_free(p);
}
int cudaMallocManaged(void **p, size_t size, unsigned flags) { (void)flags; return cudaMalloc(p, size); }
/* A second path to device memory that the interposer does not see. */
int standin_malloc_foreign(void **p, size_t size) { return do_malloc(p, size); }

int cudaMemGetInfo(size_t *f, size_t *t) {
  pthread_mutex_lock(&lock);
  *f = TOTAL_BYTES - live_bytes;
  pthread_mutex_unlock(&lock);
  *t = TOTAL_BYTES;
  return 0;
}
const char *cudaGetErrorName(int e) {
  switch (e) { case 0: return "cudaSuccess"; case 1: return "cudaErrorInvalidValue";
  case 2: return "cudaErrorMemoryAllocation"; default: return "cudaErrorUnknown"; }
}
const char *cudaGetErrorString(int e) { return e == 0 ? "no error" : "stand-in error"; }
int cudaGetLastError(void) { return 0; }
int cudaRuntimeGetVersion(int *v) { *v = 13000; return 0; }
int cudaDriverGetVersion(int *v) { *v = 13000; return 0; }
int cudaGetDeviceCount(int *n) { *n = 1; return 0; }
int cudaGetDevice(int *d) { *d = 0; return 0; }
int cudaSetDevice(int d) { return d == 0 ? 0 : 101; }
int cudaDeviceSynchronize(void) { __atomic_add_fetch(&n_sync, 1, __ATOMIC_RELAXED); return 0; }
int cudaDeviceGetAttribute(int *v, int attr, int dev) { (void)attr; (void)dev; *v = 0; return 0; }
int cudaStreamCreateWithFlags(void **s, unsigned f) { (void)f; *s = malloc(16); return 0; }
int cudaStreamDestroy(void *s) { free(s); return 0; }
int cudaStreamSynchronize(void *s) { (void)s; return 0; }
int cudaStreamQuery(void *s) { (void)s; return 0; }
int cudaEventCreateWithFlags(void **e, unsigned f) { (void)f; *e = malloc(16); return 0; }
int cudaEventDestroy(void *e) { free(e); return 0; }
int cudaEventRecord(void *e, void *s) { (void)e; (void)s; return 0; }
int cudaEventSynchronize(void *e) { (void)e; return 0; }
int cudaEventQuery(void *e) { (void)e; return 0; }
int cudaStreamWaitEvent(void *s, void *e, unsigned f) { (void)s; (void)e; (void)f; return 0; }
int cudaMemcpyAsync(void *d, const void *s, size_t n, int k, void *st) {
  (void)k; (void)st; memmove(d, s, n); return 0;
}
int cudaMemsetAsync(void *d, int v, size_t n, void *st) { (void)st; memset(d, v, n); return 0; }
struct attrs { int type; int device; void *dptr; void *hptr; };
int cudaPointerGetAttributes(struct attrs *a, const void *p) {
  a->type = is_live(p) ? 2 : 0; a->device = is_live(p) ? 0 : -1;
  a->dptr = (void *)p; a->hptr = NULL;
  return 0;
}

__attribute__((destructor)) static void report(void) {
  fprintf(stderr,
          "standin: cudaMalloc %lu cudaFree %lu cudaMallocAsync %lu cudaFreeAsync %lu "
          "free_errors %lu device_synchronize %lu\n",
          n_malloc, n_free, n_malloc_async, n_free_async, n_free_errors, n_sync);
}
