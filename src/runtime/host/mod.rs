//! Host emulation backend (placeholder until the backend lands).
use crate::error::{Error, Result};
/// The host emulation.
pub struct HostRuntime;
impl HostRuntime {
    /// Reads `RMM_HOST_DEVICES` and `RMM_HOST_DEVICE_MEMORY`.
    pub fn from_env() -> Result<HostRuntime> {
        Err(Error::Unsupported("host backend not built yet".into()))
    }
}
