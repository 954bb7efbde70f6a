/* Names of the stand-in runtime's entry points: CUDA's by default, HIP's with -DSTANDIN_HIP.
 * Shared by the stand-in (standin_runtime.c) and the test programs linked against it. */
#ifndef STANDIN_API_H
#define STANDIN_API_H
#include <stddef.h>

#ifdef STANDIN_HIP
#define RT(name) hip##name
#define RT_PREFIX "hip"
#else
#define RT(name) cuda##name
#define RT_PREFIX "cuda"
#endif

int RT(Malloc)(void **p, size_t size);
int RT(Free)(void *p);
int RT(MallocAsync)(void **p, size_t size, void *stream);
int RT(FreeAsync)(void *p, void *stream);
int RT(MemGetInfo)(size_t *free_bytes, size_t *total);
int RT(DeviceSynchronize)(void);
int RT(StreamCreateWithFlags)(void **stream, unsigned flags);
int RT(StreamDestroy)(void *stream);

/* A second path to device memory that the interposer does not see. */
int standin_malloc_foreign(void **p, size_t size);
/* A "kernel": after delay_us microseconds, sets n bytes at p to value, ordered on stream
 * (NULL: the legacy default stream) like real device work. */
int standin_launch_fill(void *p, size_t n, int value, unsigned delay_us, void *stream);
#endif
