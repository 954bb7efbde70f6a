//! Links the extension to librmm.so (never to the Rust core itself) and stages what the wheel
//! carries beside the Python sources:
//!
//!   rmm/lib/librmm.so               the library the extension and C/C++ code share
//!   rmm/include/rmm/...             the C header and the C++ wrapper
//!   rmm/lib/cmake/rmm/...           the CMake package (prefix = rmm/, found relative to itself)
//!
//! librmm.so comes from `RMM_LIB_DIR` when set, else from the repository's
//! `target/release/`; when neither has it, the root crate is built with cargo first.
//! The extension gets the run path `$ORIGIN/lib`, so the wheel's librmm.so is found at import.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn copy_dir(src: &Path, dst: &Path) {
    fs::create_dir_all(dst).expect("create include directory");
    for entry in fs::read_dir(src).expect("read include directory") {
        let entry = entry.expect("directory entry");
        let path = entry.path();
        let target = dst.join(entry.file_name());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            fs::copy(&path, &target).expect("copy header");
        }
    }
}

fn root_version(root: &Path) -> String {
    let text = fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    let mut in_package = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if in_package && line.starts_with("version") {
            if let Some(v) = line.split('"').nth(1) {
                return v.to_string();
            }
        }
    }
    "0.0.0".to_string()
}

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.parent().unwrap().to_path_buf();
    println!("cargo:rerun-if-env-changed=RMM_LIB_DIR");
    println!("cargo:rerun-if-changed=build.rs");

    let lib_dir = match env::var_os("RMM_LIB_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => {
            let dir = root.join("target").join("release");
            if !dir.join("librmm.so").exists() {
                // Nested build of the root crate (its own workspace and target directory).
                let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
                let status = Command::new(cargo)
                    .args(["build", "--release", "-p", "rmm-capi"])
                    .current_dir(&root)
                    .env_remove("CARGO_TARGET_DIR")
                    .env_remove("CARGO_ENCODED_RUSTFLAGS")
                    .env_remove("RUSTFLAGS")
                    .env_remove("CARGO_MAKEFLAGS")
                    .status()
                    .expect("run cargo build for librmm.so");
                assert!(status.success(), "cargo build of librmm.so failed");
            }
            dir
        }
    };
    let lib = lib_dir.join("librmm.so");
    assert!(lib.exists(), "librmm.so not found in {}", lib_dir.display());
    println!("cargo:rerun-if-changed={}", lib.display());

    // Stage the wheel's native part inside the package directory.
    let pkg = manifest.join("rmm");
    let staged_lib = pkg.join("lib");
    fs::create_dir_all(&staged_lib).unwrap();
    fs::copy(&lib, staged_lib.join("librmm.so")).expect("copy librmm.so");

    let include_src = root.join("include").join("rmm");
    if include_src.is_dir() {
        let include_dst = pkg.join("include").join("rmm");
        let _ = fs::remove_dir_all(&include_dst);
        copy_dir(&include_src, &include_dst);
        println!("cargo:rerun-if-changed={}", include_src.display());
    }

    let cmake_src = root.join("cmake");
    let cmake_dst = staged_lib.join("cmake").join("rmm");
    fs::create_dir_all(&cmake_dst).unwrap();
    if let Ok(template) = fs::read_to_string(cmake_src.join("rmmConfig.cmake.in")) {
        // What configure_package_config_file() would write: the prefix is three levels
        // above the config file (rmm/lib/cmake/rmm -> rmm/).
        let init = "get_filename_component(PACKAGE_PREFIX_DIR \"${CMAKE_CURRENT_LIST_DIR}/../../../\" ABSOLUTE)\n\
macro(set_and_check _var _file)\n  set(${_var} \"${_file}\")\n  if(NOT EXISTS \"${_file}\")\n    message(FATAL_ERROR \"File or directory ${_file} referenced by variable ${_var} does not exist !\")\n  endif()\nendmacro()\n\
macro(check_required_components _NAME)\n  foreach(comp ${${_NAME}_FIND_COMPONENTS})\n    if(NOT ${_NAME}_${comp}_FOUND)\n      if(${_NAME}_FIND_REQUIRED_${comp})\n        set(${_NAME}_FOUND FALSE)\n      endif()\n    endif()\n  endforeach()\nendmacro()\n";
        let config = template
            .replace("@PACKAGE_INIT@", init)
            .replace(
                "@PACKAGE_CMAKE_INSTALL_INCLUDEDIR@",
                "${PACKAGE_PREFIX_DIR}/include",
            )
            .replace(
                "@PACKAGE_CMAKE_INSTALL_LIBDIR@",
                "${PACKAGE_PREFIX_DIR}/lib",
            );
        fs::write(cmake_dst.join("rmmConfig.cmake"), config).unwrap();
        println!(
            "cargo:rerun-if-changed={}",
            cmake_src.join("rmmConfig.cmake.in").display()
        );
    }
    let runtime_interface = cmake_src.join("rmmRuntimeInterface.cmake");
    if runtime_interface.exists() {
        fs::copy(
            &runtime_interface,
            cmake_dst.join("rmmRuntimeInterface.cmake"),
        )
        .unwrap();
    }
    let version = root_version(&root);
    let version_file = format!(
        "# Version of the rmm-rs CMake package in the Python wheel (SameMajorVersion).\n\
set(PACKAGE_VERSION \"{version}\")\n\
if(PACKAGE_FIND_VERSION_MAJOR STREQUAL \"\" OR PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)\n\
  if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)\n    set(PACKAGE_VERSION_COMPATIBLE FALSE)\n  else()\n    set(PACKAGE_VERSION_COMPATIBLE TRUE)\n  endif()\n\
else()\n\
  string(REGEX MATCH \"^[0-9]+\" _rmm_major \"${{PACKAGE_VERSION}}\")\n\
  if(PACKAGE_FIND_VERSION_MAJOR STREQUAL _rmm_major)\n    set(PACKAGE_VERSION_COMPATIBLE TRUE)\n  else()\n    set(PACKAGE_VERSION_COMPATIBLE FALSE)\n  endif()\n\
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)\n    set(PACKAGE_VERSION_EXACT TRUE)\n  endif()\n\
endif()\n"
    );
    fs::write(cmake_dst.join("rmmConfigVersion.cmake"), version_file).unwrap();

    println!("cargo:rustc-link-search=native={}", lib_dir.display());
    println!("cargo:rustc-link-lib=dylib=rmm");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-rpath,$ORIGIN/lib");
}
