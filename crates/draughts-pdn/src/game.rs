//! Games: the high-level reader that resolves every move.

use std::io::BufRead;
use std::ops::ControlFlow;

use draughts_core::{Color, Game, Move, MoveText, Position, Rules};

use crate::{GameResult, PdnError, PdnErrorKind, RawReader, ReplayError, Visitor};

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
}

impl Default for PdnGame {
    fn default() -> PdnGame {
        PdnGame::new(Position::start())
    }
}

impl PdnGame {
    /// A game from `start` with no tags, no moves and an unknown result.
    pub fn new(start: Position) -> PdnGame {
        PdnGame { tags: Vec::new(), start, moves: Vec::new(), result: GameResult::Unknown, number: 0 }
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
}

impl GameBuilder {
    fn new(rules: Rules) -> GameBuilder {
        GameBuilder { rules, game: PdnGame::default(), pos: Position::start(), fullmove: 1, result: None }
    }

    fn fail(&self, line: usize, kind: PdnErrorKind) -> ControlFlow<Result<PdnGame, PdnError>> {
        ControlFlow::Break(Err(PdnError { game: self.game.number, line, kind }))
    }
}

impl Visitor for GameBuilder {
    type Output = Result<PdnGame, PdnError>;

    fn begin_game(&mut self, number: usize, _line: usize) {
        self.game = PdnGame { number, ..PdnGame::default() };
        self.pos = self.game.start;
        self.fullmove = 1;
        self.result = None;
    }

    fn tag(&mut self, name: &str, value: &str, line: usize) -> ControlFlow<Self::Output> {
        if name.eq_ignore_ascii_case("FEN") {
            match Position::from_fen(value) {
                Ok(pos) => {
                    self.game.start = pos;
                    self.pos = pos;
                }
                Err(e) => return self.fail(line, PdnErrorKind::Fen(e)),
            }
        } else if name.eq_ignore_ascii_case("GameType") && !is_international(value) {
            return self.fail(line, PdnErrorKind::GameType(value.to_owned()));
        }
        self.game.tags.push((name.to_owned(), value.to_owned()));
        ControlFlow::Continue(())
    }

    fn move_number(&mut self, number: u32, _black: bool, _line: usize) -> ControlFlow<Self::Output> {
        self.fullmove = number;
        ControlFlow::Continue(())
    }

    fn move_text(&mut self, text: &str, line: usize) -> ControlFlow<Self::Output> {
        let side = self.pos.side_to_move();
        let resolved = MoveText::parse_pdn(text).and_then(|t| t.resolve(&self.pos, &self.rules));
        match resolved {
            Ok(mv) => {
                self.game.moves.push(mv);
                self.pos = self.pos.play(&mv);
                if side == Color::Black {
                    self.fullmove = self.fullmove.saturating_add(1);
                }
                ControlFlow::Continue(())
            }
            Err(error) => self.fail(line, PdnErrorKind::Move { number: self.fullmove, side, error }),
        }
    }

    fn result(&mut self, result: GameResult, _line: usize) -> ControlFlow<Self::Output> {
        self.result = Some(result);
        ControlFlow::Continue(())
    }

    fn end_game(&mut self) -> Self::Output {
        let mut game = std::mem::take(&mut self.game);
        game.result = self
            .result
            .or_else(|| game.tag("Result").and_then(GameResult::from_token))
            .unwrap_or(GameResult::Unknown);
        Ok(game)
    }
}

/// Reads [`PdnGame`]s one at a time from a [`BufRead`], resolving every move.
///
/// A game that cannot be read comes back as an `Err` naming the game, line and (for a move) the
/// move number and side; the reader has skipped the rest of that game and goes on with the next.
/// After an I/O error it stops. Never panics, whatever the input.
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
