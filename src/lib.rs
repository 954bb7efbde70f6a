//! rmm-rs: a GPU memory manager compatible with hipMM / RMM.
//!
//! Layers, top to bottom (nothing calls upward):
//! * [`ffi`] — the C ABI (`librmm.so`, `include/rmm/rmm.h`), with the memory history's
//!   snapshot writer beside it ([`history`]'s snapshots enumerate the C handles);
//! * [`mr`] — device memory resources, adaptors and the per-device registry;
//! * [`runtime`] — the GPU runtime layer (HIP, CUDA, host emulation).
//!
//! Leaves that any layer may use, which use no layer above the runtime: [`error`],
//! [`counters`], [`logger`], the memory-history recorder (`history::recorder`), and the
//! crate's spin lock, fast hash map and watchers' switch. `scripts/check-layers.py` checks
//! these rules.
//!
//! ```
//! use rmm::mr::{self, DeviceMemoryResource};
//! use rmm::Stream;
//! # std::env::set_var("RMM_RUNTIME", std::env::var("RMM_RUNTIME").unwrap_or("host".into()));
//! let mr = mr::get_current_device_resource().unwrap();
//! let p = mr.allocate(1 << 20, Stream::DEFAULT).unwrap();
//! assert_eq!(p as usize % 256, 0);
//! mr.deallocate(p, 1 << 20, Stream::DEFAULT).unwrap();
//! ```

pub mod counters;
pub mod device;
pub mod error;
mod fast_map;
pub mod ffi;
pub mod history;
pub mod logger;
pub mod mr;
pub mod runtime;
mod spin_lock;
mod watchers;

pub use error::{Error, Result};
pub use runtime::{DeviceId, Stream};
