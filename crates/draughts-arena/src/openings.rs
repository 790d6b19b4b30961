//! Openings: the start positions of match games. Every opening is played twice with colours
//! swapped (a game pair), so an opening that favours one colour favours both players equally.
//!
//! Two sources:
//! - the shipped set [`builtin`], `openings/fmjd-4ply.txt` (how it was made is written in its
//!   header);
//! - a user file ([`load`]): a list of FENs (one per line; `#` starts a comment; text after `;`
//!   is the opening's label), or a PDN file (extension `.pdn`), where each game's start position
//!   and moves form one opening.

use std::io::BufRead;
use std::path::Path;

use draughts_core::{FenError, Game, Move, Position, Rules};
use draughts_pdn::{PdnError, Reader};
use thiserror::Error;

/// A start position for match games: a position and the moves that lead from it to where the
/// players take over. The moves are kept so that the PDN of a game shows the whole opening and
/// repetitions count from the true start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opening {
    /// 0-based number in its set.
    pub index: usize,
    /// A short description: the label from the file, or where it came from (`line 12`,
    /// `game 3`).
    pub label: String,
    /// The first position.
    pub start: Position,
    /// Moves from `start`, each legal in turn (empty for a FEN opening).
    pub moves: Vec<Move>,
}

impl Opening {
    /// An opening that is just `position`.
    pub fn from_position(index: usize, label: impl Into<String>, position: Position) -> Opening {
        Opening { index, label: label.into(), start: position, moves: Vec::new() }
    }

    /// The game at the point the players take over: `start` with `moves` played.
    ///
    /// The moves were checked when the opening was made; if one is not legal under `rules`
    /// (an opening checked under other rules), the game stops before it.
    pub fn game(&self, rules: Rules) -> Game {
        let mut game = Game::from_position(self.start, rules);
        for &mv in &self.moves {
            if game.play(mv).is_err() {
                break;
            }
        }
        game
    }

    /// The position the players start from.
    pub fn position(&self) -> Position {
        *self.game(Rules::FMJD).position()
    }
}

/// Why openings could not be loaded.
#[derive(Debug, Error)]
#[error("openings `{source_name}`{}: {kind}", line.map(|l| format!(", line {l}")).unwrap_or_default())]
pub struct OpeningError {
    /// The file (or `<builtin>`).
    pub source_name: String,
    /// 1-based line, where one applies.
    pub line: Option<usize>,
    /// What is wrong.
    pub kind: OpeningErrorKind,
}

/// What is wrong with an openings file.
#[derive(Debug, Error)]
pub enum OpeningErrorKind {
    /// The file could not be read.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A line that is not a FEN.
    #[error("{0}")]
    Fen(Box<FenError>),
    /// A PDN game that could not be read.
    #[error("{0}")]
    Pdn(Box<PdnError>),
    /// Moves of a PDN opening that are illegal under the match rules.
    #[error("opening `{label}` is not legal under the {rules} rules: {detail}")]
    Illegal {
        /// The opening's label.
        label: String,
        /// The rules.
        rules: Rules,
        /// What is illegal.
        detail: String,
    },
    /// An opening whose game is already over.
    #[error("opening `{label}` is already decided: {outcome}")]
    Finished {
        /// The opening's label.
        label: String,
        /// The outcome.
        outcome: String,
    },
    /// No opening at all.
    #[error("no opening in the file")]
    Empty,
}

/// The shipped openings file.
pub const BUILTIN_TEXT: &str = include_str!("../openings/fmjd-4ply.txt");

/// The shipped set of balanced openings (see the header of `openings/fmjd-4ply.txt`).
pub fn builtin() -> Vec<Opening> {
    // The file is checked by a test (`builtin_openings_parse`), so this cannot fail at run time.
    parse_fen_list(BUILTIN_TEXT, "<builtin>", &Rules::FMJD).expect("the shipped openings file is valid")
}

/// One opening: the standard start position.
pub fn start_position() -> Vec<Opening> {
    vec![Opening::from_position(0, "start", Position::start())]
}

/// Parses a list of FENs: one per line, blank lines and `#` comments ignored, text after `;`
/// kept as the label. `source_name` names the text in errors. Every opening must be a game
/// still in progress under `rules`.
pub fn parse_fen_list(text: &str, source_name: &str, rules: &Rules) -> Result<Vec<Opening>, OpeningError> {
    let err = |line, kind| OpeningError { source_name: source_name.to_owned(), line: Some(line), kind };
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let (fen, label) = match line.split_once(';') {
            Some((f, l)) => (f.trim(), l.trim().to_owned()),
            None => (line, String::new()),
        };
        let fen = fen.trim_matches('"');
        let position = Position::from_fen(fen).map_err(|e| err(i + 1, OpeningErrorKind::Fen(Box::new(e))))?;
        let label = if label.is_empty() { format!("line {}", i + 1) } else { label };
        let opening = Opening::from_position(out.len(), label, position);
        check_live(&opening, rules).map_err(|k| err(i + 1, k))?;
        out.push(opening);
    }
    if out.is_empty() {
        return Err(OpeningError { source_name: source_name.to_owned(), line: None, kind: OpeningErrorKind::Empty });
    }
    Ok(out)
}

/// Reads openings from PDN: each game's start position (`FEN` tag or the standard start) and
/// its moves. The label is the game's `Opening` tag, else `game N`.
pub fn read_pdn<R: BufRead>(input: R, source_name: &str, rules: &Rules) -> Result<Vec<Opening>, OpeningError> {
    let mut reader = Reader::with_rules(input, *rules);
    let mut out = Vec::new();
    while let Some(game) = reader.next_game() {
        let game = game.map_err(|e| OpeningError {
            source_name: source_name.to_owned(),
            line: Some(e.line),
            kind: OpeningErrorKind::Pdn(Box::new(e)),
        })?;
        let label = game.tag("Opening").map_or_else(|| format!("game {}", game.number), str::to_owned);
        let opening = Opening { index: out.len(), label, start: game.start, moves: game.moves };
        check_live(&opening, rules)
            .map_err(|kind| OpeningError { source_name: source_name.to_owned(), line: Some(reader.line()), kind })?;
        out.push(opening);
    }
    if out.is_empty() {
        return Err(OpeningError { source_name: source_name.to_owned(), line: None, kind: OpeningErrorKind::Empty });
    }
    Ok(out)
}

/// Loads openings from a file: PDN if the name ends in `.pdn` (any case), else a FEN list.
pub fn load(path: &Path, rules: &Rules) -> Result<Vec<Opening>, OpeningError> {
    let name = path.display().to_string();
    let io = |e| OpeningError { source_name: name.clone(), line: None, kind: OpeningErrorKind::Io(e) };
    let is_pdn = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("pdn"));
    if is_pdn {
        let file = std::fs::File::open(path).map_err(io)?;
        read_pdn(std::io::BufReader::new(file), &name, rules)
    } else {
        let text = std::fs::read_to_string(path).map_err(io)?;
        parse_fen_list(&text, &name, rules)
    }
}

/// Checks that the opening's moves are legal under `rules` and the game is not over.
pub(crate) fn check_live(opening: &Opening, rules: &Rules) -> Result<(), OpeningErrorKind> {
    let mut game = Game::from_position(opening.start, *rules);
    for &mv in &opening.moves {
        if let Some(outcome) = game.outcome() {
            return Err(OpeningErrorKind::Finished { label: opening.label.clone(), outcome: outcome.to_string() });
        }
        game.play(mv).map_err(|e| OpeningErrorKind::Illegal {
            label: opening.label.clone(),
            rules: *rules,
            detail: e.to_string(),
        })?;
    }
    match game.outcome() {
        Some(outcome) => Err(OpeningErrorKind::Finished { label: opening.label.clone(), outcome: outcome.to_string() }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_openings_parse() {
        let set = builtin();
        assert!(set.len() >= 50, "{}", set.len());
        // Distinct positions, White to move after two moves each, men only, equal material, no
        // capture pending.
        use draughts_core::Color::{Black, White};
        let mut seen = std::collections::HashSet::new();
        for o in &set {
            let p = o.position();
            assert!(seen.insert(p), "duplicate opening {}", o.label);
            assert_eq!(p.side_to_move(), White, "{}", o.label);
            assert_eq!(p.pieces(White).count(), p.pieces(Black).count(), "{}", o.label);
            assert!(p.pieces(White).count() >= 18 && p.all_kings().is_empty(), "{}", o.label);
            assert!(p.legal_moves().iter().all(|m| !m.is_capture()), "{}", o.label);
            // The label's moves lead from the start to the position.
            let moves = o.label.split("  (").next().unwrap_or_default();
            let mut game = Game::new(Rules::FMJD);
            for t in moves.split_whitespace().filter(|t| !t.ends_with('.')) {
                let mv = game.position().parse_pdn_move(t).unwrap();
                game.play(mv).unwrap();
            }
            assert_eq!((game.ply(), *game.position()), (4, p), "{}", o.label);
        }
        assert_eq!(set.iter().map(|o| o.index).collect::<Vec<_>>(), (0..set.len()).collect::<Vec<_>>());
    }

    #[test]
    fn fen_lists() {
        let text = "# header\n\nW:W31-50:B1-20 ; the start\n  B:W28,31,33-50:B1-20   # one move\n";
        let set = parse_fen_list(text, "t", &Rules::FMJD).unwrap();
        assert_eq!(set[0].start, Position::start());
        assert_eq!(set.len(), 2);
        assert_eq!(set[0].label, "the start");
        assert_eq!(set[1].label, "line 4");
        assert_eq!(set[1].index, 1);

        let e = parse_fen_list("W:W31:B1\nW:Wxx\n", "file.txt", &Rules::FMJD).unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.to_string().starts_with("openings `file.txt`, line 2:"), "{e}");
        let e = parse_fen_list("# nothing\n", "f", &Rules::FMJD).unwrap_err();
        assert!(matches!(e.kind, OpeningErrorKind::Empty));
        // White to move without pieces: decided.
        let e = parse_fen_list("W:W:B1\n", "f", &Rules::FMJD).unwrap_err();
        assert!(matches!(e.kind, OpeningErrorKind::Finished { .. }), "{e}");
    }

    #[test]
    fn pdn_openings_keep_their_moves() {
        let text = "[Opening \"Roozenburg\"]\n\n1. 32-28 18-23 2. 37-32 12-18 *\n\n\
                    [FEN \"W:W28,33:B19,20\"]\n\n1. 33-29 *\n";
        let set = read_pdn(text.as_bytes(), "o.pdn", &Rules::FMJD).unwrap();
        assert_eq!(set.len(), 2);
        assert_eq!(set[0].label, "Roozenburg");
        assert_eq!(set[0].moves.len(), 4);
        assert_eq!(set[0].start, Position::start());
        assert_eq!(set[0].game(Rules::FMJD).ply(), 4);
        assert_eq!(set[1].label, "game 2");
        assert_eq!(set[1].position().side_to_move(), draughts_core::Color::Black);
        let e = read_pdn("1. 32-26 *\n".as_bytes(), "bad.pdn", &Rules::FMJD).unwrap_err();
        assert!(e.to_string().contains("bad.pdn"), "{e}");
    }

    #[test]
    fn load_by_extension() {
        let dir = tempfile::tempdir().unwrap();
        let fen = dir.path().join("o.txt");
        std::fs::write(&fen, format!("{}\n", Position::start().to_fen())).unwrap();
        assert_eq!(load(&fen, &Rules::FMJD).unwrap().len(), 1);
        let pdn = dir.path().join("o.PDN");
        std::fs::write(&pdn, "1. 32-28 *\n").unwrap();
        assert_eq!(load(&pdn, &Rules::FMJD).unwrap()[0].moves.len(), 1);
        let e = load(&dir.path().join("missing.txt"), &Rules::FMJD).unwrap_err();
        assert!(matches!(e.kind, OpeningErrorKind::Io(_)) && e.to_string().contains("missing.txt"), "{e}");
    }
}
