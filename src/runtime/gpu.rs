//! Shared HIP/CUDA backend (placeholder until the backend lands).
