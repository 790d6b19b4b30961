//! Writing games as PDN.

use std::io::{self, Write};

use draughts_core::{Color, Position, Rules};

use crate::{PdnGame, ReplayError, MAX_TAG_NAME, MAX_TAG_VALUE, SEVEN_TAG_ROSTER};

/// Why a game could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The output failed.
    #[error("write error: {0}")]
    Io(#[from] io::Error),
    /// A move of the game is not legal where it is played.
    #[error("{0}")]
    Replay(#[from] ReplayError),
    /// A tag the reader could not read back.
    #[error("tag `{name}`: {reason}")]
    BadTag {
        /// The tag's name.
        name: String,
        /// What is wrong.
        reason: &'static str,
    },
}

/// Tags the writer produces itself, so copies in [`PdnGame::tags`] are not written again.
const GENERATED: [&str; 3] = ["GameType", "SetUp", "FEN"];

/// Writes games as PDN, under a set of rules (they decide when a capture is ambiguous and needs
/// its landing path) and a line width.
#[derive(Debug)]
pub struct Writer<W> {
    out: W,
    rules: Rules,
    width: usize,
}

impl<W: Write> Writer<W> {
    /// A writer under the FMJD rules, move text wrapped at 80 columns.
    pub fn new(out: W) -> Writer<W> {
        Writer { out, rules: Rules::FMJD, width: 80 }
    }

    /// The same writer under `rules`.
    pub fn with_rules(mut self, rules: Rules) -> Writer<W> {
        self.rules = rules;
        self
    }

    /// The same writer with move text wrapped at `width` columns (a single token longer than
    /// that still goes on one line).
    pub fn with_width(mut self, width: usize) -> Writer<W> {
        self.width = width;
        self
    }

    /// Writes one game followed by a blank line. The game is checked and formatted before any
    /// byte is written, so a bad game leaves the output untouched.
    pub fn write_game(&mut self, game: &PdnGame) -> Result<(), WriteError> {
        let text = format_game(game, &self.rules, self.width)?;
        self.out.write_all(text.as_bytes())?;
        Ok(())
    }

    /// The output.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// Gives the output back.
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// Writes `game` to `out` under the FMJD rules, see [`Writer`].
pub fn write_game<W: Write + ?Sized>(out: &mut W, game: &PdnGame) -> Result<(), WriteError> {
    let text = format_game(game, &Rules::FMJD, 80)?;
    out.write_all(text.as_bytes())?;
    Ok(())
}

/// `game` as PDN text under the FMJD rules, see [`Writer`].
pub fn game_to_string(game: &PdnGame) -> Result<String, WriteError> {
    format_game(game, &Rules::FMJD, 80)
}

fn push_tag(out: &mut String, name: &str, value: &str) -> Result<(), WriteError> {
    let bad = |reason| WriteError::BadTag { name: name.to_owned(), reason };
    if name.is_empty() || name.len() > MAX_TAG_NAME || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(bad("a tag name is 1 to 255 letters, digits or `_`"));
    }
    if value.len() > MAX_TAG_VALUE {
        return Err(bad("value longer than 64 KiB"));
    }
    out.push('[');
    out.push_str(name);
    out.push_str(" \"");
    for c in value.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            // A tag is one line: control characters become spaces.
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out.push_str("\"]\n");
    Ok(())
}

/// The whole game as text: tags, a blank line, move text, a blank line.
fn format_game(game: &PdnGame, rules: &Rules, width: usize) -> Result<String, WriteError> {
    let mut out = String::with_capacity(256 + 8 * game.moves.len());
    for name in SEVEN_TAG_ROSTER {
        let value = if name == "Result" { game.result.to_pdn() } else { game.tag(name).unwrap_or("?") };
        push_tag(&mut out, name, value)?;
    }
    let game_type = game.tag("GameType").unwrap_or("20");
    push_tag(&mut out, "GameType", game_type)?;
    if game.start != Position::start() {
        push_tag(&mut out, "SetUp", "1")?;
        push_tag(&mut out, "FEN", &game.start.to_fen())?;
    }
    for (name, value) in &game.tags {
        let generated = SEVEN_TAG_ROSTER.iter().chain(&GENERATED).any(|n| n.eq_ignore_ascii_case(name));
        if !generated {
            push_tag(&mut out, name, value)?;
        }
    }
    out.push('\n');

    // Units that wrapping keeps together: a move number with its move.
    let mut units = Vec::with_capacity(game.moves.len() + 1);
    let mut pos = game.start;
    let mut number = 1u32;
    for (ply, mv) in game.moves.iter().enumerate() {
        if !pos.legal_moves_with(rules).contains(mv) {
            return Err(ReplayError { ply, mv: mv.to_hub(), fen: pos.to_fen() }.into());
        }
        let text = pos.to_pdn(mv, rules);
        units.push(match pos.side_to_move() {
            Color::White => format!("{number}. {text}"),
            Color::Black if ply == 0 => format!("{number}... {text}"),
            Color::Black => text,
        });
        if pos.side_to_move() == Color::Black {
            number += 1;
        }
        pos = pos.play(mv);
    }
    units.push(game.result.to_pdn().to_owned());
    let mut line_len = 0;
    for unit in units {
        if line_len > 0 && line_len + 1 + unit.len() > width {
            out.push('\n');
            line_len = 0;
        }
        if line_len > 0 {
            out.push(' ');
            line_len += 1;
        }
        out.push_str(&unit);
        line_len += unit.len();
    }
    out.push_str("\n\n");
    Ok(out)
}
