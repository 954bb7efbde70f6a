/* rmm/cuda_runtime_api.h from C, as its documentation promises: CUDA's names for HIP's
 * beside the C ABI. Exit status 0 when the runtime answers (a count, or "no device" here). */
#include <rmm/cuda_runtime_api.h>
#include <rmm/rmm.h>

#include <stdio.h>

int main(void)
{
  int count      = -1;
  cudaStream_t s = cudaStreamLegacy;
  cudaError_t e  = cudaGetDeviceCount(&count);
  if (e != cudaSuccess && e != hipErrorNoDevice) {
    fprintf(stderr, "cudaGetDeviceCount: %s\n", cudaGetErrorName(e));
    return 1;
  }
  /* The C ABI takes the same stream value. */
  return rmm_stream_synchronize((rmm_stream_t)s) == RMM_STATUS_SUCCESS ? 0 : 2;
}
