// The machine's own thread scaling, as a ceiling for W3's "8 threads at least 5x one
// thread": T threads each run a private loop (xorshift draws, a private 1000-slot array
// as W3's working set, a private 64 KiB table probed at random) that shares nothing with
// the other threads, timed as W3 is: from all threads ready to the last one done. An
// allocator cannot scale better than this on the same cores.
//   gcc -O2 -pthread -o /tmp/scale_probe tests-gpu/scale_probe.c && /tmp/scale_probe [loops] [rounds]
// Prints, per round, aggregate Mloops/s and the scaling over T=1 for T = 1, 2, 4, 8, 16.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_THREADS 16

static atomic_int ready, go;
static long loops;
static double ends[MAX_THREADS];

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void* body(void* arg)
{
  long id    = (long)arg;
  uint64_t x = 88172645463325252ull + (uint64_t)id * 7919u;
  uint64_t slots[1000];
  uint32_t* table = calloc(16384, sizeof *table);
  if (table == NULL) { abort(); }
  for (int i = 0; i < 1000; i++) { slots[i] = (uint64_t)i; }
  atomic_fetch_add(&ready, 1);
  while (!atomic_load(&go)) {}
  uint64_t acc = 0;
  for (long s = 0; s < loops; s++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    int k      = (int)(x % 1000);
    uint32_t h = (uint32_t)((slots[k] * 0x9E3779B97F4A7C15ull) >> 50);
    acc += table[h];
    table[h] += 1;
    table[(h + 1) & 16383] ^= (uint32_t)x;
    slots[k] = x >> 20;
  }
  ends[id] = now();
  free(table);
  return (void*)(uintptr_t)acc;
}

int main(int argc, char** argv)
{
  loops      = argc > 1 ? atol(argv[1]) : 2000000;
  int rounds = argc > 2 ? atoi(argv[2]) : 3;
  int const ts[] = {1, 2, 4, 8, 16};
  for (int r = 0; r < rounds; r++) {
    double base = 0;
    for (int i = 0; i < 5; i++) {
      int t = ts[i];
      pthread_t th[MAX_THREADS];
      atomic_store(&ready, 0);
      atomic_store(&go, 0);
      for (long j = 0; j < t; j++) { pthread_create(&th[j], NULL, body, (void*)j); }
      while (atomic_load(&ready) < t) {}
      double t0   = now();
      atomic_store(&go, 1);
      double last = t0;
      for (int j = 0; j < t; j++) {
        pthread_join(th[j], NULL);
        if (ends[j] > last) { last = ends[j]; }
      }
      double rate = (double)t * (double)loops / (last - t0) / 1e6;
      if (t == 1) { base = rate; }
      printf("round %d T=%2d %8.1f Mloops/s scaling %.2fx\n", r, t, rate, rate / base);
    }
  }
  return 0;
}
