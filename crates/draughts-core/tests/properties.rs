//! Property tests: the fast generator against a slow reference written independently on
//! (row, column) coordinates; FEN and Hub round trips; make/undo and incremental hashing over
//! random games; colour symmetry; and arbitrary text into every parser without a panic.

use std::collections::BTreeSet;

use draughts_core::{Bitboard, Color, Game, MoveText, Position, Rules, Square};
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// Reference move generator: plain arrays, explicit recursion, no bitboards.

#[derive(Copy, Clone, PartialEq, Eq)]
struct P {
    white: bool,
    king: bool,
}

type Board = [Option<P>; 50];

fn rc(idx: usize) -> (i32, i32) {
    let row = idx / 5;
    let col = 2 * (idx % 5) + if row % 2 == 0 { 1 } else { 0 };
    (row as i32, col as i32)
}

fn at(r: i32, c: i32) -> Option<usize> {
    if !(0..10).contains(&r) || !(0..10).contains(&c) || (r + c) % 2 == 0 {
        None
    } else {
        Some((r * 5 + c / 2) as usize)
    }
}

const DIRS: [(i32, i32); 4] = [(-1, -1), (-1, 1), (1, -1), (1, 1)];

struct Ref<'a> {
    board: &'a Board,
    white: bool,
    origin: usize,
    promote_in_capture: bool,
    found: Vec<(usize, usize, u64)>,
}

impl Ref<'_> {
    fn empty(&self, s: usize) -> bool {
        s == self.origin || self.board[s].is_none()
    }
    fn opp(&self, s: usize) -> bool {
        s != self.origin && matches!(self.board[s], Some(p) if p.white != self.white)
    }
    fn far_row(&self, s: usize) -> bool {
        let r = rc(s).0;
        if self.white { r == 0 } else { r == 9 }
    }
    fn dfs(&mut self, s: usize, captured: u64, king: bool) {
        let (r, c) = rc(s);
        let mut extended = false;
        for (dr, dc) in DIRS {
            if king {
                let mut k = 1;
                while let Some(x) = at(r + k * dr, c + k * dc) {
                    if self.empty(x) {
                        k += 1;
                        continue;
                    }
                    if self.opp(x) && captured & (1 << x) == 0 {
                        let mut j = k + 1;
                        while let Some(l) = at(r + j * dr, c + j * dc) {
                            if !self.empty(l) {
                                break;
                            }
                            extended = true;
                            self.dfs(l, captured | (1 << x), true);
                            j += 1;
                        }
                    }
                    break;
                }
            } else if let (Some(x), Some(l)) = (at(r + dr, c + dc), at(r + 2 * dr, c + 2 * dc)) {
                if self.opp(x) && captured & (1 << x) == 0 && self.empty(l) {
                    extended = true;
                    let crown = self.promote_in_capture && self.far_row(l);
                    self.dfs(l, captured | (1 << x), crown);
                }
            }
        }
        if !extended && captured != 0 {
            self.found.push((self.origin, s, captured));
        }
    }
}

/// Legal moves as Hub strings (from x to x captured ascending, or from-to).
fn reference_moves(board: &Board, white_to_move: bool, promote_in_capture: bool) -> BTreeSet<String> {
    let mut caps = Vec::new();
    for s in 0..50 {
        if let Some(p) = board[s] {
            if p.white == white_to_move {
                let mut r = Ref { board, white: white_to_move, origin: s, promote_in_capture, found: Vec::new() };
                r.dfs(s, 0, p.king);
                caps.extend(r.found);
            }
        }
    }
    let name = |i: usize| i + 1;
    if !caps.is_empty() {
        let best = caps.iter().map(|c| c.2.count_ones()).max().unwrap();
        return caps
            .into_iter()
            .filter(|c| c.2.count_ones() == best)
            .map(|(f, t, set)| {
                let mut s = format!("{}x{}", name(f), name(t));
                for i in 0..50 {
                    if set & (1 << i) != 0 {
                        s.push_str(&format!("x{}", name(i)));
                    }
                }
                s
            })
            .collect();
    }
    let mut quiet = BTreeSet::new();
    for s in 0..50 {
        let Some(p) = board[s] else { continue };
        if p.white != white_to_move {
            continue;
        }
        let (r, c) = rc(s);
        for (dr, dc) in DIRS {
            if !p.king && (dr < 0) != p.white {
                continue;
            }
            let mut k = 1;
            while let Some(t) = at(r + k * dr, c + k * dc) {
                if board[t].is_some() {
                    break;
                }
                quiet.insert(format!("{}-{}", name(s), name(t)));
                if !p.king {
                    break;
                }
                k += 1;
            }
        }
    }
    quiet
}

fn to_board(pos: &Position) -> Board {
    let mut b = [None; 50];
    for sq in Square::all() {
        if let Some(p) = pos.piece_at(sq) {
            b[sq.index()] = Some(P { white: p.color == Color::White, king: p.role == draughts_core::Role::King });
        }
    }
    b
}

// ---------------------------------------------------------------------------------------------
// Strategies.

/// Random positions: each square empty or holding one of the four pieces, men never on their
/// own promotion row. `density` biases toward crowded or open boards.
fn arb_position() -> impl Strategy<Value = Position> {
    (prop::collection::vec((0u8..100, 0u8..4), 50), any::<bool>(), 10u8..70).prop_map(|(cells, black, density)| {
        let mut sets = [Bitboard::EMPTY; 4];
        for (i, (roll, kind)) in cells.into_iter().enumerate() {
            if roll >= density {
                continue;
            }
            let sq = Square::new(i as u8 + 1).unwrap();
            let mut kind = kind as usize;
            // Men on their own promotion row become kings.
            if kind == 0 && Bitboard::WHITE_PROMOTION.contains(sq) {
                kind = 1;
            }
            if kind == 2 && Bitboard::BLACK_PROMOTION.contains(sq) {
                kind = 3;
            }
            sets[kind] |= Bitboard::from_square(sq);
        }
        let side = if black { Color::Black } else { Color::White };
        Position::from_pieces(sets[0], sets[1], sets[2], sets[3], side).unwrap()
    })
}

/// A small deterministic generator for random games.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn generator_matches_reference(pos in arb_position()) {
        let board = to_board(&pos);
        let white = pos.side_to_move() == Color::White;
        for (rules, promote) in [(Rules::FMJD, false), (Rules::PROMOTE_IN_CAPTURE, true)] {
            let fast = pos.legal_moves_with(&rules);
            let fast_set: BTreeSet<String> = fast.iter().map(|m| m.to_hub()).collect();
            prop_assert_eq!(fast_set.len(), fast.len(), "duplicate move in {}", pos.to_fen());
            let reference = reference_moves(&board, white, promote);
            prop_assert_eq!(&fast_set, &reference, "{} promote_in_capture={}", pos.to_fen(), promote);
            if !promote {
                prop_assert_eq!(pos.count_legal_moves(), fast.len());
                prop_assert_eq!(pos.has_capture(), fast.iter().any(|m| m.is_capture()));
            }
        }
    }

    #[test]
    fn every_move_resolves_from_its_notation(pos in arb_position()) {
        let rules = Rules::FMJD;
        for mv in pos.legal_moves() {
            prop_assert_eq!(pos.parse_hub_move(&mv.to_hub()), Ok(mv));
            let pdn = pos.to_pdn(&mv, &rules);
            prop_assert_eq!(pos.parse_pdn_move(&pdn), Ok(mv), "{} in {}", pdn, pos.to_fen());
            let paths = pos.landing_paths(&mv, &rules);
            prop_assert!(!paths.is_empty());
            for p in paths {
                prop_assert_eq!(p.len(), mv.captured().count() as usize + 1 + usize::from(!mv.is_capture()));
                prop_assert_eq!(p[0], mv.from());
                prop_assert_eq!(*p.last().unwrap(), mv.to());
            }
            // The result of a move is a valid position: no man left on its promotion row.
            let next = pos.play(&mv);
            let fen = next.to_fen();
            prop_assert_eq!(Position::from_fen(&fen), Ok(next));
        }
    }

    #[test]
    fn fen_and_hub_round_trip(pos in arb_position()) {
        prop_assert_eq!(Position::from_fen(&pos.to_fen()), Ok(pos));
        prop_assert_eq!(Position::from_hub(&pos.to_hub()), Ok(pos));
    }

    #[test]
    fn colour_symmetry(pos in arb_position()) {
        let flipped = pos.flipped();
        prop_assert_eq!(flipped.flipped(), pos);
        let a: BTreeSet<String> = pos.legal_moves().iter().map(|m| m.flipped().to_hub()).collect();
        let b: BTreeSet<String> = flipped.legal_moves().iter().map(|m| m.to_hub()).collect();
        prop_assert_eq!(a, b);
    }

    #[test]
    fn random_games_hash_and_undo(seed in any::<u64>(), from_random in any::<bool>(), pos in arb_position()) {
        let start = if from_random { pos } else { Position::start() };
        let mut game = Game::from_position(start, Rules::FMJD);
        let mut rng = Rng(seed | 1);
        let mut states = vec![(*game.position(), game.hash(), game.counters())];
        for _ in 0..120 {
            if game.outcome().is_some() {
                break;
            }
            let moves = game.legal_moves();
            let mv = moves[rng.below(moves.len())];
            game.play(mv).unwrap();
            prop_assert_eq!(game.hash(), game.position().hash(), "incremental hash drifted");
            states.push((*game.position(), game.hash(), game.counters()));
        }
        while game.undo().is_some() {
            states.pop();
            let (p, h, c) = *states.last().unwrap();
            prop_assert_eq!((*game.position(), game.hash(), game.counters()), (p, h, c));
        }
        prop_assert_eq!(states.len(), 1);
    }

    #[test]
    fn parsers_never_panic(text in ".{0,80}", bytes in prop::collection::vec(any::<u8>(), 0..80)) {
        let lossy = String::from_utf8_lossy(&bytes).into_owned();
        for t in [text.as_str(), lossy.as_str()] {
            let _ = Position::from_fen(t);
            let _ = Position::from_hub(t);
            let pos = Position::start();
            if let Ok(mt) = MoveText::parse_pdn(t) {
                let _ = mt.resolve(&pos, &Rules::FMJD);
            }
            if let Ok(mt) = MoveText::parse_hub(t) {
                let _ = mt.resolve(&pos, &Rules::FMJD);
            }
        }
    }

    #[test]
    fn fen_like_text_never_panics(
        side in "[WBX ]",
        sections in prop::collection::vec("[WBKH:,0-9\\- .]{0,12}", 0..4),
    ) {
        let text = format!("{side}:{}", sections.join(":"));
        match Position::from_fen(&text) {
            Ok(p) => prop_assert_eq!(Position::from_fen(&p.to_fen()), Ok(p)),
            Err(e) => prop_assert!(e.column >= 1 && e.column <= text.chars().count() + 1, "{}", e),
        }
    }
}
