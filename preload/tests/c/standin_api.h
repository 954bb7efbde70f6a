/* Names of the stand-in runtime's entry points: CUDA's by default, HIP's with -DSTANDIN_HIP,
 * internal ones with -DSTANDIN_DRIVER.
 * Shared by the stand-in (standin_runtime.c) and the test programs linked against it. */
#ifndef STANDIN_API_H
#define STANDIN_API_H
#include <stddef.h>

#if defined(STANDIN_DRIVER)
/* The stand-in driver (standin_libcuda.c) builds this implementation under internal
 * names and exports the driver's names over it. */
#define RT(name)               standin_rt_##name
#define RT_PREFIX              "cu"
#define standin_launch_fill    standin_rt_launch_fill
#define standin_malloc_foreign standin_rt_malloc_foreign
#elif defined(STANDIN_HIP)
#define RT(name)  hip##name
#define RT_PREFIX "hip"
#else
#define RT(name)  cuda##name
#define RT_PREFIX "cuda"
#endif

#if defined(STANDIN_PTSZ) && !defined(STANDIN_HIP) && !defined(STANDIN_DRIVER)
/* As cuda_runtime_api.h does for --default-stream per-thread. */
#define cudaMallocAsync cudaMallocAsync_ptsz
#define cudaFreeAsync   cudaFreeAsync_ptsz
#endif

int RT(Malloc)(void** p, size_t size);
int RT(Free)(void* p);
int RT(MallocAsync)(void** p, size_t size, void* stream);
int RT(FreeAsync)(void* p, void* stream);
int RT(MemGetInfo)(size_t* free_bytes, size_t* total);
int RT(DeviceSynchronize)(void);
int RT(StreamCreateWithFlags)(void** stream, unsigned flags);
int RT(StreamDestroy)(void* stream);

int RT(MallocManaged)(void** p, size_t size, unsigned flags);
int RT(StreamCreateWithPriority)(void** stream, unsigned flags, int priority);
int RT(StreamSynchronize)(void* stream);
int RT(StreamQuery)(void* stream);
int RT(StreamWaitEvent)(void* stream, void* event, unsigned flags);
int RT(EventCreateWithFlags)(void** event, unsigned flags);
int RT(EventDestroy)(void* event);
int RT(EventRecord)(void* event, void* stream);
int RT(EventSynchronize)(void* event);
int RT(EventQuery)(void* event);
int RT(MemcpyAsync)(void* dst, const void* src, size_t n, int kind, void* stream);
int RT(MemsetAsync)(void* dst, int value, size_t n, void* stream);
int RT(StandinRange)(const void* p, void** base, size_t* size, unsigned long* id);

/* A second path to device memory that the interposer does not see. */
int standin_malloc_foreign(void** p, size_t size);
/* A "kernel": after delay_us microseconds, sets n bytes at p to value, ordered on stream
 * (NULL: the legacy default stream) like real device work. */
int standin_launch_fill(void* p, size_t n, int value, unsigned delay_us, void* stream);
#endif
