/* A stand-in CUDA driver (libcuda.so.1) on host memory, for testing the interposer's
 * driver route without a GPU. Built by preload/tests/driver.rs with -DSTANDIN_DRIVER: the
 * memory, streams, events and "kernels" are standin_runtime.c's (under internal names),
 * exported here under the driver's names, and handed out by name through
 * cuGetProcAddress[_v2], which resolves base names to the versioned functions
 * ("cuMemAlloc" -> cuMemAlloc_v2) and, with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
 * to the _ptsz variants, as the real driver does. Contexts: each device's primary context
 * is current on every thread until the program makes another one current (cuCtxCreate).
 * Virtual memory management is standin_driver.c's, linked in beside. At exit it prints its
 * counts ("standin: cuMalloc N ...", "standin-libcuda: ..."). */
#include "standin_api.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef unsigned long long CUdeviceptr;
#define PRIMARY                   ((void*)0x1000)
#define PER_THREAD_DEFAULT_STREAM 2 /* CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM */
#define INVALID_CONTEXT           201
#define NOT_FOUND                 500
#define INVALID_VALUE             1

static __thread void* current = PRIMARY;
static unsigned long n_pitch, n_from_pool, n_ipc, n_proc_lookups;

/* ---- memory ---- */
int cuMemAlloc_v2(CUdeviceptr* p, size_t n)
{
  if (current == NULL) return INVALID_CONTEXT;
  return standin_rt_Malloc((void**)p, n);
}
int cuMemFree_v2(CUdeviceptr p) { return standin_rt_Free((void*)(uintptr_t)p); }
int cuMemAllocAsync(CUdeviceptr* p, size_t n, void* s)
{
  return standin_rt_MallocAsync((void**)p, n, s);
}
int cuMemAllocAsync_ptsz(CUdeviceptr* p, size_t n, void* s)
{
  return standin_rt_MallocAsync((void**)p, n, s);
}
int cuMemFreeAsync(CUdeviceptr p, void* s) { return standin_rt_FreeAsync((void*)(uintptr_t)p, s); }
int cuMemFreeAsync_ptsz(CUdeviceptr p, void* s)
{
  return standin_rt_FreeAsync((void*)(uintptr_t)p, s);
}
int cuMemAllocPitch_v2(CUdeviceptr* p, size_t* pitch, size_t width, size_t height, unsigned elem)
{
  if (!pitch || (elem != 4 && elem != 8 && elem != 16)) return INVALID_VALUE;
  __atomic_add_fetch(&n_pitch, 1, __ATOMIC_RELAXED);
  *pitch = (width + 511) & ~(size_t)511;
  return standin_rt_Malloc((void**)p, *pitch * height);
}
int cuMemAllocManaged(CUdeviceptr* p, size_t n, unsigned flags)
{
  return standin_rt_MallocManaged((void**)p, n, flags);
}
int cuMemAllocFromPoolAsync(CUdeviceptr* p, size_t n, void* pool, void* s)
{
  (void)pool;
  __atomic_add_fetch(&n_from_pool, 1, __ATOMIC_RELAXED);
  return standin_rt_MallocAsync((void**)p, n, s);
}
int cuMemGetInfo_v2(size_t* f, size_t* t) { return standin_rt_MemGetInfo(f, t); }
int cuMemGetAddressRange_v2(CUdeviceptr* base, size_t* size, CUdeviceptr p)
{
  return standin_rt_StandinRange((void*)(uintptr_t)p, (void**)base, size, NULL) ? NOT_FOUND : 0;
}
static int attribute(void* data, int attr, CUdeviceptr p)
{
  void* base;
  size_t size;
  unsigned long id;
  int live = !standin_rt_StandinRange((void*)(uintptr_t)p, &base, &size, &id);
  switch (attr) {
    case 2:
      *(unsigned*)data = live ? 2 : 0;
      return 0; /* MEMORY_TYPE: device */
    case 7:
      if (!live) return INVALID_VALUE;
      *(unsigned long long*)data = id;
      return 0; /* BUFFER_ID */
    case 11:
      if (!live) return INVALID_VALUE;
      *(CUdeviceptr*)data = (uintptr_t)base;
      return 0;
    case 12:
      if (!live) return INVALID_VALUE;
      *(size_t*)data = size;
      return 0;
    default:
      return INVALID_VALUE;
  }
}
int cuPointerGetAttribute(void* data, int attr, CUdeviceptr p)
{
  return data ? attribute(data, attr, p) : INVALID_VALUE;
}
int cuPointerGetAttributes(unsigned n, const int* attrs, void** data, CUdeviceptr p)
{
  for (unsigned i = 0; i < n; i++)
    if (data[i] && attribute(data[i], attrs[i], p)) return INVALID_VALUE;
  return 0;
}
/* A legacy IPC handle names a whole allocation: here its base, in the first 8 bytes. */
int cuIpcGetMemHandle(void* handle, CUdeviceptr p)
{
  void* base;
  if (standin_rt_StandinRange((void*)(uintptr_t)p, &base, NULL, NULL)) return INVALID_VALUE;
  __atomic_add_fetch(&n_ipc, 1, __ATOMIC_RELAXED);
  memset(handle, 0, 64);
  memcpy(handle, &base, sizeof base);
  return 0;
}

/* ---- streams, events, work ---- */
int cuStreamCreate(void** s, unsigned flags) { return standin_rt_StreamCreateWithFlags(s, flags); }
int cuStreamCreateWithPriority(void** s, unsigned flags, int prio)
{
  return standin_rt_StreamCreateWithPriority(s, flags, prio);
}
int cuStreamDestroy_v2(void* s) { return standin_rt_StreamDestroy(s); }
int cuStreamSynchronize(void* s) { return standin_rt_StreamSynchronize(s); }
int cuStreamQuery(void* s) { return standin_rt_StreamQuery(s); }
int cuStreamWaitEvent(void* s, void* e, unsigned f) { return standin_rt_StreamWaitEvent(s, e, f); }
int cuEventCreate(void** e, unsigned f) { return standin_rt_EventCreateWithFlags(e, f); }
int cuEventDestroy_v2(void* e) { return standin_rt_EventDestroy(e); }
int cuEventRecord(void* e, void* s) { return standin_rt_EventRecord(e, s); }
int cuEventSynchronize(void* e) { return standin_rt_EventSynchronize(e); }
int cuEventQuery(void* e) { return standin_rt_EventQuery(e); }
int cuCtxSynchronize(void) { return standin_rt_DeviceSynchronize(); }
int cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, void* st)
{
  return standin_rt_MemcpyAsync((void*)(uintptr_t)d, (const void*)(uintptr_t)s, n, 0, st);
}
int cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, void* st)
{
  return standin_rt_MemsetAsync((void*)(uintptr_t)d, v, n, st);
}
/* Not CUDA's: the stand-in's "kernel" and a path to memory no interposer sees. */
int cuStandinLaunchFill(void* p, size_t n, int v, unsigned delay_us, void* s)
{
  return standin_rt_launch_fill(p, n, v, delay_us, s);
}
int cuStandinMallocForeign(void** p, size_t n) { return standin_rt_malloc_foreign(p, n); }

/* ---- contexts, devices ---- */
int cuInit(unsigned flags)
{
  (void)flags;
  return 0;
}
int cuDriverGetVersion(int* v)
{
  *v = 13000;
  return 0;
}
int cuDeviceGetCount(int* n)
{
  *n = 1;
  return 0;
}
int cuCtxGetCurrent(void** c)
{
  *c = current;
  return 0;
}
int cuCtxSetCurrent(void* c)
{
  current = c;
  return 0;
}
int cuCtxCreate_v2(void** c, unsigned flags, int dev)
{
  (void)flags;
  if (dev != 0) return 101;
  static char own_contexts[16];
  static int n_own;
  *c      = &own_contexts[__atomic_fetch_add(&n_own, 1, __ATOMIC_RELAXED) % 16];
  current = *c;
  return 0;
}
int cuCtxGetDevice(int* d)
{
  if (!current) return INVALID_CONTEXT;
  *d = 0;
  return 0;
}
int cuDevicePrimaryCtxGetState(int dev, unsigned* flags, int* active)
{
  if (dev != 0) return 101;
  *flags  = 0;
  *active = 1;
  return 0;
}
int cuDevicePrimaryCtxRetain(void** c, int dev)
{
  if (dev != 0) return 101;
  *c = PRIMARY;
  return 0;
}

/* ---- lookup ---- */
typedef struct {
  const char *name, *ptsz;
  void* fn;
} proc;
#define P(base, fn)       \
  {                       \
    base, NULL, (void*)fn \
  }
static const proc procs[] = {
  P("cuMemAlloc", cuMemAlloc_v2),
  P("cuMemFree", cuMemFree_v2),
  {"cuMemAllocAsync", "cuMemAllocAsync_ptsz", (void*)cuMemAllocAsync},
  {"cuMemAllocAsync_ptsz", NULL, (void*)cuMemAllocAsync_ptsz},
  {"cuMemFreeAsync", "cuMemFreeAsync_ptsz", (void*)cuMemFreeAsync},
  {"cuMemFreeAsync_ptsz", NULL, (void*)cuMemFreeAsync_ptsz},
  P("cuMemAllocPitch", cuMemAllocPitch_v2),
  P("cuMemAllocManaged", cuMemAllocManaged),
  P("cuMemAllocFromPoolAsync", cuMemAllocFromPoolAsync),
  P("cuMemGetInfo", cuMemGetInfo_v2),
  P("cuMemGetAddressRange", cuMemGetAddressRange_v2),
  P("cuPointerGetAttribute", cuPointerGetAttribute),
  P("cuPointerGetAttributes", cuPointerGetAttributes),
  P("cuIpcGetMemHandle", cuIpcGetMemHandle),
  P("cuStreamCreate", cuStreamCreate),
  P("cuStreamCreateWithPriority", cuStreamCreateWithPriority),
  P("cuStreamDestroy", cuStreamDestroy_v2),
  P("cuStreamSynchronize", cuStreamSynchronize),
  P("cuStreamQuery", cuStreamQuery),
  P("cuStreamWaitEvent", cuStreamWaitEvent),
  P("cuEventCreate", cuEventCreate),
  P("cuEventDestroy", cuEventDestroy_v2),
  P("cuEventRecord", cuEventRecord),
  P("cuEventSynchronize", cuEventSynchronize),
  P("cuEventQuery", cuEventQuery),
  P("cuCtxSynchronize", cuCtxSynchronize),
  P("cuMemcpyAsync", cuMemcpyAsync),
  P("cuMemsetD8Async", cuMemsetD8Async),
  P("cuStandinLaunchFill", cuStandinLaunchFill),
  P("cuStandinMallocForeign", cuStandinMallocForeign),
  P("cuInit", cuInit),
  P("cuDriverGetVersion", cuDriverGetVersion),
  P("cuDeviceGetCount", cuDeviceGetCount),
  P("cuCtxGetCurrent", cuCtxGetCurrent),
  P("cuCtxSetCurrent", cuCtxSetCurrent),
  P("cuCtxCreate", cuCtxCreate_v2),
  P("cuCtxGetDevice", cuCtxGetDevice),
  P("cuDevicePrimaryCtxGetState", cuDevicePrimaryCtxGetState),
  P("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain),
};
int cuGetProcAddress_v2(
  const char* symbol, void** pfn, int version, unsigned long long flags, int* status);
int cuGetProcAddress(const char* symbol, void** pfn, int version, unsigned long long flags)
{
  return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}
int cuGetProcAddress_v2(
  const char* symbol, void** pfn, int version, unsigned long long flags, int* status)
{
  (void)version;
  if (!symbol || !pfn) return INVALID_VALUE;
  __atomic_add_fetch(&n_proc_lookups, 1, __ATOMIC_RELAXED);
  if (!strcmp(symbol, "cuGetProcAddress")) {
    *pfn = (void*)cuGetProcAddress_v2;
    if (status) *status = 0;
    return 0;
  }
  for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++) {
    if (strcmp(symbol, procs[i].name)) continue;
    const char* want = (flags & PER_THREAD_DEFAULT_STREAM) && procs[i].ptsz ? procs[i].ptsz : NULL;
    *pfn             = procs[i].fn;
    if (want)
      for (size_t j = 0; j < sizeof procs / sizeof procs[0]; j++)
        if (!strcmp(procs[j].name, want)) *pfn = procs[j].fn;
    if (status) *status = 0;
    return 0;
  }
  *pfn = NULL;
  if (status) *status = 1; /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
  return NOT_FOUND;
}

__attribute__((destructor)) static void report_driver(void)
{
  fprintf(stderr,
          "standin-libcuda: cuMemAllocPitch %lu cuMemAllocFromPoolAsync %lu cuIpcGetMemHandle %lu "
          "cuGetProcAddress %lu\n",
          n_pitch,
          n_from_pool,
          n_ipc,
          n_proc_lookups);
}
