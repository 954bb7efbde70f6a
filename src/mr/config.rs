//! Resources configured by a short text spec, for tools (`rmm-replay`) and tests.
//!
//! Grammar (`:`-separated; sizes in bytes or with a `K`/`M`/`G` suffix, binary units, an
//! optional `iB`/`B` after it):
//! * `cuda` — the upstream itself;
//! * `pool[:INITIAL[:MAXIMUM]]` — a pool, growing from `INITIAL` (default 0);
//! * `binning[:MIN_EXP:MAX_EXP]` — bins 2^MIN..2^MAX (default 18..22) over a growing pool;
//! * `arena[:SIZE]` — an arena of `SIZE` (default: half of free device memory);
//! * `fixed_size[:BLOCK[:PREALLOCATE]]` — fixed-size blocks (default 1 MiB, 128 at a time).

use std::sync::Arc;

use super::{
    ArenaMemoryResource, BinningMemoryResource, FixedSizeMemoryResource, PoolMemoryResource,
    SharedResource, DEFAULT_BLOCKS_TO_PREALLOCATE, DEFAULT_BLOCK_SIZE,
};
use crate::error::{Error, Result};

/// Parses a size such as `1048576`, `64M`, `64MiB` or `2G`.
pub fn parse_size(s: &str) -> Result<usize> {
    let t = s.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (num, shift) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 30),
        _ => (t, 0),
    };
    num.parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(1usize << shift))
        .ok_or_else(|| Error::invalid(format!("'{s}' is not a size (e.g. 1048576, 64M, 2GiB)")))
}

fn parse_u32(s: &str, what: &str) -> Result<u32> {
    s.parse()
        .map_err(|_| Error::invalid(format!("{what} '{s}' is not a number")))
}

/// Builds the resource `spec` describes over `upstream`.
pub fn build(spec: &str, upstream: SharedResource) -> Result<SharedResource> {
    let parts: Vec<&str> = spec.split(':').collect();
    let args = &parts[1..];
    let too_many = |n: usize| -> Result<()> {
        if args.len() > n {
            Err(Error::invalid(format!(
                "resource spec '{spec}': {} takes at most {n} argument(s)",
                parts[0]
            )))
        } else {
            Ok(())
        }
    };
    Ok(match parts[0] {
        "cuda" => {
            too_many(0)?;
            upstream
        }
        "pool" => {
            too_many(2)?;
            let initial = args
                .first()
                .map(|s| parse_size(s))
                .transpose()?
                .unwrap_or(0);
            let max = args.get(1).map(|s| parse_size(s)).transpose()?;
            Arc::new(PoolMemoryResource::new(upstream, initial, max)?)
        }
        "binning" => {
            if args.len() == 1 || args.len() > 2 {
                return Err(Error::invalid(format!(
                    "resource spec '{spec}': binning takes MIN_EXP:MAX_EXP or nothing"
                )));
            }
            let min = args.first().map(|s| parse_u32(s, "MIN_EXP")).transpose()?;
            let max = args.get(1).map(|s| parse_u32(s, "MAX_EXP")).transpose()?;
            let pool: SharedResource = Arc::new(PoolMemoryResource::new(upstream, 0, None)?);
            Arc::new(BinningMemoryResource::with_range(
                pool,
                min.unwrap_or(18),
                max.unwrap_or(22),
            )?)
        }
        "arena" => {
            too_many(1)?;
            let size = args.first().map(|s| parse_size(s)).transpose()?;
            Arc::new(ArenaMemoryResource::new(upstream, size, false)?)
        }
        "fixed_size" => {
            too_many(2)?;
            let block = args
                .first()
                .map(|s| parse_size(s))
                .transpose()?
                .unwrap_or(DEFAULT_BLOCK_SIZE);
            let pre = args
                .get(1)
                .map(|s| parse_size(s))
                .transpose()?
                .unwrap_or(DEFAULT_BLOCKS_TO_PREALLOCATE);
            Arc::new(FixedSizeMemoryResource::new(upstream, block, pre)?)
        }
        other => {
            return Err(Error::invalid(format!(
                "unknown resource '{other}' in spec '{spec}': expected cuda, pool, binning, \
                 arena or fixed_size"
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1048576").unwrap(), 1 << 20);
        assert_eq!(parse_size("64M").unwrap(), 64 << 20);
        assert_eq!(parse_size("64MiB").unwrap(), 64 << 20);
        assert_eq!(parse_size("2G").unwrap(), 2 << 30);
        assert!(parse_size("x").is_err());
    }
}
