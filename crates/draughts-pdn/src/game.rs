//! Games: the high-level reader that resolves every move.

use std::io::BufRead;
use std::ops::ControlFlow;

use draughts_core::fen::FenErrorKind;
use draughts_core::{Color, FenError, Game, Move, MoveError, MoveText, Position, PositionError, Rules};

use crate::{GameResult, PdnError, PdnErrorKind, PdnWarning, PdnWarningKind, RawReader, ReplayError, Visitor};

/// The tags every PDN game carries, in the order they are written.
pub const SEVEN_TAG_ROSTER: [&str; 7] = ["Event", "Site", "Date", "Round", "White", "Black", "Result"];

/// A game read from (or to be written to) PDN: its tags, start position, main-line moves and
/// result. Comments and variations are not kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PdnGame {
    /// The tags in file order, values unescaped. The reader keeps every tag it read, `FEN`,
    /// `SetUp`, `GameType` and `Result` included.
    pub tags: Vec<(String, String)>,
    /// The start position: the `FEN` tag's, or the standard start.
    pub start: Position,
    /// The main-line moves, each legal in the position it is played in.
    pub moves: Vec<Move>,
    /// The result token at the end of the move text, or the `Result` tag when there is no token,
    /// or [`GameResult::Unknown`].
    pub result: GameResult,
    /// 1-based number of the game in the file it was read from (0 for a game built in code).
    pub number: usize,
    /// What the reader had to assume to read the game, in file order (empty for a game built in
    /// code, and for a game written cleanly).
    pub warnings: Vec<PdnWarning>,
}

impl Default for PdnGame {
    fn default() -> PdnGame {
        PdnGame::new(Position::start())
    }
}

impl PdnGame {
    /// A game from `start` with no tags, no moves and an unknown result.
    pub fn new(start: Position) -> PdnGame {
        PdnGame {
            tags: Vec::new(),
            start,
            moves: Vec::new(),
            result: GameResult::Unknown,
            number: 0,
            warnings: Vec::new(),
        }
    }

    /// The start position and moves of `game`; the result is the game's outcome if it is over,
    /// otherwise unknown.
    pub fn from_game(game: &Game) -> PdnGame {
        PdnGame {
            moves: game.moves().collect(),
            result: game.outcome().map_or(GameResult::Unknown, GameResult::from),
            ..PdnGame::new(*game.start_position())
        }
    }

    /// The value of the first tag called `name` (ASCII case ignored).
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// Sets the first tag called `name` (ASCII case ignored) to `value`, or adds it at the end.
    pub fn set_tag(&mut self, name: impl Into<String>, value: impl Into<String>) {
        let (name, value) = (name.into(), value.into());
        match self.tags.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case(&name)) {
            Some(tag) => tag.1 = value,
            None => self.tags.push((name, value)),
        }
    }

    /// The `Event` tag.
    pub fn event(&self) -> Option<&str> {
        self.tag("Event")
    }

    /// The `Site` tag.
    pub fn site(&self) -> Option<&str> {
        self.tag("Site")
    }

    /// The `Date` tag.
    pub fn date(&self) -> Option<&str> {
        self.tag("Date")
    }

    /// The `Round` tag.
    pub fn round(&self) -> Option<&str> {
        self.tag("Round")
    }

    /// The `White` tag: the player of the white pieces.
    pub fn white(&self) -> Option<&str> {
        self.tag("White")
    }

    /// The `Black` tag: the player of the black pieces.
    pub fn black(&self) -> Option<&str> {
        self.tag("Black")
    }

    /// Replays the moves under `rules`, checking each, into a [`Game`] (history, counters,
    /// outcome).
    pub fn replay(&self, rules: &Rules) -> Result<Game, ReplayError> {
        let mut game = Game::from_position(self.start, *rules);
        for (ply, &mv) in self.moves.iter().enumerate() {
            if !game.legal_moves().contains(&mv) {
                return Err(ReplayError { ply, mv: mv.to_hub(), fen: game.position().to_fen() });
            }
            game.play_unchecked(mv);
        }
        Ok(game)
    }
}

/// Whether a `GameType` value names international draughts: `20`, or the full `20,W,10,10,N2,0`.
pub(crate) fn is_international(game_type: &str) -> bool {
    let fields: Vec<&str> = game_type.split(',').map(str::trim).collect();
    matches!(fields[..], ["20"] | ["20", "W", "10", "10", "N2", "0"])
}

/// What a `GameType` value says about the game.
#[derive(Debug, PartialEq, Eq)]
enum GameKind {
    /// `20` or `20,W,10,10,N2,0`.
    International,
    /// `20` with other extra fields (`20,W,10,10,N1,0` from PlayOK, `20,W`), but not another
    /// board size.
    Variant,
    /// Another game, or international draughts on another board.
    Other,
}

fn game_kind(game_type: &str) -> GameKind {
    if is_international(game_type) {
        return GameKind::International;
    }
    let fields: Vec<&str> = game_type.split(',').map(str::trim).collect();
    let ten = |i: usize| fields.get(i).map_or(true, |&f| f == "10");
    if fields[0] == "20" && ten(2) && ten(3) {
        GameKind::Variant
    } else {
        GameKind::Other
    }
}

/// Reads a FEN the way the reader does: a side to move of `?` (PDN 3.0: unknown) is read as
/// White for now, and the `bool` says so; an error about the board's contents (two pieces on a
/// square, a man on its promotion row) points at the item that names the square.
fn read_fen(text: &str) -> Result<(Position, bool), FenError> {
    let body = text.trim_start();
    let unknown = body.starts_with('?');
    let parsed = if unknown {
        let lead = text.len() - body.len();
        Position::from_fen(&format!("{}W{}", &text[..lead], &body[1..]))
    } else {
        Position::from_fen(text)
    };
    parsed.map(|pos| (pos, unknown)).map_err(|mut e| {
        e.text = text.to_owned();
        if let FenErrorKind::Position(p) = &e.kind {
            if let Some(column) = board_error_column(text, p) {
                e.column = column;
            }
        }
        e
    })
}

/// The 1-based column (in characters) of the item of `fen` that a board error is about: the
/// second item that names the square for two pieces on one square, the man's item for a man on
/// its promotion row. (`Position::from_fen` reports both at column 1.)
fn board_error_column(fen: &str, error: &PositionError) -> Option<usize> {
    let (color, square, nth) = match *error {
        PositionError::Overlap(square) => (None, square, 2),
        PositionError::ManOnPromotionRow { color, square } => (Some(color), square, 1),
    };
    let n = square.number();
    let mut seen = 0;
    let mut field_at = 0;
    for (i, field) in fen.split(':').enumerate() {
        let at = field_at;
        field_at += field.len() + 1;
        let body = field.trim_start();
        let section = match body.as_bytes().first() {
            Some(b'W' | b'w') if i > 0 => Color::White,
            Some(b'B' | b'b') if i > 0 => Color::Black,
            _ => continue,
        };
        if color.is_some_and(|c| c != section) {
            continue;
        }
        let mut item_at = at + (field.len() - body.len()) + 1;
        for item in body[1..].split(',') {
            let start = item_at + (item.len() - item.trim_start().len());
            item_at += item.len() + 1;
            let item = item.trim().trim_end_matches('.');
            let (king, squares) = match item.strip_prefix(['K', 'k']) {
                Some(rest) => (true, rest),
                None => (false, item),
            };
            if king && color.is_some() {
                continue;
            }
            let (a, b) = squares.split_once('-').unwrap_or((squares, squares));
            let (Ok(a), Ok(b)) = (a.trim().parse::<u8>(), b.trim().parse::<u8>()) else {
                continue;
            };
            if (a..=b).contains(&n) {
                seen += 1;
                if seen == nth {
                    return Some(fen[..start].chars().count() + 1);
                }
            }
        }
    }
    None
}

/// Resolves move text in `pos`. A quiet move written with `x` (`38x33`) or a capture written
/// with `-` (`23-32`) is read as the move it names with the other separator when exactly one legal
/// move fits that; the `bool` says so.
fn resolve(text: &str, pos: &Position, rules: &Rules) -> Result<(Move, bool), MoveError> {
    match MoveText::parse_pdn(text).and_then(|t| t.resolve(pos, rules)) {
        Ok(mv) => Ok((mv, false)),
        Err(error) => resolve_again(text, pos, rules, error),
    }
}

/// [`resolve`] after the text as written named no move (`error`).
#[cold]
fn resolve_again(text: &str, pos: &Position, rules: &Rules, error: MoveError) -> Result<(Move, bool), MoveError> {
    if let MoveError::Ambiguous { .. } = error {
        return Err(error);
    }
    let captures = [':', 'x', 'X'];
    let swapped = match (text.contains('-'), text.contains(captures)) {
        (true, false) => text.replace('-', "x"),
        (false, true) if text.matches(captures).count() == 1 => text.replace(captures, "-"),
        _ => return Err(error),
    };
    match MoveText::parse_pdn(&swapped).and_then(|t| t.resolve(pos, rules)) {
        Ok(mv) => Ok((mv, true)),
        Err(_) => Err(error),
    }
}

/// The result a word of move text starts with when a digit follows it: `2-01.` is the result
/// `2-0` glued to the next game's `1.`.
fn glued_result(text: &str) -> Option<&'static str> {
    ["1/2-1/2", "2-0", "0-2", "1-1", "0-0", "1-0", "0-1"].into_iter().find(|r| {
        text.strip_prefix(r).is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
    })
}

/// Most paths followed at once while an ambiguous short capture is being resolved.
const MAX_BRANCHES: usize = 16;

/// One way to read the game on from an ambiguous short capture.
#[derive(Clone, Debug)]
struct Branch {
    pos: Position,
    /// The moves from the ambiguous capture on.
    moves: Vec<Move>,
    /// The warnings of these moves, the choice of path first.
    warnings: Vec<PdnWarning>,
}

/// A short capture (`3x35`) that several paths fit, and the paths followed from it: the one
/// that lets the rest of the main line replay is taken.
#[derive(Debug)]
struct Pending {
    /// The ambiguity, returned if not exactly one path lets the game replay.
    error: PdnError,
    /// The paths still replaying.
    branches: Vec<Branch>,
}

/// The visitor behind [`Reader`]: tracks the position and resolves each move.
#[derive(Debug)]
struct GameBuilder {
    rules: Rules,
    game: PdnGame,
    pos: Position,
    /// The move number of the next move, as the text numbers it.
    fullmove: u32,
    /// The result token, if the move text had one.
    result: Option<GameResult>,
    /// The line the game starts on.
    line: usize,
    /// Whether the game has move text.
    movetext: bool,
    /// Whether the last move number said Black moves next (`12...`).
    black_next: bool,
    /// A FEN (with its line) whose side to move is `?`, until the first move decides it.
    unknown_side: Option<(String, usize)>,
    /// The `GameType`, when it is international draughts with unusual extra fields.
    variant: Option<String>,
    /// Set while an ambiguous short capture is being resolved.
    pending: Option<Box<Pending>>,
}

impl GameBuilder {
    fn new(rules: Rules) -> GameBuilder {
        GameBuilder {
            rules,
            game: PdnGame::default(),
            pos: Position::start(),
            fullmove: 1,
            result: None,
            line: 1,
            movetext: false,
            black_next: false,
            unknown_side: None,
            variant: None,
            pending: None,
        }
    }

    fn error(&self, line: usize, kind: PdnErrorKind) -> PdnError {
        PdnError { game: self.game.number, line, kind }
    }

    fn fail(&self, line: usize, kind: PdnErrorKind) -> ControlFlow<Result<PdnGame, PdnError>> {
        ControlFlow::Break(Err(self.error(line, kind)))
    }

    fn make_warning(&self, line: usize, kind: PdnWarningKind) -> PdnWarning {
        PdnWarning { game: self.game.number, line, kind }
    }

    fn warn(&mut self, line: usize, kind: PdnWarningKind) {
        let w = self.make_warning(line, kind);
        self.game.warnings.push(w);
    }

    /// The error for move text that names no move: a result glued to the next game, a move in a
    /// game with an unusual game type, or a plain bad move.
    fn move_error(&self, line: usize, text: &str, number: u32, side: Color, error: MoveError) -> PdnError {
        if let (MoveError::Syntax { .. }, Some(result)) = (&error, glued_result(text)) {
            return self.error(line, PdnErrorKind::GluedResult { text: text.to_owned(), result: result.to_owned() });
        }
        let kind = match &self.variant {
            Some(game_type) => PdnErrorKind::GameTypeMove { game_type: game_type.as_str().into(), number, side, error },
            None => PdnErrorKind::Move { number, side, error },
        };
        self.error(line, kind)
    }

    /// A black move was played: the next is the next number.
    fn advance(&mut self, side: Color) {
        if side == Color::Black {
            self.fullmove = self.fullmove.saturating_add(1);
        }
    }

    /// The side to move was `?`: the side the first move (`text`) fits moves first, trying the
    /// side the move number names (`12...` is Black), then the other.
    fn decide_side(&mut self, text: &str) {
        let Some((fen, line)) = self.unknown_side.take() else {
            return;
        };
        let order = if self.black_next { [Color::Black, Color::White] } else { [Color::White, Color::Black] };
        let fits = |side: Color| {
            let pos = self.pos.with_side_to_move(side);
            matches!(resolve(text, &pos, &self.rules), Ok(_) | Err(MoveError::Ambiguous { .. }))
        };
        let (side, reason) = match order.into_iter().find(|&side| fits(side)) {
            Some(side) => (side, "as the first move is theirs"),
            None => (order[0], "but the first move fits neither side"),
        };
        self.pos = self.pos.with_side_to_move(side);
        // The `?` is read before any move: from the FEN tag, or a set-up that restarted the game.
        self.game.start = self.pos;
        self.warn(line, PdnWarningKind::UnknownSideToMove { fen, side, reason });
    }

    /// The branches an ambiguous short capture (`text`, which the full paths `candidates` fit)
    /// opens from `from`, each with the warning of its choice; `None` if a candidate does not
    /// name a single move.
    fn split(&self, from: &Branch, text: &str, line: usize, candidates: &[String]) -> Option<Vec<Branch>> {
        let side = from.pos.side_to_move();
        let mut out = Vec::with_capacity(candidates.len());
        for (i, chosen) in candidates.iter().enumerate() {
            let mv = MoveText::parse_pdn(chosen).and_then(|t| t.resolve(&from.pos, &self.rules)).ok()?;
            let mut b = from.clone();
            b.pos = b.pos.play(&mv);
            b.moves.push(mv);
            let others = candidates.iter().enumerate().filter(|&(j, _)| j != i).map(|(_, c)| c.clone()).collect();
            b.warnings.push(self.make_warning(
                line,
                PdnWarningKind::AmbiguityResolved {
                    number: self.fullmove,
                    side,
                    text: text.to_owned(),
                    chosen: chosen.clone(),
                    others,
                },
            ));
            out.push(b);
        }
        Some(out)
    }

    /// A move while an ambiguous capture is being resolved: every path still replaying plays it
    /// (or splits again on another ambiguous capture); paths where it is illegal are dropped.
    fn pending_move(&mut self, text: &str, line: usize) -> ControlFlow<Result<PdnGame, PdnError>> {
        let Some(mut pending) = self.pending.take() else {
            return ControlFlow::Continue(());
        };
        let side = pending.branches[0].pos.side_to_move();
        let number = self.fullmove;
        let mut next = Vec::with_capacity(pending.branches.len());
        for mut b in std::mem::take(&mut pending.branches) {
            match resolve(text, &b.pos, &self.rules) {
                Ok((mv, swapped)) => {
                    if swapped {
                        let read_as = b.pos.to_pdn(&mv, &self.rules);
                        let text = text.to_owned();
                        let kind = PdnWarningKind::WrongSeparator { number, side, text, read_as };
                        b.warnings.push(self.make_warning(line, kind));
                    }
                    b.pos = b.pos.play(&mv);
                    b.moves.push(mv);
                    next.push(b);
                }
                Err(MoveError::Ambiguous { candidates, .. }) => {
                    if let Some(split) = self.split(&b, text, line, &candidates) {
                        next.extend(split);
                    }
                }
                Err(_) => {}
            }
        }
        if next.is_empty() || next.len() > MAX_BRANCHES {
            return ControlFlow::Break(Err(pending.error));
        }
        pending.branches = next;
        self.pending = Some(pending);
        self.advance(side);
        ControlFlow::Continue(())
    }

    /// Ends the resolution of an ambiguous capture: the one path that replayed is taken; with
    /// more than one, the ambiguity is the error.
    fn settle(&mut self) -> Result<(), PdnError> {
        let Some(pending) = self.pending.take() else {
            return Ok(());
        };
        let Pending { error, mut branches } = *pending;
        match (branches.pop(), branches.is_empty()) {
            (Some(b), true) => {
                self.pos = b.pos;
                self.game.moves.extend(b.moves);
                self.game.warnings.extend(b.warnings);
                Ok(())
            }
            _ => Err(error),
        }
    }
}

impl Visitor for GameBuilder {
    type Output = Result<PdnGame, PdnError>;

    fn begin_game(&mut self, number: usize, line: usize) {
        self.game = PdnGame { number, ..PdnGame::default() };
        self.pos = self.game.start;
        self.fullmove = 1;
        self.result = None;
        self.line = line;
        self.movetext = false;
        self.black_next = false;
        self.unknown_side = None;
        self.variant = None;
        self.pending = None;
    }

    fn tag(&mut self, name: &str, value: &str, line: usize) -> ControlFlow<Self::Output> {
        if name.eq_ignore_ascii_case("FEN") {
            match read_fen(value) {
                Ok((pos, unknown)) => {
                    self.game.start = pos;
                    self.pos = pos;
                    self.unknown_side = unknown.then(|| (value.to_owned(), line));
                }
                Err(e) => return self.fail(line, PdnErrorKind::Fen(e)),
            }
        } else if name.eq_ignore_ascii_case("GameType") {
            match game_kind(value) {
                GameKind::International => {}
                GameKind::Variant => {
                    self.variant = Some(value.to_owned());
                    self.warn(line, PdnWarningKind::GameTypeVariant(value.to_owned()));
                }
                GameKind::Other => return self.fail(line, PdnErrorKind::GameType(value.to_owned())),
            }
        }
        self.game.tags.push((name.to_owned(), value.to_owned()));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, _line: usize) -> ControlFlow<Self::Output> {
        self.movetext = true;
        ControlFlow::Continue(())
    }

    fn move_number(&mut self, number: u32, black: bool, _line: usize) -> ControlFlow<Self::Output> {
        self.fullmove = number;
        self.black_next = black;
        ControlFlow::Continue(())
    }

    fn move_text(&mut self, text: &str, line: usize) -> ControlFlow<Self::Output> {
        if self.pending.is_some() {
            return self.pending_move(text, line);
        }
        if self.unknown_side.is_some() {
            self.decide_side(text);
        }
        let side = self.pos.side_to_move();
        let number = self.fullmove;
        // The move as written first, without a detour.
        let resolved = match MoveText::parse_pdn(text).and_then(|t| t.resolve(&self.pos, &self.rules)) {
            Ok(mv) => Ok((mv, false)),
            Err(error) => resolve_again(text, &self.pos, &self.rules, error),
        };
        match resolved {
            Ok((mv, swapped)) => {
                if swapped {
                    let read_as = self.pos.to_pdn(&mv, &self.rules);
                    self.warn(line, PdnWarningKind::WrongSeparator { number, side, text: text.to_owned(), read_as });
                }
                self.game.moves.push(mv);
                self.pos = self.pos.play(&mv);
            }
            Err(error) => {
                let split = match &error {
                    MoveError::Ambiguous { candidates, .. } => {
                        let from = Branch { pos: self.pos, moves: Vec::new(), warnings: Vec::new() };
                        self.split(&from, text, line, candidates)
                    }
                    _ => None,
                };
                let error = self.move_error(line, text, number, side, error);
                match split {
                    Some(branches) => self.pending = Some(Box::new(Pending { error, branches })),
                    None => return ControlFlow::Break(Err(error)),
                }
            }
        }
        self.advance(side);
        ControlFlow::Continue(())
    }

    fn set_up(&mut self, fen: &str, line: usize) -> ControlFlow<Self::Output> {
        if let Err(e) = self.settle() {
            return ControlFlow::Break(Err(e));
        }
        let (pos, unknown) = match read_fen(fen) {
            Ok(read) => read,
            Err(e) => return self.fail(line, PdnErrorKind::Fen(e)),
        };
        let side = if unknown { self.pos.side_to_move() } else { pos.side_to_move() };
        let reached = pos.with_side_to_move(side) == self.pos;
        if reached {
            // The position the game is in: nothing changes.
            return ControlFlow::Continue(());
        }
        if !self.game.moves.is_empty() {
            self.warn(line, PdnWarningKind::SetUpMidGame { dropped: self.game.moves.len() });
            self.game.moves.clear();
        }
        self.game.start = pos;
        self.pos = pos;
        self.unknown_side = unknown.then(|| (fen.to_owned(), line));
        ControlFlow::Continue(())
    }

    fn warning(&mut self, kind: PdnWarningKind, line: usize) -> ControlFlow<Self::Output> {
        self.warn(line, kind);
        ControlFlow::Continue(())
    }

    fn unclosed_variation(&mut self, line: usize, end: usize) -> ControlFlow<Self::Output> {
        self.fail(line, PdnErrorKind::UnclosedVariation { end })
    }

    fn result(&mut self, result: GameResult, _line: usize) -> ControlFlow<Self::Output> {
        self.result = Some(result);
        ControlFlow::Continue(())
    }

    fn end_game(&mut self) -> Self::Output {
        self.settle()?;
        if let Some((fen, line)) = self.unknown_side.take() {
            let reason = "as no move tells";
            self.warn(line, PdnWarningKind::UnknownSideToMove { fen, side: Color::White, reason });
        }
        if !self.movetext {
            self.warn(self.line, PdnWarningKind::NoMoveText);
        }
        let mut game = std::mem::take(&mut self.game);
        game.result = self
            .result
            .or_else(|| game.tag("Result").and_then(GameResult::from_token))
            .unwrap_or(GameResult::Unknown);
        game.warnings.sort_by_key(|w| w.line);
        Ok(game)
    }
}

/// Reads [`PdnGame`]s one at a time from a [`BufRead`], resolving every move.
///
/// A game that cannot be read comes back as an `Err` naming the game, line and (for a move) the
/// move number and side; the reader has skipped the rest of that game and goes on with the next.
/// After an I/O error it stops. Never panics, whatever the input.
///
/// Beyond the letter of PDN, it reads what programs write, and notes in [`PdnGame::warnings`]
/// what it had to assume:
///
/// - a quiet move written with `x` or a capture with `-`, when exactly one legal move fits with
///   the other separator ([`PdnWarningKind::WrongSeparator`]);
/// - a short capture (`3x35`) that several paths fit: each path is followed along the rest of the
///   main line (at most 16 at once), and if exactly one lets the game replay to its end it is
///   taken ([`PdnWarningKind::AmbiguityResolved`]); otherwise the ambiguity is the error;
/// - `GameType` 20 with extra fields other than `W,10,10,N2,0`, such as PlayOK's
///   `20,W,10,10,N1,0` ([`PdnWarningKind::GameTypeVariant`]); a move that does not replay in
///   such a game is a [`PdnErrorKind::GameTypeMove`], which names the game type;
/// - a set-up in the move text (`/FEN "..."/`): before the first move it is the start position;
///   at the position the moves reached it changes nothing; elsewhere the game is read from it
///   and the moves before it are dropped ([`PdnWarningKind::SetUpMidGame`]);
/// - `?` as a FEN's side to move: the side the first move fits
///   ([`PdnWarningKind::UnknownSideToMove`]).
///
/// A `(` still open when the game ends is an error ([`PdnErrorKind::UnclosedVariation`]): the
/// main line after it would be lost.
#[derive(Debug)]
pub struct Reader<R> {
    raw: RawReader<R>,
    builder: GameBuilder,
}

impl<R: BufRead> Reader<R> {
    /// A reader under the FMJD rules.
    pub fn new(inner: R) -> Reader<R> {
        Reader::with_rules(inner, Rules::FMJD)
    }

    /// A reader that resolves moves under `rules` (they matter for which captures are legal:
    /// promotion during a capture).
    pub fn with_rules(inner: R, rules: Rules) -> Reader<R> {
        Reader { raw: RawReader::new(inner), builder: GameBuilder::new(rules) }
    }

    /// The rules moves are resolved under.
    pub fn rules(&self) -> &Rules {
        &self.builder.rules
    }

    /// The next game, `None` at the end of the input.
    pub fn next_game(&mut self) -> Option<Result<PdnGame, PdnError>> {
        self.raw.read_game(&mut self.builder).map(|r| r.and_then(|game| game))
    }

    /// Games begun so far (good or bad).
    pub fn games(&self) -> usize {
        self.raw.games()
    }

    /// The 1-based line the reader has reached.
    pub fn line(&self) -> usize {
        self.raw.line()
    }
}

impl<R: BufRead> Iterator for Reader<R> {
    type Item = Result<PdnGame, PdnError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_game()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_types() {
        for ok in ["20", " 20 ", "20,W,10,10,N2,0", "20, W, 10, 10, N2, 0"] {
            assert!(is_international(ok), "{ok}");
        }
        for bad in ["", "21", "2", "200", "20,B,10,10,N2,0", "20,W,8,8,N2,0", "20,W"] {
            assert!(!is_international(bad), "{bad}");
        }
    }

    #[test]
    fn tags_case_insensitive_first_wins() {
        let mut g = PdnGame::default();
        g.set_tag("White", "A");
        g.set_tag("white", "B");
        g.tags.push(("White".into(), "C".into()));
        assert_eq!(g.white(), Some("B"));
        assert_eq!(g.tags.len(), 2);
    }
}
