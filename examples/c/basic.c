/* A tour of the rmm C API: runtime, devices, a resource, stream-ordered copies, errors and
 * the per-device resource. Build: cc basic.c $(pkg-config --cflags --libs rmm)
 * Exits 0 on success, 2 when no GPU runtime is usable (RMM_RUNTIME=host selects the host
 * emulation), 1 on any other failure (after printing why). */
#include <rmm/rmm.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints the failure of `call` and jumps to the cleanup label. */
#define CHECK(call)                             \
  do {                                          \
    rmm_status_t check_status_ = (call);        \
    if (check_status_ != RMM_STATUS_SUCCESS) {  \
      failed_status = check_status_;            \
      fprintf(stderr,                           \
              "%s failed: %s (%u): %s\n",       \
              #call,                            \
              rmm_status_string(check_status_), \
              (unsigned)check_status_,          \
              rmm_last_error_message());        \
      goto fail;                                \
    }                                           \
  } while (0)

int main(void)
{
  const char* runtime     = NULL;
  const char* description = NULL;
  int device_count        = 0;
  int device              = 0;
  size_t free_bytes       = 0;
  size_t total_bytes      = 0;
  rmm_resource_t mr       = NULL;
  rmm_resource_t current  = NULL;
  rmm_resource_t previous = NULL;
  rmm_stream_t stream     = NULL;
  void* ptrs[4]           = {NULL, NULL, NULL, NULL};
  const size_t sizes[4]   = {1, 1000, 1 << 20, (64 << 20) + 5};
  unsigned char* host     = NULL;
  const size_t bytes      = 4096;
  const char* name        = NULL;
  bool equal              = false;
  size_t i;
  int rc                     = 1;
  rmm_status_t failed_status = RMM_STATUS_SUCCESS;

  CHECK(rmm_runtime_name(&runtime));
  CHECK(rmm_runtime_description(&description));
  printf("runtime: %s (%s)\n", runtime, description);
  CHECK(rmm_get_device_count(&device_count));
  CHECK(rmm_get_current_device(&device));
  CHECK(rmm_available_device_memory(&free_bytes, &total_bytes));
  printf("devices: %d, current: %d, memory: %zu free of %zu bytes\n",
         device_count,
         device,
         free_bytes,
         total_bytes);

  /* A cuda_memory_resource and a few allocations, 256-byte aligned. */
  CHECK(rmm_cuda_create(&mr));
  CHECK(rmm_resource_name(mr, &name));
  for (i = 0; i < 4; ++i) {
    CHECK(rmm_allocate(mr, sizes[i], &ptrs[i]));
    printf("%s: %zu bytes at %p\n", name, sizes[i], ptrs[i]);
    if (ptrs[i] == NULL || ((size_t)ptrs[i]) % 256 != 0) {
      fprintf(stderr, "allocation of %zu bytes is not 256-byte aligned\n", sizes[i]);
      goto fail;
    }
  }

  /* memset + memcpy round trip on a stream of our own. */
  host = malloc(bytes);
  if (host == NULL) { goto fail; }
  memset(host, 0, bytes);
  CHECK(rmm_stream_create(RMM_STREAM_NON_BLOCKING, &stream));
  CHECK(rmm_memset_async(ptrs[2], 0x5A, bytes, stream));
  CHECK(rmm_memcpy_async(host, ptrs[2], bytes, stream));
  CHECK(rmm_stream_synchronize(stream));
  for (i = 0; i < bytes; ++i) {
    if (host[i] != 0x5A) {
      fprintf(stderr, "byte %zu is 0x%02x after the round trip, expected 0x5a\n", i, host[i]);
      goto fail;
    }
  }
  printf("memset/memcpy round trip of %zu bytes on a stream: ok\n", bytes);

  /* A handled error: the request is absurd, the message names its size. */
  {
    void* huge          = NULL;
    rmm_status_t status = rmm_allocate(mr, (size_t)1 << 60, &huge);
    if (status == RMM_STATUS_SUCCESS) {
      fprintf(stderr, "allocating 2^60 bytes unexpectedly succeeded\n");
      (void)rmm_deallocate(mr, huge, (size_t)1 << 60);
      goto fail;
    }
    printf("expected failure: %s: %s\n", rmm_status_string(status), rmm_last_error_message());
  }

  /* The per-device resource: set ours, read it back, restore the previous one. */
  CHECK(rmm_set_current_device_resource(mr, &previous));
  CHECK(rmm_get_current_device_resource(&current));
  CHECK(rmm_resource_is_equal(current, mr, &equal));
  if (!equal) {
    fprintf(stderr, "the current device resource is not the one just set\n");
    goto fail;
  }
  printf("current device resource set and read back: ok\n");
  CHECK(rmm_set_current_device_resource(previous, NULL));

  rc = 0;
fail:
  for (i = 0; i < 4; ++i) {
    if (ptrs[i] != NULL) { (void)rmm_deallocate(mr, ptrs[i], sizes[i]); }
  }
  if (stream != NULL) { (void)rmm_stream_destroy(stream); }
  free(host);
  (void)rmm_resource_release(current);
  (void)rmm_resource_release(previous);
  (void)rmm_resource_release(mr);
  if (failed_status == RMM_STATUS_NO_RUNTIME) { rc = 2; }
  printf("%s\n", rc == 0 ? "basic example: success" : "basic example: FAILED");
  return rc;
}
