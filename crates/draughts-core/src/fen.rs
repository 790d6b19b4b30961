//! FEN (`W:W31-50:B1-20`) and the 51-character Hub position.
//!
//! FEN grammar accepted: the side to move (`W` or `B`), then `:`-separated sections, each a colour
//! letter followed by comma-separated items; an item is a square or a range `a-b`, optionally
//! prefixed by `K` for kings. The white and black sections may come in either order and may be
//! empty; each may appear once. Trailing move-counter sections (`H0`, `F1`) and a final `.` are
//! accepted and ignored, as some programs write them. Whitespace around the text is ignored.

use std::fmt;

use crate::{Bitboard, Color, Piece, Position, PositionError, Role, Square};

/// Why a text is not a FEN (or Hub position), and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad FEN `{text}`: {kind} at column {column}")]
pub struct FenError {
    /// The text, handed back so the caller loses nothing.
    pub text: String,
    /// 1-based column (in characters) where the problem starts.
    pub column: usize,
    /// What is wrong.
    pub kind: FenErrorKind,
}

/// What is wrong with a FEN.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FenErrorKind {
    /// Nothing but whitespace.
    #[error("empty text")]
    Empty,
    /// The first field is not `W` or `B`.
    #[error("side to move `{0}` is not W or B")]
    BadSide(String),
    /// A section does not start with `W` or `B`.
    #[error("section `{0}` does not start with W or B")]
    BadSection(String),
    /// The same colour's section twice.
    #[error("second {} section", .0.name())]
    DuplicateSection(Color),
    /// An item is not a square, `K` square, or range.
    #[error("`{0}` is not a square (1 to 50), a range like 31-50 or a king like K5")]
    BadItem(String),
    /// A range that runs backwards.
    #[error("range `{0}` runs backwards")]
    BadRange(String),
    /// A square named twice for the same colour.
    #[error("square {0} listed twice")]
    Duplicate(Square),
    /// Valid syntax, impossible position.
    #[error("{0}")]
    Position(PositionError),
    /// A Hub position of the wrong length.
    #[error("a Hub position has 51 characters (side to move, then squares 1 to 50), not {0}")]
    HubLength(usize),
    /// A character that is not `w b W B e` (Hub) in a Hub position.
    #[error("`{0}` is not one of w b W B e")]
    HubChar(char),
}

fn err(text: &str, byte_offset: usize, kind: FenErrorKind) -> FenError {
    let column = text[..byte_offset.min(text.len())].chars().count() + 1;
    FenError { text: text.to_owned(), column, kind }
}

impl Position {
    /// Parses a FEN such as `W:W31-50:B1-20` or `B:W18,K34:BK2,12`.
    pub fn from_fen(text: &str) -> Result<Position, FenError> {
        let lead = text.len() - text.trim_start().len();
        let body = text.trim();
        if body.is_empty() {
            return Err(err(text, 0, FenErrorKind::Empty));
        }
        let body = body.strip_suffix('.').unwrap_or(body);
        let mut fields = Vec::new();
        let mut start = 0;
        for (i, c) in body.char_indices() {
            if c == ':' {
                fields.push((lead + start, &body[start..i]));
                start = i + 1;
            }
        }
        fields.push((lead + start, &body[start..]));

        let (off, side_text) = fields[0];
        let side = match side_text.trim() {
            "W" | "w" => Color::White,
            "B" | "b" => Color::Black,
            other => return Err(err(text, off, FenErrorKind::BadSide(other.to_owned()))),
        };
        let mut sets = [[Bitboard::EMPTY; 2]; 2]; // [color][man, king]
        let mut seen = [false; 2];
        for &(off, field) in &fields[1..] {
            let trimmed = field.trim_start();
            let off = off + (field.len() - trimmed.len());
            let field = trimmed.trim_end();
            let mut chars = field.chars();
            let color = match chars.next() {
                Some('W') | Some('w') => Color::White,
                Some('B') | Some('b') => Color::Black,
                // Move counters some programs append.
                Some('H') | Some('F') if field[1..].bytes().all(|b| b.is_ascii_digit()) && field.len() > 1 => continue,
                _ => return Err(err(text, off, FenErrorKind::BadSection(field.to_owned()))),
            };
            let ci = color as usize;
            if seen[ci] {
                return Err(err(text, off, FenErrorKind::DuplicateSection(color)));
            }
            seen[ci] = true;
            let items = &field[1..];
            if items.trim().is_empty() {
                continue;
            }
            let mut item_off = off + 1;
            for item in items.split(',') {
                let at = item_off + (item.len() - item.trim_start().len());
                item_off += item.len() + 1;
                let item = item.trim();
                let (king, squares) = match item.strip_prefix(['K', 'k']) {
                    Some(rest) => (true, rest),
                    None => (false, item),
                };
                let bad = || err(text, at, FenErrorKind::BadItem(item.to_owned()));
                let (a, b) = match squares.split_once('-') {
                    Some((a, b)) => (
                        a.parse::<Square>().map_err(|_| bad())?,
                        b.parse::<Square>().map_err(|_| bad())?,
                    ),
                    None => {
                        let s = squares.parse::<Square>().map_err(|_| bad())?;
                        (s, s)
                    }
                };
                if a > b {
                    return Err(err(text, at, FenErrorKind::BadRange(item.to_owned())));
                }
                for n in a.number()..=b.number() {
                    let sq = Square::new(n).expect("between two squares");
                    if (sets[ci][0] | sets[ci][1]).contains(sq) {
                        return Err(err(text, at, FenErrorKind::Duplicate(sq)));
                    }
                    sets[ci][king as usize] |= Bitboard::from_square(sq);
                }
            }
        }
        Position::from_pieces(sets[0][0], sets[0][1], sets[1][0], sets[1][1], side)
            .map_err(|e| err(text, lead, FenErrorKind::Position(e)))
    }

    /// The FEN of this position: ascending squares, runs of three or more squares of one kind
    /// written as ranges (`W:W31-50:B1-20`).
    pub fn to_fen(&self) -> String {
        let mut s = String::with_capacity(64);
        s.push(self.side_to_move().letter());
        for color in [Color::White, Color::Black] {
            s.push(':');
            s.push(color.letter());
            let mut items = Vec::new();
            let mut run: Option<(Square, Square, bool)> = None;
            for sq in self.pieces(color) {
                let king = self.all_kings().contains(sq);
                match run {
                    Some((a, b, k)) if k == king && b.number() + 1 == sq.number() => run = Some((a, sq, k)),
                    _ => {
                        if let Some(r) = run {
                            push_run(&mut items, r);
                        }
                        run = Some((sq, sq, king));
                    }
                }
            }
            if let Some(r) = run {
                push_run(&mut items, r);
            }
            s.push_str(&items.join(","));
        }
        s
    }

    /// Parses a 51-character Hub position: `W` or `B` for the side to move, then squares 1..=50
    /// as `w` `b` (men), `W` `B` (kings) or `e` (empty).
    pub fn from_hub(text: &str) -> Result<Position, FenError> {
        let lead = text.len() - text.trim_start().len();
        let body = text.trim();
        let n = body.chars().count();
        if n != 51 {
            return Err(err(text, 0, FenErrorKind::HubLength(n)));
        }
        let mut chars = body.char_indices();
        let (_, side) = chars.next().expect("51 chars");
        let side = match side {
            'W' | 'w' => Color::White,
            'B' | 'b' => Color::Black,
            other => return Err(err(text, 0, FenErrorKind::BadSide(other.to_string()))),
        };
        let mut sets = [Bitboard::EMPTY; 4];
        for (n, (i, c)) in (1..=50).zip(chars) {
            let idx = match c {
                'w' => 0,
                'W' => 1,
                'b' => 2,
                'B' => 3,
                'e' => continue,
                other => return Err(err(text, lead + i, FenErrorKind::HubChar(other))),
            };
            sets[idx] |= Bitboard::from_square(Square::new(n).expect("1..=50"));
        }
        Position::from_pieces(sets[0], sets[1], sets[2], sets[3], side)
            .map_err(|e| err(text, 0, FenErrorKind::Position(e)))
    }

    /// The 51-character Hub position.
    pub fn to_hub(&self) -> String {
        let mut s = String::with_capacity(51);
        s.push(self.side_to_move().letter());
        for sq in Square::all() {
            s.push(match self.piece_at(sq) {
                None => 'e',
                Some(Piece { color: Color::White, role: Role::Man }) => 'w',
                Some(Piece { color: Color::White, role: Role::King }) => 'W',
                Some(Piece { color: Color::Black, role: Role::Man }) => 'b',
                Some(Piece { color: Color::Black, role: Role::King }) => 'B',
            });
        }
        s
    }
}

fn push_run(items: &mut Vec<String>, (a, b, king): (Square, Square, bool)) {
    let k = if king { "K" } else { "" };
    let len = b.number() - a.number() + 1;
    if len >= 3 {
        items.push(format!("{k}{a}-{b}"));
    } else {
        for n in a.number()..=b.number() {
            items.push(format!("{k}{n}"));
        }
    }
}

/// Displays a position's FEN.
#[derive(Debug)]
pub struct Fen<'a>(pub &'a Position);

impl fmt::Display for Fen<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.to_fen())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start() {
        let p = Position::from_fen("W:W31-50:B1-20").unwrap();
        assert_eq!(p, Position::start());
        assert_eq!(p.to_fen(), "W:W31-50:B1-20");
        assert_eq!(Position::from_fen(" W:B1-20:W31-50. ").unwrap(), p);
        assert_eq!(Position::from_fen("W:W31-50:B1-20:H0:F1").unwrap(), p);
    }

    #[test]
    fn kings_and_lists() {
        let p = Position::from_fen("B:BK17,K24:W6,9,10,11,20,21,22,23,30,K31,33,37,41,42,43,44,46").unwrap();
        assert_eq!(p.side_to_move(), Color::Black);
        assert_eq!(p.kings(Color::Black).count(), 2);
        assert_eq!(p.kings(Color::White).count(), 1);
        assert_eq!(Position::from_fen(&p.to_fen()).unwrap(), p);
        assert_eq!(p.to_fen(), "B:W6,9-11,20-23,30,K31,33,37,41-44,46:BK17,K24");
        let k = Position::from_fen("W:WK31-50:BK1-20").unwrap();
        assert_eq!(k.all_kings().count(), 40);
        assert_eq!(k.to_fen(), "W:WK31-50:BK1-20");
    }

    #[test]
    fn errors_say_what_and_where() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 1, "empty"),
            ("X:W31", 1, "side to move"),
            ("W:W31:Q5", 7, "does not start"),
            ("W:W31,52", 7, "`52`"),
            ("W:W31,x", 7, "`x`"),
            ("W:W40-31", 4, "backwards"),
            ("W:W31,31", 7, "listed twice"),
            ("W:W31:B31", 1, "two pieces"),
            ("W:W3", 1, "promotion row"),
            ("W:W31:W32", 7, "second white"),
            ("W:W31,", 7, "``"),
        ];
        for &(text, column, needle) in cases {
            let e = Position::from_fen(text).unwrap_err();
            assert_eq!(e.column, column, "{text}: {e}");
            assert!(e.to_string().contains(needle), "{text}: {e}");
            assert!(e.to_string().contains(text), "{text}: {e}");
        }
    }

    #[test]
    fn hub_position() {
        let p = Position::start();
        let h = p.to_hub();
        assert_eq!(h.len(), 51);
        assert_eq!(&h[..6], "Wbbbbb");
        assert_eq!(&h[21..31], "eeeeeeeeee");
        assert_eq!(Position::from_hub(&h).unwrap(), p);
        assert!(Position::from_hub("W").unwrap_err().to_string().contains("51"));
        let bad = h.replacen('e', "x", 1);
        let e = Position::from_hub(&bad).unwrap_err();
        assert_eq!(e.column, 22);
    }
}
