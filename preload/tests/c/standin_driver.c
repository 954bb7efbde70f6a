/* A stand-in CUDA driver (libcuda.so.1) with virtual memory management on host memory, for
 * testing RMM_PRELOAD_RESOURCE=vmm_pool without a GPU. Built by preload/tests/standin.rs into
 * a directory of its own, which only the vmm_pool tests put on the library path (the other
 * tests run without a driver, as the runtime's own allocation calls are then used).
 *
 * It implements what rmm's CUDA backend looks up in the driver for virtual memory management
 * (src/runtime/gpu/, src/runtime/cuda.rs): cuMemGetAllocationGranularity,
 * cuMemAddressReserve/Free, cuMemCreate/Release, cuMemMap/Unmap, cuMemSetAccess, and
 * cuDeviceGet, cuDeviceGetAttribute, cuCtxGetCurrent, cuGetErrorName/String. As on a GPU, a
 * reservation is inaccessible address space, a mapping is inaccessible until cuMemSetAccess,
 * and unmapping gives the pages back. It counts its calls and prints the counts at exit
 * ("standin-driver: ..."). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define GRANULARITY             ((size_t)2 << 20)
#define ATTRIBUTE_VMM_SUPPORTED 102
#define INVALID_VALUE           1
#define OUT_OF_MEMORY           2
#define INVALID_DEVICE          101

typedef unsigned long long CUdeviceptr;
typedef unsigned long long handle_t;

typedef struct physical {
  size_t size;
  int mapped;
} physical;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long n_reserve, n_address_free, n_create, n_release, n_map, n_unmap, n_set_access;
static size_t created_bytes, peak_created_bytes;

int cuMemGetAllocationGranularity(size_t* granularity, const void* prop, int option)
{
  (void)option;
  if (!granularity || !prop) return INVALID_VALUE;
  *granularity = GRANULARITY;
  return 0;
}

int cuMemAddressReserve(
  CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr, unsigned long long flags)
{
  (void)addr;
  if (!ptr || size == 0 || size % GRANULARITY || flags) return INVALID_VALUE;
  size_t align = alignment ? alignment : GRANULARITY;
  void* p = mmap(NULL, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return OUT_OF_MEMORY;
  uintptr_t raw = (uintptr_t)p, start = (raw + align - 1) & ~(uintptr_t)(align - 1);
  if (start > raw) munmap(p, start - raw);
  if (raw + size + align > start + size)
    munmap((void*)(start + size), raw + size + align - start - size);
  __atomic_add_fetch(&n_reserve, 1, __ATOMIC_RELAXED);
  *ptr = start;
  return 0;
}

int cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
  if (!ptr || size == 0) return INVALID_VALUE;
  __atomic_add_fetch(&n_address_free, 1, __ATOMIC_RELAXED);
  return munmap((void*)(uintptr_t)ptr, size) == 0 ? 0 : INVALID_VALUE;
}

int cuMemCreate(handle_t* handle, size_t size, const void* prop, unsigned long long flags)
{
  if (!handle || !prop || size == 0 || size % GRANULARITY || flags) return INVALID_VALUE;
  physical* h = calloc(1, sizeof *h);
  if (!h) return OUT_OF_MEMORY;
  h->size = size;
  pthread_mutex_lock(&lock);
  n_create++;
  created_bytes += size;
  if (created_bytes > peak_created_bytes) peak_created_bytes = created_bytes;
  pthread_mutex_unlock(&lock);
  *handle = (handle_t)(uintptr_t)h;
  return 0;
}

int cuMemRelease(handle_t handle)
{
  physical* h = (physical*)(uintptr_t)handle;
  if (!h) return INVALID_VALUE;
  pthread_mutex_lock(&lock);
  n_release++;
  created_bytes -= h->size;
  pthread_mutex_unlock(&lock);
  free(h);
  return 0;
}

int cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, handle_t handle, unsigned long long flags)
{
  physical* h = (physical*)(uintptr_t)handle;
  if (!ptr || !h || offset || flags || size != h->size || h->mapped) return INVALID_VALUE;
  /* Fresh pages in place, inaccessible until cuMemSetAccess. */
  void* p =
    mmap((void*)(uintptr_t)ptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  if (p == MAP_FAILED) return OUT_OF_MEMORY;
  h->mapped = 1;
  __atomic_add_fetch(&n_map, 1, __ATOMIC_RELAXED);
  return 0;
}

int cuMemUnmap(CUdeviceptr ptr, size_t size)
{
  if (!ptr || size == 0) return INVALID_VALUE;
  /* Back to reserved, inaccessible address space; the pages go back to the system. */
  void* p = mmap((void*)(uintptr_t)ptr,
                 size,
                 PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
                 -1,
                 0);
  if (p == MAP_FAILED) return INVALID_VALUE;
  __atomic_add_fetch(&n_unmap, 1, __ATOMIC_RELAXED);
  return 0;
}

typedef struct {
  int type;
  int id;
  int flags;
} access_desc;

int cuMemSetAccess(CUdeviceptr ptr, size_t size, const access_desc* desc, size_t count)
{
  if (!ptr || size == 0 || !desc || count == 0) return INVALID_VALUE;
  for (size_t i = 0; i < count; i++)
    if (desc[i].id != 0) return INVALID_DEVICE;
  __atomic_add_fetch(&n_set_access, 1, __ATOMIC_RELAXED);
  return mprotect((void*)(uintptr_t)ptr, size, PROT_READ | PROT_WRITE) == 0 ? 0 : INVALID_VALUE;
}

int cuDeviceGet(int* device, int ordinal)
{
  if (!device) return INVALID_VALUE;
  if (ordinal != 0) return INVALID_DEVICE;
  *device = 0;
  return 0;
}

int cuDeviceGetAttribute(int* value, int attribute, int device)
{
  if (!value) return INVALID_VALUE;
  if (device != 0) return INVALID_DEVICE;
  *value = attribute == ATTRIBUTE_VMM_SUPPORTED;
  return 0;
}

#ifndef STANDIN_DRIVER /* standin_libcuda.c has contexts of its own */
static int context;
int cuCtxGetCurrent(void** ctx)
{
  if (!ctx) return INVALID_VALUE;
  *ctx = &context;
  return 0;
}
#endif

int cuGetErrorName(int code, const char** out)
{
  if (!out) return INVALID_VALUE;
  *out = code == 0                ? "CUDA_SUCCESS"
         : code == OUT_OF_MEMORY  ? "CUDA_ERROR_OUT_OF_MEMORY"
         : code == INVALID_DEVICE ? "CUDA_ERROR_INVALID_DEVICE"
                                  : "CUDA_ERROR_INVALID_VALUE";
  return 0;
}

int cuGetErrorString(int code, const char** out)
{
  if (!out) return INVALID_VALUE;
  *out = code == 0 ? "no error" : "stand-in driver error";
  return 0;
}

__attribute__((destructor)) static void report(void)
{
  fprintf(stderr,
          "standin-driver: cuMemAddressReserve %lu cuMemAddressFree %lu cuMemCreate %lu "
          "cuMemRelease %lu cuMemMap %lu cuMemUnmap %lu cuMemSetAccess %lu peak_bytes %zu\n",
          n_reserve,
          n_address_free,
          n_create,
          n_release,
          n_map,
          n_unmap,
          n_set_access,
          peak_created_bytes);
}
