//! Retrograde analysis of one material and its colour twin.
//!
//! A quiet move that crowns no man keeps the material, seen from the mover, and flips it seen
//! from the side to move: the positions of material `M` (White to move) reach those of
//! `M.swapped()` (White to move after flipping the board), and back. The two tables are solved
//! together; a symmetric material is one table. Captures and promotions leave the pair for
//! materials solved earlier ([`Material::all_up_to`] gives the order), which are looked up.
//!
//! 1. **Start.** Every position's moves are generated once. No move: lost. A capture or promotion
//!    to a position the opponent loses: won. Otherwise the position keeps a count of its moves
//!    that stay in the pair, plus one if a move leaves the pair to a draw (such a position can
//!    never be lost, so its count never reaches zero).
//! 2. **Propagation.** Every decided position is taken once: its predecessors in the pair (quiet
//!    un-moves of the side that just moved, whose start position has no capture, since capturing
//!    is compulsory) become won if it is lost, and lose one count if it is won; a predecessor
//!    whose count reaches zero has only moves to won positions and is lost. Rounds over the
//!    tables repeat until a round decides nothing.
//! 3. **End.** Positions still undecided are draws.
//!
//! Both steps run on the rayon pool the caller installs, with atomic bytes per position: one for
//! the value, one for the count (2 bytes per position while building).

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};

use draughts_core::{Bitboard, Color, Direction, MoveList, Position};
use rayon::prelude::*;

use crate::{Counts, Indexer, Material, Table, Tablebase, Wdl};

const UNKNOWN: u8 = 0;
const WIN: u8 = 1;
const LOSS: u8 = 2;
const HOLE: u8 = 3;
/// Set on a decided position once its predecessors have been told.
const DONE: u8 = 4;

/// Indices handled per task (and per progress report).
const CHUNK: u64 = 1 << 14;

struct Work {
    ix: Indexer,
    value: Vec<AtomicU8>,
    count: Vec<AtomicU8>,
}

impl Work {
    fn new(material: Material) -> Work {
        let ix = Indexer::new(material);
        let n = ix.size() as usize;
        Work { ix, value: (0..n).map(|_| AtomicU8::new(UNKNOWN)).collect(), count: (0..n).map(|_| AtomicU8::new(0)).collect() }
    }
}

/// What solving a pair found, per table.
#[derive(Debug)]
pub struct Solved {
    /// The tables: `material` first, then its twin unless it is symmetric.
    pub tables: Vec<Table>,
    /// Propagation rounds until nothing changed.
    pub rounds: u32,
}

/// How many index steps solving `material` and its twin takes (for a progress bar's length): each
/// index is started once and decided positions are propagated once.
pub fn work_units(material: Material) -> u64 {
    let a = Indexer::new(material).size();
    let b = if material.swapped() == material { 0 } else { Indexer::new(material.swapped()).size() };
    2 * (a + b)
}

/// Every table of 2 to `max_pieces` pieces, solved in memory in build order (small piece counts:
/// tests and tools; `draughts egtb build` writes each pair as it goes).
pub fn solve_all(max_pieces: u32) -> Tablebase {
    let mut tb = Tablebase::empty();
    for m in Material::all_up_to(max_pieces) {
        if m.swapped() >= m {
            for t in solve(&tb, m, &|_| {}).tables {
                tb.insert(t);
            }
        }
    }
    tb
}

/// The value of `after` (a position reached by a capture or a promotion, the opponent to move)
/// from the tables already solved.
fn value_of(solved: &Tablebase, after: &Position) -> Wdl {
    solved.probe(after).unwrap_or_else(|e| panic!("a successor of the pair is not solved ({e}): the build order is wrong"))
}

/// Solves `material` and its colour twin from `solved`, which must hold every material their
/// captures and promotions lead to. `progress` is told of every index stepped, in chunks.
pub fn solve(solved: &Tablebase, material: Material, progress: &(dyn Fn(u64) + Sync)) -> Solved {
    let mut works = vec![Work::new(material)];
    if material.swapped() != material {
        works.push(Work::new(material.swapped()));
    }
    let twin = |t: usize| if works.len() == 1 { 0 } else { 1 - t };

    // 1. Start.
    for w in &works {
        let chunks = w.ix.size().div_ceil(CHUNK);
        (0..chunks).into_par_iter().for_each_init(MoveList::new, |moves, c| {
            let (lo, hi) = (c * CHUNK, ((c + 1) * CHUNK).min(w.ix.size()));
            for i in lo..hi {
                let (value, count) = start(solved, &w.ix, i, moves);
                w.value[i as usize].store(value, Relaxed);
                w.count[i as usize].store(count, Relaxed);
            }
            progress(hi - lo);
        });
    }

    // 2. Propagation.
    let mut rounds = 0;
    loop {
        let told = AtomicU64::new(0);
        for (t, w) in works.iter().enumerate() {
            let pred = &works[twin(t)];
            let chunks = w.ix.size().div_ceil(CHUNK);
            (0..chunks).into_par_iter().for_each(|c| {
                let (lo, hi) = (c * CHUNK, ((c + 1) * CHUNK).min(w.ix.size()));
                let mut n = 0;
                for i in lo..hi {
                    let v = w.value[i as usize].load(Relaxed);
                    if v != WIN && v != LOSS {
                        continue;
                    }
                    w.value[i as usize].store(v | DONE, Relaxed);
                    n += 1;
                    let pos = w.ix.position(i).expect("a decided index is a position");
                    for_each_predecessor(&pos, |prev| {
                        let j = pred.ix.index(&prev) as usize;
                        if v == LOSS {
                            let _ = pred.value[j].compare_exchange(UNKNOWN, WIN, Relaxed, Relaxed);
                        } else if pred.count[j].fetch_sub(1, Relaxed) == 1 {
                            let _ = pred.value[j].compare_exchange(UNKNOWN, LOSS, Relaxed, Relaxed);
                        }
                    });
                }
                told.fetch_add(n, Relaxed);
                progress(n);
            });
        }
        rounds += 1;
        if told.load(Relaxed) == 0 {
            break;
        }
    }

    // 3. End: pack.
    let tables = works
        .into_iter()
        .map(|w| {
            let mut counts = Counts::default();
            let codes: Vec<u8> = w
                .value
                .iter()
                .map(|v| {
                    let v = v.load(Relaxed) & !DONE;
                    let wdl = match v {
                        WIN => Wdl::Win,
                        LOSS => Wdl::Loss,
                        _ => Wdl::Draw,
                    };
                    match (v, wdl) {
                        (HOLE, _) => {}
                        (_, Wdl::Win) => counts.wins += 1,
                        (_, Wdl::Loss) => counts.losses += 1,
                        (_, Wdl::Draw) => counts.draws += 1,
                    }
                    wdl.code()
                })
                .collect();
            Table::pack(w.ix, codes.into_iter(), counts)
        })
        .collect();
    Solved { tables, rounds }
}

/// The start of index `i`: its value byte and its count.
fn start(solved: &Tablebase, ix: &Indexer, i: u64, moves: &mut MoveList) -> (u8, u8) {
    let Some(pos) = ix.position(i) else { return (HOLE, 0) };
    pos.generate_moves(false, moves);
    if moves.is_empty() {
        return (LOSS, 0);
    }
    let mut inside = 0u32;
    let mut draw_exit = false;
    for mv in moves.iter() {
        if mv.is_capture() || mv.promotes() {
            match value_of(solved, &pos.play(mv)) {
                Wdl::Loss => return (WIN, 0),
                Wdl::Draw => draw_exit = true,
                Wdl::Win => {}
            }
        } else {
            inside += 1;
        }
    }
    let count = inside + draw_exit as u32;
    assert!(count < 256, "{count} moves in the pair from {pos}: more than a byte counts");
    if count == 0 {
        (LOSS, 0)
    } else {
        (UNKNOWN, count as u8)
    }
}

/// Calls `f` with every position (White to move) from which White's quiet move without a
/// promotion leads to `pos` flipped. In `pos` (White to move) that is every quiet un-move of
/// Black that crowns no man, whose start position has Black to move and no capture; `f` gets that
/// start position flipped, so that White is to move again.
pub fn for_each_predecessor(pos: &Position, mut f: impl FnMut(Position)) {
    debug_assert_eq!(pos.side_to_move(), Color::White);
    let empty = pos.empty_squares();
    let (wm, wk) = (pos.men(Color::White), pos.kings(Color::White));
    let (bm, bk) = (pos.men(Color::Black), pos.kings(Color::Black));
    let mut emit = |men: Bitboard, kings: Bitboard| {
        let prev = Position::from_pieces(wm, wk, men, kings, Color::Black).expect("an un-move keeps pieces apart");
        if !prev.has_capture() {
            f(prev.flipped());
        }
    };
    // Black men move down the board (toward square 50): they came from one step up.
    for sq in bm {
        let one = Bitboard::from_square(sq);
        for d in [Direction::UpLeft, Direction::UpRight] {
            let from = one.shift(d) & empty;
            if from.any() {
                emit((bm & !one) | from, bk);
            }
        }
    }
    // Black kings came from anywhere along a free diagonal.
    for sq in bk {
        let one = Bitboard::from_square(sq);
        for d in Direction::ALL {
            let mut from = one.shift(d) & empty;
            while from.any() {
                emit(bm, (bk & !one) | from);
                from = from.shift(d) & empty;
            }
        }
    }
}
