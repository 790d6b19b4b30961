//! The transposition table: buckets of four 16-byte entries, one cache line each.
//!
//! An entry holds the full 64-bit Zobrist key, a score with its bound, the depth it was searched
//! to, the search generation that wrote it and the best move. A move is stored as its index in
//! the position's legal move list together with its from and to squares: move generation is
//! deterministic, so the index names the move again when the same position comes back, and the
//! squares guard against a key collision handing back a move that is not legal here.
//!
//! Replacement is depth-preferred within a bucket: an entry with the same key is updated, else an
//! empty or stale slot is taken, else the slot with the least depth (entries from earlier searches
//! count as shallower).
//!
//! The search threads share one table without locks (see [`Slot`]): probes and stores take
//! `&self`; starting a search or clearing the table takes `&mut self`, between searches.
//!
//! Generations make "clear the table" O(1). In strict mode only entries written by the current
//! generation are visible and every other entry behaves exactly like an empty one, so a search
//! gives the same result as with a freshly allocated table; that is what makes node-limited
//! searches reproducible. The generation is a byte, and the table is really zeroed when it wraps.

use std::sync::atomic::{AtomicU64, Ordering};

/// What the stored score says about the true score.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Bound {
    /// No score, only a move (stored when the score depends on the draw-rule counters).
    None = 0,
    /// The true score is at most the stored one (the search failed low).
    Upper = 1,
    /// The true score is at least the stored one (the search failed high).
    Lower = 2,
    /// The stored score is exact.
    Exact = 3,
}

impl Bound {
    fn from_u8(b: u8) -> Bound {
        match b {
            1 => Bound::Upper,
            2 => Bound::Lower,
            3 => Bound::Exact,
            _ => Bound::None,
        }
    }
}

/// A stored move: index in the legal move list, from bit, to bit.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct TtMove {
    pub index: u8,
    pub from: u8,
    pub to: u8,
}

/// What a probe hands back.
#[derive(Copy, Clone, Debug)]
pub(crate) struct TtHit {
    pub score: i32,
    pub depth: i32,
    pub bound: Bound,
    pub mv: Option<TtMove>,
}

/// An entry as the search sees it. In the table it is two words (see [`Slot`]).
#[derive(Copy, Clone, Default, Debug, PartialEq, Eq)]
struct Entry {
    key: u64,
    score: i16,
    depth: i8,
    bound: u8,
    /// 0: never written.
    generation: u8,
    /// 255: no move.
    mv_index: u8,
    mv_from: u8,
    mv_to: u8,
}

impl Entry {
    #[inline(always)]
    fn data(&self) -> u64 {
        (self.score as u16 as u64)
            | (self.depth as u8 as u64) << 16
            | (self.bound as u64) << 24
            | (self.generation as u64) << 32
            | (self.mv_index as u64) << 40
            | (self.mv_from as u64) << 48
            | (self.mv_to as u64) << 56
    }

    #[inline(always)]
    fn from_data(key: u64, d: u64) -> Entry {
        Entry {
            key,
            score: d as u16 as i16,
            depth: (d >> 16) as u8 as i8,
            bound: (d >> 24) as u8,
            generation: (d >> 32) as u8,
            mv_index: (d >> 40) as u8,
            mv_from: (d >> 48) as u8,
            mv_to: (d >> 56) as u8,
        }
    }
}

/// One entry in the table, shared by the search threads without locks: the data word and the key
/// XORed with it (Hyatt's lockless hashing). A slot two threads wrote at once holds one thread's
/// key with the other's data, and its key then reads back wrong, so the slot reads as another
/// position's: a torn entry is never used. Relaxed atomic loads and stores are plain moves.
#[derive(Default, Debug)]
struct Slot {
    check: AtomicU64,
    data: AtomicU64,
}

impl Slot {
    /// The entry, with the key it was stored under (a torn entry gets a key no position asks for).
    #[inline(always)]
    fn load(&self) -> Entry {
        let data = self.data.load(Ordering::Relaxed);
        let check = self.check.load(Ordering::Relaxed);
        Entry::from_data(check ^ data, data)
    }

    #[inline(always)]
    fn store(&self, e: &Entry) {
        let data = e.data();
        self.check.store(e.key ^ data, Ordering::Relaxed);
        self.data.store(data, Ordering::Relaxed);
    }
}

/// Asks the CPU to bring the cache line that holds `*item` into its caches (the table's buckets,
/// the learned evaluation's score cache). Only a hint; it changes nothing.
#[inline(always)]
pub(crate) fn prefetch_line<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing the program sees and cannot fault; SSE is part of every
    // x86_64 CPU.
    #[allow(unsafe_code)]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(item as *const T as *const i8)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}

const NO_MOVE: u8 = 255;
const WAYS: usize = 4;

#[derive(Default, Debug)]
#[repr(C, align(64))]
struct Bucket([Slot; WAYS]);

/// Why the table could not be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TtError {
    /// Zero MiB asked for.
    #[error("transposition table size must be at least 1 MiB, not {0}")]
    Zero(usize),
    /// The memory could not be allocated.
    #[error("cannot allocate a {0} MiB transposition table")]
    Alloc(usize),
}

/// The transposition table.
pub(crate) struct TranspositionTable {
    buckets: Vec<Bucket>,
    generation: u8,
    strict: bool,
}

impl std::fmt::Debug for TranspositionTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TranspositionTable")
            .field("buckets", &self.buckets.len())
            .field("generation", &self.generation)
            .field("strict", &self.strict)
            .finish()
    }
}

/// Asks Linux to back the `len` bytes at `start` (reserved, not yet touched) with 2 MiB pages:
/// a probe lands anywhere in the table, and with 4 KiB pages nearly every probe of a table of
/// tens of MiB also misses the TLB. Where transparent huge pages are off, or on other systems,
/// nothing changes.
fn advise_huge_pages(start: usize, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let first = start.next_multiple_of(PAGE);
        let end = (start + len) / PAGE * PAGE;
        if end > first {
            // SAFETY: the range lies inside one allocation the caller owns; `madvise` with
            // MADV_HUGEPAGE changes only how the kernel backs it, never its contents, and a
            // failure (no transparent huge pages) leaves it as it was.
            #[allow(unsafe_code)]
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, len);
}

impl TranspositionTable {
    /// A table of `mib` MiB.
    pub fn new(mib: usize) -> Result<TranspositionTable, TtError> {
        if mib == 0 {
            return Err(TtError::Zero(mib));
        }
        let bytes = mib.checked_mul(1 << 20).ok_or(TtError::Alloc(mib))?;
        let n = bytes / std::mem::size_of::<Bucket>();
        let mut buckets = Vec::new();
        buckets.try_reserve_exact(n).map_err(|_| TtError::Alloc(mib))?;
        advise_huge_pages(buckets.as_ptr() as usize, n * std::mem::size_of::<Bucket>());
        buckets.resize_with(n, Bucket::default);
        Ok(TranspositionTable { buckets, generation: 1, strict: false })
    }

    /// Forgets every entry.
    pub fn clear(&mut self) {
        self.buckets.iter_mut().for_each(|b| *b = Bucket::default());
        self.generation = 1;
    }

    /// Starts a new search. `strict`: entries of earlier searches become invisible (see the
    /// module docs); otherwise they stay usable but are replaced first.
    pub fn new_search(&mut self, strict: bool) {
        if self.generation == u8::MAX {
            self.clear();
        } else {
            self.generation += 1;
        }
        self.strict = strict;
    }

    #[inline(always)]
    fn bucket_index(&self, key: u64) -> usize {
        ((key as u128 * self.buckets.len() as u128) >> 64) as usize
    }

    #[inline(always)]
    fn visible(&self, e: &Entry) -> bool {
        e.generation != 0 && (!self.strict || e.generation == self.generation)
    }

    /// Starts loading the bucket of `key` into the cache, so that a probe of it a little later
    /// does not wait on memory: the search calls it as soon as it knows a child's key, before it
    /// makes the move and updates the evaluation. Only a hint; it changes nothing.
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        prefetch_line(&self.buckets[self.bucket_index(key)]);
    }

    /// The entry for `key`, if one is stored (and visible). Scores are as stored; the caller
    /// turns mate scores back to its ply.
    #[inline]
    pub fn probe(&self, key: u64) -> Option<TtHit> {
        let bucket = &self.buckets[self.bucket_index(key)];
        bucket.0.iter().map(Slot::load).find(|e| e.key == key && self.visible(e)).map(|e| TtHit {
            score: e.score as i32,
            depth: e.depth as i32,
            bound: Bound::from_u8(e.bound),
            mv: (e.mv_index != NO_MOVE).then_some(TtMove { index: e.mv_index, from: e.mv_from, to: e.mv_to }),
        })
    }

    /// Stores a result. `score` must fit in an `i16` (search scores do).
    #[inline]
    pub fn store(&self, key: u64, score: i32, depth: i32, bound: Bound, mv: Option<TtMove>) {
        let index = self.bucket_index(key);
        let generation = self.generation;
        let strict = self.strict;
        let visible = |e: &Entry| e.generation != 0 && (!strict || e.generation == generation);
        let slots = &self.buckets[index].0;
        let bucket: [Entry; WAYS] = std::array::from_fn(|i| slots[i].load());
        let slot = match bucket.iter().position(|e| e.key == key && visible(e)) {
            Some(i) => {
                let old = bucket[i];
                // Keep a deeper result of this search unless the new one is exact.
                if old.generation == generation
                    && bound != Bound::Exact
                    && (old.depth as i32) > depth + 2
                    && Bound::from_u8(old.bound) != Bound::None
                {
                    if let Some(m) = mv {
                        let mut e = old;
                        (e.mv_index, e.mv_from, e.mv_to) = (m.index, m.from, m.to);
                        slots[i].store(&e);
                    }
                    return;
                }
                i
            }
            None => {
                let mut best = 0;
                let mut best_value = i32::MAX;
                for (i, e) in bucket.iter().enumerate() {
                    // Empty and invisible slots are taken first, the first one found.
                    let value = if visible(e) {
                        e.depth as i32 - if e.generation == generation { 0 } else { 256 }
                    } else {
                        i32::MIN
                    };
                    if value < best_value {
                        best = i;
                        best_value = value;
                    }
                }
                best
            }
        };
        let keep_move = {
            let e = &bucket[slot];
            (e.key == key && visible(e) && mv.is_none()).then_some((e.mv_index, e.mv_from, e.mv_to))
        };
        let (mv_index, mv_from, mv_to) =
            keep_move.unwrap_or_else(|| mv.map_or((NO_MOVE, 0, 0), |m| (m.index, m.from, m.to)));
        slots[slot].store(&Entry {
            key,
            score: score.clamp(i16::MIN as i32, i16::MAX as i32) as i16,
            depth: depth.clamp(i8::MIN as i32, i8::MAX as i32) as i8,
            bound: bound as u8,
            generation,
            mv_index,
            mv_from,
            mv_to,
        });
    }

    /// Permille of the first thousand buckets' slots written by the current search.
    pub fn hashfull(&self) -> u32 {
        let n = self.buckets.len().min(1000);
        if n == 0 {
            return 0;
        }
        let used: usize =
            self.buckets[..n].iter().map(|b| b.0.iter().filter(|s| s.load().generation == self.generation).count()).sum();
        (used * 1000 / (n * WAYS)) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        assert_eq!(std::mem::size_of::<Slot>(), 16);
        assert_eq!(std::mem::size_of::<Bucket>(), 64);
        let tt = TranspositionTable::new(1).unwrap();
        assert_eq!(tt.buckets.len(), (1 << 20) / 64);
        assert!(TranspositionTable::new(0).is_err());
    }

    #[test]
    fn store_probe_and_generations() {
        let mut tt = TranspositionTable::new(1).unwrap();
        let mv = TtMove { index: 3, from: 7, to: 12 };
        tt.store(42, -17, 5, Bound::Lower, Some(mv));
        let hit = tt.probe(42).unwrap();
        assert_eq!((hit.score, hit.depth, hit.bound, hit.mv), (-17, 5, Bound::Lower, Some(mv)));
        assert!(tt.probe(43).is_none());
        // A shallower inexact result of the same search keeps the deeper score.
        tt.store(42, 99, 1, Bound::Upper, None);
        assert_eq!(tt.probe(42).unwrap().score, -17);
        // Non-strict: old entries stay visible; strict: they vanish.
        tt.new_search(false);
        assert!(tt.probe(42).is_some());
        tt.new_search(true);
        assert!(tt.probe(42).is_none());
    }

    #[test]
    fn entries_pack_into_one_word() {
        let e = Entry { key: 0xDEAD_BEEF, score: -32000, depth: -3, bound: 2, generation: 200, mv_index: 255, mv_from: 7, mv_to: 53 };
        assert_eq!(Entry::from_data(e.key, e.data()), e);
        let slot = Slot::default();
        slot.store(&e);
        assert_eq!(slot.load(), e);
        // A slot whose words come from two different stores reads as another key.
        let other = Entry { key: 0x1234, score: 5, ..e };
        slot.data.store(other.data(), Ordering::Relaxed);
        assert_ne!(slot.load().key, e.key);
        assert_ne!(slot.load().key, other.key);
    }

    #[test]
    fn threads_share_the_table() {
        let tt = TranspositionTable::new(1).unwrap();
        // Four threads store and probe keys of their own in shared buckets (few enough that no
        // key is pushed out: 4 threads x 250 scattered keys in 16384 buckets of 4).
        let key = |t: u64, i: u64| (t * 250 + i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let tt = &tt;
                s.spawn(move || {
                    for i in 0..250u64 {
                        tt.store(key(t, i), (t * 250 + i) as i32, 3, Bound::Exact, None);
                        let hit = tt.probe(key(t, i)).expect("a key just stored");
                        assert_eq!(hit.score, (t * 250 + i) as i32);
                    }
                });
            }
        });
        let found = (0..4u64).flat_map(|t| (0..250u64).map(move |i| (t, i))).filter(|&(t, i)| tt.probe(key(t, i)).is_some()).count();
        assert_eq!(found, 1000);
    }

    #[test]
    fn generation_wrap_clears() {
        let mut tt = TranspositionTable::new(1).unwrap();
        tt.store(1, 0, 1, Bound::Exact, None);
        for _ in 0..300 {
            tt.new_search(false);
        }
        // Wrapped at least once: the table was zeroed.
        assert!(tt.probe(1).is_none());
    }

    #[test]
    fn buckets_hold_four_keys() {
        let tt = TranspositionTable::new(1).unwrap();
        // Keys with the same high bits land in one bucket.
        let keys: Vec<u64> = (0..4).map(|i| 0xABCD_0000_0000_0000 | i).collect();
        for (d, &k) in keys.iter().enumerate() {
            tt.store(k, d as i32, d as i32 + 1, Bound::Exact, None);
        }
        assert!(keys.iter().all(|&k| tt.probe(k).is_some()));
        // A fifth key replaces the shallowest.
        tt.store(0xABCD_0000_0000_0009, 0, 9, Bound::Exact, None);
        assert!(tt.probe(keys[0]).is_none());
        assert!(tt.probe(keys[3]).is_some());
    }
}
