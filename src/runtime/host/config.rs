//! Configuration of the host emulation: `RMM_HOST_DEVICES` and `RMM_HOST_DEVICE_MEMORY`.

use crate::error::{Error, Result};

/// Default capacity of each emulated device (16 GiB).
pub(crate) const DEFAULT_DEVICE_MEMORY: usize = 16 << 30;
/// Most emulated devices a process may ask for.
pub(crate) const MAX_DEVICES: usize = 64;

/// The accepted size syntax, quoted in error messages so users can fix their setting.
pub(crate) const SIZE_FORMAT: &str =
    "a byte count with an optional unit, e.g. 4096, 64KiB, 512MiB, \
     1.5GiB, 16G, 2TB (units B, K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB, case-insensitive; \
     all units are powers of 1024)";

/// Shape of the emulated machine.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct HostConfig {
    /// Number of emulated devices (1..=64).
    pub devices: usize,
    /// Capacity of each device in bytes.
    pub memory_per_device: usize,
    /// Whether the devices support virtual memory management (`RMM_HOST_VMM`, default on;
    /// `0` emulates a device without it).
    pub vmm: bool,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            devices: 1,
            memory_per_device: DEFAULT_DEVICE_MEMORY,
            vmm: true,
        }
    }
}

impl HostConfig {
    /// Reads `RMM_HOST_DEVICES` (default 1), `RMM_HOST_DEVICE_MEMORY` (default 16 GiB)
    /// and `RMM_HOST_VMM` (default 1).
    pub fn from_env() -> Result<Self> {
        let devices = env_string("RMM_HOST_DEVICES")?;
        let memory = env_string("RMM_HOST_DEVICE_MEMORY")?;
        let mut config = Self::from_values(devices.as_deref(), memory.as_deref())?;
        if let Some(v) = env_string("RMM_HOST_VMM")? {
            config.vmm = match v.trim() {
                "" | "1" | "on" | "true" | "yes" => true,
                "0" | "off" | "false" | "no" => false,
                _ => {
                    return Err(Error::invalid(format!(
                        "RMM_HOST_VMM={v:?} is not 0 or 1 (whether the emulated devices \
                         support virtual memory management)"
                    )))
                }
            };
        }
        Ok(config)
    }

    /// Builds a configuration from the two variables' values (`None`: unset).
    pub fn from_values(devices: Option<&str>, memory: Option<&str>) -> Result<Self> {
        let mut config = HostConfig::default();
        if let Some(v) = devices.filter(|v| !v.trim().is_empty()) {
            config.devices = match v.trim().parse::<usize>() {
                Ok(n) if (1..=MAX_DEVICES).contains(&n) => n,
                _ => {
                    return Err(Error::invalid(format!(
                        "RMM_HOST_DEVICES={v:?} is not a device count; use an integer from 1 to {MAX_DEVICES}"
                    )))
                }
            };
        }
        if let Some(v) = memory.filter(|v| !v.trim().is_empty()) {
            config.memory_per_device = match parse_size(v) {
                Ok(0) => {
                    return Err(Error::invalid(format!(
                        "RMM_HOST_DEVICE_MEMORY={v:?} is zero; use {SIZE_FORMAT}"
                    )))
                }
                Ok(n) => n,
                Err(why) => {
                    return Err(Error::invalid(format!(
                        "RMM_HOST_DEVICE_MEMORY={v:?} is not a size ({why}); use {SIZE_FORMAT}"
                    )))
                }
            };
        }
        Ok(config)
    }
}

fn env_string(name: &str) -> Result<Option<String>> {
    match std::env::var(name) {
        Ok(v) => Ok(Some(v)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(v)) => {
            Err(Error::invalid(format!("{name}={v:?} is not valid UTF-8")))
        }
    }
}

/// Parses a size such as `512MiB`, `1.5GiB`, `16G` or `4096` into bytes.
///
/// Units are case-insensitive and all powers of 1024 (`KB` = `KiB`), as RMM users expect.
/// Fractions are allowed and rounded down to whole bytes.
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let unit = unit.trim();
    let shift: u32 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(format!("unknown unit {unit:?} in {s:?}")),
    };
    if number.is_empty() {
        return Err(format!("no number in {s:?}"));
    }
    let multiplier = 1u128 << shift;
    let too_large = || format!("{s:?} does not fit in {} bytes", usize::MAX);
    if number.contains('.') {
        let value: f64 = number
            .parse()
            .map_err(|_| format!("{number:?} is not a number"))?;
        let bytes = value * multiplier as f64;
        // `usize::MAX as f64` rounds up to 2^64, so `>=` rejects everything that overflows.
        if !bytes.is_finite() || bytes >= usize::MAX as f64 {
            return Err(too_large());
        }
        Ok(bytes as usize)
    } else {
        let value: u128 = number.parse().map_err(|_| too_large())?;
        value
            .checked_mul(multiplier)
            .and_then(|b| usize::try_from(b).ok())
            .ok_or_else(too_large)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_valid_sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("64KiB"), Ok(64 << 10));
        assert_eq!(parse_size("64k"), Ok(64 << 10));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("512mb"), Ok(512 << 20));
        assert_eq!(parse_size("16GiB"), Ok(16 << 30));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("2TB"), Ok(2 << 40));
        assert_eq!(parse_size(" 7 b "), Ok(7));
        assert_eq!(parse_size("1 TiB"), Ok(1 << 40));
        assert_eq!(parse_size("0.5K"), Ok(512));
    }

    #[test]
    fn rejects_invalid_sizes() {
        for bad in [
            "",
            "GiB",
            "abc",
            "12XB",
            "1.2.3G",
            "-1",
            "1e3",
            "99999999999999999999999T",
            "18446744073709551616",
            "1.5.",
            "16 GiB extra",
        ] {
            assert!(parse_size(bad).is_err(), "{bad:?} should not parse");
        }
    }

    #[test]
    fn config_from_values() {
        assert_eq!(
            HostConfig::from_values(None, None).unwrap(),
            HostConfig::default()
        );
        let c = HostConfig::from_values(Some("4"), Some("1GiB")).unwrap();
        assert_eq!(c.devices, 4);
        assert_eq!(c.memory_per_device, 1 << 30);
        for d in ["0", "65", "x", "-1"] {
            match HostConfig::from_values(Some(d), None) {
                Err(Error::InvalidArgument(m)) => assert!(m.contains("RMM_HOST_DEVICES"), "{m}"),
                other => panic!("{d:?}: {other:?}"),
            }
        }
        match HostConfig::from_values(None, Some("lots")) {
            Err(Error::InvalidArgument(m)) => {
                assert!(m.contains("RMM_HOST_DEVICE_MEMORY"), "{m}");
                assert!(m.contains("\"lots\""), "{m}");
                assert!(m.contains("MiB"), "{m}");
            }
            other => panic!("{other:?}"),
        }
        assert!(HostConfig::from_values(None, Some("0")).is_err());
    }
}
