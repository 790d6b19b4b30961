//! Move text: PDN (`32-28`, `28x19`, `47x38x24x13x36`) and Hub (`32-28`, `28x19x23`).
//!
//! Text is parsed without a position into a [`MoveText`] and then resolved against a position,
//! because the same text can name different moves in different positions, and in one position
//! `19x30` can name two captures (different pieces taken). PDN names a capture by its from and to
//! squares and, when that is ambiguous, by its landing squares; Hub names it by from, to and every
//! captured square.

use crate::{Bitboard, Move, Position, Rules, Square};

/// A move as written, not yet checked against a position.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MoveText {
    /// A quiet move `from-to`.
    Quiet {
        /// Start square.
        from: Square,
        /// End square.
        to: Square,
    },
    /// A PDN capture: the squares the capturing piece stands on, from start to end
    /// (`28x19` is `[28, 19]`; `47x38x24x13x36` lists the landing squares in between too). The
    /// intermediate squares may be only some of the landings, in order.
    Capture {
        /// From, landing squares, to. At least two squares.
        path: Vec<Square>,
    },
    /// A Hub capture: from, to, and the captured squares (in any order in the text).
    HubCapture {
        /// Start square.
        from: Square,
        /// End square.
        to: Square,
        /// Every captured piece.
        captured: Bitboard,
    },
}

/// Why move text does not name a legal move.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// Not move text at all.
    #[error("`{text}` is not a move: {reason}")]
    Syntax {
        /// The text.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Well-formed, but no legal move matches.
    #[error("`{text}` is not a legal move in {fen} (legal: {legal})")]
    Illegal {
        /// The text.
        text: String,
        /// The position's FEN.
        fen: String,
        /// The legal moves, in the notation the text was written in.
        legal: String,
    },
    /// Several legal moves match.
    #[error("`{text}` is ambiguous in {fen}: it could be {}", candidates.join(" or "))]
    Ambiguous {
        /// The text.
        text: String,
        /// The position's FEN.
        fen: String,
        /// The matching moves, each written with its full landing path.
        candidates: Vec<String>,
    },
}

fn syntax(text: &str, reason: impl Into<String>) -> MoveError {
    MoveError::Syntax { text: text.to_owned(), reason: reason.into() }
}

fn squares(text: &str, sep: char) -> Result<Vec<Square>, MoveError> {
    text.split(sep)
        .map(|part| part.parse::<Square>().map_err(|e| syntax(text, e.to_string())))
        .collect()
}

impl MoveText {
    /// Parses PDN move text: `32-28`, `28x19` or a capture with landing squares `47x38x24x13x36`.
    /// A `:` separator (used by some programs) is read as `x`.
    pub fn parse_pdn(text: &str) -> Result<MoveText, MoveError> {
        let t = text.trim();
        if t.contains('-') {
            let sq = squares(t, '-')?;
            match sq[..] {
                [from, to] => Ok(MoveText::Quiet { from, to }),
                _ => Err(syntax(text, "a quiet move is `from-to`")),
            }
        } else if t.contains(['x', 'X', ':']) {
            let norm: String = t.chars().map(|c| if c == 'X' || c == ':' { 'x' } else { c }).collect();
            let path = squares(&norm, 'x').map_err(|e| match e {
                MoveError::Syntax { reason, .. } => syntax(text, reason),
                other => other,
            })?;
            if path.len() < 2 {
                return Err(syntax(text, "a capture is `fromxto`"));
            }
            Ok(MoveText::Capture { path })
        } else {
            Err(syntax(text, "expected `from-to` or `fromxto`"))
        }
    }

    /// Parses Hub move text: `32-28`, or `28x19x23` (from, to, every captured square in any
    /// order). `28x19` without captured squares is accepted and resolved like PDN.
    pub fn parse_hub(text: &str) -> Result<MoveText, MoveError> {
        let t = text.trim();
        if t.contains('-') {
            return MoveText::parse_pdn(t);
        }
        if !t.contains('x') {
            return Err(syntax(text, "expected `from-to` or `fromxto[xcaptured...]`"));
        }
        let sq = squares(t, 'x')?;
        match sq[..] {
            [] | [_] => Err(syntax(text, "a capture is `fromxto` followed by the captured squares")),
            [from, to] => Ok(MoveText::Capture { path: vec![from, to] }),
            [from, to, ref rest @ ..] => {
                let mut captured = Bitboard::EMPTY;
                for &c in rest {
                    if captured.contains(c) {
                        return Err(syntax(text, format!("square {c} captured twice")));
                    }
                    captured |= Bitboard::from_square(c);
                }
                Ok(MoveText::HubCapture { from, to, captured })
            }
        }
    }

    /// The legal move this text names in `pos` under `rules`.
    pub fn resolve(&self, pos: &Position, rules: &Rules) -> Result<Move, MoveError> {
        let legal = pos.legal_moves_with(rules);
        let matches: Vec<Move> = match self {
            MoveText::Quiet { from, to } => legal
                .iter()
                .copied()
                .filter(|m| !m.is_capture() && m.from() == *from && m.to() == *to)
                .collect(),
            MoveText::HubCapture { from, to, captured } => legal
                .iter()
                .copied()
                .filter(|m| m.from() == *from && m.to() == *to && m.captured() == *captured)
                .collect(),
            MoveText::Capture { path } => {
                let (from, to) = (path[0], path[path.len() - 1]);
                let via = &path[1..path.len() - 1];
                legal
                    .iter()
                    .copied()
                    .filter(|m| m.is_capture() && m.from() == from && m.to() == to)
                    .filter(|m| {
                        via.is_empty()
                            || pos.landing_paths(m, rules).iter().any(|p| is_subsequence(via, &p[1..p.len() - 1]))
                    })
                    .collect()
            }
        };
        match matches[..] {
            [mv] => Ok(mv),
            [] => {
                let hub = matches!(self, MoveText::HubCapture { .. });
                let legal: Vec<String> = legal
                    .iter()
                    .map(|m| if hub { m.to_hub() } else { pos.to_pdn(m, rules) })
                    .collect();
                Err(MoveError::Illegal { text: self.to_string(), fen: pos.to_fen(), legal: legal.join(" ") })
            }
            _ => Err(MoveError::Ambiguous {
                text: self.to_string(),
                fen: pos.to_fen(),
                candidates: matches.iter().map(|m| full_path_text(pos, m, rules)).collect(),
            }),
        }
    }
}

fn is_subsequence(needle: &[Square], hay: &[Square]) -> bool {
    let mut it = hay.iter();
    needle.iter().all(|n| it.any(|h| h == n))
}

fn full_path_text(pos: &Position, mv: &Move, rules: &Rules) -> String {
    match pos.landing_paths(mv, rules).first() {
        Some(p) => p.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("x"),
        None => mv.to_hub(),
    }
}

impl std::fmt::Display for MoveText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MoveText::Quiet { from, to } => write!(f, "{from}-{to}"),
            MoveText::Capture { path } => {
                let parts: Vec<String> = path.iter().map(|s| s.to_string()).collect();
                f.write_str(&parts.join("x"))
            }
            MoveText::HubCapture { from, to, captured } => {
                write!(f, "{from}x{to}")?;
                for c in *captured {
                    write!(f, "x{c}")?;
                }
                Ok(())
            }
        }
    }
}

impl Position {
    /// PDN text for `mv` (legal here): `32-28`, `28x19`, or, when another legal capture shares
    /// the from and to squares, the whole landing path `47x38x24x13x36`.
    pub fn to_pdn(&self, mv: &Move, rules: &Rules) -> String {
        if !mv.is_capture() {
            return format!("{}-{}", mv.from(), mv.to());
        }
        let ambiguous = self
            .legal_moves_with(rules)
            .iter()
            .any(|m| m.from() == mv.from() && m.to() == mv.to() && m.captured() != mv.captured());
        if ambiguous {
            full_path_text(self, mv, rules)
        } else {
            format!("{}x{}", mv.from(), mv.to())
        }
    }

    /// Parses and resolves PDN move text under the FMJD rules.
    pub fn parse_pdn_move(&self, text: &str) -> Result<Move, MoveError> {
        MoveText::parse_pdn(text)?.resolve(self, &Rules::FMJD)
    }

    /// Parses and resolves Hub move text under the FMJD rules.
    pub fn parse_hub_move(&self, text: &str) -> Result<Move, MoveError> {
        MoveText::parse_hub(text)?.resolve(self, &Rules::FMJD)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(n: u8) -> Square {
        Square::new(n).unwrap()
    }

    #[test]
    fn parse_forms() {
        assert_eq!(MoveText::parse_pdn("32-28"), Ok(MoveText::Quiet { from: sq(32), to: sq(28) }));
        assert_eq!(MoveText::parse_pdn("28x19"), Ok(MoveText::Capture { path: vec![sq(28), sq(19)] }));
        assert_eq!(MoveText::parse_pdn("28:19"), Ok(MoveText::Capture { path: vec![sq(28), sq(19)] }));
        assert_eq!(
            MoveText::parse_hub("28x19x23"),
            Ok(MoveText::HubCapture { from: sq(28), to: sq(19), captured: Bitboard::from_square(sq(23)) })
        );
        for bad in ["", "32", "32-", "-28", "32-28-23", "0-5", "51x4", "x", "28x", "a-b", "28x19x23x23"] {
            let parsed = if bad.matches('x').count() >= 3 { MoveText::parse_hub(bad) } else { MoveText::parse_pdn(bad) };
            assert!(matches!(parsed, Err(MoveError::Syntax { .. })), "{bad}: {parsed:?}");
        }
    }

    #[test]
    fn resolve_start() {
        let p = Position::start();
        let m = p.parse_pdn_move("32-28").unwrap();
        assert_eq!((m.from(), m.to()), (sq(32), sq(28)));
        let e = p.parse_pdn_move("32-26").unwrap_err();
        assert!(e.to_string().contains("not a legal move"), "{e}");
        assert!(e.to_string().contains("31-26"), "{e}");
    }

    #[test]
    fn ambiguous_capture_needs_its_path() {
        // Two captures from 47 to 36 take different pieces.
        let p = Position::from_fen("W:WK47:B14,19,29,31,42").unwrap();
        let e = p.parse_pdn_move("47x36").unwrap_err();
        assert!(matches!(e, MoveError::Ambiguous { .. }), "{e}");
        for mv in p.legal_moves() {
            let text = p.to_pdn(&mv, &Rules::FMJD);
            assert!(text.matches('x').count() > 1, "{text}");
            assert_eq!(p.parse_pdn_move(&text), Ok(mv));
            assert_eq!(p.parse_hub_move(&mv.to_hub()), Ok(mv));
        }
    }
}
