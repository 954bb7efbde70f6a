/* A stand-in CUDA runtime over the stand-in driver (standin_libcuda.c), built as a static
 * library (libcudart_static.a: nvcc's default, RAPIDS's wheels) and as libcudart.so.13 (the
 * runtime the interposer's core loads). As NVIDIA's runtime does, it dlopens libcuda.so.1
 * (RTLD_LOCAL), looks up cuGetProcAddress_v2 with dlsym, and fills its table of driver
 * functions through it by base name, asking for the per-thread-stream variants when built
 * with -DSTANDIN_PTDS; every call goes through that table. */
#include "standin_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*get_proc_t)(const char*, void**, int, unsigned long long, int*);
#ifdef STANDIN_PTDS
#define PROC_FLAGS 2 /* CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM */
#else
#define PROC_FLAGS 0
#endif

static struct {
  int (*alloc)(void**, size_t);
  int (*free)(void*);
  int (*alloc_async)(void**, size_t, void*);
  int (*free_async)(void*, void*);
  int (*alloc_managed)(void**, size_t, unsigned);
  int (*mem_info)(size_t*, size_t*);
  int (*stream_create)(void**, unsigned);
  int (*stream_create_priority)(void**, unsigned, int);
  int (*stream_destroy)(void*);
  int (*stream_sync)(void*);
  int (*stream_query)(void*);
  int (*stream_wait)(void*, void*, unsigned);
  int (*event_create)(void**, unsigned);
  int (*event_destroy)(void*);
  int (*event_record)(void*, void*);
  int (*event_sync)(void*);
  int (*event_query)(void*);
  int (*ctx_sync)(void);
  int (*memcpy_async)(void*, const void*, size_t, void*);
  int (*memset_async)(void*, unsigned char, size_t, void*);
  int (*launch_fill)(void*, size_t, int, unsigned, void*);
  int (*malloc_foreign)(void**, size_t);
  int (*range)(void**, size_t*, void*);
  get_proc_t proc;
} d;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void get(get_proc_t proc, const char* name, void* slot)
{
  int status = 0;
  if (proc(name, (void**)slot, 13000, PROC_FLAGS, &status) || !*(void**)slot) {
    fprintf(stderr, "standin cudart: the driver has no %s\n", name);
    abort();
  }
}

static void load(void)
{
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "standin cudart: %s\n", dlerror());
    abort();
  }
  get_proc_t proc = (get_proc_t)dlsym(h, "cuGetProcAddress_v2");
  if (!proc) {
    fprintf(stderr, "standin cudart: no cuGetProcAddress_v2\n");
    abort();
  }
  get(proc, "cuMemAlloc", &d.alloc);
  get(proc, "cuMemFree", &d.free);
  get(proc, "cuMemAllocAsync", &d.alloc_async);
  get(proc, "cuMemFreeAsync", &d.free_async);
  get(proc, "cuMemAllocManaged", &d.alloc_managed);
  get(proc, "cuMemGetInfo", &d.mem_info);
  get(proc, "cuStreamCreate", &d.stream_create);
  get(proc, "cuStreamCreateWithPriority", &d.stream_create_priority);
  get(proc, "cuStreamDestroy", &d.stream_destroy);
  get(proc, "cuStreamSynchronize", &d.stream_sync);
  get(proc, "cuStreamQuery", &d.stream_query);
  get(proc, "cuStreamWaitEvent", &d.stream_wait);
  get(proc, "cuEventCreate", &d.event_create);
  get(proc, "cuEventDestroy", &d.event_destroy);
  get(proc, "cuEventRecord", &d.event_record);
  get(proc, "cuEventSynchronize", &d.event_sync);
  get(proc, "cuEventQuery", &d.event_query);
  get(proc, "cuCtxSynchronize", &d.ctx_sync);
  get(proc, "cuMemcpyAsync", &d.memcpy_async);
  get(proc, "cuMemsetD8Async", &d.memset_async);
  get(proc, "cuStandinLaunchFill", &d.launch_fill);
  get(proc, "cuStandinMallocForeign", &d.malloc_foreign);
  get(proc, "cuMemGetAddressRange", &d.range);
  d.proc = proc;
}
#define D(call) (pthread_once(&once, load), d.call)

int cudaMalloc(void** p, size_t n)
{
  if (!p) return 1;
  if (n == 0) {
    *p = NULL;
    return 0;
  }
  return D(alloc)(p, n);
}
int cudaFree(void* p) { return p ? D(free)(p) : 0; }
int cudaMallocAsync(void** p, size_t n, void* s)
{
  if (!p) return 1;
  if (n == 0) {
    *p = NULL;
    return 0;
  }
  return D(alloc_async)(p, n, s);
}
int cudaFreeAsync(void* p, void* s) { return p ? D(free_async)(p, s) : 0; }
int cudaMallocManaged(void** p, size_t n, unsigned flags) { return D(alloc_managed)(p, n, flags); }
int cudaMemGetInfo(size_t* f, size_t* t) { return D(mem_info)(f, t); }
int cudaStreamCreateWithFlags(void** s, unsigned f) { return D(stream_create)(s, f); }
int cudaStreamCreate(void** s) { return D(stream_create)(s, 0); }
int cudaStreamCreateWithPriority(void** s, unsigned f, int p)
{
  return D(stream_create_priority)(s, f, p);
}
int cudaStreamDestroy(void* s) { return D(stream_destroy)(s); }
int cudaStreamSynchronize(void* s) { return D(stream_sync)(s); }
int cudaStreamQuery(void* s) { return D(stream_query)(s); }
int cudaStreamWaitEvent(void* s, void* e, unsigned f) { return D(stream_wait)(s, e, f); }
int cudaEventCreateWithFlags(void** e, unsigned f) { return D(event_create)(e, f); }
int cudaEventDestroy(void* e) { return D(event_destroy)(e); }
int cudaEventRecord(void* e, void* s) { return D(event_record)(e, s); }
int cudaEventSynchronize(void* e) { return D(event_sync)(e); }
int cudaEventQuery(void* e) { return D(event_query)(e); }
int cudaDeviceSynchronize(void) { return D(ctx_sync)(); }
int cudaMemcpyAsync(void* dst, const void* src, size_t n, int kind, void* s)
{
  (void)kind;
  return D(memcpy_async)(dst, src, n, s);
}
int cudaMemsetAsync(void* dst, int v, size_t n, void* s)
{
  return D(memset_async)(dst, (unsigned char)v, n, s);
}
int standin_launch_fill(void* p, size_t n, int v, unsigned delay_us, void* s)
{
  return D(launch_fill)(p, n, v, delay_us, s);
}
int standin_malloc_foreign(void** p, size_t n) { return D(malloc_foreign)(p, n); }

int cudaGetDriverEntryPoint(const char* symbol, void** pfn, unsigned long long flags, int* status)
{
  return D(proc)(symbol, pfn, 12000, flags, status) ? 500 : 0;
}
int cudaGetDriverEntryPointByVersion(
  const char* symbol, void** pfn, unsigned version, unsigned long long flags, int* status)
{
  return D(proc)(symbol, pfn, (int)version, flags, status) ? 500 : 0;
}

const char* cudaGetErrorName(int e)
{
  switch (e) {
    case 0:
      return "cudaSuccess";
    case 1:
      return "cudaErrorInvalidValue";
    case 2:
      return "cudaErrorMemoryAllocation";
    case 600:
      return "cudaErrorNotReady";
    default:
      return "cudaErrorUnknown";
  }
}
const char* cudaGetErrorString(int e) { return e == 0 ? "no error" : "stand-in error"; }
int cudaGetLastError(void) { return 0; }
int cudaRuntimeGetVersion(int* v)
{
  *v = 13000;
  return 0;
}
int cudaDriverGetVersion(int* v)
{
  *v = 13000;
  return 0;
}
int cudaGetDeviceCount(int* n)
{
  *n = 1;
  return 0;
}
int cudaGetDevice(int* dev)
{
  *dev = 0;
  return 0;
}
int cudaSetDevice(int dev) { return dev == 0 ? 0 : 101; }
int cudaDeviceGetAttribute(int* v, int attr, int dev)
{
  (void)attr;
  (void)dev;
  *v = 0;
  return 0;
}
struct attrs {
  int type;
  int device;
  void* dptr;
  void* hptr;
};
int cudaPointerGetAttributes(struct attrs* a, const void* p)
{
  void* base  = NULL;
  size_t size = 0;
  int live    = D(range)(&base, &size, (void*)p) == 0;
  a->type     = live ? 2 : 0;
  a->device   = live ? 0 : -1;
  a->dptr     = (void*)p;
  a->hptr     = NULL;
  return 0;
}
