//! dlopen helpers (placeholder until the loader lands).
