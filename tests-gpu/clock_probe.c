// What the memory history's per-event work costs on this machine, piece by piece: the time
// stamp (rdtsc, clock_gettime), and the lock (a swap-and-store lock, a parking mutex's two
// read-modify-writes, a pthread mutex), each in ns per call over 2*10^7 calls, one thread.
//   gcc -O2 tests-gpu/clock_probe.c -o /tmp/clock_probe && /tmp/clock_probe
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

static double now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

#define N 20000000
#define TIME(label, body)                                      \
  do {                                                         \
    double const t0 = now_ns();                                \
    for (int i = 0; i < N; i++) { body; }                      \
    printf("%-28s %6.1f ns\n", label, (now_ns() - t0) / N);    \
  } while (0)

int main(void)
{
  volatile unsigned long long sink = 0;
  struct timespec ts;
  atomic_bool flag = 0;
  atomic_int word  = 0;
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  TIME("rdtsc", sink += __rdtsc());
  TIME("clock_gettime(MONOTONIC)", (clock_gettime(CLOCK_MONOTONIC, &ts), sink += ts.tv_nsec));
  TIME("clock_gettime(COARSE)", (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts), sink += ts.tv_nsec));
  TIME("swap lock + store unlock", {
    while (atomic_exchange_explicit(&flag, 1, memory_order_acquire)) {}
    atomic_store_explicit(&flag, 0, memory_order_release);
  });
  TIME("two compare-exchanges", {
    int e = 0;
    atomic_compare_exchange_strong(&word, &e, 1);
    e = 1;
    atomic_compare_exchange_strong(&word, &e, 0);
  });
  TIME("pthread mutex", (pthread_mutex_lock(&mu), pthread_mutex_unlock(&mu)));
  return (int)(sink & 0);
}
