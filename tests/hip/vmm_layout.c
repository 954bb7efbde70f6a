/* The virtual memory management structs and numbers of HIP's headers, as rmm-rs's runtime
 * layer passes them (src/runtime/gpu/vmm.rs: RawAllocProp, RawAllocPropHip52, RawAccessDesc;
 * src/runtime/hip.rs: vmm_prop_layout, vmm_supported_attribute). The layout is picked by
 * the runtime's version: ROCm 5.2 and older have their own hipMemAllocationProp, ROCm 5.3
 * and later CUDA's. Checked at compile time; the program only reports what it checked. */
#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>

#include <stddef.h>
#include <stdio.h>

#define HIP_VERSION_NUMBER (HIP_VERSION_MAJOR * 10000000 + HIP_VERSION_MINOR * 100000)

/* Both generations. */
_Static_assert(sizeof(hipMemAllocationProp) == 32, "hipMemAllocationProp is 32 bytes");
_Static_assert(sizeof(hipMemLocation) == 8, "hipMemLocation");
_Static_assert(offsetof(hipMemLocation, type) == 0, "hipMemLocation.type");
_Static_assert(offsetof(hipMemLocation, id) == 4, "hipMemLocation.id");
_Static_assert(sizeof(hipMemAccessDesc) == 12, "hipMemAccessDesc (array stride)");
_Static_assert(offsetof(hipMemAccessDesc, location) == 0, "hipMemAccessDesc.location");
_Static_assert(offsetof(hipMemAccessDesc, flags) == 8, "hipMemAccessDesc.flags");
_Static_assert(sizeof(hipMemGenericAllocationHandle_t) == 8, "handles are 64 bits");
_Static_assert(hipMemAllocationTypePinned == 1, "ALLOCATION_TYPE_PINNED");
_Static_assert(hipMemLocationTypeDevice == 1, "LOCATION_DEVICE");
_Static_assert(hipMemAccessFlagsProtReadWrite == 3, "ACCESS_READ_WRITE");
_Static_assert(hipMemAllocationGranularityMinimum == 0, "GRANULARITY_MINIMUM");
_Static_assert(hipMemAllocationGranularityRecommended == 1, "GRANULARITY_RECOMMENDED");
_Static_assert(hipDeviceAttributeMemoryPoolsSupported == 88, "MemoryPoolsSupported");

#if HIP_VERSION_NUMBER < 50300000
#define LAYOUT "ROCm 5.2 (PropLayout::Hip52)"
_Static_assert(offsetof(hipMemAllocationProp, compressionType) == 0, "compressionType");
_Static_assert(offsetof(hipMemAllocationProp, location) == 4, "location");
_Static_assert(offsetof(hipMemAllocationProp, requestedHandleType) == 12, "requestedHandleType");
_Static_assert(offsetof(hipMemAllocationProp, type) == 16, "type");
_Static_assert(offsetof(hipMemAllocationProp, usage) == 20, "usage");
_Static_assert(offsetof(hipMemAllocationProp, win32HandleMetaData) == 24, "win32HandleMetaData");
#else
#define LAYOUT "CUDA's (PropLayout::Cuda)"
_Static_assert(offsetof(hipMemAllocationProp, type) == 0, "type");
_Static_assert(offsetof(hipMemAllocationProp, requestedHandleType) == 4, "requestedHandleType");
_Static_assert(offsetof(hipMemAllocationProp, location) == 8, "location");
_Static_assert(offsetof(hipMemAllocationProp, win32HandleMetaData) == 16, "win32HandleMetaData");
_Static_assert(offsetof(hipMemAllocationProp, allocFlags) == 24, "allocFlags");
_Static_assert(hipDeviceAttributeVirtualMemoryManagementSupported == 89,
               "VirtualMemoryManagementSupported");
#endif

int main(void)
{
  printf("HIP %d.%d headers: hipMemAllocationProp in %s layout, %zu bytes\n",
         HIP_VERSION_MAJOR,
         HIP_VERSION_MINOR,
         LAYOUT,
         sizeof(hipMemAllocationProp));
  return 0;
}
