//! Gives librmm.so its SONAME so consumers record `librmm.so` rather than a build path.
//! (A package of its own: cargo passes a package's cdylib link arguments on to every
//! cdylib that depends on it, and the interposer, which links the core, has a SONAME of
//! its own.)

fn main() {
    println!("cargo:rustc-link-arg-cdylib=-Wl,-soname,librmm.so");
    println!("cargo:rerun-if-changed=build.rs");
}
