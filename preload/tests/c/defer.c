/* Test program for the synchronous free's semantics under the interposer, linked against
 * the stand-in runtime. A "kernel" (standin_launch_fill) still writes a block when the
 * program frees it; the runtime's free waits for that, so the program may reuse the memory
 * at once. Under the interposer the block must not be handed out again before the kernel
 * is done (deferred reuse), or the late write lands in the next allocation ("corrupt").
 * Then: a pool too small for the blocks still waiting must wait, not fail; and a forked
 * child allocates through the runtime while the parent keeps using the pool. */
#include "standin_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N ((size_t)1 << 20)

int main(void)
{
  void* nonblocking = NULL;
  int failures = 0, corrupt = 0;
  if (RT(StreamCreateWithFlags)(&nonblocking, 1)) failures++;
  for (int i = 0; i < 48; i++) {
    void* stream = (i % 2) ? nonblocking : NULL;
    unsigned char *a, *b;
    void* scratch;
    if (RT(Malloc)((void**)&a, N) || RT(Malloc)(&scratch, N)) {
      failures++;
      break;
    }
    standin_launch_fill(a, N, 0xAA, 3000, stream);
    if (RT(Free)(scratch) || RT(Free)(a)) failures++;
    if (RT(Malloc)((void**)&b, N)) {
      failures++;
      break;
    }
    memset(b, 0x11, N);
    RT(DeviceSynchronize)();
    for (size_t j = 0; j < N; j += 4096)
      if (b[j] != 0x11) {
        corrupt++;
        break;
      }
    if (RT(Free)(b)) failures++;
  }
  /* Blocks freed while their kernels are queued: with a small maximum pool size the
   * allocation has to wait for them. */
  for (int i = 0; i < 64; i++) {
    void* p;
    if (RT(Malloc)(&p, N)) {
      failures++;
      break;
    }
    standin_launch_fill(p, N, i, 300, i % 3 ? NULL : nonblocking);
    if (RT(Free)(p)) failures++;
  }
  RT(DeviceSynchronize)();
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    void* p = NULL;
    int rc  = RT(Malloc)(&p, 4096);
    if (rc == 0) {
      memset(p, 1, 4096);
      rc = RT(Free)(p);
    }
    exit(rc == 0 ? 0 : 3); /* runs exit handlers, ours included, in the child */
  }
  int status = 0;
  waitpid(pid, &status, 0);
  printf("child %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  void* q = NULL;
  if (RT(Malloc)(&q, 4096) || RT(Free)(q)) failures++;
  RT(StreamDestroy)(nonblocking);
  printf("corrupt %d failures %d\n", corrupt, failures);
  return failures != 0;
}
