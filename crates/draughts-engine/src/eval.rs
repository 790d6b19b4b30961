//! The hand-made static evaluation.
//!
//! Every term is a handful of bitboard operations (shifts, masks and population counts), so the
//! evaluation costs a few dozen instructions and the search stays fast. All weights live in
//! [`Weights`]; the score is in centi-men (100 = one man) from the side to move's point of view.
//!
//! Terms, each computed for both sides and subtracted:
//! - material: men and kings;
//! - advancement (tempo): a bonus per man by how many rows it has advanced, growing toward the
//!   crowning row;
//! - centre: men on 22, 23, 24, 27, 28, 29;
//! - back-rank guard: men on the three middle squares of their own back row (47, 48, 49 for
//!   White; 2, 3, 4 for Black), which stop the opponent's men from crowning, while the opponent
//!   has no king yet;
//! - balance: a penalty for the difference between the men on the left and right halves;
//! - mobility: the number of one-step moves (men forward, kings in all four directions);
//! - a bonus for owning a king when the opponent has none;
//! - drawn endings: one lone king against at most three pieces, one of them a king, is a draw
//!   in practice (and the 16- and 5-move rules make it one), so the score is scaled down.

use draughts_core::{Bitboard, Color, Direction, Position, Square};

/// The weights of the evaluation, in centi-men.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Weights {
    /// A man.
    pub man: i32,
    /// A king.
    pub king: i32,
    /// Bonus for a man by rows advanced from its own back row (index 0 = back row; index 9, the
    /// crowning row, is never used because a man that gets there is a king).
    pub advancement: [i32; 10],
    /// Per man on the centre squares 22, 23, 24, 27, 28, 29.
    pub centre: i32,
    /// Per man on the middle squares of its own back row while the opponent has no king.
    pub back_rank: i32,
    /// Penalty per man of difference between the left and right halves of the board.
    pub balance: i32,
    /// Per one-step move (a man forward, a king in any direction).
    pub mobility: i32,
    /// Bonus for having at least one king when the opponent has none.
    pub king_unopposed: i32,
    /// In a lone king against at most three pieces including a king, the score is scaled to
    /// this many percent.
    pub drawn_ending_percent: i32,
}

impl Default for Weights {
    fn default() -> Weights {
        Weights {
            man: 100,
            king: 300,
            advancement: [0, 1, 2, 3, 4, 6, 8, 11, 15, 0],
            centre: 5,
            back_rank: 6,
            balance: 2,
            mobility: 1,
            king_unopposed: 50,
            drawn_ending_percent: 10,
        }
    }
}

const fn square_bit(n: u8) -> u64 {
    match Square::new(n) {
        Some(sq) => 1u64 << sq.bit(),
        None => panic!("not a square"),
    }
}

const fn mask_of(list: &[u8]) -> u64 {
    let mut m = 0;
    let mut i = 0;
    while i < list.len() {
        m |= square_bit(list[i]);
        i += 1;
    }
    m
}

/// Columns 0..=4, the left half as White sees the board.
const LEFT: u64 = {
    let mut m = 0;
    let mut n = 1;
    while n <= 50 {
        if let Some(sq) = Square::new(n) {
            if sq.col() < 5 {
                m |= 1u64 << sq.bit();
            }
        }
        n += 1;
    }
    m
};

const RIGHT: u64 = Bitboard::ALL.0 & !LEFT;
const CENTRE: u64 = mask_of(&[22, 23, 24, 27, 28, 29]);
const WHITE_GUARD: u64 = mask_of(&[47, 48, 49]);
const BLACK_GUARD: u64 = mask_of(&[2, 3, 4]);

/// The static evaluation of `pos` in centi-men from the side to move's point of view.
///
/// This builds the evaluator's tables on every call; the search builds them once
/// ([`Evaluator`]).
pub fn evaluate(pos: &Position, w: &Weights) -> i32 {
    Evaluator::new(w).evaluate(pos)
}

/// Most planes a per-square table needs (values up to 2^12 above the smallest).
const MAX_PLANES: usize = 12;

/// The weights compiled for speed: the per-square terms of a man (advancement and centre) are
/// summed into one table per colour and stored as bit planes, so that the sum over all men is a
/// few population counts: `sum = base * |men| + sum over k of 2^k * |men & plane_k|`.
#[derive(Clone, Debug)]
pub struct Evaluator {
    w: Weights,
    /// Per colour (White, Black): the smallest per-square value, and the planes of the
    /// values minus that.
    base: [i32; 2],
    planes: [[u64; MAX_PLANES]; 2],
    nplanes: [usize; 2],
}

impl Evaluator {
    /// Compiles `w`. Per-square values that spread over more than 2^12 centi-men are clamped.
    pub fn new(w: &Weights) -> Evaluator {
        let mut base = [0; 2];
        let mut planes = [[0; MAX_PLANES]; 2];
        let mut nplanes = [0; 2];
        for (ci, color) in [Color::White, Color::Black].into_iter().enumerate() {
            let value = |sq: Square| {
                let adv = match color {
                    Color::White => 9 - sq.row(),
                    Color::Black => sq.row(),
                } as usize;
                w.advancement[adv] + if CENTRE & (1 << sq.bit()) != 0 { w.centre } else { 0 }
            };
            let min = Square::all().map(value).min().unwrap_or(0);
            base[ci] = min;
            for sq in Square::all() {
                let v = (value(sq) - min).clamp(0, (1 << MAX_PLANES) - 1) as u32;
                for (k, plane) in planes[ci].iter_mut().enumerate() {
                    if v & (1 << k) != 0 {
                        *plane |= 1 << sq.bit();
                    }
                }
                nplanes[ci] = nplanes[ci].max((32 - v.leading_zeros()) as usize);
            }
        }
        Evaluator { w: w.clone(), base, planes, nplanes }
    }

    /// The weights this evaluator was built from.
    pub fn weights(&self) -> &Weights {
        &self.w
    }

    /// The static evaluation of `pos` in centi-men from the side to move's point of view.
    pub fn evaluate(&self, pos: &Position) -> i32 {
        self.evaluate_with_mobility(pos).0
    }

    /// The evaluation and the number of one-step moves of the side to move. When the side to
    /// move has no capture, zero one-step moves means no legal move at all (a loss), which the
    /// search uses to score blocked positions exactly.
    #[inline]
    pub fn evaluate_with_mobility(&self, pos: &Position) -> (i32, u32) {
        let w = &self.w;
        let empty = pos.empty_squares().0;
        let (wm, wk) = (pos.men(Color::White).0, pos.kings(Color::White).0);
        let (bm, bk) = (pos.men(Color::Black).0, pos.kings(Color::Black).0);
        let (ws, wmob) = self.side(Color::White, wm, wk, bk != 0, empty);
        let (bs, bmob) = self.side(Color::Black, bm, bk, wk != 0, empty);
        let mut score = ws - bs;

        let (nw, nb) = ((wm | wk).count_ones(), (bm | bk).count_ones());
        let lone_king = |n: u32, k: u64| n == 1 && k != 0;
        if (lone_king(nb, bk) && nw <= 3 && wk != 0) || (lone_king(nw, wk) && nb <= 3 && bk != 0) {
            score = score * w.drawn_ending_percent / 100;
        }
        match pos.side_to_move() {
            Color::White => (score, wmob),
            Color::Black => (-score, bmob),
        }
    }

    /// One side's terms (positive = good for that side) and its number of one-step moves.
    #[inline(always)]
    fn side(&self, color: Color, men: u64, kings: u64, opp_has_kings: bool, empty: u64) -> (i32, u32) {
        let w = &self.w;
        let ci = color as usize;
        let n_men = men.count_ones() as i32;
        let mut s = w.man * n_men + w.king * kings.count_ones() as i32;
        if men != 0 {
            let mut squares = self.base[ci] * n_men;
            for (k, plane) in self.planes[ci][..self.nplanes[ci]].iter().enumerate() {
                squares += ((men & plane).count_ones() as i32) << k;
            }
            s += squares;
            if !opp_has_kings {
                let guard = match color {
                    Color::White => WHITE_GUARD,
                    Color::Black => BLACK_GUARD,
                };
                s += w.back_rank * (men & guard).count_ones() as i32;
            }
            let (l, r) = ((men & LEFT).count_ones() as i32, (men & RIGHT).count_ones() as i32);
            s -= w.balance * (l - r).abs();
        }
        let (f1, f2) = match color {
            Color::White => (Direction::UpLeft, Direction::UpRight),
            Color::Black => (Direction::DownLeft, Direction::DownRight),
        };
        let mut mob = (step(men, f1) & empty).count_ones() + (step(men, f2) & empty).count_ones();
        if kings != 0 {
            for d in Direction::ALL {
                mob += (step(kings, d) & empty).count_ones();
            }
            if !opp_has_kings {
                s += w.king_unopposed;
            }
        }
        s += w.mobility * mob as i32;
        (s, mob)
    }
}

#[inline(always)]
fn step(b: u64, d: Direction) -> u64 {
    Bitboard(b).shift(d).0
}

/// The same evaluation written plainly, term by term, for the tests to compare against.
#[cfg(test)]
fn evaluate_plain(pos: &Position, w: &Weights) -> i32 {
    let side = |color: Color| {
        let men = pos.men(color);
        let kings = pos.kings(color);
        let opp_kings = pos.kings(!color).any();
        let mut s = w.man * men.count() as i32 + w.king * kings.count() as i32;
        for sq in men {
            let adv = match color {
                Color::White => 9 - sq.row(),
                Color::Black => sq.row(),
            } as usize;
            s += w.advancement[adv];
            if [22, 23, 24, 27, 28, 29].contains(&sq.number()) {
                s += w.centre;
            }
            let guard = match color {
                Color::White => [47, 48, 49],
                Color::Black => [2, 3, 4],
            };
            if !opp_kings && guard.contains(&sq.number()) {
                s += w.back_rank;
            }
        }
        let left = men.squares().filter(|sq| sq.col() < 5).count() as i32;
        s -= w.balance * (left - (men.count() as i32 - left)).abs();
        let mut mob = 0;
        let empty = pos.empty_squares();
        let forward = match color {
            Color::White => [Direction::UpLeft, Direction::UpRight],
            Color::Black => [Direction::DownLeft, Direction::DownRight],
        };
        for sq in men {
            mob += forward.iter().filter(|&&d| Bitboard::from_square(sq).shift(d).intersects(empty)).count();
        }
        for sq in kings {
            mob += Direction::ALL.iter().filter(|&&d| Bitboard::from_square(sq).shift(d).intersects(empty)).count();
        }
        s += w.mobility * mob as i32;
        if kings.any() && !opp_kings {
            s += w.king_unopposed;
        }
        s
    };
    let mut score = side(Color::White) - side(Color::Black);
    let lone = |c: Color| pos.pieces(c).count() == 1 && pos.kings(c).any();
    for c in [Color::White, Color::Black] {
        if lone(c) && pos.pieces(!c).count() <= 3 && pos.kings(!c).any() {
            score = score * w.drawn_ending_percent / 100;
            break;
        }
    }
    match pos.side_to_move() {
        Color::White => score,
        Color::Black => -score,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The squares of board row `r` (row 0 holds squares 1..=5).
    const fn row_mask(r: u8) -> u64 {
        let mut m = 0;
        let mut k = 1;
        while k <= 5 {
            m |= square_bit(r * 5 + k);
            k += 1;
        }
        m
    }

    const ROWS: [u64; 10] = {
        let mut rows = [0; 10];
        let mut r = 0;
        while r < 10 {
            rows[r] = row_mask(r as u8);
            r += 1;
        }
        rows
    };

    #[test]
    fn masks() {
        assert_eq!(ROWS.iter().map(|r| r.count_ones()).sum::<u32>(), 50);
        assert_eq!(ROWS.iter().fold(0, |a, r| a | r), Bitboard::ALL.0);
        assert_eq!(LEFT.count_ones(), 25);
        assert_eq!(RIGHT.count_ones(), 25);
        // Square 46 is column 0, square 5 column 9.
        assert_ne!(LEFT & square_bit(46), 0);
        assert_ne!(RIGHT & square_bit(5), 0);
        // The guard and centre sets are mirror images under the 180-degree turn.
        let flip = |m: u64| Bitboard(m).squares().map(Square::flip).collect::<Bitboard>().0;
        assert_eq!(flip(WHITE_GUARD), BLACK_GUARD);
        assert_eq!(flip(CENTRE), CENTRE);
        assert_eq!(flip(LEFT), RIGHT);
    }

    #[test]
    fn start_is_balanced_and_material_counts() {
        let w = Weights::default();
        assert_eq!(evaluate(&Position::start(), &w), 0);
        // One extra white man: about a man, from either side's point of view.
        let pos = Position::from_fen("W:W31-50:B1-19").unwrap();
        let s = evaluate(&pos, &w);
        assert!((60..=160).contains(&s), "{s}");
        assert_eq!(evaluate(&pos.with_side_to_move(Color::Black), &w), -s);
    }

    #[test]
    fn colour_symmetry() {
        let w = Weights::default();
        for fen in [
            "W:W31-50:B1-20",
            "B:W28,32,33,37,K5:B12,13,19,23,K46",
            "W:W25,30,34,35,40,44,45,49:B3,8,9,13,14,18,20",
            "W:WK50:BK1,3",
        ] {
            let p = Position::from_fen(fen).unwrap();
            assert_eq!(evaluate(&p, &w), evaluate(&p.flipped(), &w), "{fen}");
        }
    }

    #[test]
    fn fast_evaluation_matches_the_plain_one() {
        // Positions from random play (a fixed linear congruential stream).
        let mut state = 12345u64;
        let mut next = move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as usize
        };
        let mut weights = Weights::default();
        for round in 0..3 {
            if round == 2 {
                // Odd weights, negative per-square values included.
                weights.advancement = [-7, 3, 0, 9, -2, 40, 1, 0, 77, 0];
                weights.centre = -13;
            }
            let ev = Evaluator::new(&weights);
            for _ in 0..40 {
                let mut pos = Position::start();
                for _ in 0..next() % 120 {
                    let moves = pos.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    pos = pos.play(&moves[next() % moves.len()]);
                    assert_eq!(ev.evaluate(&pos), evaluate_plain(&pos, &weights), "{pos:?}");
                }
            }
        }
    }

    #[test]
    fn drawn_endings_are_scaled_down() {
        let w = Weights::default();
        let three_kings = Position::from_fen("W:WK46,K47,K48:BK1").unwrap();
        let four_kings = Position::from_fen("W:WK46,K47,K48,K49:BK1").unwrap();
        assert!(evaluate(&three_kings, &w) < 100);
        assert!(evaluate(&four_kings, &w) > 500);
    }
}
