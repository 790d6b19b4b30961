//! The input features: which piece stands on which square, from one side's point of view.
//!
//! For a point of view `p` (a colour), a piece of colour `c` and role `r` on square `s` is feature
//!
//! ```text
//! kind * 50 + relative_square(p, s).index()      kind: 0 own man, 1 own king, 2 opponent man, 3 opponent king
//! ```
//!
//! where "own" means `c == p` and `relative_square` turns the board for Black (square `n` becomes
//! `51 - n`), exactly as the network encoding of `draughts-nn` does. So the features of the side
//! to move are the four piece planes of that encoding read on the 50 dark squares, which is how
//! the trainer computes them, and the same net serves both colours.
//!
//! The network keeps one accumulator per point of view (White's and Black's), so a move updates
//! both and the side to move only decides their order at evaluation time. A move changes few
//! features ([`move_delta`]): the moving piece leaves its square (as a man or a king) and lands
//! (as a king if it crowns), and every captured piece leaves its square.

use draughts_core::{Color, Move, Position, Role, Square};

/// Squares of the board.
pub const SQUARES: usize = 50;
/// Features per point of view: 4 kinds x 50 squares.
pub const FEATURES: usize = 4 * SQUARES;
/// Most features active in one position for one point of view (one piece per square, at most
/// 20 per side in any reachable position; 50 bounds every input).
pub const MAX_ACTIVE: usize = SQUARES;
/// Most features a move removes: the moving piece and at most 20 captured pieces.
pub const MAX_REMOVED: usize = 21;

/// The square `sq` as `side` sees it: itself for White, `51 - n` for Black.
#[inline]
pub fn relative_square(side: Color, sq: Square) -> Square {
    match side {
        Color::White => sq,
        Color::Black => sq.flip(),
    }
}

/// The feature of a piece (`color`, `role`) on `sq`, from `perspective`'s point of view.
#[inline]
pub fn feature(perspective: Color, color: Color, role: Role, sq: Square) -> usize {
    let kind = if color == perspective { 0 } else { 2 } + (role == Role::King) as usize;
    kind * SQUARES + relative_square(perspective, sq).index()
}

/// The same feature seen from the other point of view: own and opponent swapped, the board
/// turned. (The trainer uses this to build the second point of view from the first.)
#[inline]
pub fn mirror_feature(f: usize) -> usize {
    let (kind, sq) = (f / SQUARES, f % SQUARES);
    ((kind + 2) % 4) * SQUARES + (SQUARES - 1 - sq)
}

/// Calls `f` with every active feature of `pos` from `perspective`'s point of view, in square
/// order per kind (own men, own kings, opponent men, opponent kings).
pub fn for_each_active(pos: &Position, perspective: Color, mut f: impl FnMut(usize)) {
    let them = !perspective;
    let sets = [
        (perspective, Role::Man, pos.men(perspective)),
        (perspective, Role::King, pos.kings(perspective)),
        (them, Role::Man, pos.men(them)),
        (them, Role::King, pos.kings(them)),
    ];
    for (color, role, set) in sets {
        for sq in set {
            f(feature(perspective, color, role, sq));
        }
    }
}

/// The features a move changes, for one point of view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delta {
    /// Features that turn on (the moving piece on its landing square).
    pub added: [u16; 1],
    /// Features that turn off: the moving piece on its start square, then the captured pieces.
    removed: [u16; MAX_REMOVED],
    removed_len: u8,
}

impl Delta {
    /// The features that turn off.
    pub fn removed(&self) -> &[u16] {
        &self.removed[..self.removed_len as usize]
    }

    /// The same change seen from the other point of view ([`mirror_feature`] of each).
    #[inline]
    pub fn mirrored(&self) -> Delta {
        let mut d = self.clone();
        d.added[0] = mirror_feature(d.added[0] as usize) as u16;
        for f in &mut d.removed[..self.removed_len as usize] {
            *f = mirror_feature(*f as usize) as u16;
        }
        d
    }
}

/// The features `mv`, played in `before`, changes from `perspective`'s point of view.
///
/// A capture that ends on its own start square removes and adds the same feature (or, when it
/// crowns, a man feature for a king feature); both are listed, so applying the delta is always
/// "subtract the removed rows, add the added ones".
pub fn move_delta(before: &Position, mv: &Move, perspective: Color) -> Delta {
    let us = before.side_to_move();
    let was = if mv.is_king_move() { Role::King } else { Role::Man };
    let becomes = if mv.is_king_move() || mv.promotes() { Role::King } else { Role::Man };
    let mut removed = [0u16; MAX_REMOVED];
    removed[0] = feature(perspective, us, was, mv.from()) as u16;
    let mut n = 1;
    let kings = before.all_kings();
    for sq in mv.captured() {
        let role = if kings.contains(sq) { Role::King } else { Role::Man };
        if n < MAX_REMOVED {
            removed[n] = feature(perspective, !us, role, sq) as u16;
            n += 1;
        }
    }
    Delta { added: [feature(perspective, us, becomes, mv.to()) as u16], removed, removed_len: n as u8 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn active(pos: &Position, p: Color) -> Vec<usize> {
        let mut v = Vec::new();
        for_each_active(pos, p, |f| v.push(f));
        v.sort_unstable();
        v
    }

    #[test]
    fn start_position_features() {
        let pos = Position::start();
        let w = active(&pos, Color::White);
        assert_eq!(w.len(), 40);
        // White's men on 31..50 are own men on squares 31..50 (indices 30..49).
        assert_eq!(&w[..20], &(30..50).collect::<Vec<_>>()[..]);
        // Black's men on 1..20 are opponent men, kind 2.
        assert_eq!(&w[20..], &(100..120).collect::<Vec<_>>()[..]);
        // The position is symmetric: Black sees the same features.
        assert_eq!(active(&pos, Color::Black), w);
    }

    #[test]
    fn mirror_is_the_other_point_of_view() {
        let pos = Position::from_fen("W:W28,K33,45:B3,K19,24").unwrap();
        let mut mirrored: Vec<usize> = active(&pos, Color::White).into_iter().map(mirror_feature).collect();
        mirrored.sort_unstable();
        assert_eq!(mirrored, active(&pos, Color::Black));
        for f in 0..FEATURES {
            assert_eq!(mirror_feature(mirror_feature(f)), f);
        }
    }

    #[test]
    fn deltas_turn_one_position_into_the_next() {
        // Random games: applying each move's delta to the feature set gives the next position's.
        let mut state = 99u64;
        let mut next = move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as usize
        };
        let mut checked = 0;
        for _ in 0..60 {
            let mut pos = Position::start();
            for _ in 0..200 {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let mv = moves[next() % moves.len()];
                let after = pos.play(&mv);
                for p in [Color::White, Color::Black] {
                    let d = move_delta(&pos, &mv, p);
                    assert_eq!(move_delta(&pos, &mv, !p), d.mirrored());
                    let mut counts = vec![0i32; FEATURES];
                    for f in active(&pos, p) {
                        counts[f] += 1;
                    }
                    for &f in d.removed() {
                        counts[f as usize] -= 1;
                    }
                    counts[d.added[0] as usize] += 1;
                    let want: Vec<usize> = active(&after, p);
                    let got: Vec<usize> = (0..FEATURES).filter(|&f| counts[f] == 1).collect();
                    assert!(counts.iter().all(|&c| c == 0 || c == 1), "{pos:?} {mv:?}");
                    assert_eq!(got, want, "{pos:?} {mv:?}");
                    checked += 1;
                }
                pos = after;
            }
        }
        assert!(checked > 5000, "{checked}");
    }
}
