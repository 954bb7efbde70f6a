//! Gives librmm.so its SONAME so consumers record `librmm.so` rather than a build path.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,librmm.so");
    println!("cargo:rerun-if-changed=build.rs");
}
