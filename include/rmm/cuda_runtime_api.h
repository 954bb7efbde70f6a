/**
 * @file cuda_runtime_api.h
 * @brief The GPU runtime's API under CUDA's names, on CUDA and on HIP (hipMM's
 * `rmm/cuda_runtime_api.h`).
 *
 * hipMM keeps RMM's CUDA spelling in its own code and in code written for it: this header
 * includes the runtime's header and, on HIP, defines the CUDA names that such code uses
 * (`cudaStream_t`, `cudaMalloc`, `cudaSuccess`, ...) as macros for their HIP counterparts,
 * each only where it is not defined yet (another project's header may define the same
 * names). `CUDART_VERSION` is 0 on HIP, as with hipMM, so version checks written for CUDA
 * take their oldest branch. On CUDA it is CUDA's own `cuda_runtime_api.h`.
 *
 * The runtime is chosen as everywhere in these headers (rmm/detail/runtime_select.h): HIP's
 * header when compiling for AMD's platform and it is found, else CUDA's; with neither this
 * header is an error. rmm/cuda_stream_view.hpp includes it on HIP, so that, as with hipMM,
 * every header of the package makes these names available. Usable from C and C++.
 */
#pragma once

#include <rmm/detail/runtime_select.h>

#if defined(RMM_DETAIL_RUNTIME_CUDA)
#include <cuda_runtime_api.h>
#elif !defined(RMM_DETAIL_RUNTIME_HIP)
#error \
  "rmm/cuda_runtime_api.h: no GPU runtime header: put CUDA's include directory (with cuda_runtime_api.h) on the include path, or HIP's (with hip/hip_runtime_api.h) and compile for AMD's platform (-D__HIP_PLATFORM_AMD__, as hipcc and CMake's hip::host do)"
#endif

#if defined(RMM_DETAIL_RUNTIME_HIP)
#include <hip/hip_runtime_api.h>

#ifndef CUDART_VERSION
#define CUDART_VERSION 0
#endif

/* Types. */
#ifndef cudaError_t
#define cudaError_t hipError_t
#endif
#ifndef cudaEvent_t
#define cudaEvent_t hipEvent_t
#endif
#ifndef cudaStream_t
#define cudaStream_t hipStream_t
#endif
#ifndef cudaMemPool_t
#define cudaMemPool_t hipMemPool_t
#endif
#ifndef cudaMemPoolAttr
#define cudaMemPoolAttr hipMemPoolAttr
#endif
#ifndef cudaMemPoolProps
#define cudaMemPoolProps hipMemPoolProps
#endif
#ifndef cudaMemAllocationHandleType
#define cudaMemAllocationHandleType hipMemAllocationHandleType
#endif
#ifndef cudaPointerAttributes
#define cudaPointerAttributes hipPointerAttribute_t
#endif
#ifndef cudaDeviceProp
#define cudaDeviceProp hipDeviceProp_t
#endif

/* Constants. HIP's null stream is its legacy default stream. */
#ifndef cudaStreamLegacy
#define cudaStreamLegacy ((hipStream_t)0)
#endif
#ifndef cudaStreamPerThread
#define cudaStreamPerThread hipStreamPerThread
#endif
#ifndef cudaStreamDefault
#define cudaStreamDefault hipStreamDefault
#endif
#ifndef cudaStreamNonBlocking
#define cudaStreamNonBlocking hipStreamNonBlocking
#endif
#ifndef cudaSuccess
#define cudaSuccess hipSuccess
#endif
#ifndef cudaErrorInvalidValue
#define cudaErrorInvalidValue hipErrorInvalidValue
#endif
#ifndef cudaErrorMemoryAllocation
#define cudaErrorMemoryAllocation hipErrorMemoryAllocation
#endif
#ifndef cudaErrorNotReady
#define cudaErrorNotReady hipErrorNotReady
#endif
#ifndef cudaMemcpyDefault
#define cudaMemcpyDefault hipMemcpyDefault
#endif
#ifndef cudaMemcpyHostToDevice
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#endif
#ifndef cudaMemcpyDeviceToHost
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#endif
#ifndef cudaMemcpyDeviceToDevice
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#endif
#ifndef cudaMemPoolAttrReleaseThreshold
#define cudaMemPoolAttrReleaseThreshold hipMemPoolAttrReleaseThreshold
#endif
#ifndef cudaMemPoolReuseAllowOpportunistic
#define cudaMemPoolReuseAllowOpportunistic hipMemPoolReuseAllowOpportunistic
#endif
#ifndef cudaMemAllocationTypePinned
#define cudaMemAllocationTypePinned hipMemAllocationTypePinned
#endif
#ifndef cudaMemHandleTypeNone
#define cudaMemHandleTypeNone hipMemHandleTypeNone
#endif
/* RMM 25.10's export handle types (cuda_async_memory_resource::allocation_handle_type). */
#ifndef cudaMemHandleTypePosixFileDescriptor
#define cudaMemHandleTypePosixFileDescriptor hipMemHandleTypePosixFileDescriptor
#endif
#ifndef cudaMemHandleTypeWin32
#define cudaMemHandleTypeWin32 hipMemHandleTypeWin32
#endif
#ifndef cudaMemHandleTypeWin32Kmt
#define cudaMemHandleTypeWin32Kmt hipMemHandleTypeWin32Kmt
#endif
#ifndef cudaMemLocationTypeDevice
#define cudaMemLocationTypeDevice hipMemLocationTypeDevice
#endif
/* CUDA 13's location arguments (RMM's CUDART_VERSION >= 13000 branches; hipMemLocationTypeHost
 * is in ROCm 6's header, not in ROCm 5's). */
#ifndef cudaMemLocation
#define cudaMemLocation hipMemLocation
#endif
#ifndef cudaMemLocationTypeHost
#define cudaMemLocationTypeHost hipMemLocationTypeHost
#endif
#ifndef cudaDevAttrMemoryPoolsSupported
#define cudaDevAttrMemoryPoolsSupported hipDeviceAttributeMemoryPoolsSupported
#endif
#ifndef cudaDevAttrMemoryPoolSupportedHandleTypes
#define cudaDevAttrMemoryPoolSupportedHandleTypes hipDeviceAttributeMemoryPoolSupportedHandleTypes
#endif
#ifndef cudaDevAttrPageableMemoryAccess
#define cudaDevAttrPageableMemoryAccess hipDeviceAttributePageableMemoryAccess
#endif
#ifndef cudaDevAttrPageableMemoryAccessUsesHostPageTables
#define cudaDevAttrPageableMemoryAccessUsesHostPageTables \
  hipDeviceAttributePageableMemoryAccessUsesHostPageTables
#endif
#ifndef cudaDevAttrL2CacheSize
#define cudaDevAttrL2CacheSize hipDeviceAttributeL2CacheSize
#endif
/* RMM 25.10's rmm::detail::concurrent_managed_access (prefetching needs it). */
#ifndef cudaDevAttrConcurrentManagedAccess
#define cudaDevAttrConcurrentManagedAccess hipDeviceAttributeConcurrentManagedAccess
#endif
#ifndef cudaEventDisableTiming
#define cudaEventDisableTiming hipEventDisableTiming
#endif
#ifndef cudaMemoryTypeHost
#define cudaMemoryTypeHost hipMemoryTypeHost
#endif
#ifndef cudaMemoryTypeDevice
#define cudaMemoryTypeDevice hipMemoryTypeDevice
#endif
#ifndef cudaMemoryTypeManaged
#define cudaMemoryTypeManaged hipMemoryTypeManaged
#endif
#ifndef cudaMemoryTypeUnregistered
#define cudaMemoryTypeUnregistered hipMemoryTypeUnregistered
#endif
#ifndef cudaCpuDeviceId
#define cudaCpuDeviceId hipCpuDeviceId
#endif
#ifndef cudaInvalidDeviceId
#define cudaInvalidDeviceId hipInvalidDeviceId
#endif
#ifndef cudaMemRangeAttribute
#define cudaMemRangeAttribute hipMemRangeAttribute
#endif
#ifndef cudaMemRangeAttributePreferredLocation
#define cudaMemRangeAttributePreferredLocation hipMemRangeAttributePreferredLocation
#endif
#ifndef cudaMemRangeAttributeLastPrefetchLocation
#define cudaMemRangeAttributeLastPrefetchLocation hipMemRangeAttributeLastPrefetchLocation
#endif
#ifndef cudaMemAdviseSetPreferredLocation
#define cudaMemAdviseSetPreferredLocation hipMemAdviseSetPreferredLocation
#endif
#ifndef cudaHostAllocDefault
#define cudaHostAllocDefault hipHostMallocDefault
#endif

/* Devices and errors. */
#ifndef cudaGetDevice
#define cudaGetDevice hipGetDevice
#endif
#ifndef cudaSetDevice
#define cudaSetDevice hipSetDevice
#endif
#ifndef cudaGetDeviceCount
#define cudaGetDeviceCount hipGetDeviceCount
#endif
#ifndef cudaGetDeviceProperties
#define cudaGetDeviceProperties hipGetDeviceProperties
#endif
#ifndef cudaDeviceGetAttribute
#define cudaDeviceGetAttribute hipDeviceGetAttribute
#endif
#ifndef cudaDeviceSynchronize
#define cudaDeviceSynchronize hipDeviceSynchronize
#endif
#ifndef cudaDriverGetVersion
#define cudaDriverGetVersion hipDriverGetVersion
#endif
#ifndef cudaRuntimeGetVersion
#define cudaRuntimeGetVersion hipRuntimeGetVersion
#endif
#ifndef cudaGetErrorName
#define cudaGetErrorName hipGetErrorName
#endif
#ifndef cudaGetErrorString
#define cudaGetErrorString hipGetErrorString
#endif
#ifndef cudaGetLastError
#define cudaGetLastError hipGetLastError
#endif
#ifndef cudaPeekAtLastError
#define cudaPeekAtLastError hipPeekAtLastError
#endif

/* Memory. */
#ifndef cudaMalloc
#define cudaMalloc hipMalloc
#endif
#ifndef cudaFree
#define cudaFree hipFree
#endif
#ifndef cudaMallocManaged
#define cudaMallocManaged hipMallocManaged
#endif
#ifndef cudaMallocHost
#define cudaMallocHost hipHostMalloc
#endif
#ifndef cudaHostAlloc
#define cudaHostAlloc hipHostMalloc
#endif
#ifndef cudaFreeHost
#define cudaFreeHost hipHostFree
#endif
#ifndef cudaMallocAsync
#define cudaMallocAsync hipMallocAsync
#endif
#ifndef cudaFreeAsync
#define cudaFreeAsync hipFreeAsync
#endif
#ifndef cudaMallocFromPoolAsync
#define cudaMallocFromPoolAsync hipMallocFromPoolAsync
#endif
#ifndef cudaDeviceGetDefaultMemPool
#define cudaDeviceGetDefaultMemPool hipDeviceGetDefaultMemPool
#endif
#ifndef cudaMemPoolCreate
#define cudaMemPoolCreate hipMemPoolCreate
#endif
#ifndef cudaMemPoolDestroy
#define cudaMemPoolDestroy hipMemPoolDestroy
#endif
#ifndef cudaMemPoolSetAttribute
#define cudaMemPoolSetAttribute hipMemPoolSetAttribute
#endif
#ifndef cudaMemPoolGetAttribute
#define cudaMemPoolGetAttribute hipMemPoolGetAttribute
#endif
#ifndef cudaMemGetInfo
#define cudaMemGetInfo hipMemGetInfo
#endif
#ifndef cudaPointerGetAttributes
#define cudaPointerGetAttributes hipPointerGetAttributes
#endif
#ifndef cudaMemcpy
#define cudaMemcpy hipMemcpy
#endif
#ifndef cudaMemcpyAsync
#define cudaMemcpyAsync hipMemcpyAsync
#endif
#ifndef cudaMemset
#define cudaMemset hipMemset
#endif
#ifndef cudaMemsetAsync
#define cudaMemsetAsync hipMemsetAsync
#endif
#ifndef cudaMemPrefetchAsync
#define cudaMemPrefetchAsync hipMemPrefetchAsync
#endif
#ifndef cudaMemAdvise
#define cudaMemAdvise hipMemAdvise
#endif
#ifndef cudaMemRangeGetAttribute
#define cudaMemRangeGetAttribute hipMemRangeGetAttribute
#endif

/* Streams and events. */
#ifndef cudaStreamCreate
#define cudaStreamCreate hipStreamCreate
#endif
#ifndef cudaStreamCreateWithFlags
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#endif
#ifndef cudaStreamDestroy
#define cudaStreamDestroy hipStreamDestroy
#endif
#ifndef cudaStreamSynchronize
#define cudaStreamSynchronize hipStreamSynchronize
#endif
#ifndef cudaStreamQuery
#define cudaStreamQuery hipStreamQuery
#endif
#ifndef cudaStreamGetFlags
#define cudaStreamGetFlags hipStreamGetFlags
#endif
#ifndef cudaStreamWaitEvent
#define cudaStreamWaitEvent hipStreamWaitEvent
#endif
#ifndef cudaEventCreate
#define cudaEventCreate hipEventCreate
#endif
#ifndef cudaEventCreateWithFlags
#define cudaEventCreateWithFlags hipEventCreateWithFlags
#endif
#ifndef cudaEventDestroy
#define cudaEventDestroy hipEventDestroy
#endif
#ifndef cudaEventRecord
#define cudaEventRecord hipEventRecord
#endif
#ifndef cudaEventSynchronize
#define cudaEventSynchronize hipEventSynchronize
#endif
#ifndef cudaEventElapsedTime
#define cudaEventElapsedTime hipEventElapsedTime
#endif

#endif /* RMM_DETAIL_RUNTIME_HIP */
