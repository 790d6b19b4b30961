//! Perft: the number of move paths of a given length, the standard check of a move generator.
//!
//! Leaves are bulk-counted: at depth 1 the legal moves are counted, not played, and quiet moves
//! are counted with population counts without being listed.

use crate::{Move, MoveList, Position};

/// The number of move paths of length `depth` from `pos` (FMJD rules), single-threaded.
pub fn perft(pos: &Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => pos.count_legal_moves() as u64,
        2 => pos.perft2(),
        _ => {
            // Filled in place: returning a move list by value would copy its inline buffer.
            let mut moves = MoveList::new();
            pos.generate_moves(false, &mut moves);
            moves.iter().map(|mv| perft(&pos.play(mv), depth - 1)).sum()
        }
    }
}

/// Perft per root move: each legal move with the number of paths below it.
pub fn divide(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    let depth = depth.max(1);
    pos.legal_moves().iter().map(|mv| (*mv, perft(&pos.play(mv), depth - 1))).collect()
}

/// [`perft`] spread over the current rayon thread pool. The work is split over the moves of the
/// first two plies, which gives enough pieces to balance two to a few dozen threads.
#[cfg(feature = "parallel")]
pub fn perft_parallel(pos: &Position, depth: u32) -> u64 {
    use rayon::prelude::*;
    if depth <= 3 {
        return perft(pos, depth);
    }
    let mut children = Vec::new();
    for mv in pos.legal_moves() {
        let child = pos.play(&mv);
        for mv2 in child.legal_moves() {
            children.push(child.play(&mv2));
        }
    }
    children.par_iter().map(|p| perft(p, depth - 2)).sum()
}

/// [`divide`] with the moves searched in parallel.
#[cfg(feature = "parallel")]
pub fn divide_parallel(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    use rayon::prelude::*;
    let depth = depth.max(1);
    let moves: Vec<Move> = pos.legal_moves().into_iter().collect();
    moves.par_iter().map(|mv| (*mv, perft_parallel(&pos.play(mv), depth - 1))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_shallow() {
        let p = Position::start();
        assert_eq!(perft(&p, 0), 1);
        assert_eq!(perft(&p, 1), 9);
        assert_eq!(perft(&p, 2), 81);
        assert_eq!(perft(&p, 3), 658);
        assert_eq!(divide(&p, 3).iter().map(|(_, n)| n).sum::<u64>(), 658);
        #[cfg(feature = "parallel")]
        assert_eq!(perft_parallel(&p, 5), 27117);
    }
}
