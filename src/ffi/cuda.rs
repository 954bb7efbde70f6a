//! `rmm_cuda_create`.

use std::sync::Arc;

use super::{create, rmm_resource_t, rmm_status_t};
use crate::mr::CudaMemoryResource;

/// Creates a `cuda_memory_resource`: device memory of the current device (`hipMalloc`/`cudaMalloc`).
#[no_mangle]
pub unsafe extern "C" fn rmm_cuda_create(out: *mut rmm_resource_t) -> rmm_status_t {
    // SAFETY: same contract as this function.
    unsafe {
        create("rmm_cuda_create", out, || {
            Ok(Arc::new(CudaMemoryResource::new()?))
        })
    }
}
