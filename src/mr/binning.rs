//! `binning_memory_resource`: routes each request to the smallest bin that holds it.
//!
//! Bins are kept sorted by size in a short vector, published as a *generation*: routing a
//! request loads a pointer to the current generation and finds its bin in a table (see
//! [`Gen`]), with no lock and no atomic write (a read-write lock's read side is an atomic
//! read-modify-write on one cache line, which every thread's every request would bounce
//! between cores);
//! `add_bin` builds the next generation under a mutex and publishes it. Requests larger
//! than the largest bin go to the upstream. Deallocation routes by the same size rule, so
//! it must be given the size used to allocate (as in hipMM).

use std::any::Any;
use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::fixed_size::FixedSizeMemoryResource;
use super::{DeviceMemoryResource, SharedResource};
use crate::error::{Error, Result};
use crate::runtime::Stream;

const NAME: &str = "binning_memory_resource";

/// `(bin size, resource, the same resource when it is a fixed-size one this resource made)`,
/// sorted by size, sizes distinct. The third field lets routing call the bins it made
/// directly (no virtual call, and the compiler may inline it).
type Bins = Vec<(usize, SharedResource, Option<Arc<FixedSizeMemoryResource>>)>;

/// One generation of bins, with a table that makes routing O(1) for any bin sizes.
struct Gen {
    bins: Bins,
    /// `start[k]`: how many bins are at most `2^(k-1)` bytes (none for `k = 0`). A request
    /// of `bytes` with `2^(k-1) < bytes <= 2^k` goes past all of those, so its bin is found
    /// from there, within one power of two (one step for power-of-two bins), instead of
    /// by a binary search of dependent, mispredicted loads.
    start: [u32; usize::BITS as usize + 1],
}

impl Gen {
    fn new(bins: Bins) -> Self {
        let mut start = [0u32; usize::BITS as usize + 1];
        for (k, st) in start.iter_mut().enumerate().skip(1) {
            let half = 1usize << (k - 1);
            *st = bins.partition_point(|b| b.0 <= half) as u32;
        }
        Gen { bins, start }
    }

    /// The index of the smallest bin of at least `bytes` (>= 1), or `bins.len()`.
    #[inline(always)]
    fn index(&self, bytes: usize) -> usize {
        // The k with 2^(k-1) < bytes <= 2^k: the bit length of bytes - 1.
        let k = (usize::BITS - (bytes - 1).leading_zeros()) as usize;
        let mut i = self.start[k] as usize;
        while i < self.bins.len() && self.bins[i].0 < bytes {
            i += 1;
        }
        i
    }
}

/// The bins of every generation so far. Generations are never changed once published and
/// are kept until the resource is dropped (one per bin added: bins are few), so a reader
/// that loaded an older one still reads a valid list.
struct Generations {
    /// The newest generation: what every request reads.
    latest: AtomicPtr<Gen>,
    /// Every generation, oldest first; appended to under this lock (which serializes
    /// writers). Each is its own allocation (an `Arc` for that, not for sharing), so
    /// `latest` stays valid as the list grows.
    all: Mutex<Vec<Arc<Gen>>>,
}

impl Generations {
    fn new() -> Self {
        let first = Arc::new(Gen::new(Vec::new()));
        Generations {
            latest: AtomicPtr::new(Arc::as_ptr(&first) as *mut Gen),
            all: Mutex::new(vec![first]),
        }
    }

    /// Publishes `gen` as the newest generation (`all` is this resource's list, locked).
    fn publish(&self, all: &mut Vec<Arc<Gen>>, gen: Gen) {
        let gen = Arc::new(gen);
        self.latest
            .store(Arc::as_ptr(&gen) as *mut Gen, Ordering::Release);
        all.push(gen);
    }

    /// The current bins: one load, no write.
    #[inline(always)]
    fn read(&self) -> &Gen {
        // SAFETY: `latest` always points at a published generation (set in `new`, then by
        // `publish`), which `all` keeps alive, unmoved and unchanged until `self` is
        // dropped; the Acquire load pairs with the Release store that published it, so it
        // is seen complete.
        unsafe { &*self.latest.load(Ordering::Acquire) }
    }
}

/// Allocates from size bins (hipMM's `binning_memory_resource`): each bin is a resource
/// serving all requests up to its size (by default a [`FixedSizeMemoryResource`] over the
/// upstream); larger requests go to the upstream directly.
pub struct BinningMemoryResource {
    upstream: SharedResource,
    bins: Generations,
}

impl BinningMemoryResource {
    /// A binning resource with no bins yet: everything goes to `upstream` until
    /// [`add_bin`](Self::add_bin) is called.
    pub fn new(upstream: SharedResource) -> Result<Self> {
        Ok(BinningMemoryResource {
            upstream,
            bins: Generations::new(),
        })
    }

    /// Fixed-size bins of 2^`min_size_exponent` ..= 2^`max_size_exponent` bytes over
    /// `upstream`.
    pub fn with_range(
        upstream: SharedResource,
        min_size_exponent: u32,
        max_size_exponent: u32,
    ) -> Result<Self> {
        if min_size_exponent > max_size_exponent {
            return Err(Error::invalid(format!(
                "{NAME}: min_size_exponent = {min_size_exponent} exceeds max_size_exponent = \
                 {max_size_exponent}"
            )));
        }
        if max_size_exponent >= usize::BITS - 8 {
            return Err(Error::invalid(format!(
                "{NAME}: max_size_exponent = {max_size_exponent} is too large (at most {})",
                usize::BITS - 9
            )));
        }
        let r = Self::new(upstream)?;
        for e in min_size_exponent..=max_size_exponent {
            r.add_bin(1usize << e, None)?;
        }
        Ok(r)
    }

    /// Adds a bin serving requests up to `allocation_size` bytes: `bin_resource` if given,
    /// else a [`FixedSizeMemoryResource`] of that block size over the upstream (taking its
    /// first blocks now). As in hipMM, a bin of an existing size is left as it is.
    pub fn add_bin(
        &self,
        allocation_size: usize,
        bin_resource: Option<SharedResource>,
    ) -> Result<()> {
        if allocation_size == 0 {
            return Err(Error::invalid(format!(
                "{NAME}: add_bin allocation_size = 0 must be positive"
            )));
        }
        let mut all = self.bins.all.lock();
        let mut bins = all.last().expect("a first generation").bins.clone();
        let Err(at) = bins.binary_search_by_key(&allocation_size, |b| b.0) else {
            return Ok(());
        };
        let (resource, fixed) = match bin_resource {
            Some(r) => (r, None),
            None => {
                let f = Arc::new(FixedSizeMemoryResource::for_bin(
                    self.upstream.clone(),
                    allocation_size,
                )?);
                (f.clone() as SharedResource, Some(f))
            }
        };
        bins.insert(at, (allocation_size, resource, fixed));
        self.bins.publish(&mut all, Gen::new(bins));
        Ok(())
    }

    /// The upstream resource (serves requests larger than every bin).
    pub fn upstream(&self) -> SharedResource {
        self.upstream.clone()
    }

    /// The bins, smallest first: `(bin size, resource)`.
    pub fn bins(&self) -> Vec<(usize, SharedResource)> {
        self.bins
            .read()
            .bins
            .iter()
            .map(|b| (b.0, b.1.clone()))
            .collect()
    }

    /// Calls `forget_stream` on every bin (and the upstream) that is a pool or fixed-size
    /// resource: use before destroying a stream memory was freed on.
    pub fn forget_stream(&self, stream: Stream) -> Result<()> {
        for r in self
            .bins
            .read()
            .bins
            .iter()
            .map(|b| &b.1)
            .chain(std::iter::once(&self.upstream))
        {
            if let Some(f) = r.as_any().downcast_ref::<FixedSizeMemoryResource>() {
                f.forget_stream(stream)?;
            } else if let Some(p) = r.as_any().downcast_ref::<super::PoolMemoryResource>() {
                p.forget_stream(stream)?;
            }
        }
        Ok(())
    }

    /// The resource serving `bytes`: the smallest bin at least that large, else upstream.
    #[inline(always)]
    fn route(&self, bytes: usize) -> Route<'_> {
        let g = self.bins.read();
        // Zero bytes count as one: the smallest bin takes them, as in RMM.
        match g.bins.get(g.index(bytes.max(1))) {
            Some((_, _, Some(f))) => Route::Fixed(f),
            Some((_, r, None)) => Route::Other(&**r),
            None => Route::Other(&*self.upstream),
        }
    }
}

/// Where [`BinningMemoryResource::route`] sends a request.
enum Route<'a> {
    /// A bin this resource made.
    Fixed(&'a FixedSizeMemoryResource),
    /// A bin given to `add_bin`, or the upstream.
    Other(&'a dyn DeviceMemoryResource),
}

impl std::fmt::Debug for BinningMemoryResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sizes: Vec<usize> = self.bins.read().bins.iter().map(|b| b.0).collect();
        write!(
            f,
            "{NAME}(upstream: {}, bins: {sizes:?})",
            self.upstream.name()
        )
    }
}

impl DeviceMemoryResource for BinningMemoryResource {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        // Zero bytes go where RMM sends them, to the smallest bin: a bin given to `add_bin`
        // sees the request (a bin of this resource's own gives null).
        match self.route(bytes) {
            Route::Fixed(_) if bytes == 0 => Ok(std::ptr::null_mut()),
            Route::Fixed(f) => f.allocate(bytes, stream),
            Route::Other(r) => r.allocate(bytes, stream),
        }
    }

    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        if ptr.is_null() {
            // The free of a zero-byte allocation reaches the bin that served it, as in RMM.
            return match self.route(bytes) {
                Route::Other(r) if bytes == 0 => r.deallocate(ptr, 0, stream),
                _ => Ok(()),
            };
        }
        match self.route(bytes) {
            Route::Fixed(f) => f.deallocate(ptr, bytes, stream),
            Route::Other(r) => r.deallocate(ptr, bytes, stream),
        }
    }

    /// The segments of its own fixed-size bins (a bin that is another resource is
    /// described as that resource, under its own name).
    fn segments(&self) -> Vec<super::Segment> {
        self.bins()
            .iter()
            .filter(|(_, r)| r.as_any().is::<super::FixedSizeMemoryResource>())
            .flat_map(|(_, r)| r.segments())
            .collect()
    }

    fn name(&self) -> &'static str {
        NAME
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn upstream(&self) -> Option<SharedResource> {
        Some(self.upstream.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mr::CudaMemoryResource;
    use proptest::prelude::*;
    use std::sync::atomic::AtomicUsize;

    fn gen_of(sizes: &[usize]) -> Gen {
        crate::mr::tests::init();
        let up: SharedResource = Arc::new(CudaMemoryResource::new().unwrap());
        let mut sorted = sizes.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        Gen::new(sorted.into_iter().map(|s| (s, up.clone(), None)).collect())
    }

    proptest! {
        /// The table's answer is the binary search's, for any bin sizes (powers of two or
        /// not, adjacent or far apart) and any request, the edges of every power of two
        /// and every bin size included.
        #[test]
        fn routing_table_finds_the_smallest_bin_that_holds_the_request(
            sizes in proptest::collection::vec(
                prop_oneof![1usize..4096, (0u32..40).prop_map(|e| 1usize << e),
                            (1u32..40).prop_map(|e| (1usize << e) + 1)],
                0..12),
            extra in proptest::collection::vec(1usize..(1 << 41), 0..32),
        ) {
            let g = gen_of(&sizes);
            let mut asks: Vec<usize> = extra;
            for b in &g.bins {
                asks.extend([b.0 - 1, b.0, b.0 + 1]);
            }
            for e in 0..usize::BITS - 1 {
                asks.extend([(1usize << e) - 1, 1usize << e, (1usize << e) + 1]);
            }
            asks.push(usize::MAX);
            for bytes in asks.into_iter().filter(|&b| b > 0) {
                let want = g.bins.partition_point(|b| b.0 < bytes);
                prop_assert_eq!(g.index(bytes), want, "bytes = {}", bytes);
            }
        }
    }

    /// Records the sizes it is asked for (a bin given to `add_bin`).
    #[derive(Debug, Default)]
    struct Recorder {
        asked: parking_lot::Mutex<Vec<(bool, usize)>>,
    }

    impl DeviceMemoryResource for Recorder {
        fn allocate(&self, bytes: usize, _: Stream) -> Result<*mut c_void> {
            self.asked.lock().push((true, bytes));
            Ok(std::ptr::null_mut())
        }
        fn deallocate(&self, _: *mut c_void, bytes: usize, _: Stream) -> Result<()> {
            self.asked.lock().push((false, bytes));
            Ok(())
        }
        fn name(&self) -> &'static str {
            "recorder"
        }
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    }

    /// Zero bytes go to the smallest bin and their free follows (RMM 26.08's rule); a
    /// fixed-size bin of the binning's own gives null without taking a block.
    #[test]
    fn zero_bytes_reach_the_smallest_bin() {
        crate::mr::tests::init();
        let up: SharedResource = Arc::new(CudaMemoryResource::new().unwrap());
        let rec = Arc::new(Recorder::default());
        let b = BinningMemoryResource::new(up.clone()).unwrap();
        b.add_bin(1024, Some(rec.clone())).unwrap();
        assert!(b.allocate(0, Stream::DEFAULT).unwrap().is_null());
        b.deallocate(std::ptr::null_mut(), 0, Stream::DEFAULT)
            .unwrap();
        assert_eq!(*rec.asked.lock(), vec![(true, 0), (false, 0)]);

        let own = BinningMemoryResource::with_range(up, 8, 10).unwrap();
        assert!(own.allocate(0, Stream::DEFAULT).unwrap().is_null());
        own.deallocate(std::ptr::null_mut(), 0, Stream::DEFAULT)
            .unwrap();
    }

    /// Bins added while other threads allocate: every reader sees a complete generation
    /// (the bins it routes to never change under it here: new bins are all larger than its
    /// requests), and a resource this binning made is called directly while one given to
    /// `add_bin` goes through its trait object.
    #[test]
    fn bins_added_while_threads_allocate_are_published_whole() {
        crate::mr::tests::init();
        let up: SharedResource = Arc::new(CudaMemoryResource::new().unwrap());
        let b = Arc::new(BinningMemoryResource::with_range(up.clone(), 8, 12).unwrap());
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ops = Arc::new(AtomicUsize::new(0));
        // Bit t: reader t has made an operation (on a busy machine a reader may start late).
        let started = Arc::new(AtomicUsize::new(0));
        let readers: Vec<_> = (0..3)
            .map(|t| {
                let (b, stop, ops) = (b.clone(), stop.clone(), ops.clone());
                let started = started.clone();
                std::thread::spawn(move || {
                    let mut seen = 0;
                    while !stop.load(Ordering::Relaxed) {
                        let bytes = 1 + (seen * 37 + t * 11) % 4096;
                        let p = b.allocate(bytes, Stream::DEFAULT).unwrap();
                        let n = b.bins().len();
                        assert!((5..=13).contains(&n), "{n} bins");
                        b.deallocate(p, bytes, Stream::DEFAULT).unwrap();
                        seen += 1;
                        ops.fetch_add(1, Ordering::Relaxed);
                        started.fetch_or(1 << t, Ordering::Relaxed);
                    }
                    seen
                })
            })
            .collect();
        for e in 13..=20 {
            // Readers make progress between additions.
            let before = ops.load(Ordering::Relaxed);
            while ops.load(Ordering::Relaxed) < before + 30 {
                std::thread::yield_now();
            }
            let given = (e % 2 == 0).then(|| up.clone());
            b.add_bin(1 << e, given).unwrap();
        }
        while started.load(Ordering::Relaxed) != 0b111 {
            std::thread::yield_now();
        }
        stop.store(true, Ordering::Relaxed);
        for r in readers {
            assert!(r.join().unwrap() > 0);
        }
        let g = b.bins.read();
        assert_eq!(g.bins.len(), 13);
        for (size, r, fixed) in &g.bins {
            let e = size.trailing_zeros();
            let made = r
                .as_any()
                .downcast_ref::<FixedSizeMemoryResource>()
                .is_some();
            assert_eq!(made, e <= 12 || e % 2 == 1, "bin 2^{e}");
            assert_eq!(fixed.is_some(), made, "bin 2^{e}");
        }
        // A request for a given bin goes to it, and back.
        let p = b.allocate(1 << 14, Stream::DEFAULT).unwrap();
        b.deallocate(p, 1 << 14, Stream::DEFAULT).unwrap();
    }
}
