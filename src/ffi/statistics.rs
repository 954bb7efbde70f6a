//! `rmm_statistics_adaptor_create` and its counters.

use std::sync::Arc;

use super::status::{guard, non_null};
use super::{create, downcast, resource_of, rmm_resource_t, rmm_status_t, write_out};
use crate::mr::{Counter, StatisticsResourceAdaptor};

/// One statistic: current value, peak, and running total of increments.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub struct rmm_counter {
    /// Current value.
    pub value: i64,
    /// Highest value seen.
    pub peak: i64,
    /// Sum of all increments.
    pub total: i64,
}

/// The counters of a statistics adaptor (its current frame).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub struct rmm_statistics_counters {
    /// Bytes allocated.
    pub bytes: rmm_counter,
    /// Number of allocations.
    pub allocations: rmm_counter,
}

impl From<Counter> for rmm_counter {
    fn from(c: Counter) -> Self {
        rmm_counter {
            value: c.value,
            peak: c.peak,
            total: c.total,
        }
    }
}

fn both((bytes, allocations): (Counter, Counter)) -> rmm_statistics_counters {
    rmm_statistics_counters {
        bytes: bytes.into(),
        allocations: allocations.into(),
    }
}

/// Creates a `statistics_resource_adaptor` over `upstream` with zeroed counters.
#[no_mangle]
pub unsafe extern "C" fn rmm_statistics_adaptor_create(
    upstream: rmm_resource_t,
    out: *mut rmm_resource_t,
) -> rmm_status_t {
    let make = || Ok(Arc::new(StatisticsResourceAdaptor::new(resource_of(upstream)?)) as _);
    // SAFETY: same contract as this function.
    unsafe { create("rmm_statistics_adaptor_create", out, make) }
}

/// The byte and allocation counters of the current frame, read together.
#[no_mangle]
pub unsafe extern "C" fn rmm_statistics_adaptor_get_counters(
    adaptor: rmm_resource_t,
    counters: *mut rmm_statistics_counters,
) -> rmm_status_t {
    guard("rmm_statistics_adaptor_get_counters", || {
        non_null(counters, "counters")?;
        let r = resource_of(adaptor)?;
        let c = both(downcast::<StatisticsResourceAdaptor>(&r, adaptor)?.counters());
        // SAFETY: checked non-null above.
        unsafe { write_out(counters, c) };
        Ok(())
    })
}

/// Starts a new frame of zeroed counters. `previous` (nullable) gets the counters of the
/// frame below it, as they were.
#[no_mangle]
pub unsafe extern "C" fn rmm_statistics_adaptor_push_counters(
    adaptor: rmm_resource_t,
    previous: *mut rmm_statistics_counters,
) -> rmm_status_t {
    guard("rmm_statistics_adaptor_push_counters", || {
        let r = resource_of(adaptor)?;
        let c = both(downcast::<StatisticsResourceAdaptor>(&r, adaptor)?.push_counters());
        if !previous.is_null() {
            // SAFETY: checked non-null; writable by contract.
            unsafe { write_out(previous, c) };
        }
        Ok(())
    })
}

/// Ends the current frame, folding it into the one below; `popped` (nullable) gets its
/// counters. Without a matching push: `RMM_STATUS_INVALID_ARGUMENT`, nothing changes.
#[no_mangle]
pub unsafe extern "C" fn rmm_statistics_adaptor_pop_counters(
    adaptor: rmm_resource_t,
    popped: *mut rmm_statistics_counters,
) -> rmm_status_t {
    guard("rmm_statistics_adaptor_pop_counters", || {
        let r = resource_of(adaptor)?;
        let c = both(downcast::<StatisticsResourceAdaptor>(&r, adaptor)?.pop_counters()?);
        if !popped.is_null() {
            // SAFETY: checked non-null; writable by contract.
            unsafe { write_out(popped, c) };
        }
        Ok(())
    })
}
