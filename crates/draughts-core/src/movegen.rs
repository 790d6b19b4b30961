//! Legal move generation under the FMJD rules.
//!
//! Captures are found by a depth-first search from every piece that can capture. While a capture
//! is under way the captured pieces stay on the board: they block the way and cannot be jumped
//! twice (the Turkish-strike rule); the moving piece has left its start square, so it may pass
//! over or land on it. Only the captures that take the most pieces are kept (a king counts as one
//! piece), and paths that reach the same (from, to, captured set) are kept once.

use crate::{Bitboard, Color, Direction, Move, MoveList, Position, Rules, Square};

#[inline(always)]
fn step(b: u64, d: Direction) -> u64 {
    Bitboard(b).shift(d).0
}

#[inline(always)]
const fn forward(color: Color) -> [Direction; 2] {
    match color {
        Color::White => [Direction::UpLeft, Direction::UpRight],
        Color::Black => [Direction::DownLeft, Direction::DownRight],
    }
}

/// Depth-first capture search for one moving piece.
struct CaptureSearch<'a> {
    /// Opponent pieces, including the ones captured so far.
    opp: u64,
    /// Empty squares, with the moving piece's start square counted as empty.
    empty: u64,
    /// The moving side's promotion row.
    promo: u64,
    promote_in_capture: bool,
    from: Square,
    /// Fewest pieces a capture must take to be kept (the most found so far, at least one).
    best: &'a mut u32,
    out: &'a mut MoveList,
    /// Count single captures instead of listing them (they need no de-duplication).
    count_only: bool,
    /// Single captures counted in `count_only` mode.
    counted: u32,
}

impl CaptureSearch<'_> {
    fn man(&mut self, s: u64, captured: u64) {
        let avail = self.opp & !captured;
        let mut extended = false;
        // The four directions written out: this is the hottest loop of the generator.
        macro_rules! dir {
            ($d:expr) => {{
                let m = step(s, $d) & avail;
                if m != 0 {
                    let l = step(m, $d) & self.empty;
                    if l != 0 {
                        extended = true;
                        if self.promote_in_capture && l & self.promo != 0 {
                            self.king(l, captured | m, true);
                        } else {
                            self.man(l, captured | m);
                        }
                    }
                }
            }};
        }
        dir!(Direction::UpLeft);
        dir!(Direction::UpRight);
        dir!(Direction::DownLeft);
        dir!(Direction::DownRight);
        if !extended && captured != 0 {
            // FMJD: a man is crowned only if its move ends on the far row.
            self.record(s, captured, false, s & self.promo != 0);
        }
    }

    /// `crowned`: a man that was crowned during this capture (only under
    /// `Rules::promote_during_capture`) and now continues as a king.
    fn king(&mut self, s: u64, captured: u64, crowned: bool) {
        let mut extended = false;
        for d in Direction::ALL {
            let mut x = step(s, d);
            while x & self.empty != 0 {
                x = step(x, d);
            }
            if x & self.opp & !captured == 0 {
                continue;
            }
            let mut l = step(x, d) & self.empty;
            while l != 0 {
                extended = true;
                self.king(l, captured | x, crowned);
                l = step(l, d) & self.empty;
            }
        }
        if !extended && captured != 0 {
            self.record(s, captured, !crowned, crowned);
        }
    }

    #[inline]
    fn record(&mut self, to: u64, captured: u64, by_king: bool, promotes: bool) {
        let n = captured.count_ones();
        if n < *self.best {
            return;
        }
        if n > *self.best {
            *self.best = n;
            self.out.clear();
            self.counted = 0;
        }
        if n == 1 && self.count_only {
            self.counted += 1;
            return;
        }
        let to = Square::from_bit_unchecked(to.trailing_zeros() as u8);
        let mv = Move::new(self.from, to, Bitboard(captured), by_king, promotes);
        // One capture can be reached by one path only; from two on, a ring can be run both ways.
        if n >= 2
            && self
                .out
                .iter()
                .any(|m| m.to() == mv.to() && m.from() == mv.from() && m.captured() == mv.captured())
        {
            return;
        }
        self.out.push(mv);
    }
}

impl Position {
    /// Whether the side to move has a capture (and so must capture).
    #[inline]
    pub fn has_capture(&self) -> bool {
        let us = self.side_to_move();
        let opp = self.pieces(!us).0;
        let empty = self.empty_squares().0;
        let men = self.men(us).0;
        let kings = self.kings(us).0;
        for d in Direction::ALL {
            let mut reach = men | kings;
            let mut x = kings;
            loop {
                x = step(x, d) & empty;
                if x == 0 {
                    break;
                }
                reach |= x;
            }
            if step(step(reach, d) & opp, d) & empty != 0 {
                return true;
            }
        }
        false
    }

    /// The legal moves under the FMJD rules.
    #[inline]
    pub fn legal_moves(&self) -> MoveList {
        let mut out = MoveList::new();
        self.generate_moves(false, &mut out);
        out
    }

    /// The legal moves under `rules` (only `promote_during_capture` changes them).
    #[inline]
    pub fn legal_moves_with(&self, rules: &Rules) -> MoveList {
        let mut out = MoveList::new();
        self.generate_moves(rules.promote_during_capture, &mut out);
        out
    }

    /// Fills `out` (cleared first) with the legal moves.
    pub fn generate_moves(&self, promote_during_capture: bool, out: &mut MoveList) {
        out.clear();
        if self.has_capture() {
            self.generate_captures(promote_during_capture, out);
        } else {
            self.generate_quiet(out);
        }
    }

    /// The number of legal moves under the FMJD rules, counting quiet moves without listing them.
    #[inline]
    pub fn count_legal_moves(&self) -> usize {
        self.count_legal_moves_with(false)
    }

    /// The number of legal moves, counting quiet moves without listing them.
    pub fn count_legal_moves_with(&self, promote_during_capture: bool) -> usize {
        if self.has_capture() {
            if !promote_during_capture {
                if let Some(n) = self.count_single_man_captures() {
                    return n;
                }
            }
            let mut out = MoveList::new();
            return self.captures(promote_during_capture, &mut out, true);
        }
        let us = self.side_to_move();
        let empty = self.empty_squares().0;
        let men = self.men(us).0;
        let kings = self.kings(us).0;
        let mut n = 0;
        for d in forward(us) {
            n += (step(men, d) & empty).count_ones();
        }
        if kings != 0 {
            for d in Direction::ALL {
                let mut x = kings;
                loop {
                    x = step(x, d) & empty;
                    if x == 0 {
                        break;
                    }
                    n += x.count_ones();
                }
            }
        }
        n as usize
    }

    /// Counts the captures with bitboards alone when the side to move has no king and no man's
    /// first jump can be followed by a second: then every legal capture takes one piece and is
    /// one (man, direction) pair. Returns `None` when that does not hold.
    ///
    /// A second jump from the landing square `l` of a jump in direction `d` can only go in one of
    /// the three other directions than back: going back would meet the piece just taken. In those
    /// directions neither that piece nor the vacated start square can be met within two steps, so
    /// testing against the plain board is exact.
    #[inline]
    fn count_single_man_captures(&self) -> Option<usize> {
        let us = self.side_to_move();
        if self.kings(us).any() {
            return None;
        }
        let men = self.men(us).0;
        let opp = self.pieces(!us).0;
        let empty = self.empty_squares().0;
        let mut total = 0;
        for d in Direction::ALL {
            let r = d.reverse();
            let jumpers = men & step(step(empty, r) & opp, r);
            if jumpers == 0 {
                continue;
            }
            total += jumpers.count_ones() as usize;
            let landings = step(step(jumpers, d), d);
            for d2 in Direction::ALL {
                if d2 != r && step(step(landings, d2) & opp, d2) & empty != 0 {
                    return None;
                }
            }
        }
        Some(total)
    }

    /// Perft to depth 2 (FMJD rules) with the quiet man moves played straight from bitboards,
    /// without building `Move`s: the last interior level of every perft, so the hottest.
    pub(crate) fn perft2(&self) -> u64 {
        if self.has_capture() || self.kings(self.side_to_move()).any() {
            let mut moves = MoveList::new();
            self.generate_moves(false, &mut moves);
            return moves.iter().map(|m| self.play(m).count_legal_moves() as u64).sum();
        }
        let us = self.side_to_move();
        let empty = self.empty_squares().0;
        let men = self.men(us).0;
        let promo = us.promotion_row().0;
        let mut total = 0;
        for d in forward(us) {
            let mut tos = step(men, d) & empty;
            while tos != 0 {
                let to = tos & tos.wrapping_neg();
                tos ^= to;
                let from = Bitboard(to).shift(d.reverse()).0;
                total += self.play_quiet_man(from, to, to & promo != 0).count_legal_moves() as u64;
            }
        }
        total
    }

    /// Whether `mv` is legal here under the FMJD rules.
    pub fn is_legal(&self, mv: &Move) -> bool {
        self.legal_moves().contains(mv)
    }

    fn generate_captures(&self, promote_in_capture: bool, out: &mut MoveList) {
        self.captures(promote_in_capture, out, false);
    }

    /// Finds the legal captures: lists them in `out`, or with `count_only` lists only the
    /// multiple captures (which need de-duplication) and counts the single ones. Returns the
    /// number of legal captures.
    fn captures(&self, promote_in_capture: bool, out: &mut MoveList, count_only: bool) -> usize {
        let us = self.side_to_move();
        let opp = self.pieces(!us).0;
        let empty = self.empty_squares().0;
        let promo = us.promotion_row().0;
        let men = self.men(us).0;
        // Only men with an opponent piece next to them and an empty square behind it can start a
        // capture; finding them with four shifts saves a search from every other man.
        let mut capturers = 0;
        for d in Direction::ALL {
            let r = d.reverse();
            capturers |= step(step(empty, r) & opp, r);
        }
        let mut best = 1;
        let mut search = CaptureSearch {
            opp,
            empty,
            promo,
            promote_in_capture,
            from: Square::from_bit_unchecked(0),
            best: &mut best,
            out,
            count_only,
            counted: 0,
        };
        let mut starts = (men & capturers) | self.kings(us).0;
        while starts != 0 {
            let s = starts & starts.wrapping_neg();
            starts ^= s;
            search.from = Square::from_bit_unchecked(s.trailing_zeros() as u8);
            search.empty = empty | s;
            if men & s != 0 {
                search.man(s, 0);
            } else {
                search.king(s, 0, false);
            }
        }
        search.counted as usize + search.out.len()
    }

    fn generate_quiet(&self, out: &mut MoveList) {
        let us = self.side_to_move();
        let empty = self.empty_squares().0;
        let promo = us.promotion_row().0;
        let men = self.men(us).0;
        for d in forward(us) {
            let mut tos = step(men, d) & empty;
            while tos != 0 {
                let to_bit = tos.trailing_zeros() as u8;
                tos &= tos - 1;
                let from_bit = (to_bit as i32 - d.offset()) as u8;
                out.push(Move::new(
                    Square::from_bit_unchecked(from_bit),
                    Square::from_bit_unchecked(to_bit),
                    Bitboard::EMPTY,
                    false,
                    (1u64 << to_bit) & promo != 0,
                ));
            }
        }
        for from in self.kings(us) {
            let s = Bitboard::from_square(from).0;
            for d in Direction::ALL {
                let mut x = step(s, d) & empty;
                while x != 0 {
                    let to = Square::from_bit_unchecked(x.trailing_zeros() as u8);
                    out.push(Move::new(from, to, Bitboard::EMPTY, true, false));
                    x = step(x, d) & empty;
                }
            }
        }
    }

    /// Every landing path of `mv`: the squares the moving piece stands on, from `mv.from()` to
    /// `mv.to()`, one more than the number of captured pieces. A quiet move has the one path
    /// `[from, to]`. Several paths come back when the same pieces can be taken in different orders;
    /// none when `mv` is not a legal move's shape here.
    pub fn landing_paths(&self, mv: &Move, rules: &Rules) -> Vec<Vec<Square>> {
        if !mv.is_capture() {
            return vec![vec![mv.from(), mv.to()]];
        }
        let us = self.side_to_move();
        let s = Bitboard::from_square(mv.from()).0;
        let mut walker = PathWalker {
            opp: self.pieces(!us).0,
            empty: self.empty_squares().0 | s,
            promo: us.promotion_row().0,
            promote_in_capture: rules.promote_during_capture,
            target: mv.captured().0,
            to: Bitboard::from_square(mv.to()).0,
            path: vec![mv.from()],
            found: Vec::new(),
        };
        if !self.pieces(us).contains(mv.from()) {
            return Vec::new();
        }
        let king = self.all_kings().contains(mv.from());
        walker.walk(s, 0, king);
        walker.found
    }
}

/// Enumerates the landing paths that take exactly a given set of pieces.
struct PathWalker {
    opp: u64,
    empty: u64,
    promo: u64,
    promote_in_capture: bool,
    target: u64,
    to: u64,
    path: Vec<Square>,
    found: Vec<Vec<Square>>,
}

impl PathWalker {
    fn walk(&mut self, s: u64, captured: u64, king: bool) {
        if captured == self.target {
            if s == self.to {
                self.found.push(self.path.clone());
            }
            return;
        }
        for d in Direction::ALL {
            let (x, mut l) = if king {
                let mut x = step(s, d);
                while x & self.empty != 0 {
                    x = step(x, d);
                }
                (x, 0)
            } else {
                (step(s, d), 0)
            };
            if x & self.opp & self.target & !captured == 0 {
                continue;
            }
            l |= step(x, d) & self.empty;
            while l != 0 {
                let crowned = !king && self.promote_in_capture && l & self.promo != 0;
                self.path.push(Square::from_bit_unchecked(l.trailing_zeros() as u8));
                self.walk(l, captured | x, king || crowned);
                self.path.pop();
                if !king {
                    break;
                }
                l = step(l, d) & self.empty;
            }
        }
    }
}
