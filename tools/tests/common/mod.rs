//! Helpers shared by the tools' integration tests (each includes this with `mod common;`).
//! Not every test file uses every helper.
#![allow(dead_code)]

use std::path::PathBuf;

/// `name` in this test process's own temporary directory.
pub fn temp(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let test = exe.file_stem().unwrap().to_string_lossy();
    let dir = std::env::temp_dir().join(format!("rmm-tools-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The number after `"key": ` in the first object containing it after `from`, in the JSON
/// text rmm-replay writes.
pub fn num(json: &str, from: &str, key: &str) -> usize {
    let at = json
        .find(from)
        .unwrap_or_else(|| panic!("{from} in {json}"));
    let rest = &json[at..];
    let k = format!("\"{key}\": ");
    let i = rest.find(&k).unwrap_or_else(|| panic!("{key} in {rest}")) + k.len();
    rest[i..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}
