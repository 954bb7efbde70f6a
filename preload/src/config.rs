//! `RMM_PRELOAD_*` configuration: read and validated once, in the library constructor.

use rmm::mr::config::parse_size;

/// Which resource serves intercepted allocations.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    Pool,
    Arena,
    Binning,
    Async,
    Cuda,
    Managed,
}

/// What the synchronous free (`cudaFree`/`hipFree`) does about work still using the block.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum SyncMode {
    /// Default: the block is reused only after events recorded after the free have
    /// completed (see `deferred.rs`).
    Defer,
    /// Synchronize the device in every free, exactly as the runtime's free does.
    Device,
    /// No synchronization: for stream-disciplined programs only.
    Off,
}

/// A size given as bytes or as a percentage of the device's free memory.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Size {
    Bytes(usize),
    Percent(u32),
}

/// The parsed environment.
#[derive(Clone, Debug)]
pub(crate) struct Config {
    pub kind: Kind,
    pub initial: Option<Size>,
    pub maximum: Option<Size>,
    pub log_file: Option<String>,
    pub stats: bool,
    pub sync: SyncMode,
    pub managed: bool,
}

fn bad(var: &str, value: &str, why: &str) -> String {
    format!("rmm_preload: {var}={value:?} is invalid: {why}")
}

fn get(var: &str) -> Result<Option<String>, String> {
    match std::env::var(var) {
        Ok(v) => Ok(Some(v)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(v)) => {
            Err(bad(var, &v.to_string_lossy(), "not valid UTF-8"))
        }
    }
}

fn parse_bool(var: &str, default: bool) -> Result<bool, String> {
    match get(var)? {
        None => Ok(default),
        Some(v) => match v.trim().to_ascii_lowercase().as_str() {
            "1" | "on" | "yes" | "true" => Ok(true),
            "0" | "off" | "no" | "false" => Ok(false),
            _ => Err(bad(var, &v, "expected 1/0, on/off, yes/no or true/false")),
        },
    }
}

fn parse_sync() -> Result<SyncMode, String> {
    const VAR: &str = "RMM_PRELOAD_SYNC";
    match get(VAR)? {
        None => Ok(SyncMode::Defer),
        Some(v) => match v.trim().to_ascii_lowercase().as_str() {
            "1" | "on" | "yes" | "true" | "defer" => Ok(SyncMode::Defer),
            "device" => Ok(SyncMode::Device),
            "0" | "off" | "no" | "false" => Ok(SyncMode::Off),
            _ => Err(bad(
                VAR,
                &v,
                "expected 1 or defer (default: reuse after the work completes), device \
                 (synchronize in every free) or 0 (no synchronization)",
            )),
        },
    }
}

fn parse_pool_size(var: &str) -> Result<Option<Size>, String> {
    let Some(v) = get(var)? else { return Ok(None) };
    let t = v.trim();
    if let Some(p) = t.strip_suffix('%') {
        return match p.trim().parse::<u32>() {
            Ok(n) if (1..=100).contains(&n) => Ok(Some(Size::Percent(n))),
            _ => Err(bad(
                var,
                &v,
                "a percentage must be 1% to 100% of free memory",
            )),
        };
    }
    let bytes = parse_size(t).map_err(|_| {
        bad(
            var,
            &v,
            "not a size (bytes, or units such as 64MiB, 8GiB, or a percentage such as 50%)",
        )
    })?;
    if bytes % 256 != 0 {
        return Err(bad(var, &v, "the pool needs a multiple of 256 bytes"));
    }
    Ok(Some(Size::Bytes(bytes)))
}

impl Config {
    /// Reads every `RMM_PRELOAD_*` variable; the error names the variable and its value.
    pub(crate) fn from_env() -> Result<Config, String> {
        let kind = match get("RMM_PRELOAD_RESOURCE")? {
            None => Kind::Pool,
            Some(v) => match v.trim().to_ascii_lowercase().as_str() {
                "" | "pool" => Kind::Pool,
                "arena" => Kind::Arena,
                "binning" => Kind::Binning,
                "async" => Kind::Async,
                "cuda" | "hip" => Kind::Cuda,
                "managed" => Kind::Managed,
                _ => {
                    return Err(bad(
                        "RMM_PRELOAD_RESOURCE",
                        &v,
                        "expected pool, arena, binning, async, cuda or managed",
                    ))
                }
            },
        };
        let initial = parse_pool_size("RMM_PRELOAD_INITIAL_POOL_SIZE")?;
        let maximum = parse_pool_size("RMM_PRELOAD_MAXIMUM_POOL_SIZE")?;
        match (initial, maximum) {
            (Some(Size::Bytes(i)), Some(Size::Bytes(m))) if m < i => {
                return Err(format!(
                    "rmm_preload: RMM_PRELOAD_MAXIMUM_POOL_SIZE={m} is below \
                     RMM_PRELOAD_INITIAL_POOL_SIZE={i}"
                ))
            }
            (Some(Size::Percent(i)), Some(Size::Percent(m))) if m < i => {
                return Err(format!(
                    "rmm_preload: RMM_PRELOAD_MAXIMUM_POOL_SIZE={m}% is below \
                     RMM_PRELOAD_INITIAL_POOL_SIZE={i}%"
                ))
            }
            _ => {}
        }
        if maximum.is_some() && !matches!(kind, Kind::Pool | Kind::Binning) {
            return Err(bad(
                "RMM_PRELOAD_MAXIMUM_POOL_SIZE",
                &get("RMM_PRELOAD_MAXIMUM_POOL_SIZE")?.unwrap_or_default(),
                "only the pool and binning resources have a maximum size",
            ));
        }
        let log_file = match get("RMM_PRELOAD_LOG_FILE")? {
            Some(v) if v.trim().is_empty() => {
                return Err(bad("RMM_PRELOAD_LOG_FILE", &v, "empty file name"))
            }
            other => other,
        };
        Ok(Config {
            kind,
            initial,
            maximum,
            log_file,
            stats: parse_bool("RMM_PRELOAD_STATS", false)?,
            sync: parse_sync()?,
            managed: parse_bool("RMM_PRELOAD_MANAGED", false)?,
        })
    }
}
