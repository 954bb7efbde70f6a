/* Test program that calls the CUDA driver itself (linked with -lcuda against the stand-in
 * driver, standin_libcuda.c), for the interposer's driver route. One mode per argument:
 *   queries  address range, pointer attributes (range, buffer id), memory info, pitch and
 *            NULL / zero-size / foreign / double / interior frees: the same output with and
 *            without the interposer;
 *   ipc      legacy IPC handles of the first block of a pool chunk and of a later one;
 *   lookup   the allocation functions reached through dlsym on a libcuda handle,
 *            cuGetProcAddress, cuGetProcAddress_v2 (per-thread-stream variants), and
 *            cudaGetDriverEntryPoint[ByVersion] of the shared runtime, 2000 rounds each;
 *   context  allocations in a context of the program's own (passed through) and in the
 *            primary one;
 *   large    600 MiB allocated, written and freed, then 700 MiB (of the stand-in's 1 GiB):
 *            the second fits only once the first one's memory is back with the driver;
 *   threads  THREADS threads of random driver allocations, async and sync frees on their
 *            own streams and data checks (built with ASan/UBSan by the test).
 * Prints "ok" lines and "failures N"; exit status 1 on failures. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned long long CUdeviceptr;
int cuMemAlloc_v2(CUdeviceptr* p, size_t n);
int cuMemFree_v2(CUdeviceptr p);
int cuMemAllocAsync(CUdeviceptr* p, size_t n, void* s);
int cuMemFreeAsync(CUdeviceptr p, void* s);
int cuMemAllocPitch_v2(CUdeviceptr* p, size_t* pitch, size_t w, size_t h, unsigned elem);
int cuMemGetInfo_v2(size_t* f, size_t* t);
int cuMemGetAddressRange_v2(CUdeviceptr* base, size_t* size, CUdeviceptr p);
int cuPointerGetAttribute(void* data, int attr, CUdeviceptr p);
int cuPointerGetAttributes(unsigned n, const int* attrs, void** data, CUdeviceptr p);
int cuIpcGetMemHandle(void* handle, CUdeviceptr p);
int cuStreamCreate(void** s, unsigned flags);
int cuStreamDestroy_v2(void* s);
int cuStreamSynchronize(void* s);
int cuCtxCreate_v2(void** c, unsigned flags, int dev);
int cuCtxSetCurrent(void* c);
int cuCtxGetCurrent(void** c);
int cuGetProcAddress(const char* sym, void** pfn, int ver, unsigned long long flags);
int cuGetProcAddress_v2(
  const char* sym, void** pfn, int ver, unsigned long long flags, int* status);
int cuStandinMallocForeign(void** p, size_t n);
int cuStandinLaunchFill(void* p, size_t n, int v, unsigned delay_us, void* s);

typedef int (*alloc_t)(CUdeviceptr*, size_t);
typedef int (*free_t)(CUdeviceptr);
typedef int (*alloc_async_t)(CUdeviceptr*, size_t, void*);
typedef int (*free_async_t)(CUdeviceptr, void*);

static int failures;
#define CHECK(cond)                                           \
  do {                                                        \
    if (!(cond)) {                                            \
      printf("FAILED %s:%d %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                             \
    }                                                         \
  } while (0)

static void queries(void)
{
  CUdeviceptr a = 0, b = 0, base = 0;
  size_t size = 0, f = 0, t = 0, pitch = 0;
  CHECK(cuMemAlloc_v2(&a, 1 << 20) == 0);
  CHECK(cuMemAlloc_v2(&b, 1000) == 0);
  CHECK(cuMemGetAddressRange_v2(&base, &size, b + 100) == 0);
  printf("range of b+100: base is b %d, size %zu\n", base == b, size);
  CUdeviceptr start_a = 0, start_b = 0;
  size_t rsize            = 0;
  unsigned long long id_a = 0, id_b = 0;
  CHECK(cuPointerGetAttribute(&start_a, 11, a + 4096) == 0);
  CHECK(cuPointerGetAttribute(&rsize, 12, a + 4096) == 0);
  CHECK(cuPointerGetAttribute(&id_a, 7, a) == 0);
  int attrs[3]  = {7, 11, 12};
  void* data[3] = {&id_b, &start_b, NULL};
  CHECK(cuPointerGetAttributes(3, attrs, data, b) == 0);
  printf("attributes of a+4096: start is a %d, size %zu; buffer ids differ %d; b's start is b %d\n",
         start_a == a,
         rsize,
         id_a != id_b,
         start_b == b);
  CHECK(cuMemGetInfo_v2(&f, &t) == 0);
  printf("meminfo total %zu, free <= total %d\n", t, f <= t);
  CUdeviceptr p = 0;
  CHECK(cuMemAllocPitch_v2(&p, &pitch, 1000, 10, 4) == 0);
  printf("pitch %zu\n", pitch);
  CHECK(cuMemFree_v2(p) == 0);
  printf("pitch with element size 3 -> %d\n", cuMemAllocPitch_v2(&p, &pitch, 1000, 10, 3));
  printf("alloc(NULL) -> %d\n", cuMemAlloc_v2(NULL, 64) != 0);
  CUdeviceptr z = 1;
  printf("alloc(0) -> %d\n", cuMemAlloc_v2(&z, 0));
  void* foreign = NULL;
  cuStandinMallocForeign(&foreign, 4096);
  printf("foreign free -> %d\n", cuMemFree_v2((CUdeviceptr)(uintptr_t)foreign));
  printf("interior free -> %d\n", cuMemFree_v2(b + 256));
  printf("first free -> %d\n", cuMemFree_v2(b));
  printf("double free -> %d\n", cuMemFree_v2(b));
  printf("range after free -> %d\n", cuMemGetAddressRange_v2(&base, &size, b) != 0);
  CHECK(cuMemFree_v2(a) == 0);
}

static void ipc(void)
{
  CUdeviceptr big = 0, x = 0, y = 0;
  unsigned char h[64];
  /* Under a pool, x starts the chunk that big's growth made, and y follows it. */
  CHECK(cuMemAlloc_v2(&big, 1 << 20) == 0);
  CHECK(cuMemFree_v2(big) == 0);
  CHECK(cuMemAlloc_v2(&x, 4096) == 0);
  CHECK(cuMemAlloc_v2(&y, 4096) == 0);
  printf("ipc first %d\n", cuIpcGetMemHandle(h, x));
  printf("ipc second %d\n", cuIpcGetMemHandle(h, y));
  CHECK(cuMemFree_v2(y) == 0);
  CHECK(cuMemFree_v2(x) == 0);
}

static void rounds(const char* how, alloc_t alloc, free_t release)
{
  int bad = 0;
  for (int i = 0; i < 2000; i++) {
    CUdeviceptr p = 0;
    if (alloc(&p, 1000 + (size_t)i * 64) || !p) {
      bad++;
      break;
    }
    memset((void*)(uintptr_t)p, i & 0xff, 1000);
    if (release(p)) bad++;
  }
  printf("%s: %s\n", how, bad ? "FAILED" : "ok");
  failures += bad;
}

static void rounds_async(const char* how, alloc_async_t alloc, free_async_t release, void* s)
{
  int bad = 0;
  for (int i = 0; i < 2000; i++) {
    CUdeviceptr p = 0;
    if (alloc(&p, 4096, s) || !p) {
      bad++;
      break;
    }
    if (release(p, s)) bad++;
  }
  printf("%s: %s\n", how, bad ? "FAILED" : "ok");
  failures += bad;
}

static void lookup(void)
{
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  CHECK(h != NULL);
  rounds("dlsym", (alloc_t)dlsym(h, "cuMemAlloc_v2"), (free_t)dlsym(h, "cuMemFree_v2"));
  void *a = NULL, *f = NULL, *aa = NULL, *fa = NULL;
  CHECK(cuGetProcAddress("cuMemAlloc", &a, 12000, 0) == 0);
  CHECK(cuGetProcAddress("cuMemFree", &f, 12000, 0) == 0);
  rounds("cuGetProcAddress", (alloc_t)a, (free_t)f);
  int (*proc)(const char*, void**, int, unsigned long long, int*) =
    (int (*)(const char*, void**, int, unsigned long long, int*))dlsym(h, "cuGetProcAddress_v2");
  CHECK(proc("cuMemAllocAsync", &aa, 12000, 2, NULL) == 0);
  CHECK(proc("cuMemFreeAsync", &fa, 12000, 2, NULL) == 0);
  rounds_async("cuGetProcAddress_v2 per-thread", (alloc_async_t)aa, (free_async_t)fa, NULL);
  void* rt = dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
  CHECK(rt != NULL);
  int (*entry)(const char*, void**, unsigned long long, int*) =
    (int (*)(const char*, void**, unsigned long long, int*))dlsym(rt, "cudaGetDriverEntryPoint");
  int (*by_version)(const char*, void**, unsigned, unsigned long long, int*) =
    (int (*)(const char*, void**, unsigned, unsigned long long, int*))dlsym(
      rt, "cudaGetDriverEntryPointByVersion");
  CHECK(entry && entry("cuMemAlloc", &a, 0, NULL) == 0 && entry("cuMemFree", &f, 0, NULL) == 0);
  rounds("cudaGetDriverEntryPoint", (alloc_t)a, (free_t)f);
  CHECK(by_version && by_version("cuMemAlloc", &a, 12000, 0, NULL) == 0 &&
        by_version("cuMemFree", &f, 12000, 0, NULL) == 0);
  rounds("cudaGetDriverEntryPointByVersion", (alloc_t)a, (free_t)f);
}

static void context(void)
{
  void *primary = NULL, *own = NULL;
  cuCtxGetCurrent(&primary);
  CHECK(cuCtxCreate_v2(&own, 0, 0) == 0);
  rounds("own context", cuMemAlloc_v2, cuMemFree_v2);
  CHECK(cuCtxSetCurrent(primary) == 0);
  rounds("primary context", cuMemAlloc_v2, cuMemFree_v2);
}

static void large(void)
{
  for (size_t mib = 600; mib <= 700; mib += 100) {
    CUdeviceptr p = 0;
    int rc        = cuMemAlloc_v2(&p, mib << 20);
    printf("alloc %zu MiB -> %d\n", mib, rc);
    if (rc) {
      failures++;
      continue;
    }
    memset((void*)(uintptr_t)p, 7, mib << 20);
    CHECK(cuMemFree_v2(p) == 0);
  }
}

#define THREADS 8
static void* worker(void* arg)
{
  uint64_t seed = 0x9E3779B97F4A7C15ull * ((uintptr_t)arg + 1);
  void* s       = NULL;
  int bad       = 0;
  cuStreamCreate(&s, (uintptr_t)arg % 2);
  CUdeviceptr held[16]  = {0};
  size_t sizes[16]      = {0};
  unsigned char tag[16] = {0};
  for (int i = 0; i < 4000; i++) {
    seed  = seed * 6364136223846793005ull + 1442695040888963407ull;
    int k = (int)(seed >> 60);
    if (held[k]) {
      unsigned char* c = (unsigned char*)(uintptr_t)held[k];
      if (c[0] != tag[k] || c[sizes[k] - 1] != tag[k]) bad++;
      int rc = (seed >> 20) % 2 ? cuMemFreeAsync(held[k], s) : cuMemFree_v2(held[k]);
      if (rc) bad++;
      held[k] = 0;
    } else {
      sizes[k] = 1 + (seed >> 34) % 300000;
      int rc   = (seed >> 21) % 2 ? cuMemAllocAsync(&held[k], sizes[k], s)
                                  : cuMemAlloc_v2(&held[k], sizes[k]);
      if (rc) {
        bad++;
        held[k] = 0;
        continue;
      }
      tag[k] = (unsigned char)(seed >> 8);
      if ((seed >> 22) % 4 == 0) {
        cuStandinLaunchFill((void*)(uintptr_t)held[k], sizes[k], tag[k], 0, s);
        cuStreamSynchronize(s);
      } else {
        memset((void*)(uintptr_t)held[k], tag[k], sizes[k]);
      }
      CUdeviceptr base = 0;
      size_t size      = 0;
      if (cuMemGetAddressRange_v2(&base, &size, held[k] + sizes[k] / 2) || base != held[k] ||
          size < sizes[k])
        bad++;
      if ((seed >> 23) % 16 == 0 && cuMemFree_v2(held[k] + 1) == 0) bad++; /* interior */
    }
  }
  for (int k = 0; k < 16; k++)
    if (held[k] && cuMemFree_v2(held[k])) bad++;
  cuStreamDestroy_v2(s);
  return (void*)(uintptr_t)bad;
}

static void threads(void)
{
  pthread_t t[THREADS];
  for (uintptr_t i = 0; i < THREADS; i++)
    pthread_create(&t[i], NULL, worker, (void*)i);
  for (int i = 0; i < THREADS; i++) {
    void* r;
    pthread_join(t[i], &r);
    failures += (int)(uintptr_t)r;
  }
  printf("threads: %s\n", failures ? "FAILED" : "ok");
}

int main(int argc, char** argv)
{
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "queries"))
      queries();
    else if (!strcmp(argv[i], "ipc"))
      ipc();
    else if (!strcmp(argv[i], "lookup"))
      lookup();
    else if (!strcmp(argv[i], "context"))
      context();
    else if (!strcmp(argv[i], "threads"))
      threads();
    else if (!strcmp(argv[i], "large"))
      large();
    else {
      fprintf(stderr, "unknown mode %s\n", argv[i]);
      return 2;
    }
  }
  printf("failures %d\n", failures);
  return failures != 0;
}
