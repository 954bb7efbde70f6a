//! librmm.so / librmm.a: links the `rmm` crate, whose `src/ffi/` defines the C ABI
//! (`rmm_*`, declared in include/rmm/rmm.h); a cdylib exports those symbols.

pub use rmm;
