//! DXP messages: fixed-width ASCII layouts, parsed into typed values and encoded back.
//!
//! A message on the wire is 1 to 127 printable ASCII characters and a NUL byte; the NUL is
//! the framing's business ([`super::Connection`]), so [`Message::parse`] takes and
//! [`Message::encode`] returns the characters only.

use std::fmt;

use draughts_core::{Bitboard, Color, Move, Position, Rules, Square};

/// The longest message, NUL excluded.
pub const MAX_MESSAGE: usize = 127;

/// The DXP version this crate speaks (`01`).
pub const VERSION: u8 = 1;

/// Width of the name fields of GAMEREQ and GAMEACC.
pub const NAME_WIDTH: usize = 32;

/// One DXP message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// `R`: the initiator asks for a game.
    GameRequest(GameRequest),
    /// `A`: the follower answers a game request.
    GameAccept(GameAccept),
    /// `M`: a move.
    Move(MoveMessage),
    /// `E`: the sender ends the game (or confirms the other side's end).
    GameEnd(GameEnd),
    /// `C`: free text.
    Chat(String),
    /// `B`: take back moves.
    BackRequest(BackRequest),
    /// `K`: the answer to a take-back request.
    BackAccept(BackCode),
}

/// GAMEREQ: `R` + version (2) + initiator name (32) + follower's colour + minutes (3) + moves
/// (3) + `A` (start position) or `B` + colour to move + 50 squares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRequest {
    /// Protocol version (1).
    pub version: u8,
    /// The initiator's name, at most 32 characters.
    pub initiator: String,
    /// The colour the follower plays.
    pub follower_color: Color,
    /// Thinking time per side, in minutes (0 to 999).
    pub minutes: u16,
    /// Moves to play in that time (0: the time is for the whole game).
    pub moves: u16,
    /// The start position, or `None` for the standard one (`A`).
    pub position: Option<Position>,
}

/// GAMEACC: `A` + follower name (32) + acceptance code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameAccept {
    /// The follower's name.
    pub follower: String,
    /// Whether the game is on.
    pub code: AcceptCode,
}

/// The follower's answer to a game request.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum AcceptCode {
    /// `0`: the game is on.
    Accepted,
    /// `1`: this protocol version is not supported.
    VersionNotSupported,
    /// `2`: not this game (another one is fine).
    Declined,
    /// `3`: no game at all.
    NoGame,
}

/// MOVE: `M` + seconds used (4) + from (2) + to (2) + number captured (2) + the captured
/// squares (2 each, any order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveMessage {
    /// Seconds the mover used for this move (0 to 9999).
    pub seconds: u16,
    /// Start square.
    pub from: Square,
    /// End square.
    pub to: Square,
    /// Captured squares in the order sent (at most 20, the pieces one side has).
    pub captured: Vec<Square>,
}

/// GAMEEND: `E` + reason + stop code.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct GameEnd {
    /// The result, from the sender's point of view.
    pub reason: EndReason,
    /// Whether the sender wants another game.
    pub stop: StopCode,
}

/// The result a GAMEEND states, from its sender's point of view.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum EndReason {
    /// `0`: unknown.
    Unknown,
    /// `1`: the sender loses.
    ILose,
    /// `2`: draw.
    Draw,
    /// `3`: the sender wins.
    IWin,
}

/// Whether the sender of a GAMEEND wants another game.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum StopCode {
    /// `0`: a next game is preferred.
    NextGame,
    /// `1`: no next game.
    NoNextGame,
}

/// BACKREQ: `B` + move number (3) + colour to move.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct BackRequest {
    /// The move number to go back to.
    pub move_number: u16,
    /// The side to move there.
    pub color: Color,
}

/// BACKACC: `K` + code.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BackCode {
    /// `0`: taken back.
    Accepted,
    /// `1`: take-back is not supported.
    NotSupported,
    /// `2`: declined.
    Declined,
}

/// Why bytes are not a DXP message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MessageError {
    /// No characters before the NUL.
    #[error("empty DXP message")]
    Empty,
    /// More than 127 characters.
    #[error("DXP message of {0} characters; the limit is {MAX_MESSAGE}")]
    TooLong(usize),
    /// A byte outside printable ASCII.
    #[error("byte {byte:#04x} at offset {offset} of a DXP message is not printable ASCII")]
    NotPrintable {
        /// Offset of the byte.
        offset: usize,
        /// The byte.
        byte: u8,
    },
    /// The first character is not a known message type.
    #[error("unknown DXP message type `{0}` (expected one of R A M E C B K)")]
    UnknownType(char),
    /// The length does not fit the type's layout.
    #[error("{kind} message `{text}` has {len} characters; expected {expected}")]
    Length {
        /// The message type's name.
        kind: &'static str,
        /// The message.
        text: String,
        /// Its length.
        len: usize,
        /// The lengths its layout allows.
        expected: String,
    },
    /// A field does not hold what its layout says.
    #[error("{kind} message `{text}`: {field} `{value}` at offset {offset}: {reason}")]
    Field {
        /// The message type's name.
        kind: &'static str,
        /// The message.
        text: String,
        /// The field's name.
        field: &'static str,
        /// Offset of the field.
        offset: usize,
        /// The field's characters.
        value: String,
        /// What is wrong.
        reason: String,
    },
}

/// Reads fixed-width fields out of a message, naming the field in errors.
struct Fields<'a> {
    kind: &'static str,
    text: &'a str,
}

impl<'a> Fields<'a> {
    fn err(
        &self,
        field: &'static str,
        offset: usize,
        width: usize,
        reason: impl Into<String>,
    ) -> MessageError {
        MessageError::Field {
            kind: self.kind,
            text: self.text.to_owned(),
            field,
            offset,
            value: self.text[offset..offset + width].to_owned(),
            reason: reason.into(),
        }
    }

    fn str(&self, offset: usize, width: usize) -> &'a str {
        &self.text[offset..offset + width]
    }

    fn number(
        &self,
        field: &'static str,
        offset: usize,
        width: usize,
    ) -> Result<u16, MessageError> {
        let s = self.str(offset, width);
        if !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(self.err(field, offset, width, format!("expected {width} digits")));
        }
        // At most 4 digits: always fits.
        Ok(s.parse::<u16>().expect("up to 4 ASCII digits"))
    }

    fn square(&self, field: &'static str, offset: usize) -> Result<Square, MessageError> {
        let n = self.number(field, offset, 2)?;
        Square::new(n as u8).ok_or_else(|| self.err(field, offset, 2, "not a square 01 to 50"))
    }

    fn color(&self, field: &'static str, offset: usize) -> Result<Color, MessageError> {
        match self.str(offset, 1) {
            "W" => Ok(Color::White),
            "Z" => Ok(Color::Black),
            _ => Err(self.err(field, offset, 1, "expected W or Z")),
        }
    }

    fn code<T: Copy>(
        &self,
        field: &'static str,
        offset: usize,
        codes: &[T],
    ) -> Result<T, MessageError> {
        let c = self.text.as_bytes()[offset];
        let i = c.wrapping_sub(b'0') as usize;
        codes.get(i).copied().ok_or_else(|| {
            self.err(
                field,
                offset,
                1,
                format!("expected a digit 0 to {}", codes.len() - 1),
            )
        })
    }

    fn length(&self, ok: bool, expected: impl Into<String>) -> Result<(), MessageError> {
        if ok {
            Ok(())
        } else {
            Err(MessageError::Length {
                kind: self.kind,
                text: self.text.to_owned(),
                len: self.text.len(),
                expected: expected.into(),
            })
        }
    }
}

const ACCEPT_CODES: [AcceptCode; 4] = [
    AcceptCode::Accepted,
    AcceptCode::VersionNotSupported,
    AcceptCode::Declined,
    AcceptCode::NoGame,
];
const END_REASONS: [EndReason; 4] = [
    EndReason::Unknown,
    EndReason::ILose,
    EndReason::Draw,
    EndReason::IWin,
];
const STOP_CODES: [StopCode; 2] = [StopCode::NextGame, StopCode::NoNextGame];
const BACK_CODES: [BackCode; 3] = [
    BackCode::Accepted,
    BackCode::NotSupported,
    BackCode::Declined,
];

fn code_char<T: PartialEq>(codes: &[T], value: &T) -> char {
    // Invariant: every enum value is in its table.
    let i = codes
        .iter()
        .position(|c| c == value)
        .expect("code in table");
    (b'0' + i as u8) as char
}

/// The 50 DXP square characters (`w z W Z e`) of a position.
fn board_text(pos: &Position) -> String {
    pos.to_hub()[1..]
        .chars()
        .map(|c| match c {
            'b' => 'z',
            'B' => 'Z',
            c => c,
        })
        .collect()
}

/// Printable ASCII only (anything else becomes `?`), at most `max` characters.
fn clean(text: &str, max: usize) -> String {
    text.chars()
        .map(|c| if (' '..='~').contains(&c) { c } else { '?' })
        .take(max)
        .collect()
}

fn number(n: u16, width: usize) -> String {
    let max = 10u32.pow(width as u32) - 1;
    format!("{:0width$}", u32::from(n).min(max))
}

fn color_char(c: Color) -> char {
    match c {
        Color::White => 'W',
        Color::Black => 'Z',
    }
}

impl Message {
    /// Parses the characters of one message (without the NUL).
    pub fn parse(bytes: &[u8]) -> Result<Message, MessageError> {
        if bytes.is_empty() {
            return Err(MessageError::Empty);
        }
        if bytes.len() > MAX_MESSAGE {
            return Err(MessageError::TooLong(bytes.len()));
        }
        if let Some(offset) = bytes.iter().position(|b| !(0x20..=0x7e).contains(b)) {
            return Err(MessageError::NotPrintable {
                offset,
                byte: bytes[offset],
            });
        }
        // Invariant: checked printable ASCII just above.
        let text = std::str::from_utf8(bytes).expect("ASCII");
        let len = text.len();
        match bytes[0] {
            b'R' => {
                let f = Fields {
                    kind: "GAMEREQ",
                    text,
                };
                f.length(
                    len == 43 || len == 94,
                    "43 (start position) or 94 (set-up position)",
                )?;
                let version = f.number("version", 1, 2)? as u8;
                let initiator = f.str(3, NAME_WIDTH).trim_end().to_owned();
                let follower_color = f.color("follower colour", 35)?;
                let minutes = f.number("thinking time", 36, 3)?;
                let moves = f.number("number of moves", 39, 3)?;
                let position = match (f.str(42, 1), len) {
                    ("A", 43) => None,
                    ("B", 94) => {
                        let side = f.color("colour to move", 43)?;
                        let mut hub = String::with_capacity(51);
                        hub.push(side.letter());
                        for (i, c) in f.str(44, 50).chars().enumerate() {
                            hub.push(match c {
                                'w' | 'W' | 'e' => c,
                                'z' => 'b',
                                'Z' => 'B',
                                _ => {
                                    return Err(f.err(
                                        "position",
                                        44 + i,
                                        1,
                                        "expected one of w z W Z e",
                                    ))
                                }
                            });
                        }
                        let pos = Position::from_hub(&hub)
                            .map_err(|e| f.err("position", 44, 50, e.kind.to_string()))?;
                        Some(pos)
                    }
                    ("A", _) | ("B", _) => {
                        return Err(MessageError::Length {
                            kind: "GAMEREQ",
                            text: text.to_owned(),
                            len,
                            expected: "43 with A, 94 with B".to_owned(),
                        })
                    }
                    _ => return Err(f.err("starting position", 42, 1, "expected A or B")),
                };
                Ok(Message::GameRequest(GameRequest {
                    version,
                    initiator,
                    follower_color,
                    minutes,
                    moves,
                    position,
                }))
            }
            b'A' => {
                let f = Fields {
                    kind: "GAMEACC",
                    text,
                };
                f.length(len == 34, "34")?;
                let follower = f.str(1, NAME_WIDTH).trim_end().to_owned();
                let code = f.code("acceptance code", 33, &ACCEPT_CODES)?;
                Ok(Message::GameAccept(GameAccept { follower, code }))
            }
            b'M' => {
                let f = Fields { kind: "MOVE", text };
                f.length(len >= 11 && len % 2 == 1, "11 plus 2 per captured piece")?;
                let seconds = f.number("time", 1, 4)?;
                let from = f.square("from", 5)?;
                let to = f.square("to", 7)?;
                let n = f.number("number captured", 9, 2)? as usize;
                if n > 20 {
                    return Err(f.err("number captured", 9, 2, "more than 20"));
                }
                f.length(
                    len == 11 + 2 * n,
                    format!("{} for {n} captured pieces", 11 + 2 * n),
                )?;
                let captured = (0..n)
                    .map(|i| f.square("captured square", 11 + 2 * i))
                    .collect::<Result<_, _>>()?;
                Ok(Message::Move(MoveMessage {
                    seconds,
                    from,
                    to,
                    captured,
                }))
            }
            b'E' => {
                let f = Fields {
                    kind: "GAMEEND",
                    text,
                };
                f.length(len == 3, "3")?;
                let reason = f.code("reason", 1, &END_REASONS)?;
                let stop = f.code("stop code", 2, &STOP_CODES)?;
                Ok(Message::GameEnd(GameEnd { reason, stop }))
            }
            b'C' => Ok(Message::Chat(text[1..].to_owned())),
            b'B' => {
                let f = Fields {
                    kind: "BACKREQ",
                    text,
                };
                f.length(len == 5, "5")?;
                let move_number = f.number("move number", 1, 3)?;
                let color = f.color("colour to move", 4)?;
                Ok(Message::BackRequest(BackRequest { move_number, color }))
            }
            b'K' => {
                let f = Fields {
                    kind: "BACKACC",
                    text,
                };
                f.length(len == 2, "2")?;
                Ok(Message::BackAccept(f.code(
                    "acceptance code",
                    1,
                    &BACK_CODES,
                )?))
            }
            other => Err(MessageError::UnknownType(other as char)),
        }
    }

    /// The message's characters (without the NUL). Names and chat text are cut to their fields
    /// and anything not printable ASCII becomes `?`; numbers too wide for their field are
    /// clamped to its largest value. The result always parses back.
    pub fn encode(&self) -> Vec<u8> {
        let mut s = String::new();
        match self {
            Message::GameRequest(r) => {
                s.push('R');
                s.push_str(&number(u16::from(r.version), 2));
                s.push_str(&format!(
                    "{:<width$}",
                    clean(&r.initiator, NAME_WIDTH),
                    width = NAME_WIDTH
                ));
                s.push(color_char(r.follower_color));
                s.push_str(&number(r.minutes, 3));
                s.push_str(&number(r.moves, 3));
                match &r.position {
                    None => s.push('A'),
                    Some(p) => {
                        s.push('B');
                        s.push(color_char(p.side_to_move()));
                        s.push_str(&board_text(p));
                    }
                }
            }
            Message::GameAccept(a) => {
                s.push('A');
                s.push_str(&format!(
                    "{:<width$}",
                    clean(&a.follower, NAME_WIDTH),
                    width = NAME_WIDTH
                ));
                s.push(code_char(&ACCEPT_CODES, &a.code));
            }
            Message::Move(m) => {
                s.push('M');
                s.push_str(&number(m.seconds, 4));
                s.push_str(&number(u16::from(m.from.number()), 2));
                s.push_str(&number(u16::from(m.to.number()), 2));
                let caps = &m.captured[..m.captured.len().min(20)];
                s.push_str(&number(caps.len() as u16, 2));
                for c in caps {
                    s.push_str(&number(u16::from(c.number()), 2));
                }
            }
            Message::GameEnd(e) => {
                s.push('E');
                s.push(code_char(&END_REASONS, &e.reason));
                s.push(code_char(&STOP_CODES, &e.stop));
            }
            Message::Chat(text) => {
                s.push('C');
                s.push_str(&clean(text, MAX_MESSAGE - 1));
            }
            Message::BackRequest(b) => {
                s.push('B');
                s.push_str(&number(b.move_number, 3));
                s.push(color_char(b.color));
            }
            Message::BackAccept(code) => {
                s.push('K');
                s.push(code_char(&BACK_CODES, code));
            }
        }
        s.into_bytes()
    }

    /// The message type's name (`GAMEREQ`, `MOVE`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            Message::GameRequest(_) => "GAMEREQ",
            Message::GameAccept(_) => "GAMEACC",
            Message::Move(_) => "MOVE",
            Message::GameEnd(_) => "GAMEEND",
            Message::Chat(_) => "CHAT",
            Message::BackRequest(_) => "BACKREQ",
            Message::BackAccept(_) => "BACKACC",
        }
    }
}

impl fmt::Display for Message {
    /// The message's characters.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Invariant: `encode` writes ASCII only.
        f.write_str(std::str::from_utf8(&self.encode()).expect("ASCII"))
    }
}

impl MoveMessage {
    /// The message for `mv`, captured squares ascending.
    pub fn from_move(mv: &Move, seconds: u16) -> MoveMessage {
        MoveMessage {
            seconds,
            from: mv.from(),
            to: mv.to(),
            captured: mv.captured().squares().collect(),
        }
    }

    /// The legal move in `pos` with these from, to and captured squares; the error says why
    /// there is none.
    pub fn resolve(&self, pos: &Position, rules: &Rules) -> Result<Move, String> {
        let captured: Bitboard = self.captured.iter().copied().collect();
        if captured.count() as usize != self.captured.len() {
            return Err("a captured square is listed twice".to_owned());
        }
        let legal = pos.legal_moves_with(rules);
        legal
            .iter()
            .copied()
            .find(|m| m.from() == self.from && m.to() == self.to && m.captured() == captured)
            .ok_or_else(|| {
                let list: Vec<String> = legal.iter().map(|m| m.to_hub()).collect();
                format!("not legal in {} (legal: {})", pos.to_fen(), list.join(" "))
            })
    }
}

impl fmt::Display for MoveMessage {
    /// Hub-style text of what was sent: `6-11`, `5x25x22x12x23x20` (captured in the order sent).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.captured.is_empty() {
            write!(f, "{}-{}", self.from, self.to)
        } else {
            write!(f, "{}x{}", self.from, self.to)?;
            for c in &self.captured {
                write!(f, "x{c}")?;
            }
            Ok(())
        }
    }
}

impl EndReason {
    /// The same result seen from the other side.
    pub fn mirrored(self) -> EndReason {
        match self {
            EndReason::ILose => EndReason::IWin,
            EndReason::IWin => EndReason::ILose,
            r => r,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(n: u8) -> Square {
        Square::new(n).unwrap()
    }

    #[test]
    fn move_examples_from_the_notes() {
        let m = Message::parse(b"M0012061100").unwrap();
        assert_eq!(
            m,
            Message::Move(MoveMessage {
                seconds: 12,
                from: sq(6),
                to: sq(11),
                captured: vec![]
            })
        );
        assert_eq!(m.encode(), b"M0012061100");
        let m = Message::parse(b"M001205250422122320").unwrap();
        let Message::Move(mm) = &m else {
            panic!("{m:?}")
        };
        assert_eq!((mm.seconds, mm.from, mm.to), (12, sq(5), sq(25)));
        assert_eq!(mm.captured, vec![sq(22), sq(12), sq(23), sq(20)]);
        assert_eq!(m.encode(), b"M001205250422122320");
        assert_eq!(mm.to_string(), "5x25x22x12x23x20");
    }
}
