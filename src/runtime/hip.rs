//! hip backend (placeholder until the backend lands).
use super::Runtime;
/// Loads the hip runtime.
pub fn load() -> Result<Box<dyn Runtime>, String> {
    Err("backend not built yet".to_string())
}
