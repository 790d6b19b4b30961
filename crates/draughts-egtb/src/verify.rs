//! Checking a table against the values of its successors.
//!
//! Every position must agree with its moves: a win has a move to a position the opponent loses; a
//! loss has no move, or only moves to positions the opponent wins; a draw has a move to a draw and
//! none to a position the opponent loses. The header's counts must match the payload.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

use draughts_core::{MoveList, Position};
use rayon::prelude::*;

use crate::{Counts, Material, ProbeError, Tablebase, Wdl};

/// What a check found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Positions checked (holes excluded).
    pub positions: u64,
    /// Positions whose stored value disagrees with their successors.
    pub wrong: u64,
    /// Up to ten of them: the position, the stored value and the value its successors give.
    pub examples: Vec<(Position, Wdl, Wdl)>,
    /// The counts in the payload, to compare with the header's.
    pub counts: Counts,
    /// Whether the header's counts equal the payload's.
    pub counts_match: bool,
}

/// The value of `pos` from the values of its successors.
pub fn value_from_successors(tb: &Tablebase, pos: &Position, moves: &mut MoveList) -> Result<Wdl, ProbeError> {
    pos.generate_moves(false, moves);
    let mut best = Wdl::Loss;
    for mv in moves.iter() {
        let v = tb.probe(&pos.play(mv))?.flip();
        if v > best {
            best = v;
            if best == Wdl::Win {
                break;
            }
        }
    }
    Ok(best)
}

/// Checks every position of `material`'s table in `tb`, which must also hold every material its
/// moves lead to. `progress` is told of the indices checked, in chunks.
pub fn verify(tb: &Tablebase, material: Material, progress: &(dyn Fn(u64) + Sync)) -> Result<Report, ProbeError> {
    const CHUNK: u64 = 1 << 14;
    let table = tb.table(material)?;
    let ix = table.indexer();
    let wrong = AtomicU64::new(0);
    let [wins, draws, losses, positions] = std::array::from_fn(|_| AtomicU64::new(0));
    let examples = Mutex::new(Vec::new());
    let failure = Mutex::new(None);
    (0..ix.size().div_ceil(CHUNK)).into_par_iter().for_each_init(MoveList::new, |moves, c| {
        let (lo, hi) = (c * CHUNK, ((c + 1) * CHUNK).min(ix.size()));
        for i in lo..hi {
            let Some(pos) = ix.position(i) else { continue };
            positions.fetch_add(1, Relaxed);
            let stored = table.get(i);
            match stored {
                Wdl::Win => &wins,
                Wdl::Draw => &draws,
                Wdl::Loss => &losses,
            }
            .fetch_add(1, Relaxed);
            match value_from_successors(tb, &pos, moves) {
                Ok(v) if v == stored => {}
                Ok(v) => {
                    wrong.fetch_add(1, Relaxed);
                    let mut ex = examples.lock().expect("no panic while held");
                    if ex.len() < 10 {
                        ex.push((pos, stored, v));
                    }
                }
                Err(e) => {
                    *failure.lock().expect("no panic while held") = Some(e);
                    return;
                }
            }
        }
        progress(hi - lo);
    });
    if let Some(e) = failure.into_inner().expect("no panic while held") {
        return Err(e);
    }
    let counts = Counts { wins: wins.into_inner(), draws: draws.into_inner(), losses: losses.into_inner() };
    Ok(Report {
        positions: positions.into_inner(),
        wrong: wrong.into_inner(),
        examples: examples.into_inner().expect("no panic while held"),
        counts,
        counts_match: counts == table.counts(),
    })
}
