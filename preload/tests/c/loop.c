/* Test program linked against the stand-in runtime (CUDA names, or HIP's with
 * -DSTANDIN_HIP): allocates/frees in a loop from several threads, writes and checks data,
 * checks forwarding of NULL, zero-size, foreign, double and interior frees, and prints a
 * checksum. Its stdout must be identical with and without LD_PRELOAD=librmm_preload.so. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "standin_api.h"

#define THREADS 8
#define ITERS   3000
static int failures;

static void* worker(void* arg)
{
  uint64_t seed = 0x9E3779B97F4A7C15ull * (uint64_t)(uintptr_t)arg + 1, sum = 0;
  for (int i = 0; i < ITERS; i++) {
    void* b[3];
    size_t n[3];
    for (int k = 0; k < 3; k++) {
      seed   = seed * 6364136223846793005ull + 1442695040888963407ull;
      n[k]   = 1 + (seed >> 40) % 200000;
      int rc = (k == 2 && i % 2) ? RT(MallocAsync)(&b[k], n[k], NULL) : RT(Malloc)(&b[k], n[k]);
      if (rc != 0 || ((uintptr_t)b[k] % 256) != 0) {
        __atomic_add_fetch(&failures, 1, 0);
        return NULL;
      }
      memset(b[k], (int)(seed & 0xff), n[k]);
    }
    for (int k = 0; k < 3; k++) {
      unsigned char* c = b[k];
      for (size_t j = 0; j < n[k]; j += 97)
        sum += c[j] * (j + 1);
      if (c[n[k] - 1] != c[0]) __atomic_add_fetch(&failures, 1, 0);
    }
    for (int k = 0; k < 3; k++) {
      int rc = (k == 2 && i % 2) ? RT(FreeAsync)(b[k], NULL) : RT(Free)(b[k]);
      if (rc != 0) __atomic_add_fetch(&failures, 1, 0);
    }
  }
  return (void*)(uintptr_t)sum;
}

int main(void)
{
  printf("free(NULL) -> %d\n", RT(Free)(NULL));
  void* z = (void*)1;
  int rc0 = RT(Malloc)(&z, 0);
  printf("malloc(0) -> %d, ptr %s\n", rc0, z ? "non-null" : "null");
  void* f = NULL;
  standin_malloc_foreign(&f, 4096);
  printf("foreign free -> %d\n", RT(Free)(f));
  void* d = NULL;
  RT(Malloc)(&d, 1024);
  printf("interior free -> %d\n", RT(Free)((char*)d + 256));
  printf("first free -> %d\n", RT(Free)(d));
  printf("double free -> %d\n", RT(Free)(d));
  size_t fr = 0, tot = 0;
  int rcm = RT(MemGetInfo)(&fr, &tot);
  printf("meminfo -> %d total %zu\n", rcm, tot);

  pthread_t t[THREADS];
  for (uintptr_t i = 0; i < THREADS; i++)
    pthread_create(&t[i], NULL, worker, (void*)i);
  uint64_t sum = 0;
  for (int i = 0; i < THREADS; i++) {
    void* r;
    pthread_join(t[i], &r);
    sum += (uint64_t)(uintptr_t)r;
  }
  printf("failures %d\nchecksum %016llx\n", failures, (unsigned long long)sum);
  return failures != 0;
}
