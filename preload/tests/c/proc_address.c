/* Test program linked against the stand-in HIP runtime (-DSTANDIN_HIP): takes hipMalloc and
 * hipFree from hipGetProcAddress (ROCm >= 6.2), as HIP's own libraries may, and allocates
 * through them: under the interposer those must be its hooks. */
#include <stdio.h>
#include <string.h>

int hipGetProcAddress(
  const char* symbol, void** pfn, int version, unsigned long long flags, void* status);

int main(void)
{
  int (*alloc)(void**, size_t) = NULL;
  int (*release)(void*)        = NULL;
  if (hipGetProcAddress("hipMalloc", (void**)&alloc, 60200000, 0, NULL) ||
      hipGetProcAddress("hipFree", (void**)&release, 60200000, 0, NULL))
    return 2;
  int bad = 0;
  for (int i = 0; i < 2000; i++) {
    void* p = NULL;
    if (alloc(&p, 4096 + (size_t)i) || !p) {
      bad++;
      break;
    }
    memset(p, i & 0xff, 4096);
    if (release(p)) bad++;
  }
  printf("hipGetProcAddress: %s\n", bad ? "FAILED" : "ok");
  return bad != 0;
}
