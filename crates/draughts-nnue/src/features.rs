//! The input features: which piece stands on which square, from one side's point of view, and
//! (with [`FeatureSet::patterns`]) which local pattern each block of the board shows.
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
//! # Patterns
//! With patterns, the board (as the point of view sees it) is covered by 16 overlapping blocks of
//! 4 x 4 squares (rows and columns 0-3, 2-5, 4-7 and 6-9), each holding 8 dark squares. A block
//! shows one of 3^8 = 6561 configurations: each of its squares, in increasing order of (relative)
//! square number, is a digit, 0 empty, 1 an own piece, 2 an opponent's piece (men and kings
//! alike: the piece-square features tell them apart). Block `b`'s configuration `c` is feature
//!
//! ```text
//! 200 + b * 6561 + c          c = sum of digit_i * 3^i
//! ```
//!
//! so every position has exactly one active feature per block (Scan's pattern tables, as inputs
//! of the first layer: the interactions of neighbouring pieces, which piece-square features reach
//! only through the small dense layers). Turning the board maps block `b` onto block `15 - b`
//! with its squares in reverse order, and own and opponent swap ([`mirror_feature`]).
//!
//! The network keeps one accumulator per point of view (White's and Black's), so a move updates
//! both and the side to move only decides their order at evaluation time. A move changes few
//! features ([`FeatureSet::move_delta`]): the moving piece leaves its square (as a man or a king)
//! and lands (as a king if it crowns), every captured piece leaves its square, and each block
//! holding one of those squares changes configuration.

use draughts_core::{Bitboard, Color, Move, Position, Role, Square};

/// Squares of the board.
pub const SQUARES: usize = 50;
/// Features per point of view: 4 kinds x 50 squares.
pub const FEATURES: usize = 4 * SQUARES;
/// Most features active in one position for one point of view (one piece per square, at most
/// 20 per side in any reachable position; 50 bounds every input).
pub const MAX_ACTIVE: usize = SQUARES;
/// Most piece-square features a move removes: the moving piece and at most 20 captured pieces.
pub const MAX_REMOVED: usize = 21;
/// Pattern blocks (4 x 4 squares, 8 of them dark) covering the board.
pub const BLOCKS: usize = 16;
/// Dark squares of a block.
pub const BLOCK_SQUARES: usize = 8;
/// Configurations of one block: 3^8.
pub const CONFIGS: usize = 6561;
/// Pattern features per point of view: one per configuration of each block.
pub const PATTERN_FEATURES: usize = BLOCKS * CONFIGS;
/// Most features a move turns on: the moving piece and one configuration per block.
pub const MAX_ADDED: usize = 1 + BLOCKS;
/// Most features a move turns off.
pub const MAX_DELTA_REMOVED: usize = MAX_REMOVED + BLOCKS;

/// The dark squares of each block, as zero-based (relative) square indices in increasing order:
/// block `b` covers rows `2 (b / 4)..+4` and columns `2 (b % 4)..+4`.
pub const BLOCK_LAYOUT: [[u8; BLOCK_SQUARES]; BLOCKS] = block_layout();

const fn block_layout() -> [[u8; BLOCK_SQUARES]; BLOCKS] {
    let mut out = [[0u8; BLOCK_SQUARES]; BLOCKS];
    let mut b = 0;
    while b < BLOCKS {
        let (top, left) = ((b / 4) * 2, (b % 4) * 2);
        let (mut idx, mut n) = (0, 0);
        while idx < SQUARES {
            // Square idx + 1: row idx / 5, column as `Square::col` numbers it.
            let row = idx / 5;
            let col = 2 * (idx % 5) + if row % 2 == 0 { 1 } else { 0 };
            if row >= top && row < top + 4 && col >= left && col < left + 4 {
                out[b][n] = idx as u8;
                n += 1;
            }
            idx += 1;
        }
        b += 1;
    }
    out
}

/// For each (relative) square index, the blocks holding it (a bit per block).
const BLOCKS_OF: [u16; SQUARES] = blocks_of();

const fn blocks_of() -> [u16; SQUARES] {
    let mut out = [0u16; SQUARES];
    let mut b = 0;
    while b < BLOCKS {
        let mut i = 0;
        while i < BLOCK_SQUARES {
            out[BLOCK_LAYOUT[b][i] as usize] |= 1 << b;
            i += 1;
        }
        b += 1;
    }
    out
}

/// Square `index + 1` (in a const context).
const fn square_at(index: u8) -> Square {
    match Square::new(index + 1) {
        Some(sq) => sq,
        None => panic!("squares are 1..=50"),
    }
}

/// Which inputs a network reads: the piece-square features, and the block patterns or not.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FeatureSet {
    /// The 16 block patterns after the 200 piece-square features (see the module docs).
    pub patterns: bool,
}

impl FeatureSet {
    /// The piece-square features alone (every network before patterns).
    pub const PIECES: FeatureSet = FeatureSet { patterns: false };
    /// Piece squares and block patterns.
    pub const PATTERNS: FeatureSet = FeatureSet { patterns: true };

    /// Features per point of view.
    pub const fn len(self) -> usize {
        FEATURES + if self.patterns { PATTERN_FEATURES } else { 0 }
    }

    /// Never empty (the piece squares are always there).
    pub const fn is_empty(self) -> bool {
        false
    }

    /// Most features active in one position for one point of view.
    pub const fn max_active(self) -> usize {
        MAX_ACTIVE + if self.patterns { BLOCKS } else { 0 }
    }

    /// The groups of features of which at most one is active in any position: the four kinds
    /// of piece on each square, then each block's configurations. (A first-layer output can
    /// reach at most its bias plus, for each group, the largest magnitude of its weights.)
    pub fn exclusive_groups(self) -> Vec<Vec<usize>> {
        let squares = (0..SQUARES).map(|sq| (0..4).map(|kind| kind * SQUARES + sq).collect());
        let blocks = (0..if self.patterns { BLOCKS } else { 0 }).map(|b| (0..CONFIGS).map(|c| pattern_feature(b, c)).collect());
        squares.chain(blocks).collect()
    }

    /// Calls `f` with every active feature of `pos` from `perspective`'s point of view: the
    /// piece squares ([`for_each_active`]), then one configuration per block in block order.
    pub fn for_each_active(self, pos: &Position, perspective: Color, mut f: impl FnMut(usize)) {
        for_each_active(pos, perspective, &mut f);
        if self.patterns {
            let (own, opp) = (pos.pieces(perspective), pos.pieces(!perspective));
            for b in 0..BLOCKS {
                f(pattern_feature(b, block_config(b, perspective, own, opp)));
            }
        }
    }

    /// The features `mv`, played in `before`, changes from `perspective`'s point of view.
    pub fn move_delta(self, before: &Position, mv: &Move, perspective: Color) -> Delta {
        let mut d = move_delta(before, mv, perspective);
        if self.patterns {
            pattern_changes(before, mv, perspective, |b, old, new| d.push_pattern(pattern_feature(b, old), pattern_feature(b, new)));
        }
        d
    }

    /// The piece-square changes of `mv`, played in `before`, from White's point of view and from
    /// Black's, in one pass, written into `out` (only the entries in use: zeroing the two
    /// 224-byte [`Delta`]s this once filled was about a quarter of an update's own time). With
    /// patterns, `configs`, the blocks' configurations in `before` ([`block_configs`]), becomes
    /// those after the move (sums of digits, not readings of the board); the blocks' rows are not
    /// in the changes: a network adds them when it evaluates ([`pattern_rows`]), 16 rows a point
    /// of view where a move's changes were about 12 and an evaluation followed 2.6 updates on
    /// average in a search.
    #[inline]
    pub fn move_deltas_from(self, configs: &mut BlockConfigs, before: &Position, mv: &Move, out: &mut PieceDeltas) {
        let [white, black] = &mut out.removed;
        let (added, n) = piece_changes(before, mv, Color::White, white);
        for (m, &f) in black.iter_mut().zip(&white[..n]) {
            *m = mirror_piece_feature(f as usize) as u32;
        }
        out.added = [added, mirror_piece_feature(added as usize) as u32];
        out.removed_len = n as u8;
        if self.patterns {
            play_on_blocks(configs, before, mv);
        }
    }
}

/// The piece-square features a move changes from both points of view (White's, then Black's):
/// what [`FeatureSet::move_deltas_from`] gives an accumulator update. One feature turns on (the
/// moving piece on its landing square), the moving piece's start square and the captured
/// pieces turn off.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PieceDeltas {
    added: [u32; 2],
    removed: [[u32; MAX_REMOVED]; 2],
    removed_len: u8,
}

impl Default for PieceDeltas {
    fn default() -> PieceDeltas {
        PieceDeltas { added: [0; 2], removed: [[0; MAX_REMOVED]; 2], removed_len: 0 }
    }
}

impl PieceDeltas {
    /// The features that turn on and off for point of view `p` (0: White, 1: Black).
    #[inline]
    pub fn pov(&self, p: usize) -> (&[u32], &[u32]) {
        (std::slice::from_ref(&self.added[p]), &self.removed[p][..self.removed_len as usize])
    }

    /// The number of pieces the move captures.
    #[inline]
    pub fn captured(&self) -> usize {
        self.removed_len as usize - 1
    }
}

/// Each block's configuration from White's point of view (Black sees block `15 - b` in
/// configuration `MIRRORED_CONFIG[c]`), kept with an accumulator so that
/// [`FeatureSet::move_deltas_from`] need not read the blocks from the board.
pub type BlockConfigs = [u16; BLOCKS];

/// The configurations of `pos`'s blocks from White's point of view ([`BlockConfigs`]).
pub fn block_configs(pos: &Position) -> BlockConfigs {
    let (own, opp) = (pos.pieces(Color::White), pos.pieces(Color::Black));
    std::array::from_fn(|b| block_config(b, Color::White, own, opp) as u16)
}

/// The rows of the pattern table (features from [`FEATURES`] on, less [`FEATURES`]) that the
/// blocks in `configs` ([`BlockConfigs`], White's point of view) turn on for `perspective`: one
/// per block, in block order for White, mirrored by table for Black. Configurations out of range
/// give wrong rows, never rows outside the table.
#[inline]
pub fn pattern_rows(configs: &BlockConfigs, perspective: Color) -> [u32; BLOCKS] {
    std::array::from_fn(|b| {
        let c = (configs[b] as usize).min(CONFIGS - 1);
        let f = match perspective {
            Color::White => pattern_feature(b, c),
            Color::Black => mirrored_pattern(b, c),
        };
        (f - FEATURES) as u32
    })
}

/// Turns `configs`, the blocks' configurations in `before` ([`BlockConfigs`]), into those after
/// `mv`. A block's configuration changes by
/// a sum of digits (the pieces that leave or land on its squares, times their place value), so
/// the blocks are not read from the board.
#[inline]
fn play_on_blocks(configs: &mut BlockConfigs, before: &Position, mv: &Move) {
    // White's digits: 1 for a White piece, 2 for a Black one. Sums wrap (a square's digit
    // leaves before another's lands); every block ends in 0..CONFIGS.
    let (mover, victim) = if before.side_to_move() == Color::White { (1u16, 2u16) } else { (2, 1) };
    let (from, to) = (mv.from().index(), mv.to().index());
    for b in 0..BLOCKS {
        configs[b] = configs[b].wrapping_add(mover.wrapping_mul(DIGITS[to][b].wrapping_sub(DIGITS[from][b])));
    }
    for sq in mv.captured() {
        let s = sq.index();
        for b in 0..BLOCKS {
            configs[b] = configs[b].wrapping_sub(victim * DIGITS[s][b]);
        }
    }
}

/// The pattern feature Black sees for White's block `b` in configuration `config` (block
/// `15 - b`, mirrored).
#[inline]
fn mirrored_pattern(b: usize, config: usize) -> usize {
    pattern_feature(BLOCKS - 1 - b, MIRRORED_CONFIG[config] as usize)
}

/// `DIGITS[s][b]`: the place value (`3^i`) of square index `s` in block `b` (White's point of
/// view), 0 where the block does not hold it.
const DIGITS: [[u16; BLOCKS]; SQUARES] = digits();

const fn digits() -> [[u16; BLOCKS]; SQUARES] {
    let mut out = [[0u16; BLOCKS]; SQUARES];
    let mut b = 0;
    while b < BLOCKS {
        let mut i = 0;
        while i < BLOCK_SQUARES {
            out[BLOCK_LAYOUT[b][i] as usize][b] = 3u16.pow(i as u32);
            i += 1;
        }
        b += 1;
    }
    out
}

/// Calls `f(b, old, new)` for each block `b` whose configuration (from `perspective`'s point of
/// view) `mv` changes from `old` to `new`, in block order.
#[inline]
fn pattern_changes(before: &Position, mv: &Move, perspective: Color, mut f: impl FnMut(usize, usize, usize)) {
    // The blocks of the squares that change, and both sides' pieces after the move.
    let us = before.side_to_move();
    let rel = |sq: Square| relative_square(perspective, sq).index();
    let mut blocks = BLOCKS_OF[rel(mv.from())] | BLOCKS_OF[rel(mv.to())];
    let mut theirs = before.pieces(!us);
    for sq in mv.captured() {
        blocks |= BLOCKS_OF[rel(sq)];
        theirs = theirs.without(sq);
    }
    let ours = before.pieces(us).without(mv.from()).with(mv.to());
    let (own_before, opp_before) = (before.pieces(perspective), before.pieces(!perspective));
    let (own_after, opp_after) = if perspective == us { (ours, theirs) } else { (theirs, ours) };
    while blocks != 0 {
        let b = blocks.trailing_zeros() as usize;
        blocks &= blocks - 1;
        let (old, new) = (block_config(b, perspective, own_before, opp_before), block_config(b, perspective, own_after, opp_after));
        if old != new {
            f(b, old, new);
        }
    }
}

/// The feature of block `b` in configuration `config`.
#[inline]
pub fn pattern_feature(b: usize, config: usize) -> usize {
    FEATURES + b * CONFIGS + config
}

/// The configuration of block `b` as `perspective` sees it, `own` and `opp` being its pieces and
/// the opponent's (board squares).
///
/// A block's squares come in four pairs of neighbours in a row, and neighbours in a row are
/// neighbouring bits of a bitboard: the block's 8 bits are four shifts of two bits, and a table
/// turns the byte into base 3. Black sees block `b` where White sees block `15 - b`, its squares
/// in reverse order (a second table).
#[inline]
pub fn block_config(b: usize, perspective: Color, own: Bitboard, opp: Bitboard) -> usize {
    let (shifts, table) = match perspective {
        Color::White => (&PAIR_SHIFTS[b], &BASE3),
        Color::Black => (&PAIR_SHIFTS[BLOCKS - 1 - b], &BASE3_REVERSED),
    };
    let gather = |bits: u64| {
        let mut byte = 0;
        for (k, &shift) in shifts.iter().enumerate() {
            byte |= ((bits >> shift) & 3) << (2 * k);
        }
        byte as usize
    };
    table[gather(own.0)] as usize + 2 * table[gather(opp.0)] as usize
}

/// For each block (White's point of view), the bit of the first square of each of its four
/// pairs (squares `2k` and `2k + 1` of [`BLOCK_LAYOUT`], neighbours in a row: neighbouring bits).
const PAIR_SHIFTS: [[u8; 4]; BLOCKS] = pair_shifts();

const fn pair_shifts() -> [[u8; 4]; BLOCKS] {
    let mut out = [[0u8; 4]; BLOCKS];
    let mut b = 0;
    while b < BLOCKS {
        let mut k = 0;
        while k < 4 {
            let (first, second) = (square_at(BLOCK_LAYOUT[b][2 * k]), square_at(BLOCK_LAYOUT[b][2 * k + 1]));
            assert!(second.bit() == first.bit() + 1, "a block's pairs are neighbouring bits");
            out[b][k] = first.bit();
            k += 1;
        }
        b += 1;
    }
    out
}

/// `BASE3[m]`: the sum of `3^i` over the set bits `i` of the byte `m`; `BASE3_REVERSED[m]`: of
/// `3^(7 - i)`.
const BASE3: [u16; 256] = base3(false);
const BASE3_REVERSED: [u16; 256] = base3(true);

const fn base3(reversed: bool) -> [u16; 256] {
    let mut out = [0u16; 256];
    let mut m = 0;
    while m < 256 {
        let (mut i, mut sum) = (0, 0u16);
        while i < 8 {
            if m & (1 << i) != 0 {
                sum += 3u16.pow(if reversed { 7 - i } else { i });
            }
            i += 1;
        }
        out[m] = sum;
        m += 1;
    }
    out
}

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
/// turned. (The trainer uses this to build the second point of view from the first.) A pattern
/// feature of block `b` becomes one of block `15 - b`, its digits in reverse order, 1 and 2
/// swapped.
#[inline]
pub fn mirror_feature(f: usize) -> usize {
    if f >= FEATURES {
        let (b, config) = ((f - FEATURES) / CONFIGS, (f - FEATURES) % CONFIGS);
        return pattern_feature(BLOCKS - 1 - b, MIRRORED_CONFIG[config] as usize);
    }
    mirror_piece_feature(f)
}

/// [`mirror_feature`] of a piece-square feature.
#[inline]
fn mirror_piece_feature(f: usize) -> usize {
    let (kind, sq) = (f / SQUARES, f % SQUARES);
    ((kind + 2) % 4) * SQUARES + (SQUARES - 1 - sq)
}

/// Each configuration seen from the other point of view: digits in reverse order, 1 and 2
/// swapped.
const MIRRORED_CONFIG: [u16; CONFIGS] = mirrored_configs();

const fn mirrored_configs() -> [u16; CONFIGS] {
    let mut out = [0u16; CONFIGS];
    let mut c = 0;
    while c < CONFIGS {
        let (mut rest, mut mirrored, mut i) = (c, 0, 0);
        while i < BLOCK_SQUARES {
            mirrored = mirrored * 3 + [0, 2, 1][rest % 3];
            rest /= 3;
            i += 1;
        }
        out[c] = mirrored as u16;
        c += 1;
    }
    out
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
    /// Features that turn on: the moving piece on its landing square, then the blocks' new
    /// configurations.
    added: [u32; MAX_ADDED],
    added_len: u8,
    /// Features that turn off: the moving piece on its start square, the captured pieces, then
    /// the blocks' old configurations.
    removed: [u32; MAX_DELTA_REMOVED],
    removed_len: u8,
    /// Pieces captured.
    captured: u8,
    /// How many of `added` and of `removed` are piece-square features (the first ones).
    added_pieces: u8,
    removed_pieces: u8,
}

impl Delta {
    /// The features that turn on.
    pub fn added(&self) -> &[u32] {
        &self.added[..self.added_len as usize]
    }

    /// The features that turn off.
    pub fn removed(&self) -> &[u32] {
        &self.removed[..self.removed_len as usize]
    }

    /// The number of pieces the move captures.
    pub fn captured(&self) -> usize {
        self.captured as usize
    }

    /// The piece-square features that turn on and off (the lists' first entries).
    #[inline]
    pub fn pieces(&self) -> (&[u32], &[u32]) {
        (&self.added[..self.added_pieces as usize], &self.removed[..self.removed_pieces as usize])
    }

    /// The block-pattern features that turn on and off (the lists' last entries).
    #[inline]
    pub fn patterns(&self) -> (&[u32], &[u32]) {
        (&self.added[self.added_pieces as usize..self.added_len as usize], &self.removed[self.removed_pieces as usize..self.removed_len as usize])
    }

    #[inline]
    fn push_pattern(&mut self, old: usize, new: usize) {
        self.removed[self.removed_len as usize] = old as u32;
        self.removed_len += 1;
        self.added[self.added_len as usize] = new as u32;
        self.added_len += 1;
    }

    /// The same change seen from the other point of view ([`mirror_feature`] of each).
    #[inline]
    pub fn mirrored(&self) -> Delta {
        // Only the entries in use are written (a clone copied all of the arrays).
        let mut d = Delta::empty();
        for (m, &f) in d.added.iter_mut().zip(self.added()) {
            *m = mirror_feature(f as usize) as u32;
        }
        for (m, &f) in d.removed.iter_mut().zip(self.removed()) {
            *m = mirror_feature(f as usize) as u32;
        }
        (d.added_len, d.removed_len, d.captured) = (self.added_len, self.removed_len, self.captured);
        (d.added_pieces, d.removed_pieces) = (self.added_pieces, self.removed_pieces);
        d
    }

    /// An empty delta, to be written by [`move_delta`] and [`FeatureSet::move_delta`].
    #[inline]
    pub fn empty() -> Delta {
        Delta {
            added: [0; MAX_ADDED],
            added_len: 0,
            removed: [0; MAX_DELTA_REMOVED],
            removed_len: 0,
            captured: 0,
            added_pieces: 0,
            removed_pieces: 0,
        }
    }
}

/// The piece-square features `mv`, played in `before`, changes from `perspective`'s point of
/// view ([`FeatureSet::move_delta`] of [`FeatureSet::PIECES`]).
///
/// A capture that ends on its own start square removes and adds the same feature (or, when it
/// crowns, a man feature for a king feature); both are listed, so applying the delta is always
/// "subtract the removed rows, add the added ones".
pub fn move_delta(before: &Position, mv: &Move, perspective: Color) -> Delta {
    // Built in place (a delta is 224 bytes; copying it was a few per cent of a search's time).
    let mut d = Delta::empty();
    d.set_pieces(before, mv, perspective);
    d
}

impl Delta {
    /// Makes this the piece-square delta of `mv` ([`move_delta`]).
    #[inline]
    fn set_pieces(&mut self, before: &Position, mv: &Move, perspective: Color) {
        let (added, n) = piece_changes(before, mv, perspective, &mut self.removed);
        self.added[0] = added;
        (self.added_len, self.removed_len, self.captured) = (1, n as u8, (n - 1) as u8);
        (self.added_pieces, self.removed_pieces) = (1, n as u8);
    }
}

/// The piece-square features `mv`, played in `before`, changes from `perspective`'s point of
/// view: the one that turns on (the return value's first) and those that turn off, written to
/// the front of `removed` (the moving piece's start square, then the captured pieces, at most
/// [`MAX_REMOVED`] in all, which `removed` must hold; the second value is how many).
#[inline]
fn piece_changes(before: &Position, mv: &Move, perspective: Color, removed: &mut [u32]) -> (u32, usize) {
    let us = before.side_to_move();
    let was = if mv.is_king_move() { Role::King } else { Role::Man };
    let becomes = if mv.is_king_move() || mv.promotes() { Role::King } else { Role::Man };
    removed[0] = feature(perspective, us, was, mv.from()) as u32;
    let mut n = 1;
    let kings = before.all_kings();
    for sq in mv.captured() {
        let role = if kings.contains(sq) { Role::King } else { Role::Man };
        if n < MAX_REMOVED {
            removed[n] = feature(perspective, !us, role, sq) as u32;
            n += 1;
        }
    }
    (feature(perspective, us, becomes, mv.to()) as u32, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn active_in(set: FeatureSet, pos: &Position, p: Color) -> Vec<usize> {
        let mut v = Vec::new();
        set.for_each_active(pos, p, |f| v.push(f));
        v.sort_unstable();
        v
    }

    fn active(pos: &Position, p: Color) -> Vec<usize> {
        active_in(FeatureSet::PIECES, pos, p)
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
    fn blocks_cover_the_board_in_overlapping_four_by_four_squares() {
        let mut seen = [0usize; SQUARES];
        for (b, squares) in BLOCK_LAYOUT.iter().enumerate() {
            let (top, left) = ((b / 4) * 2, (b % 4) * 2);
            for w in squares.windows(2) {
                assert!(w[0] < w[1], "block {b}: {squares:?}");
            }
            for &i in squares {
                let sq = Square::new(i + 1).unwrap();
                assert!((top..top + 4).contains(&(sq.row() as usize)), "block {b} square {}", i + 1);
                assert!((left..left + 4).contains(&(sq.col() as usize)), "block {b} square {}", i + 1);
                seen[i as usize] += 1;
            }
        }
        // Corners and edges are in one or two blocks, the middle of the board in up to four.
        assert!(seen.iter().all(|&n| (1..=4).contains(&n)), "{seen:?}");
        assert_eq!(seen.iter().sum::<usize>(), BLOCKS * BLOCK_SQUARES);
        assert_eq!(seen.iter().filter(|&&n| n == 4).count(), 18);
        // Square 1 (row 0, column 1) is in block 0 only.
        assert_eq!(BLOCKS_OF[0], 1);
        // Turning the board maps block b onto block 15 - b, squares in reverse order.
        for (b, squares) in BLOCK_LAYOUT.iter().enumerate() {
            let turned: Vec<u8> = squares.iter().rev().map(|&i| 49 - i).collect();
            assert_eq!(turned, BLOCK_LAYOUT[BLOCKS - 1 - b]);
        }
    }

    /// The configuration read square by square, the definition [`block_config`] computes fast.
    fn reference_config(b: usize, perspective: Color, own: Bitboard, opp: Bitboard) -> usize {
        let mut config = 0;
        for &i in BLOCK_LAYOUT[b].iter().rev() {
            let sq = Square::new(i + 1).unwrap();
            let sq = relative_square(perspective, sq);
            config = config * 3 + own.contains(sq) as usize + 2 * opp.contains(sq) as usize;
        }
        config
    }

    #[test]
    fn fast_block_configs_equal_the_square_by_square_reading() {
        let mut state = 7u64;
        let mut next = move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            state >> 11
        };
        let mut seen = std::collections::HashSet::new();
        for _ in 0..20_000 {
            // Any two disjoint sets of squares.
            let (a, b) = (next() & Bitboard::ALL.0, next() & Bitboard::ALL.0);
            let (own, opp) = (Bitboard(a & !b), Bitboard(b & !a));
            for perspective in [Color::White, Color::Black] {
                for block in 0..BLOCKS {
                    let config = block_config(block, perspective, own, opp);
                    assert_eq!(config, reference_config(block, perspective, own, opp), "{block} {perspective:?} {own:?} {opp:?}");
                    seen.insert(config);
                }
            }
        }
        assert!(seen.len() > CONFIGS / 2, "{}", seen.len());
    }

    #[test]
    fn block_configs_read_the_squares() {
        // White men on 6 and 17, a Black king on 12: block 0 holds squares 1, 2, 6, 7, 11, 12, 16, 17.
        let pos = Position::from_fen("W:W6,17:BK12").unwrap();
        let (w, b) = (pos.pieces(Color::White), pos.pieces(Color::Black));
        assert_eq!(BLOCK_LAYOUT[0], [0, 1, 5, 6, 10, 11, 15, 16]);
        assert_eq!(block_config(0, Color::White, w, b), 3usize.pow(2) + 3usize.pow(7) + 2 * 3usize.pow(5));
        // Black sees the board turned: its block 0 (White's squares 50, 49, 45, ...) is empty.
        assert_eq!(block_config(0, Color::Black, b, w), 0);
        let from_black = block_config(15, Color::Black, b, w);
        assert_eq!(mirror_feature(pattern_feature(0, block_config(0, Color::White, w, b))), pattern_feature(15, from_black));
        let start = Position::start();
        let all = active_in(FeatureSet::PATTERNS, &start, Color::White);
        assert_eq!(all.len(), 40 + BLOCKS);
        // The middle rows are empty: block 6 (rows 2-5, columns 4-7) holds two opponent men (rows 2 and 3).
        assert_eq!(all[40 + 6], pattern_feature(6, 2 + 2 * 3 + 2 * 9 + 2 * 27));
    }

    #[test]
    fn mirror_is_the_other_point_of_view() {
        let positions = ["W:W28,K33,45:B3,K19,24", "B:W31,32,33,34,K35,40,46:B1,2,K8,17,18,21,26"];
        for fen in positions {
            let pos = Position::from_fen(fen).unwrap();
            for set in [FeatureSet::PIECES, FeatureSet::PATTERNS] {
                let mut mirrored: Vec<usize> = active_in(set, &pos, Color::White).into_iter().map(mirror_feature).collect();
                mirrored.sort_unstable();
                assert_eq!(mirrored, active_in(set, &pos, Color::Black), "{fen} {set:?}");
            }
        }
        for f in 0..FeatureSet::PATTERNS.len() {
            let m = mirror_feature(f);
            assert!(m < FeatureSet::PATTERNS.len());
            assert_eq!(mirror_feature(m), f);
            assert_eq!(m < FEATURES, f < FEATURES);
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
        let mut patterns_changed = 0;
        for game in 0..60 {
            let set = if game % 2 == 0 { FeatureSet::PIECES } else { FeatureSet::PATTERNS };
            let mut pos = Position::start();
            for _ in 0..200 {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let mv = moves[next() % moves.len()];
                let after = pos.play(&mv);
                for p in [Color::White, Color::Black] {
                    let d = set.move_delta(&pos, &mv, p);
                    let (other, mirrored) = (set.move_delta(&pos, &mv, !p), d.mirrored());
                    let sorted = |v: &[u32]| {
                        let mut v = v.to_vec();
                        v.sort_unstable();
                        v
                    };
                    assert_eq!(sorted(other.added()), sorted(mirrored.added()));
                    assert_eq!(sorted(other.removed()), sorted(mirrored.removed()));
                    assert_eq!(d.captured(), mv.captured().count() as usize);
                    // Both points of view in one pass: White's piece-square delta and its
                    // mirror, exactly (the blocks' rows are not in it: a network adds them at
                    // evaluation).
                    let mut both = PieceDeltas::default();
                    let mut configs = block_configs(&pos);
                    set.move_deltas_from(&mut configs, &pos, &mv, &mut both);
                    // The blocks, summed digit by digit, are those read from the board after.
                    if set.patterns {
                        assert_eq!(configs, block_configs(&after), "{pos:?} {mv:?}");
                    }
                    let white = FeatureSet::PIECES.move_delta(&pos, &mv, Color::White);
                    assert_eq!(both.pov(0), (white.added(), white.removed()));
                    let black = both.pov(1);
                    assert_eq!(sorted(black.0), sorted(white.mirrored().added()));
                    assert_eq!(sorted(black.1), sorted(white.mirrored().removed()));
                    assert_eq!(both.captured(), mv.captured().count() as usize);
                    // The piece squares first, the patterns after.
                    let ((pa, pr), (qa, qr)) = (d.pieces(), d.patterns());
                    assert!(pa.iter().chain(pr).all(|&f| (f as usize) < FEATURES));
                    assert!(qa.iter().chain(qr).all(|&f| (f as usize) >= FEATURES));
                    assert_eq!([pa, qa].concat(), d.added());
                    assert_eq!([pr, qr].concat(), d.removed());
                    let mut counts = vec![0i32; set.len()];
                    for f in active_in(set, &pos, p) {
                        counts[f] += 1;
                    }
                    for &f in d.removed() {
                        counts[f as usize] -= 1;
                    }
                    for &f in d.added() {
                        counts[f as usize] += 1;
                    }
                    patterns_changed += d.added().len() - 1;
                    let want: Vec<usize> = active_in(set, &after, p);
                    let got: Vec<usize> = (0..set.len()).filter(|&f| counts[f] == 1).collect();
                    assert!(counts.iter().all(|&c| c == 0 || c == 1), "{pos:?} {mv:?}");
                    assert_eq!(got, want, "{pos:?} {mv:?}");
                    checked += 1;
                }
                pos = after;
            }
        }
        assert!(checked > 5000, "{checked}");
        assert!(patterns_changed > 2 * checked / 2, "{patterns_changed} of {checked}");
    }
}
