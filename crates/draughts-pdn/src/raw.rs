//! The token level: games split into tags, move text, comments and results, handed to a
//! [`Visitor`] without looking at the rules.

use std::io::{self, BufRead};
use std::ops::ControlFlow;

use crate::source::{is_blank, Source};
use crate::{GameResult, PdnError, PdnErrorKind, PdnWarningKind};

/// Longest word of move text (a move, a move number, a result) accepted. The longest legal PDN
/// move, a king capture with every landing square written, is well under 100 bytes.
pub const MAX_TOKEN: usize = 256;
/// Longest tag name accepted.
pub const MAX_TAG_NAME: usize = 255;
/// Longest tag value accepted (in bytes, after unescaping).
pub const MAX_TAG_VALUE: usize = 64 * 1024;
/// Longest comment kept: a longer comment is read to its end but handed over cut to this many
/// bytes.
pub const MAX_COMMENT: usize = 1024 * 1024;

/// A numeric annotation glyph: `$12`, or a suffix annotation (`!` is 1, `?` 2, `!!` 3, `??` 4,
/// `!?` 5, `?!` 6).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Nag(pub u32);

impl Nag {
    /// The glyph a suffix annotation stands for; `None` for other runs of `!` and `?`.
    pub fn from_suffix(suffix: &str) -> Option<Nag> {
        Some(Nag(match suffix {
            "!" => 1,
            "?" => 2,
            "!!" => 3,
            "??" => 4,
            "!?" => 5,
            "?!" => 6,
            _ => return None,
        }))
    }
}

/// Returned by [`Visitor::begin_variation`]: `Skip(true)` skips the variation unseen.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[must_use]
pub struct Skip(pub bool);

/// Receives the tokens of each game from a [`RawReader`].
///
/// For each game: [`begin_game`](Visitor::begin_game); the tags; then, from the first token that
/// is not a tag or a comment, [`begin_movetext`](Visitor::begin_movetext) and the move text;
/// [`result`](Visitor::result) if the game has a result token; and
/// [`end_game`](Visitor::end_game), whose value the reader returns. A game without a result token
/// ends at the next tag section (see [`RawReader`]) or at the end of the input. Any method may return
/// `ControlFlow::Break(output)`: the reader then skips the rest of the game and returns `output`
/// instead of calling `end_game`. When the text itself is malformed the reader returns a
/// [`PdnError`] and does not call `end_game`; `begin_game` always comes first, so that is the
/// place to reset.
///
/// Every method gets the 1-based line where its token starts.
pub trait Visitor {
    /// What a game turns into.
    type Output;

    /// A game starts; `number` is its 1-based number in the input.
    fn begin_game(&mut self, number: usize, line: usize) {
        let _ = (number, line);
    }

    /// A tag `[name "value"]`, the value unescaped.
    fn tag(&mut self, name: &str, value: &str, line: usize) -> ControlFlow<Self::Output> {
        let _ = (name, value, line);
        ControlFlow::Continue(())
    }

    /// The tags are over; move text follows.
    fn begin_movetext(&mut self, line: usize) -> ControlFlow<Self::Output> {
        let _ = line;
        ControlFlow::Continue(())
    }

    /// A move number: `12.` (`black` false) or `12...` (`black` true). Saturates at `u32::MAX`.
    fn move_number(&mut self, number: u32, black: bool, line: usize) -> ControlFlow<Self::Output> {
        let _ = (number, black, line);
        ControlFlow::Continue(())
    }

    /// A word of move text that is not a number, result or annotation: a move such as `32-28`
    /// or `47x38x24x13x36`, not checked in any way (suffix annotations already removed).
    fn move_text(&mut self, text: &str, line: usize) -> ControlFlow<Self::Output> {
        let _ = (text, line);
        ControlFlow::Continue(())
    }

    /// An annotation glyph `$n` or suffix `!`, `?!`...
    fn nag(&mut self, nag: Nag, line: usize) -> ControlFlow<Self::Output> {
        let _ = (nag, line);
        ControlFlow::Continue(())
    }

    /// A `{...}` comment (without the braces) or a `;` comment (without the `;` and newline).
    /// Comments before a game's first tag or move are handed over right after `begin_game`.
    fn comment(&mut self, text: &str, line: usize) -> ControlFlow<Self::Output> {
        let _ = (text, line);
        ControlFlow::Continue(())
    }

    /// A set-up in the move text (PDN 3.0): `/FEN "W:W31,32:B19"/`; `fen` is the text between
    /// the quotes, not checked. Set-ups inside skipped variations are not handed over.
    fn set_up(&mut self, fen: &str, line: usize) -> ControlFlow<Self::Output> {
        let _ = (fen, line);
        ControlFlow::Continue(())
    }

    /// Something the reader read past: a `)` that closes nothing
    /// ([`PdnWarningKind::StrayClose`]), a game whose first tag is on the line where the previous
    /// game ended ([`PdnWarningKind::GluedToPrevious`]). The default ignores it.
    fn warning(&mut self, kind: PdnWarningKind, line: usize) -> ControlFlow<Self::Output> {
        let _ = (kind, line);
        ControlFlow::Continue(())
    }

    /// A `(` opens a variation. The default skips it (and the variations inside it). A result
    /// token inside a variation is ignored; a variation left open ends with the game (at the next
    /// tag section or the end of the input), see [`unclosed_variation`](Visitor::unclosed_variation).
    fn begin_variation(&mut self, line: usize) -> ControlFlow<Self::Output, Skip> {
        let _ = line;
        ControlFlow::Continue(Skip(true))
    }

    /// The `)` closing a variation that was not skipped. Variations still open when the game
    /// ends are closed before `result` and `end_game`; a `)` with no `(` is ignored (after a
    /// [`warning`](Visitor::warning)).
    fn end_variation(&mut self, line: usize) -> ControlFlow<Self::Output> {
        let _ = line;
        ControlFlow::Continue(())
    }

    /// The game ends (on line `end`) with a variation still open (skipped or not), the outermost
    /// of them opened on line `line`: the rest of the game was read as part of it. Called before
    /// the open variations are closed. The default goes on.
    fn unclosed_variation(&mut self, line: usize, end: usize) -> ControlFlow<Self::Output> {
        let _ = (line, end);
        ControlFlow::Continue(())
    }

    /// The result token that ends the game.
    fn result(&mut self, result: GameResult, line: usize) -> ControlFlow<Self::Output> {
        let _ = (result, line);
        ControlFlow::Continue(())
    }

    /// The game is over.
    fn end_game(&mut self) -> Self::Output;
}

/// Reads PDN from a [`BufRead`] a game at a time and hands each game's tokens to a [`Visitor`].
///
/// Memory stays bounded whatever the input: bytes stream through a small window, tokens, tag
/// values and comments have caps ([`MAX_TOKEN`], [`MAX_TAG_VALUE`], [`MAX_COMMENT`]).
///
/// Encodings: UTF-8, with or without a byte-order mark; in tag values and comments, bytes that
/// are not UTF-8 are read as Windows-1252 (Latin-1 and the characters Windows adds to it), the
/// other encoding found in PDN files. UTF-16 (little- or big-endian, recognised by its byte-order
/// mark or, without one, by the NUL bytes of its first two characters) is decoded. A NUL byte
/// anywhere else is an error ([`PdnErrorKind::NulByte`]); a DOS end-of-file mark (Ctrl-Z) is
/// ignored.
///
/// A game ends at its result token, or at the next tag section, or at a tag that repeats one of
/// its own after a blank line (or repeats its first tag): two tag sections with no move text
/// between them are two games.
#[derive(Debug)]
pub struct RawReader<R> {
    src: Source<R>,
    /// Games begun so far.
    games: usize,
    /// Comments seen before the next game's first tag or move.
    pending: Vec<(String, usize)>,
    /// Set after an I/O error: the reader returns nothing more.
    done: bool,
    /// An I/O error met while skipping the rest of a game, returned by the next call.
    deferred: Option<PdnError>,
    /// Whether the start of the input (and a byte-order mark there) has been dealt with.
    started: bool,
    /// The line where the last game ended.
    ended_at: usize,
    /// The names of the tags of the game being read.
    names: Vec<String>,
    /// Room for a tag name looked at ahead.
    peeked: Vec<u8>,
}

/// Where a game's reading stopped.
enum Ended<O> {
    /// At the end of the game; the output of `end_game`.
    Done(O),
    /// A visitor stopped it; the rest of the game must be skipped.
    Broke(O),
}

/// A problem that ends the current game.
enum Stop {
    Io(io::Error),
    Syntax { line: usize, kind: PdnErrorKind, rest_of_line: bool },
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Stop {
        Stop::Io(e)
    }
}

fn syntax(line: usize, kind: PdnErrorKind) -> Stop {
    Stop::Syntax { line, kind, rest_of_line: false }
}

/// What the reader knows about the game being read.
#[derive(Debug, Default)]
struct State {
    started: bool,
    movetext: bool,
    /// Variations opened and not skipped.
    depth: usize,
    /// Nesting depth inside a skipped variation (0 when not skipping).
    skip: usize,
    /// Line of the outermost `(` still open.
    open_line: usize,
    /// Whether a blank line came since the last tag.
    blank: bool,
}

macro_rules! flow {
    ($e:expr) => {
        if let ControlFlow::Break(out) = $e {
            return Ok(Some(Ended::Broke(out)));
        }
    };
}

/// The DOS end-of-file mark (Ctrl-Z), found at the end of old files.
const DOS_EOF: u8 = 0x1a;

/// Which bytes end a word of move text: newline, blanks, `{ } ( ) [ ; $`, Ctrl-Z and NUL (the
/// next token reports it).
const WORD_END: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c == b'\n'
            || is_blank(c)
            || matches!(c, b'{' | b'}' | b'(' | b')' | b'[' | b';' | b'$' | DOS_EOF | 0);
        b += 1;
    }
    table
};

/// Whether `b` ends a word of move text, see [`WORD_END`].
#[inline]
fn ends_word(b: u8) -> bool {
    WORD_END[usize::from(b)]
}

/// Separators of the squares of a move.
#[inline]
fn is_separator(b: u8) -> bool {
    matches!(b, b'-' | b'x' | b'X' | b':')
}

#[inline]
fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// UTF-8 where it is; every other byte read as Windows-1252 (Latin-1 with printable characters
/// instead of the C1 controls 0x80..0x9F).
pub(crate) fn decode(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| {
        let bytes = e.into_bytes();
        let mut out = String::with_capacity(bytes.len() + 8);
        for chunk in bytes.utf8_chunks() {
            out.push_str(chunk.valid());
            out.extend(chunk.invalid().iter().map(|&b| windows_1252(b)));
        }
        out
    })
}

/// The Windows-1252 character of a byte that is not ASCII (bytes 0x80..0x9F that the code page
/// leaves undefined read as in Latin-1).
fn windows_1252(b: u8) -> char {
    const HIGH: [char; 32] = [
        '\u{20ac}', '\u{81}', '\u{201a}', '\u{192}', '\u{201e}', '\u{2026}', '\u{2020}', '\u{2021}', '\u{2c6}',
        '\u{2030}', '\u{160}', '\u{2039}', '\u{152}', '\u{8d}', '\u{17d}', '\u{8f}', '\u{90}', '\u{2018}',
        '\u{2019}', '\u{201c}', '\u{201d}', '\u{2022}', '\u{2013}', '\u{2014}', '\u{2dc}', '\u{2122}', '\u{161}',
        '\u{203a}', '\u{153}', '\u{9d}', '\u{17e}', '\u{178}',
    ];
    match b {
        0x80..=0x9f => HIGH[usize::from(b - 0x80)],
        _ => char::from(b),
    }
}

fn parse_u32_saturating(digits: &str) -> u32 {
    digits.bytes().fold(0u32, |n, d| n.saturating_mul(10).saturating_add(u32::from(d - b'0')))
}

impl<R: BufRead> RawReader<R> {
    /// A reader over `inner`.
    pub fn new(inner: R) -> RawReader<R> {
        RawReader {
            src: Source::new(inner),
            games: 0,
            pending: Vec::new(),
            done: false,
            deferred: None,
            started: false,
            ended_at: 0,
            names: Vec::new(),
            peeked: Vec::new(),
        }
    }

    /// Games begun so far (good or bad): the number of the last game handed out.
    pub fn games(&self) -> usize {
        self.games
    }

    /// The 1-based line the reader has reached.
    pub fn line(&self) -> usize {
        self.src.line()
    }

    /// Reads the next game into `visitor`. `None` at the end of the input (or after an I/O
    /// error has been returned). After an `Err` the rest of the bad game has been skipped, and
    /// the next call reads the next game.
    pub fn read_game<V: Visitor>(&mut self, visitor: &mut V) -> Option<Result<V::Output, PdnError>> {
        if let Some(e) = self.deferred.take() {
            self.done = true;
            return Some(Err(e));
        }
        if self.done {
            return None;
        }
        let mut st = State::default();
        self.names.clear();
        let item = self.read_game_inner(visitor, &mut st);
        self.ended_at = self.src.line();
        item
    }

    fn read_game_inner<V: Visitor>(&mut self, visitor: &mut V, st: &mut State) -> Option<Result<V::Output, PdnError>> {
        match self.read_inner(visitor, st) {
            Ok(None) => None,
            Ok(Some(Ended::Done(out))) => Some(Ok(out)),
            Ok(Some(Ended::Broke(out))) => {
                if let Err(e) = self.skip_game(st.movetext) {
                    self.deferred = Some(self.io_error(e));
                }
                Some(Ok(out))
            }
            Err(Stop::Io(e)) => {
                self.done = true;
                let game = if st.started { self.games } else { self.games + 1 };
                Some(Err(PdnError { game, line: self.src.line(), kind: PdnErrorKind::Io(e) }))
            }
            Err(Stop::Syntax { line, kind, rest_of_line }) => {
                if !st.started {
                    // A broken comment before any tag or move: it starts the next game.
                    self.games += 1;
                    st.started = true;
                }
                // An unterminated comment stops before a tag line, which starts the next game.
                let movetext = st.movetext || matches!(kind, PdnErrorKind::UnterminatedComment);
                let err = PdnError { game: self.games, line, kind };
                let skipped = if rest_of_line { self.src.take_line(&mut Vec::new(), 0) } else { Ok(()) };
                if let Err(e) = skipped.and_then(|()| self.skip_game(movetext)) {
                    self.deferred = Some(self.io_error(e));
                }
                Some(Err(err))
            }
        }
    }

    /// Deals with the start of the input: skips a UTF-8 byte-order mark, recognises UTF-16.
    fn encoding(&mut self) -> io::Result<()> {
        let head = [self.src.peek_at(0)?, self.src.peek_at(1)?, self.src.peek_at(2)?, self.src.peek_at(3)?];
        match head {
            [Some(0xef), Some(0xbb), Some(0xbf), _] => self.src.skip(3),
            [Some(0xff), Some(0xfe), ..] => {
                self.src.skip(2);
                self.src.decode_utf16(true);
            }
            [Some(0xfe), Some(0xff), ..] => {
                self.src.skip(2);
                self.src.decode_utf16(false);
            }
            // No byte-order mark, but two ASCII characters in UTF-16.
            [Some(a), Some(0), Some(c), Some(0)] if a != 0 && c != 0 && a < 0x80 && c < 0x80 => {
                self.src.decode_utf16(true)
            }
            [Some(0), Some(b), Some(0), Some(d)] if b != 0 && d != 0 && b < 0x80 && d < 0x80 => {
                self.src.decode_utf16(false)
            }
            _ => {}
        }
        Ok(())
    }

    fn nul(&self, line: usize) -> Stop {
        syntax(line, PdnErrorKind::NulByte { offset: self.src.offset() })
    }

    /// Whether the tag that starts at the next byte (`[`) repeats one of this game's tags, after a
    /// blank line, or repeats its first tag.
    fn repeats_a_tag(&mut self, blank: bool) -> io::Result<bool> {
        let mut k = 1;
        while k < 64 && self.src.peek_at(k)?.is_some_and(|b| b == b' ' || b == b'\t') {
            k += 1;
        }
        self.peeked.clear();
        while self.peeked.len() < MAX_TAG_NAME {
            match self.src.peek_at(k)? {
                Some(b) if is_name_byte(b) => self.peeked.push(b),
                _ => break,
            }
            k += 1;
        }
        let same = |seen: &String| seen.as_bytes().eq_ignore_ascii_case(&self.peeked);
        Ok(!self.peeked.is_empty() && (same(&self.names[0]) || (blank && self.names.iter().any(same))))
    }

    fn io_error(&self, e: io::Error) -> PdnError {
        PdnError { game: self.games.max(1), line: self.src.line(), kind: PdnErrorKind::Io(e) }
    }

    fn begin<V: Visitor>(&mut self, v: &mut V, st: &mut State, line: usize) -> ControlFlow<V::Output> {
        if !st.started {
            st.started = true;
            self.games += 1;
            v.begin_game(self.games, line);
            for (text, at) in std::mem::take(&mut self.pending) {
                v.comment(&text, at)?;
            }
        }
        ControlFlow::Continue(())
    }

    fn finish<V: Visitor>(&mut self, v: &mut V, st: &mut State, line: usize) -> Option<Ended<V::Output>> {
        if st.depth > 0 || st.skip > 0 {
            st.skip = 0;
            if let ControlFlow::Break(out) = v.unclosed_variation(st.open_line, line) {
                return Some(Ended::Broke(out));
            }
        }
        while st.depth > 0 {
            st.depth -= 1;
            if let ControlFlow::Break(out) = v.end_variation(line) {
                return Some(Ended::Broke(out));
            }
        }
        None
    }

    fn read_inner<V: Visitor>(&mut self, v: &mut V, st: &mut State) -> Result<Option<Ended<V::Output>>, Stop> {
        if !self.started {
            self.started = true;
            self.encoding()?;
        }
        loop {
            let Some(b) = self.src.peek()? else {
                if !st.started {
                    self.pending.clear();
                    return Ok(None);
                }
                let line = self.src.line();
                if let Some(broke) = self.finish(v, st, line) {
                    return Ok(Some(broke));
                }
                return Ok(Some(Ended::Done(v.end_game())));
            };
            let line = self.src.line();
            match b {
                b'\n' => {
                    if self.src.at_line_start() {
                        st.blank = true;
                    }
                    self.src.bump();
                }
                b if is_blank(b) => self.src.bump(),
                DOS_EOF => self.src.bump(),
                0 => return Err(self.nul(line)),
                b'%' if self.src.at_line_start() => self.src.take_line(&mut Vec::new(), 0)?,
                b'{' | b';' => {
                    let text = if b == b'{' { self.read_comment()? } else { self.read_line_comment()? };
                    if st.skip > 0 {
                        continue;
                    }
                    if st.started {
                        flow!(v.comment(&text, line));
                    } else if self.pending.len() < 16 {
                        self.pending.push((text, line));
                    }
                }
                b'[' => {
                    if st.movetext {
                        // The next game's tags: this game had no result token.
                        if let Some(broke) = self.finish(v, st, line) {
                            return Ok(Some(broke));
                        }
                        return Ok(Some(Ended::Done(v.end_game())));
                    }
                    if !self.names.is_empty() && self.repeats_a_tag(st.blank)? {
                        // A second tag section with no move text between: a new game.
                        return Ok(Some(Ended::Done(v.end_game())));
                    }
                    let glued = !st.started && line == self.ended_at && !self.src.at_line_start();
                    flow!(self.begin(v, st, line));
                    let (name, value) = self.read_tag()?;
                    flow!(v.tag(&name, &value, line));
                    if glued {
                        flow!(v.warning(PdnWarningKind::GluedToPrevious(name.clone()), line));
                    }
                    self.names.push(name);
                    st.blank = false;
                }
                _ => {
                    flow!(self.begin(v, st, line));
                    if !st.movetext {
                        st.movetext = true;
                        flow!(v.begin_movetext(line));
                    }
                    if let Some(ended) = self.movetext_token(v, st, b, line)? {
                        return Ok(Some(ended));
                    }
                }
            }
        }
    }

    /// One token of move text starting with `b` (not blank, not a comment, not a tag).
    fn movetext_token<V: Visitor>(
        &mut self,
        v: &mut V,
        st: &mut State,
        b: u8,
        line: usize,
    ) -> Result<Option<Ended<V::Output>>, Stop> {
        match b {
            b'(' => {
                self.src.bump();
                if st.skip == 0 && st.depth == 0 {
                    st.open_line = line;
                }
                if st.skip > 0 {
                    st.skip += 1;
                } else {
                    match v.begin_variation(line) {
                        ControlFlow::Break(out) => return Ok(Some(Ended::Broke(out))),
                        ControlFlow::Continue(Skip(true)) => st.skip = 1,
                        ControlFlow::Continue(Skip(false)) => st.depth += 1,
                    }
                }
            }
            b')' => {
                self.src.bump();
                if st.skip > 0 {
                    st.skip -= 1;
                } else if st.depth > 0 {
                    st.depth -= 1;
                    flow!(v.end_variation(line));
                } else {
                    flow!(v.warning(PdnWarningKind::StrayClose, line));
                }
            }
            b'/' => {
                let fen = self.read_set_up(line)?;
                if st.skip == 0 {
                    flow!(v.set_up(&fen, line));
                }
            }
            b'$' => {
                self.src.bump();
                let mut digits = String::new();
                while let Some(d) = self.src.peek()? {
                    if !d.is_ascii_digit() {
                        break;
                    }
                    self.src.bump();
                    if digits.len() < 16 {
                        digits.push(char::from(d));
                    }
                }
                // A `$` without digits is noise; it is dropped.
                if st.skip == 0 && !digits.is_empty() {
                    flow!(v.nag(Nag(parse_u32_saturating(&digits)), line));
                }
            }
            _ => {
                let word = self.read_word(line)?;
                return self.word(v, st, &word, line);
            }
        }
        Ok(None)
    }

    /// A word of move text: a result, a move number (maybe with a move attached), a move with
    /// maybe a suffix annotation, or an annotation alone.
    fn word<V: Visitor>(
        &mut self,
        v: &mut V,
        st: &mut State,
        word: &str,
        line: usize,
    ) -> Result<Option<Ended<V::Output>>, Stop> {
        if let Some(result) = GameResult::from_token(word) {
            if st.skip > 0 || st.depth > 0 {
                // Variations have no result of their own; a token there is noise.
                return Ok(None);
            }
            if let Some(broke) = self.finish(v, st, line) {
                return Ok(Some(broke));
            }
            flow!(v.result(result, line));
            return Ok(Some(Ended::Done(v.end_game())));
        }
        if st.skip > 0 {
            return Ok(None);
        }
        let mut rest = word;
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest.as_bytes().get(digits).map_or(true, |&c| c == b'.') {
            let dots = rest[digits..].bytes().take_while(|&c| c == b'.').count();
            flow!(v.move_number(parse_u32_saturating(&rest[..digits]), dots >= 2, line));
            rest = &rest[digits + dots..];
        } else if rest.bytes().all(|c| c == b'.') {
            // `12. ... 19-23`: the dots only say that Black moves next.
            return Ok(None);
        }
        let mv = rest.trim_end_matches(['!', '?']);
        let suffix = &rest[mv.len()..];
        if !mv.is_empty() {
            flow!(v.move_text(mv, line));
        }
        if let Some(nag) = Nag::from_suffix(suffix) {
            flow!(v.nag(nag, line));
        }
        Ok(None)
    }

    /// Reads a word of move text (the caller has peeked its first byte, which does not end a
    /// word). A one-digit square padded with blanks to two columns after a separator, as several
    /// programs write them (`1- 7`, `29x20x 9`), is part of the word (`1-7`, `29x20x9`).
    fn read_word(&mut self, line: usize) -> Result<String, Stop> {
        let mut bytes = Vec::new();
        let mut too_long = false;
        loop {
            while let Some(b) = self.src.peek()? {
                if ends_word(b) && !bytes.is_empty() {
                    break;
                }
                self.src.bump();
                if bytes.len() < MAX_TOKEN {
                    bytes.push(b);
                } else {
                    too_long = true;
                }
            }
            let n = bytes.len();
            if too_long || n < 2 || !is_separator(bytes[n - 1]) || !bytes[n - 2].is_ascii_digit() {
                break;
            }
            let Some(blanks) = self.padded_digit()? else {
                break;
            };
            // Never make a result of it (`1- 1`).
            bytes.push(self.src.peek_at(blanks)?.unwrap_or(b'0'));
            let result = std::str::from_utf8(&bytes).ok().and_then(GameResult::from_token).is_some();
            bytes.pop();
            if result {
                break;
            }
            for _ in 0..blanks {
                self.src.bump();
            }
        }
        if too_long {
            bytes.truncate(32);
            return Err(syntax(line, PdnErrorKind::TokenTooLong(decode(bytes))));
        }
        Ok(decode(bytes))
    }

    /// If the next bytes are one to three blanks, then a single digit that ends the word or is
    /// followed by a separator (a padded one-digit square: the ` 7` of `1- 7`), the number of
    /// blanks. Two digits there are the next word (`28x19x 14x23` is a broken move and the next).
    fn padded_digit(&mut self) -> io::Result<Option<usize>> {
        let mut k = 0;
        while k < 3 && matches!(self.src.peek_at(k)?, Some(b' ' | b'\t')) {
            k += 1;
        }
        if k == 0 || !self.src.peek_at(k)?.is_some_and(|d| d.is_ascii_digit()) {
            return Ok(None);
        }
        let fits = match self.src.peek_at(k + 1)? {
            None => true,
            Some(c) => is_separator(c) || matches!(c, b'!' | b'?') || ends_word(c),
        };
        Ok(fits.then_some(k))
    }

    /// Reads a set-up `/FEN "..."/` (the next byte is `/`) and returns the FEN.
    fn read_set_up(&mut self, line: usize) -> Result<String, Stop> {
        let bad = |what: &str| syntax(line, PdnErrorKind::BadSetUp(what.to_owned()));
        self.src.bump();
        let mut name = Vec::new();
        while let Some(b) = self.src.peek()? {
            if !is_name_byte(b) || name.len() == 8 {
                break;
            }
            self.src.bump();
            name.push(b);
        }
        if !name.eq_ignore_ascii_case(b"FEN") {
            return Err(bad("expected `/FEN \"...\"/` after `/`"));
        }
        self.skip_blanks_on_line()?;
        if self.src.peek()? != Some(b'"') {
            return Err(bad("expected the FEN in double quotes after `/FEN`"));
        }
        self.src.bump();
        let mut fen = Vec::new();
        loop {
            match self.src.peek()? {
                Some(b'"') => break,
                None | Some(b'\n') => return Err(bad("the FEN has no closing `\"` on its line")),
                Some(0) => return Err(self.nul(line)),
                Some(_) if fen.len() == MAX_TOKEN => return Err(bad("the FEN is too long")),
                Some(b) => {
                    self.src.bump();
                    fen.push(b);
                }
            }
        }
        self.src.bump();
        self.skip_blanks_on_line()?;
        if self.src.peek()? != Some(b'/') {
            return Err(bad("expected `/` after the FEN's closing `\"`"));
        }
        self.src.bump();
        Ok(decode(fen))
    }

    /// Reads `{...}` (the next byte is `{`).
    fn read_comment(&mut self) -> Result<String, Stop> {
        let open = self.src.line();
        self.src.bump();
        let mut bytes = Vec::new();
        loop {
            let Some(b) = self.src.peek()? else {
                return Err(syntax(open, PdnErrorKind::UnterminatedComment));
            };
            self.src.bump();
            match b {
                b'}' => return Ok(decode(bytes)),
                b'\n' if self.tag_line_ahead()? => return Err(syntax(open, PdnErrorKind::UnterminatedComment)),
                0 => return Err(syntax(self.src.line(), PdnErrorKind::NulByte { offset: self.src.offset() - 1 })),
                _ if bytes.len() < MAX_COMMENT => bytes.push(b),
                _ => {}
            }
        }
    }

    /// Reads `; ...` to the end of the line (the next byte is `;`).
    fn read_line_comment(&mut self) -> Result<String, Stop> {
        self.src.bump();
        let mut bytes = Vec::new();
        self.src.take_line(&mut bytes, MAX_COMMENT)?;
        while bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        Ok(decode(bytes))
    }

    /// Whether the line that starts at the next byte looks like a tag: blanks, `[`, a name,
    /// blanks, `"`. Used to stop an unterminated comment from swallowing the games after it.
    fn tag_line_ahead(&mut self) -> io::Result<bool> {
        let mut k = 0;
        while k < 64 && self.src.peek_at(k)?.is_some_and(|b| b == b' ' || b == b'\t') {
            k += 1;
        }
        if self.src.peek_at(k)? != Some(b'[') {
            return Ok(false);
        }
        k += 1;
        let name_start = k;
        while k < name_start + 64 && self.src.peek_at(k)?.is_some_and(is_name_byte) {
            k += 1;
        }
        if k == name_start {
            return Ok(false);
        }
        let blanks_start = k;
        while k < blanks_start + 16 && self.src.peek_at(k)?.is_some_and(|b| b == b' ' || b == b'\t') {
            k += 1;
        }
        Ok(k > blanks_start && self.src.peek_at(k)? == Some(b'"'))
    }

    fn skip_blanks_on_line(&mut self) -> io::Result<()> {
        while self.src.peek()?.is_some_and(|b| b == b' ' || b == b'\t') {
            self.src.bump();
        }
        Ok(())
    }

    /// Reads `[Name "value"]` (the next byte is `[`).
    fn read_tag(&mut self) -> Result<(String, String), Stop> {
        let line = self.src.line();
        let bad = |kind: PdnErrorKind| Stop::Syntax { line, kind, rest_of_line: true };
        self.src.bump();
        self.skip_blanks_on_line()?;
        let mut name = String::new();
        while let Some(b) = self.src.peek()? {
            if !is_name_byte(b) {
                break;
            }
            if name.len() == MAX_TAG_NAME {
                return Err(bad(PdnErrorKind::BadTag(format!("tag name longer than {MAX_TAG_NAME} bytes"))));
            }
            self.src.bump();
            name.push(char::from(b));
        }
        if name.is_empty() {
            return Err(bad(PdnErrorKind::BadTag("expected a tag name (letters, digits, `_`) after `[`".into())));
        }
        self.skip_blanks_on_line()?;
        if self.src.peek()? != Some(b'"') {
            return Err(bad(PdnErrorKind::BadTag(format!("tag `{name}`: expected a value in double quotes"))));
        }
        self.src.bump();
        let mut value = Vec::new();
        loop {
            let b = match self.src.peek()? {
                None | Some(b'\n') => {
                    // The line is over: no rest of line to skip.
                    return Err(syntax(line, PdnErrorKind::UnterminatedTag(name)));
                }
                Some(b) => b,
            };
            if b == 0 {
                let kind = PdnErrorKind::NulByte { offset: self.src.offset() };
                return Err(Stop::Syntax { line, kind, rest_of_line: true });
            }
            self.src.bump();
            match b {
                b'"' => break,
                b'\\' => match self.src.peek()? {
                    Some(e @ (b'"' | b'\\')) => {
                        self.src.bump();
                        value.push(e);
                    }
                    _ => value.push(b'\\'),
                },
                _ => value.push(b),
            }
            if value.len() > MAX_TAG_VALUE {
                return Err(bad(PdnErrorKind::BadTag(format!("tag `{name}`: value longer than {MAX_TAG_VALUE} bytes"))));
            }
        }
        self.skip_blanks_on_line()?;
        if self.src.peek()? != Some(b']') {
            return Err(bad(PdnErrorKind::BadTag(format!("tag `{name}`: expected `]` after the value"))));
        }
        self.src.bump();
        Ok((name, decode(value)))
    }

    /// Skips the rest of a game that failed: up to and including its result token (outside
    /// variations), or up to a `[` at the start of a line once the move text has begun (or after
    /// a blank line), or up to a tag glued to the move text (`14x23[Event "..."]`), or to the end
    /// of the input. In the tag section, tag lines are skipped whole.
    fn skip_game(&mut self, mut movetext: bool) -> io::Result<()> {
        let mut blank_line = false;
        let mut depth = 0usize;
        let mut word = Vec::new();
        while let Some(b) = self.src.peek()? {
            match b {
                b'\n' => {
                    if self.src.at_line_start() {
                        blank_line = true;
                    }
                    self.src.bump();
                }
                b if is_blank(b) => self.src.bump(),
                b'[' if self.src.at_line_start() => {
                    if movetext || blank_line {
                        return Ok(());
                    }
                    self.src.take_line(&mut Vec::new(), 0)?;
                }
                b'[' if movetext && self.tag_line_ahead()? => return Ok(()),
                b'%' | b';' if b == b';' || self.src.at_line_start() => {
                    self.src.take_line(&mut Vec::new(), 0)?;
                }
                b'{' => {
                    self.src.bump();
                    while let Some(c) = self.src.peek()? {
                        self.src.bump();
                        if c == b'}' || (c == b'\n' && self.tag_line_ahead()?) {
                            break;
                        }
                    }
                }
                _ => {
                    blank_line = false;
                    word.clear();
                    while let Some(c) = self.src.peek()? {
                        if ends_word(c) && !word.is_empty() {
                            break;
                        }
                        self.src.bump();
                        if word.len() < 8 {
                            word.push(c);
                        }
                        if matches!(c, b'(' | b')' | b'[' | b'}' | b'$') {
                            break;
                        }
                    }
                    match word[..] {
                        [b'('] => depth += 1,
                        [b')'] => depth = depth.saturating_sub(1),
                        _ if depth == 0 && std::str::from_utf8(&word).ok().and_then(GameResult::from_token).is_some() => {
                            return Ok(());
                        }
                        _ => {}
                    }
                    movetext = true;
                }
            }
        }
        Ok(())
    }
}
