//! Helpers shared by the tools' integration tests (each includes this with `mod common;`).

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
