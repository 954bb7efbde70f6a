//! cuda backend (placeholder until the backend lands).
use super::Runtime;
/// Loads the cuda runtime.
pub fn load() -> Result<Box<dyn Runtime>, String> {
    Err("backend not built yet".to_string())
}
