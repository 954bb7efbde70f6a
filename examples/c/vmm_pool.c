/* The C ABI of the pool on virtual memory (vmm_pool_memory_resource): rmm_vmm_pool_options_init,
 * rmm_vmm_pool_create, rmm_vmm_pool_get_stats and rmm_vmm_pool_release, with good and bad
 * input. Exits non-zero on any unexpected status; exits 77 (skipped) where the device has no
 * virtual memory management.
 *
 * With the argument "unsupported" (ctest runs it so with RMM_RUNTIME=host RMM_HOST_VMM=0, an
 * emulated device without virtual memory management), creation must be refused with
 * RMM_STATUS_UNSUPPORTED and a message saying why. */
#include <rmm/rmm.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

static void expect(const char* what, rmm_status_t got, rmm_status_t want)
{
  if (got != want) {
    fprintf(stderr,
            "FAIL %s: got %s (%u), want %s (%u); last error: %s\n",
            what,
            rmm_status_string(got),
            (unsigned)got,
            rmm_status_string(want),
            (unsigned)want,
            rmm_last_error_message());
    ++failures;
  } else {
    printf("ok   %s -> %s\n", what, rmm_status_string(got));
  }
}

static void check(const char* what, bool ok)
{
  if (!ok) {
    fprintf(stderr, "FAIL %s\n", what);
    ++failures;
  } else {
    printf("ok   %s\n", what);
  }
}

/* The last error names `word`. */
static void check_message(const char* word)
{
  const char* message = rmm_last_error_message();
  if (message == NULL || strstr(message, word) == NULL) {
    fprintf(stderr,
            "FAIL the last error does not name \"%s\": %s\n",
            word,
            message != NULL ? message : "(none)");
    ++failures;
  } else {
    printf("ok   the last error names \"%s\"\n", word);
  }
}

#define EXPECT(call, want) expect(#call, (call), (want))
#define CHECK(cond)        check(#cond, (cond))

/* Bad input that needs no virtual memory management: the same answers everywhere. */
static void bad_input_everywhere(void)
{
  rmm_vmm_pool_options options;
  rmm_vmm_pool_stats stats;
  rmm_resource_t mr   = NULL;
  rmm_resource_t cuda = NULL;
  size_t released     = 0;
  int32_t peers[2]    = {0, 0};

  EXPECT(rmm_vmm_pool_options_init(NULL), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT(rmm_vmm_pool_options_init(&options), RMM_STATUS_SUCCESS);
  EXPECT(rmm_vmm_pool_create(NULL, NULL), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT(rmm_vmm_pool_create(&options, NULL), RMM_STATUS_INVALID_ARGUMENT);
  /* A count without its array. */
  options.peer_devices      = NULL;
  options.peer_device_count = 2;
  EXPECT(rmm_vmm_pool_create(&options, &mr), RMM_STATUS_INVALID_ARGUMENT);
  check_message("peer_devices is NULL");
  CHECK(mr == NULL);
  options.peer_devices      = peers;
  options.peer_device_count = 1000000;
  EXPECT(rmm_vmm_pool_create(&options, &mr), RMM_STATUS_INVALID_ARGUMENT);
  CHECK(mr == NULL);

  /* NULL and foreign handles, NULL out-pointers. */
  EXPECT(rmm_vmm_pool_get_stats(NULL, &stats), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT(rmm_vmm_pool_release(NULL, &released), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT(rmm_cuda_create(&cuda), RMM_STATUS_SUCCESS);
  EXPECT(rmm_vmm_pool_get_stats(cuda, NULL), RMM_STATUS_INVALID_ARGUMENT);
  /* Another kind of resource is not a vmm pool. */
  EXPECT(rmm_vmm_pool_get_stats(cuda, &stats), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT(rmm_vmm_pool_release(cuda, &released), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT(rmm_resource_release(cuda), RMM_STATUS_SUCCESS);
}

static int unsupported(void)
{
  rmm_vmm_pool_options options;
  rmm_resource_t mr = NULL;

  bad_input_everywhere();
  EXPECT(rmm_vmm_pool_create(NULL, &mr), RMM_STATUS_UNSUPPORTED);
  check_message("virtual memory management");
  CHECK(mr == NULL);
  EXPECT(rmm_vmm_pool_options_init(&options), RMM_STATUS_SUCCESS);
  options.initial_pool_size = 1 << 20;
  EXPECT(rmm_vmm_pool_create(&options, &mr), RMM_STATUS_UNSUPPORTED);
  CHECK(mr == NULL);
  /* The ordinary pool still works there. */
  {
    rmm_resource_t cuda = NULL;
    rmm_resource_t pool = NULL;
    EXPECT(rmm_cuda_create(&cuda), RMM_STATUS_SUCCESS);
    EXPECT(rmm_pool_create(cuda, 1 << 20, 0, &pool), RMM_STATUS_SUCCESS);
    EXPECT(rmm_resource_release(pool), RMM_STATUS_SUCCESS);
    EXPECT(rmm_resource_release(cuda), RMM_STATUS_SUCCESS);
  }
  return failures == 0 ? 0 : 1;
}

int main(int argc, char** argv)
{
  rmm_vmm_pool_options options;
  rmm_vmm_pool_stats stats;
  rmm_resource_t mr    = NULL;
  rmm_resource_t small = NULL;
  void* a              = NULL;
  void* b              = NULL;
  void* all            = NULL;
  size_t g             = 0;
  size_t released      = 0;
  const char* name     = NULL;
  rmm_status_t status;
  int32_t self[1]    = {0};
  int32_t missing[1] = {999};
  unsigned char byte = 0;

  if (argc > 1 && strcmp(argv[1], "unsupported") == 0) { return unsupported(); }

  /* The defaults. */
  EXPECT(rmm_vmm_pool_options_init(&options), RMM_STATUS_SUCCESS);
  CHECK(options.initial_pool_size == 0 && options.maximum_pool_size == 0);
  CHECK(options.reserved_size == 0 && options.granularity == 0);
  CHECK(options.release_threshold == SIZE_MAX);
  CHECK(options.peer_devices == NULL && options.peer_device_count == 0);

  /* NULL options: the defaults. */
  status = rmm_vmm_pool_create(NULL, &mr);
  if (status == RMM_STATUS_UNSUPPORTED) {
    printf("skipped: no virtual memory management here: %s\n", rmm_last_error_message());
    return 77;
  }
  expect("rmm_vmm_pool_create(NULL, &mr)", status, RMM_STATUS_SUCCESS);
  if (mr == NULL) { return 1; }
  EXPECT(rmm_resource_name(mr, &name), RMM_STATUS_SUCCESS);
  CHECK(name != NULL && strcmp(name, "vmm_pool_memory_resource") == 0);
  EXPECT(rmm_vmm_pool_get_stats(mr, &stats), RMM_STATUS_SUCCESS);
  g = stats.granularity;
  CHECK(g > 0);
  CHECK(stats.pool_size == 0 && stats.bytes_free == 0 && stats.free_block_count == 0);
  CHECK(stats.reserved_size > 0 && stats.reserved_size % g == 0);
  /* No maximum: the reservation bounds the pool (reported as it, or as 0). */
  CHECK(stats.maximum_pool_size == 0 || stats.maximum_pool_size == stats.reserved_size);
  CHECK(stats.fragmentation == 0.0);
  EXPECT(rmm_resource_release(mr), RMM_STATUS_SUCCESS);
  mr = NULL;

  bad_input_everywhere();

  /* A granularity that is not a multiple of the device's. */
  EXPECT(rmm_vmm_pool_options_init(&options), RMM_STATUS_SUCCESS);
  options.reserved_size = 64 << 20;
  options.granularity   = g + g / 2;
  EXPECT(rmm_vmm_pool_create(&options, &mr), RMM_STATUS_INVALID_ARGUMENT);
  check_message("granularity");
  check_message("multiple");
  CHECK(mr == NULL);
  /* An initial size above the maximum; sizes beyond the reservation; a missing peer. */
  options.granularity       = 0;
  options.initial_pool_size = 4 * g;
  options.maximum_pool_size = 2 * g;
  EXPECT(rmm_vmm_pool_create(&options, &mr), RMM_STATUS_INVALID_ARGUMENT);
  check_message("initial_pool_size");
  options.initial_pool_size = 0;
  options.maximum_pool_size = (size_t)128 << 20;
  EXPECT(rmm_vmm_pool_create(&options, &mr), RMM_STATUS_INVALID_ARGUMENT);
  check_message("reserved_size");
  options.maximum_pool_size = 0;
  options.peer_devices      = missing;
  options.peer_device_count = 1;
  EXPECT(rmm_vmm_pool_create(&options, &mr), RMM_STATUS_INVALID_ARGUMENT);
  check_message("peer device 999");
  CHECK(mr == NULL);

  /* A pool of 64 MiB of address space, one granule mapped at once, the device itself as a
   * peer (harmless). */
  options.peer_devices      = self;
  options.initial_pool_size = 1;
  EXPECT(rmm_vmm_pool_create(&options, &mr), RMM_STATUS_SUCCESS);
  EXPECT(rmm_vmm_pool_get_stats(mr, &stats), RMM_STATUS_SUCCESS);
  CHECK(stats.pool_size == g);
  CHECK(stats.reserved_size == (size_t)64 << 20);
  CHECK(stats.bytes_free == g && stats.largest_free_block == g);

  /* Growth in place: the second allocation lies right after the first. */
  EXPECT(rmm_allocate(mr, g, &a), RMM_STATUS_SUCCESS);
  EXPECT(rmm_allocate(mr, 3 * g, &b), RMM_STATUS_SUCCESS);
  CHECK((char*)b == (char*)a + g);
  EXPECT(rmm_memset_async(b, 0x3c, 3 * g, NULL), RMM_STATUS_SUCCESS);
  EXPECT(rmm_memcpy_async(&byte, (char*)b + 3 * g - 1, 1, NULL), RMM_STATUS_SUCCESS);
  EXPECT(rmm_stream_synchronize(NULL), RMM_STATUS_SUCCESS);
  CHECK(byte == 0x3c);
  EXPECT(rmm_vmm_pool_get_stats(mr, &stats), RMM_STATUS_SUCCESS);
  CHECK(stats.pool_size >= 4 * g);

  /* release() while `a` lives: everything after it is unmapped. */
  EXPECT(rmm_deallocate(mr, b, 3 * g), RMM_STATUS_SUCCESS);
  EXPECT(rmm_vmm_pool_release(mr, &released), RMM_STATUS_SUCCESS);
  CHECK(released >= 3 * g);
  EXPECT(rmm_vmm_pool_get_stats(mr, &stats), RMM_STATUS_SUCCESS);
  CHECK(stats.pool_size == g);
  EXPECT(rmm_memset_async(a, 0x11, g, NULL), RMM_STATUS_SUCCESS);
  EXPECT(rmm_stream_synchronize(NULL), RMM_STATUS_SUCCESS);
  EXPECT(rmm_deallocate(mr, a, g), RMM_STATUS_SUCCESS);
  /* The released-count pointer may be NULL. */
  EXPECT(rmm_vmm_pool_release(mr, NULL), RMM_STATUS_SUCCESS);
  EXPECT(rmm_vmm_pool_get_stats(mr, &stats), RMM_STATUS_SUCCESS);
  CHECK(stats.pool_size == 0);

  /* The maximum: 2 granules, never more. */
  EXPECT(rmm_vmm_pool_options_init(&options), RMM_STATUS_SUCCESS);
  options.reserved_size     = 64 << 20;
  options.maximum_pool_size = 2 * g;
  EXPECT(rmm_vmm_pool_create(&options, &small), RMM_STATUS_SUCCESS);
  EXPECT(rmm_allocate(small, 2 * g, &all), RMM_STATUS_SUCCESS);
  EXPECT(rmm_deallocate(small, all, 2 * g), RMM_STATUS_SUCCESS);
  EXPECT(rmm_allocate(small, 3 * g, &all), RMM_STATUS_OUT_OF_MEMORY);
  check_message("maximum pool size exceeded");
  EXPECT(rmm_vmm_pool_get_stats(small, &stats), RMM_STATUS_SUCCESS);
  CHECK(stats.maximum_pool_size == 2 * g && stats.pool_size <= 2 * g);
  EXPECT(rmm_resource_release(small), RMM_STATUS_SUCCESS);

  /* As the current device resource. */
  {
    rmm_resource_t previous = NULL;
    rmm_resource_t current  = NULL;
    void* p                 = NULL;
    EXPECT(rmm_set_current_device_resource(mr, &previous), RMM_STATUS_SUCCESS);
    EXPECT(rmm_get_current_device_resource(&current), RMM_STATUS_SUCCESS);
    EXPECT(rmm_allocate(current, 1000, &p), RMM_STATUS_SUCCESS);
    EXPECT(rmm_vmm_pool_get_stats(current, &stats), RMM_STATUS_SUCCESS);
    /* One block of 1024 bytes (1000 rounded up to 256) in whole granules. */
    CHECK(stats.pool_size >= g && stats.pool_size % g == 0);
    CHECK(stats.pool_size - stats.bytes_free == 1024);
    EXPECT(rmm_deallocate(current, p, 1000), RMM_STATUS_SUCCESS);
    EXPECT(rmm_resource_release(current), RMM_STATUS_SUCCESS);
    EXPECT(rmm_set_current_device_resource(previous, NULL), RMM_STATUS_SUCCESS);
    EXPECT(rmm_resource_release(previous), RMM_STATUS_SUCCESS);
  }

  /* A released handle is reported, not used. */
  EXPECT(rmm_resource_release(mr), RMM_STATUS_SUCCESS);
  EXPECT(rmm_vmm_pool_get_stats(mr, &stats), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT(rmm_vmm_pool_release(mr, &released), RMM_STATUS_INVALID_ARGUMENT);

  if (failures != 0) {
    fprintf(stderr, "%d failure(s)\n", failures);
    return 1;
  }
  printf("all vmm pool C ABI checks passed\n");
  return 0;
}
