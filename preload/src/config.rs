//! `RMM_PRELOAD_*` configuration: read and validated once, in the library constructor.
//!
//! | variable | values |
//! | --- | --- |
//! | `RMM_PRELOAD_RESOURCE` | `pool` (default), `vmm_pool`, `arena`, `binning`, `async`, `cuda` (or `hip`), `managed`: see [`Kind`] |
//! | `RMM_PRELOAD_INITIAL_POOL_SIZE` | bytes (units allowed: `64MiB`, `8GiB`; a multiple of 256) or a percentage of the free memory (`50%`): what `pool`, `vmm_pool`, `binning` and `arena` take at once, `async`'s initial pool |
//! | `RMM_PRELOAD_MAXIMUM_POOL_SIZE` | as above: the most `pool`, `vmm_pool` and `binning` grow to (refused for the others) |
//! | `RMM_PRELOAD_RELEASE_THRESHOLD` | as above: the free memory `pool`, `vmm_pool` and `binning` keep when a large block (≥ 64 MiB) comes back; beyond it their entirely free chunks go back to the runtime (default: an eighth of the device, at least the initial size) |
//! | `RMM_PRELOAD_SYNC` | `1`/`defer` (default), `device`, `0`: see [`SyncMode`] |
//! | `RMM_PRELOAD_LOG_FILE` | a CSV log of every allocation and free (`<file>.dev<N>` for device N > 0) |
//! | `RMM_PRELOAD_STATS` | `1`: statistics on stderr at exit |
//! | `RMM_PRELOAD_MANAGED` | `1`: `cudaMallocManaged`/`hipMallocManaged` (global attach) served from a pool of managed memory |

use rmm::mr::config::parse_size;

/// Which resource serves intercepted allocations (`RMM_PRELOAD_RESOURCE`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    /// `pool` (the default): `pool_memory_resource` over the runtime's allocator, growing
    /// by chunks from `RMM_PRELOAD_INITIAL_POOL_SIZE` up to `RMM_PRELOAD_MAXIMUM_POOL_SIZE`.
    Pool,
    /// `vmm_pool`: `vmm_pool_memory_resource`, the pool on virtual memory: one reserved
    /// address range (twice the device's memory) into which physical memory is mapped in
    /// granules as the pool grows, so free memory of every growth merges (no request the
    /// free bytes could hold fails for want of a contiguous block). Sized by
    /// `RMM_PRELOAD_INITIAL_POOL_SIZE` (rounded up to the granularity) and
    /// `RMM_PRELOAD_MAXIMUM_POOL_SIZE` (rounded down to it). Needs virtual memory management
    /// (CUDA's driver, `libcuda.so.1`, or HIP's `hipMem*`): without it the first
    /// allocation stops the program with a message saying so.
    VmmPool,
    /// `arena`: `arena_memory_resource` of `RMM_PRELOAD_INITIAL_POOL_SIZE` bytes.
    Arena,
    /// `binning`: `binning_memory_resource` over a `pool` (sized as the pool).
    Binning,
    /// `async`: `cuda_async_memory_resource` (the runtime's stream-ordered pool).
    Async,
    /// `cuda` or `hip`: the runtime's allocator, counted and logged only.
    Cuda,
    /// `managed`: managed memory for every allocation.
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
    pub release_threshold: Option<Size>,
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
                "vmm_pool" => Kind::VmmPool,
                "arena" => Kind::Arena,
                "binning" => Kind::Binning,
                "async" => Kind::Async,
                "cuda" | "hip" => Kind::Cuda,
                "managed" => Kind::Managed,
                _ => {
                    return Err(bad(
                        "RMM_PRELOAD_RESOURCE",
                        &v,
                        "expected pool, vmm_pool, arena, binning, async, cuda or managed",
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
        if maximum.is_some() && !matches!(kind, Kind::Pool | Kind::VmmPool | Kind::Binning) {
            return Err(bad(
                "RMM_PRELOAD_MAXIMUM_POOL_SIZE",
                &get("RMM_PRELOAD_MAXIMUM_POOL_SIZE")?.unwrap_or_default(),
                "only the pool, vmm_pool and binning resources have a maximum size",
            ));
        }
        let release_threshold = parse_pool_size("RMM_PRELOAD_RELEASE_THRESHOLD")?;
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
            release_threshold,
            log_file,
            stats: parse_bool("RMM_PRELOAD_STATS", false)?,
            sync: parse_sync()?,
            managed: parse_bool("RMM_PRELOAD_MANAGED", false)?,
        })
    }
}
