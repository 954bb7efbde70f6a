//! Device memory resources.
