//! Links librmm_preload.so with its own SONAME and the version script that keeps every
//! symbol but the interposed ones private (the core's `rmm_*` C ABI included).

fn main() {
    let map = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("preload.map");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,librmm_preload.so");
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        map.display()
    );
    println!("cargo:rustc-cdylib-link-arg=-Wl,--exclude-libs,ALL");
    println!("cargo:rerun-if-changed=preload.map");
    println!("cargo:rerun-if-changed=build.rs");
}
