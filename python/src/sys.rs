//! librmm.so's C ABI as Rust declarations: every `rmm_*` function and type and every `RMM_*`
//! constant of include/rmm/rmm.h, generated from the header by bindgen when the extension is
//! built (python/build.rs writes them to `$OUT_DIR/rmm_sys.rs`). Generated code: nothing
//! here is written by hand, do not edit; a change to the C ABI reaches this module with the
//! next build, and a call that no longer fits it fails to compile.

#![allow(
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case,
    dead_code,
    clippy::all
)]

include!(concat!(env!("OUT_DIR"), "/rmm_sys.rs"));
