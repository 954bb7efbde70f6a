/* A stand-in GPU runtime on host memory, for testing librmm_preload.so without a GPU.
 * Built by preload/tests/standin.rs twice: as libcudart.so.13 (cuda* names) and, with
 * -DSTANDIN_HIP, as libamdhip64.so.6 (hip* names). It implements the entry points rmm's
 * GPU backend requires at load (src/runtime/gpu/) plus the interposed ones, counts its
 * calls and prints the counts at exit.
 *
 * Work is asynchronous as on a GPU: standin_launch_fill() "kernels", event records and
 * stream synchronization go through in-order queues run by worker threads. The legacy
 * default stream and every blocking stream share one queue (stricter than CUDA, which only
 * orders them with each other); each non-blocking stream has its own queue, which nothing
 * else waits for. The runtime's free synchronizes the device first, as cudaFree does. */
#include "standin_api.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOTAL_BYTES ((size_t)1 << 30)
#define NOT_READY   600

/* ---- memory ---- */
typedef struct node {
  void* p;
  size_t size;
  unsigned long id;
  struct node* next;
} node;
static unsigned long next_id = 1;
static node* live_list;
static size_t live_bytes;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long n_malloc, n_free, n_free_errors, n_sync, n_malloc_async, n_free_async,
  n_event_record;

/* ---- queues ---- */
enum { TASK_FILL, TASK_EVENT };
typedef struct event {
  int pending;
} event;
typedef struct task {
  int kind;
  void* p;
  size_t n;
  int value;
  unsigned delay_us;
  event* ev;
  struct task* next;
} task;
typedef struct queue {
  task *head, *tail;
  int started;
} queue;
typedef struct stream {
  int nonblocking;
  queue q;
} stream;

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcv    = PTHREAD_COND_INITIALIZER;
static queue legacy;
#define MAX_QUEUES 64
static queue* queues[MAX_QUEUES] = {&legacy};
static int n_queues              = 1;

static void* worker(void* arg)
{
  queue* q = arg;
  pthread_mutex_lock(&qlock);
  for (;;) {
    while (!q->head)
      pthread_cond_wait(&qcv, &qlock);
    task* t = q->head;
    pthread_mutex_unlock(&qlock);
    if (t->kind == TASK_FILL) {
      if (t->delay_us) usleep(t->delay_us);
      memset(t->p, t->value, t->n);
    }
    pthread_mutex_lock(&qlock);
    q->head = t->next;
    if (!q->head) q->tail = NULL;
    if (t->kind == TASK_EVENT) t->ev->pending--;
    free(t);
    pthread_cond_broadcast(&qcv);
  }
  return NULL;
}

/* A fork while a worker held qlock (it takes it briefly after every task and wake-up) left
 * the child's copy locked forever: hold it across fork, as a real runtime's locks are. The
 * child has none of the workers, so its queues start their own on first use. */
static void before_fork(void) { pthread_mutex_lock(&qlock); }
static void after_fork_parent(void) { pthread_mutex_unlock(&qlock); }
static void after_fork_child(void)
{
  for (int i = 0; i < n_queues; i++)
    queues[i]->started = 0;
  pthread_mutex_unlock(&qlock);
}
__attribute__((constructor)) static void install_fork_handlers(void)
{
  pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

static queue* queue_of(void* s)
{
  /* 0: default, 1: cudaStreamLegacy, 2: cudaStreamPerThread — all the legacy queue here. */
  if ((uintptr_t)s <= 2) return &legacy;
  stream* st = s;
  return st->nonblocking ? &st->q : &legacy;
}

static void enqueue(queue* q, task* t)
{
  t->next = NULL;
  pthread_mutex_lock(&qlock);
  if (!q->started) {
    pthread_t th;
    pthread_create(&th, NULL, worker, q);
    pthread_detach(th);
    q->started = 1;
  }
  if (q->tail)
    q->tail->next = t;
  else
    q->head = t;
  q->tail = t;
  pthread_cond_broadcast(&qcv);
  pthread_mutex_unlock(&qlock);
}

static void wait_queue(queue* q)
{
  pthread_mutex_lock(&qlock);
  while (q->head)
    pthread_cond_wait(&qcv, &qlock);
  pthread_mutex_unlock(&qlock);
}

static void wait_device(void)
{
  pthread_mutex_lock(&qlock);
  for (int i = 0; i < n_queues; i++)
    while (queues[i]->head)
      pthread_cond_wait(&qcv, &qlock);
  pthread_mutex_unlock(&qlock);
}

int standin_launch_fill(void* p, size_t n, int value, unsigned delay_us, void* s)
{
  task* t     = calloc(1, sizeof *t);
  t->kind     = TASK_FILL;
  t->p        = p;
  t->n        = n;
  t->value    = value;
  t->delay_us = delay_us;
  enqueue(queue_of(s), t);
  return 0;
}

/* ---- allocation ---- */
static int do_malloc(void** p, size_t size)
{
  if (!p) return 1;
  if (size == 0) {
    *p = NULL;
    return 0;
  }
  pthread_mutex_lock(&lock);
  if (live_bytes + size > TOTAL_BYTES) {
    pthread_mutex_unlock(&lock);
    return 2;
  }
  pthread_mutex_unlock(&lock);
  void* m = aligned_alloc(256, (size + 255) & ~(size_t)255);
  if (!m) return 2;
  node* n = malloc(sizeof *n);
  n->p    = m;
  n->size = size;
  pthread_mutex_lock(&lock);
  n->next   = live_list;
  live_list = n;
  live_bytes += size;
  n->id = next_id++;
  pthread_mutex_unlock(&lock);
  *p = m;
  return 0;
}

static int do_free(void* p)
{
  if (!p) return 0;
  wait_device(); /* the runtime's free waits for all queued work */
  pthread_mutex_lock(&lock);
  for (node** it = &live_list; *it; it = &(*it)->next) {
    if ((*it)->p == p) {
      node* n = *it;
      *it     = n->next;
      live_bytes -= n->size;
      pthread_mutex_unlock(&lock);
      free(n->p);
      free(n);
      return 0;
    }
  }
  n_free_errors++;
  pthread_mutex_unlock(&lock);
  return 1; /* invalid value */
}

static int is_live(const void* p)
{
  int found = 0;
  pthread_mutex_lock(&lock);
  for (node* n = live_list; n; n = n->next)
    if (n->p == p) {
      found = 1;
      break;
    }
  pthread_mutex_unlock(&lock);
  return found;
}

int RT(Malloc)(void** p, size_t size)
{
  __atomic_add_fetch(&n_malloc, 1, __ATOMIC_RELAXED);
  return do_malloc(p, size);
}
int RT(Free)(void* p)
{
  __atomic_add_fetch(&n_free, 1, __ATOMIC_RELAXED);
  return do_free(p);
}
int RT(MallocAsync)(void** p, size_t size, void* s)
{
  (void)s;
  __atomic_add_fetch(&n_malloc_async, 1, __ATOMIC_RELAXED);
  return do_malloc(p, size);
}
int RT(FreeAsync)(void* p, void* s)
{
  __atomic_add_fetch(&n_free_async, 1, __ATOMIC_RELAXED);
  wait_queue(queue_of(s));
  return do_free(p);
}
#if !defined(STANDIN_HIP) && !defined(STANDIN_DRIVER)
/* The per-thread-default-stream names (every stream shares the legacy queue here). */
int cudaMallocAsync_ptsz(void** p, size_t size, void* s) { return RT(MallocAsync)(p, size, s); }
int cudaFreeAsync_ptsz(void* p, void* s) { return RT(FreeAsync)(p, s); }
#endif
int RT(MallocManaged)(void** p, size_t size, unsigned flags)
{
  (void)flags;
  return RT(Malloc)(p, size);
}
#ifdef STANDIN_HIP
int hipExtMallocWithFlags(void** p, size_t size, unsigned flags)
{
  (void)flags;
  return hipMalloc(p, size);
}
#endif
int standin_malloc_foreign(void** p, size_t size) { return do_malloc(p, size); }

int RT(MemGetInfo)(size_t* f, size_t* t)
{
  pthread_mutex_lock(&lock);
  *f = TOTAL_BYTES - live_bytes;
  pthread_mutex_unlock(&lock);
  *t = TOTAL_BYTES;
  return 0;
}

/* ---- errors, versions, devices ---- */
const char* RT(GetErrorName)(int e)
{
  switch (e) {
    case 0:
      return RT_PREFIX "Success";
    case 1:
      return RT_PREFIX "ErrorInvalidValue";
    case 2:
      return RT_PREFIX "ErrorMemoryAllocation";
    case NOT_READY:
      return RT_PREFIX "ErrorNotReady";
    default:
      return RT_PREFIX "ErrorUnknown";
  }
}
const char* RT(GetErrorString)(int e) { return e == 0 ? "no error" : "stand-in error"; }
int RT(GetLastError)(void) { return 0; }
#if defined(STANDIN_HIP)
int hipRuntimeGetVersion(int* v)
{
  *v = 60000000;
  return 0;
}
int hipDriverGetVersion(int* v)
{
  *v = 60000000;
  return 0;
}
#elif !defined(STANDIN_DRIVER)
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
#endif
int RT(GetDeviceCount)(int* n)
{
  *n = 1;
  return 0;
}
int RT(GetDevice)(int* d)
{
  *d = 0;
  return 0;
}
int RT(SetDevice)(int d) { return d == 0 ? 0 : 101; }
int RT(DeviceSynchronize)(void)
{
  __atomic_add_fetch(&n_sync, 1, __ATOMIC_RELAXED);
  wait_device();
  return 0;
}
int RT(DeviceGetAttribute)(int* v, int attr, int dev)
{
  (void)attr;
  (void)dev;
  *v = 0;
  return 0;
}

/* ---- streams and events ---- */
int RT(StreamCreateWithFlags)(void** s, unsigned f)
{
  stream* st      = calloc(1, sizeof *st);
  st->nonblocking = (f & 1) != 0;
  if (st->nonblocking) {
    pthread_mutex_lock(&qlock);
    if (n_queues == MAX_QUEUES) {
      pthread_mutex_unlock(&qlock);
      free(st);
      return 2;
    }
    queues[n_queues++] = &st->q;
    pthread_mutex_unlock(&qlock);
  }
  *s = st;
  return 0;
}
int RT(StreamCreateWithPriority)(void** s, unsigned f, int priority)
{
  (void)priority;
  return RT(StreamCreateWithFlags)(s, f);
}
/* Queued work still runs after destruction, as on a GPU; the stream object (and its
 * queue's worker) is kept alive for that, which a test stand-in may afford. */
int RT(StreamDestroy)(void* s)
{
  (void)s;
  return 0;
}
int RT(StreamSynchronize)(void* s)
{
  wait_queue(queue_of(s));
  return 0;
}
int RT(StreamQuery)(void* s)
{
  queue* q = queue_of(s);
  pthread_mutex_lock(&qlock);
  int busy = q->head != NULL;
  pthread_mutex_unlock(&qlock);
  return busy ? NOT_READY : 0;
}
int RT(EventCreateWithFlags)(void** e, unsigned f)
{
  (void)f;
  *e = calloc(1, sizeof(event));
  return 0;
}
int RT(EventDestroy)(void* e)
{
  free(e);
  return 0;
}
int RT(EventRecord)(void* e, void* s)
{
  __atomic_add_fetch(&n_event_record, 1, __ATOMIC_RELAXED);
  task* t = calloc(1, sizeof *t);
  t->kind = TASK_EVENT;
  t->ev   = e;
  pthread_mutex_lock(&qlock);
  ((event*)e)->pending++;
  pthread_mutex_unlock(&qlock);
  enqueue(queue_of(s), t);
  return 0;
}
int RT(EventSynchronize)(void* e)
{
  pthread_mutex_lock(&qlock);
  while (((event*)e)->pending)
    pthread_cond_wait(&qcv, &qlock);
  pthread_mutex_unlock(&qlock);
  return 0;
}
int RT(EventQuery)(void* e)
{
  pthread_mutex_lock(&qlock);
  int pending = ((event*)e)->pending;
  pthread_mutex_unlock(&qlock);
  return pending ? NOT_READY : 0;
}
int RT(StreamWaitEvent)(void* s, void* e, unsigned f)
{
  /* Conservative: the host waits instead of the stream. */
  (void)s;
  (void)f;
  return RT(EventSynchronize)(e);
}
int RT(MemcpyAsync)(void* d, const void* src, size_t n, int k, void* s)
{
  (void)k;
  wait_queue(queue_of(s));
  memmove(d, src, n);
  return 0;
}
int RT(MemsetAsync)(void* d, int v, size_t n, void* s)
{
  wait_queue(queue_of(s));
  memset(d, v, n);
  return 0;
}
/* The live allocation holding p (as the driver's address-range query answers): 0, or 1
 * (invalid value) when p lies in none. */
int RT(StandinRange)(const void* p, void** base, size_t* size, unsigned long* id)
{
  pthread_mutex_lock(&lock);
  for (node* n = live_list; n; n = n->next) {
    if ((const char*)p >= (char*)n->p && (const char*)p < (char*)n->p + n->size) {
      if (base) *base = n->p;
      if (size) *size = n->size;
      if (id) *id = n->id;
      pthread_mutex_unlock(&lock);
      return 0;
    }
  }
  pthread_mutex_unlock(&lock);
  return 1;
}

#ifdef STANDIN_HIP
/* ROCm 6.2's lookup of HIP's own entry points by name (what the interposer must hand its
 * hooks out through). */
int hipGetProcAddress(
  const char* symbol, void** pfn, int version, unsigned long long flags, void* status)
{
  (void)version;
  (void)flags;
  (void)status;
  if (!symbol || !pfn) return 1;
  if (!strcmp(symbol, "hipMalloc"))
    *pfn = (void*)hipMalloc;
  else if (!strcmp(symbol, "hipFree"))
    *pfn = (void*)hipFree;
  else {
    *pfn = NULL;
    return 1;
  }
  return 0;
}
#endif

struct attrs {
  int type;
  int device;
  void* dptr;
  void* hptr;
};
int RT(PointerGetAttributes)(struct attrs* a, const void* p)
{
  a->type   = is_live(p) ? 2 : 0;
  a->device = is_live(p) ? 0 : -1;
  a->dptr   = (void*)p;
  a->hptr   = NULL;
  return 0;
}

__attribute__((destructor)) static void report(void)
{
  fprintf(stderr,
          "standin: " RT_PREFIX "Malloc %lu " RT_PREFIX "Free %lu " RT_PREFIX
          "MallocAsync %lu " RT_PREFIX
          "FreeAsync %lu free_errors %lu device_synchronize %lu event_record %lu\n",
          n_malloc,
          n_free,
          n_malloc_async,
          n_free_async,
          n_free_errors,
          n_sync,
          n_event_record);
}
