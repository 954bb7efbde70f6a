//! The front's table and bins against a model, and its hit paths' refusals.

use super::*;
use crate::mr::free_index::mapping_search;
use proptest::prelude::*;
use std::collections::HashMap;

#[derive(Clone, Debug)]
enum Op {
    /// Adopt block `k` of `units` × 256 bytes.
    Adopt(usize, usize),
    /// Take a request of `units` × 256 bytes.
    Take(usize),
    /// Free block `k` with its request (or a wrong size).
    Free(usize, bool),
    Drain,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0usize..160, prop_oneof![1usize..=4, 1usize..=4096])
            .prop_map(|(k, u)| Op::Adopt(k, u)),
        3 => prop_oneof![1usize..=4, 1usize..=4096].prop_map(Op::Take),
        4 => (0usize..160, any::<bool>()).prop_map(|(k, w)| Op::Free(k, w)),
        1 => Just(Op::Drain),
    ]
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum St {
    Free,
    Live(usize),
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever the order of adoptions, takes, frees and drains (tombstones, rebuilds),
    /// the front holds exactly the blocks a model holds, each findable, with the right
    /// state, and its byte and block counts add up.
    #[test]
    fn front_table_matches_a_model(ops in proptest::collection::vec(op(), 1..300)) {
        let s = Stream::DEFAULT;
        let mut f = Front::new();
        f.stream = Some(s);
        let mut model: HashMap<usize, (usize, St)> = HashMap::new();
        let addr = |k: usize| (k + 1) << 24;
        for op in ops {
            match op {
                Op::Adopt(k, units) => {
                    let a = addr(k);
                    if model.contains_key(&a) {
                        continue;
                    }
                    let size = units << UNIT_SHIFT;
                    if f.adopt(a, size, k as u32, 0, s, &Limits::new(FRONT_BYTES)) {
                        model.insert(a, (size, St::Free));
                    }
                }
                Op::Take(units) => {
                    let rounded = units << UNIT_SHIFT;
                    match f.take(rounded) {
                        Some(a) => {
                            let e = model.get_mut(&a).expect("taken block is known");
                            prop_assert_eq!(e.1, St::Free);
                            prop_assert!(e.0 >= rounded, "{} < {}", e.0, rounded);
                            e.1 = St::Live(rounded);
                        }
                        None => {
                            // The search class holds no free block.
                            let (fl, sl) = mapping_search(units);
                            let c2 = fl * 16 + sl;
                            prop_assert!(!model
                                .values()
                                .any(|&(size, st)| st == St::Free && bin_of(size) == c2));
                        }
                    }
                }
                Op::Free(k, wrong) => {
                    let a = addr(k);
                    let got = match model.get(&a).copied() {
                        None => {
                            prop_assert!(matches!(f.free(a, 256, s, true, &Limits::new(FRONT_BYTES)), Ok(Freed::NotHere)));
                            continue;
                        }
                        Some((_, St::Free)) => {
                            prop_assert!(f.free(a, 256, s, true, &Limits::new(FRONT_BYTES)).is_err(), "double free");
                            continue;
                        }
                        Some((_, St::Live(req))) if wrong => {
                            prop_assert!(f.free(a, req + 256, s, true, &Limits::new(FRONT_BYTES)).is_err(), "wrong size");
                            continue;
                        }
                        Some((_, St::Live(req))) => f.free(a, req, s, true, &Limits::new(FRONT_BYTES)),
                    };
                    match got {
                        Ok(Freed::Kept) => model.get_mut(&a).unwrap().1 = St::Free,
                        Ok(Freed::Return(r)) => {
                            prop_assert_eq!(r.addr, a);
                            prop_assert_eq!(r.block as usize, k);
                            model.remove(&a);
                        }
                        other => prop_assert!(false, "free of a live block: {:?}", other),
                    }
                }
                Op::Drain => {
                    let mut out = Vec::new();
                    f.drain(&mut out);
                    let mut got: Vec<usize> = out.iter().map(|r| r.addr).collect();
                    got.sort_unstable();
                    let mut want: Vec<usize> = model
                        .iter()
                        .filter(|(_, v)| v.1 == St::Free)
                        .map(|(a, _)| *a)
                        .collect();
                    want.sort_unstable();
                    prop_assert_eq!(got, want);
                    model.retain(|_, v| v.1 != St::Free);
                }
            }
            let free: Vec<usize> =
                model.values().filter(|v| v.1 == St::Free).map(|v| v.0).collect();
            prop_assert_eq!(f.cached_count(), free.len());
            prop_assert_eq!(f.cached_bytes, free.iter().sum::<usize>());
            prop_assert_eq!(f.table.len, model.len());
            prop_assert!(2 * (f.table.len + f.table.gone) <= f.table.slots.len());
            // Every tag agrees with its slot: empty, removed, or the address's own tag.
            let t = &f.table;
            for (i, (e, &tag)) in t.slots.iter().zip(t.tags.iter()).enumerate() {
                match e.addr {
                    EMPTY => prop_assert_eq!(tag, TAG_EMPTY, "slot {}", i),
                    GONE => prop_assert_eq!(tag, TAG_GONE, "slot {}", i),
                    a => prop_assert_eq!(tag, t.home(a).1, "slot {}", i),
                }
            }
            prop_assert_eq!(t.tags[..t.slots.len()].iter().filter(|&&g| g == TAG_GONE).count(), t.gone);
            // The tags past the end repeat the first ones.
            let n = t.slots.len();
            prop_assert_eq!(&t.tags[n..], &t.tags[..GROUP - 1]);
            // Each bin's head size is its first block's (0 when empty), at most rounded
            // down to 256 bytes; the extra bin stays empty.
            for c in 0..=CLASSES {
                let want = match f.heads[c] {
                    NONE => 0,
                    i => f.table.slots[i as usize].size,
                };
                prop_assert!(
                    f.head_size[c] <= want && f.head_size[c] >= want & !255,
                    "class {}: head size {} for a head of {}", c, f.head_size[c], want
                );
            }
            prop_assert_eq!(f.heads[CLASSES], NONE);
            for (&a, &(size, st)) in &model {
                let i = f.table.find(a).expect("every held block is in the table");
                let e = f.table.slots[i as usize];
                prop_assert_eq!(e.size as usize, size);
                prop_assert_eq!(e.req as usize, match st { St::Free => 0, St::Live(r) => r });
            }
        }
    }
}

#[test]
fn keep_takes_only_good_frees_and_changes_nothing_otherwise() {
    let s = Stream::DEFAULT;
    let other = Stream(0x5000);
    let mut f = Front::new();
    f.stream = Some(s);
    let a = 1 << 20;
    assert!(f.adopt(a, 4096, 0, 0, s, &Limits::new(FRONT_BYTES)));
    assert_eq!(f.take(4096), Some(a));
    let held = (f.cached_bytes, f.cached_count(), f.table.len);
    // Not held, wrong size, another stream, no room: false, nothing changed.
    assert!(!f.keep(a + 4096, 4000, s, &Limits::new(FRONT_BYTES)));
    assert!(!f.keep(0, 4000, s, &Limits::new(FRONT_BYTES)));
    assert!(!f.keep(a, 3000, s, &Limits::new(FRONT_BYTES)));
    assert!(!f.keep(a, usize::MAX, s, &Limits::new(FRONT_BYTES)));
    assert!(!f.keep(a, 4000, other, &Limits::new(FRONT_BYTES)));
    assert!(!f.keep(a, 4000, s, &Limits::new(1024)));
    assert_eq!((f.cached_bytes, f.cached_count(), f.table.len), held);
    // A good free is kept (any size rounding to the request), then is a double free.
    assert!(f.keep(a, 3841, s, &Limits::new(FRONT_BYTES)));
    assert_eq!((f.cached_bytes, f.cached_count()), (4096, 1));
    assert!(!f.keep(a, 3841, s, &Limits::new(FRONT_BYTES)));
    assert!(f.free(a, 3841, s, true, &Limits::new(FRONT_BYTES)).is_err());
    assert_eq!(f.take(4096), Some(a));
}

#[test]
fn tombstones_are_cleared_or_rebuilt_away() {
    let s = Stream::DEFAULT;
    let mut f = Front::new();
    f.stream = Some(s);
    // Many adopt/return cycles over distinct addresses: the table must not fill with
    // tombstones (it stays within half, rebuilding when needed).
    for round in 0..2000usize {
        let a = (round + 1) << 20;
        assert!(f.adopt(a, 256, 0, 0, s, &Limits::new(FRONT_BYTES)));
        assert_eq!(f.take(256), Some(a));
        match f.free(a, 256, s, false, &Limits::new(FRONT_BYTES)).unwrap() {
            Freed::Return(r) => assert_eq!(r.addr, a),
            other => panic!("{other:?}"),
        }
        assert!(2 * (f.table.len + f.table.gone) <= f.table.slots.len());
    }
    assert_eq!(f.table.len, 0);
    assert!(
        f.table.slots.len() <= 64,
        "{} slots for no entries",
        f.table.slots.len()
    );
}

#[test]
fn keep_near_keeps_blocks_of_the_first_group_and_leaves_the_rest_to_keep() {
    let s = Stream::DEFAULT;
    let limits = Limits::new(FRONT_BYTES);
    let mut f = Front::new();
    f.stream = Some(s);
    f.table = Table::with_capacity(64);
    // Ten blocks whose probe sequences start at one slot: the first eight fill its group.
    let home = f.table.home(1 << 20).0;
    let blocks: Vec<usize> = (1usize..)
        .map(|k| (k << 20) + (k << 8))
        .filter(|&a| f.table.home(a).0 == home)
        .take(10)
        .collect();
    for &a in &blocks {
        assert!(f.adopt(a, 4096, 0, 0, s, &limits));
    }
    for _ in &blocks {
        assert!(f.take(4096).is_some());
    }
    let held = (f.cached_bytes, f.cached_count());
    for &a in &blocks[8..] {
        assert!(matches!(
            f.keep_near(a, 4096, s, &limits),
            FrontAnswer::NotAsked
        ));
    }
    assert_eq!(
        (f.cached_bytes, f.cached_count()),
        held,
        "a deferred free changed the front"
    );
    for &a in &blocks[..8] {
        assert!(matches!(
            f.keep_near(a, 4096, s, &limits),
            FrontAnswer::Served(())
        ));
    }
    for &a in &blocks[8..] {
        assert!(f.keep(a, 4096, s, &limits));
    }
    assert_eq!((f.cached_bytes, f.cached_count()), (10 * 4096, 10));
    // Kept blocks are free: a second free is refused. An address the table does not hold,
    // whose group has an empty slot, is refused without looking further.
    assert!(matches!(
        f.keep_near(blocks[0], 4096, s, &limits),
        FrontAnswer::Missed
    ));
    let stranger = (1usize..)
        .map(|k| k << 30)
        .find(|&a| f.table.home(a).0.abs_diff(home) > 16)
        .unwrap();
    assert!(matches!(
        f.keep_near(stranger, 4096, s, &limits),
        FrontAnswer::Missed
    ));
    assert_eq!((f.cached_bytes, f.cached_count()), (10 * 4096, 10));
}
