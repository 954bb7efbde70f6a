/* Handles dropped as NULL, released twice and used after release, and NULL out-pointers:
 * every call must return the documented status, never crash. Exits non-zero on any
 * unexpected status (zenoh-c's null-drop/double-drop tests, for rmm's handle types). */
#include <rmm/rmm.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

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

#define EXPECT(call, want) expect(#call, (call), (want))

int main(void)
{
  rmm_resource_t mr    = NULL;
  rmm_resource_t other = NULL;
  rmm_stream_t stream  = NULL;
  rmm_event_t event    = NULL;
  void* ptr            = NULL;
  bool flag            = false;
  const char* text     = NULL;

  /* Releasing NULL is a no-op. */
  EXPECT(rmm_resource_release(NULL), RMM_STATUS_SUCCESS);

  /* NULL handles and NULL out-pointers are invalid arguments. */
  EXPECT(rmm_resource_retain(NULL), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT(rmm_allocate(NULL, 64, &ptr), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT(rmm_deallocate(NULL, ptr, 64), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT(rmm_resource_name(NULL, &text), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT(rmm_cuda_create(NULL), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT(rmm_get_current_device_resource(NULL), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT(rmm_get_device_count(NULL), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT(rmm_stream_create(0, NULL), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT(rmm_event_create(NULL), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT(rmm_callback_create(NULL, NULL, NULL, NULL, &mr), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT(rmm_callback_create_with_vtable(NULL, NULL, &mr), RMM_STATUS_INVALID_ARGUMENT);
  if (rmm_status_string(9999) == NULL) {
    fprintf(stderr, "FAIL rmm_status_string(9999) returned NULL\n");
    ++failures;
  }

  /* A live handle: zero-byte allocation gives NULL; NULL deallocation is a no-op. */
  EXPECT(rmm_cuda_create(&mr), RMM_STATUS_SUCCESS);
  EXPECT(rmm_allocate(mr, 0, &ptr), RMM_STATUS_SUCCESS);
  if (ptr != NULL) {
    fprintf(stderr, "FAIL zero-byte allocation returned %p\n", ptr);
    ++failures;
  }
  EXPECT(rmm_deallocate(mr, NULL, 0), RMM_STATUS_SUCCESS);
  EXPECT(rmm_allocate(mr, 64, NULL), RMM_STATUS_INVALID_ARGUMENT);

  /* Two references: the second release destroys, the third is reported. */
  EXPECT(rmm_resource_retain(mr), RMM_STATUS_SUCCESS);
  EXPECT(rmm_resource_release(mr), RMM_STATUS_SUCCESS);
  EXPECT(rmm_resource_release(mr), RMM_STATUS_SUCCESS);
  EXPECT(rmm_resource_release(mr), RMM_STATUS_INVALID_ARGUMENT);

  /* Use after release is reported, not undefined. */
  EXPECT(rmm_allocate(mr, 64, &ptr), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT(rmm_resource_retain(mr), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT(rmm_resource_name(mr, &text), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT(rmm_set_current_device_resource(mr, NULL), RMM_STATUS_INVALID_ARGUMENT);

  /* A foreign pointer is not a handle. */
  other = (rmm_resource_t)(void*)&failures;
  EXPECT(rmm_resource_release(other), RMM_STATUS_INVALID_ARGUMENT);

  /* Setting NULL resets; previous outs receive new references. */
  other = NULL;
  EXPECT(rmm_set_current_device_resource(NULL, &other), RMM_STATUS_SUCCESS);
  EXPECT(rmm_resource_release(other), RMM_STATUS_SUCCESS);
  EXPECT(rmm_set_per_device_resource(-1, NULL, NULL), RMM_STATUS_INVALID_ARGUMENT);

  /* Streams and events: create, use, destroy. */
  EXPECT(rmm_stream_create(0, &stream), RMM_STATUS_SUCCESS);
  EXPECT(rmm_event_create(&event), RMM_STATUS_SUCCESS);
  EXPECT(rmm_event_record(event, stream), RMM_STATUS_SUCCESS);
  EXPECT(rmm_stream_wait_event(RMM_STREAM_DEFAULT, event), RMM_STATUS_SUCCESS);
  EXPECT(rmm_event_synchronize(event), RMM_STATUS_SUCCESS);
  EXPECT(rmm_event_query(event, &flag), RMM_STATUS_SUCCESS);
  if (!flag) {
    fprintf(stderr, "FAIL event not complete after rmm_event_synchronize\n");
    ++failures;
  }
  EXPECT(rmm_stream_query(stream, NULL), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT(rmm_event_destroy(event), RMM_STATUS_SUCCESS);
  EXPECT(rmm_stream_destroy(stream), RMM_STATUS_SUCCESS);

  if (failures != 0) {
    fprintf(stderr, "%d unexpected status(es)\n", failures);
    return 1;
  }
  printf("all statuses as expected\n");
  return 0;
}
