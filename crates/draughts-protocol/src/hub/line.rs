//! Hub lines: `command name=value name="quoted value" flag`, their parser, formatter and a
//! line reader with a length bound.

use std::fmt;
use std::io::{self, BufRead};

/// The longest line either side of the Hub protocol reads (64 KiB). A `moves=` list of a
/// thousand captures fits many times over; anything longer is an error, not an allocation.
pub const MAX_LINE: usize = 64 * 1024;

/// One parsed Hub line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HubLine {
    /// The first word.
    pub command: String,
    /// The arguments in order: `name=value` pairs have `Some(value)`, bare flags `None`.
    pub args: Vec<(String, Option<String>)>,
}

/// Why a line is not a Hub line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// The line has no command (it starts with `=` or `"`).
    #[error("missing command at column {column}")]
    MissingCommand {
        /// 1-based column.
        column: usize,
    },
    /// `name=` with nothing after the `=`.
    #[error(
        "argument `{name}` has `=` but no value (column {column}); quote an empty value as \"\""
    )]
    MissingValue {
        /// The argument.
        name: String,
        /// 1-based column of the `=`.
        column: usize,
    },
    /// A `"` without its closing `"`.
    #[error("unterminated quoted value starting at column {column}")]
    Unterminated {
        /// 1-based column of the opening quote.
        column: usize,
    },
    /// A character that cannot start or continue a name here.
    #[error("unexpected `{found}` at column {column}")]
    Unexpected {
        /// The character.
        found: char,
        /// 1-based column.
        column: usize,
    },
    /// The same argument twice.
    #[error("argument `{0}` given twice")]
    Duplicate(String),
    /// A control character (other than tab) in the line.
    #[error("control character {code:#04x} at column {column}")]
    Control {
        /// The character code.
        code: u32,
        /// 1-based column.
        column: usize,
    },
}

fn is_name_char(c: char) -> bool {
    !c.is_control() && !c.is_whitespace() && c != '=' && c != '"'
}

impl HubLine {
    /// Parses a line (without its line ending). Blank lines are `Ok(None)`.
    pub fn parse(line: &str) -> Result<Option<HubLine>, LineError> {
        let chars: Vec<char> = line.chars().collect();
        if let Some(i) = chars.iter().position(|&c| c.is_control() && c != '\t') {
            return Err(LineError::Control {
                code: chars[i] as u32,
                column: i + 1,
            });
        }
        let mut i = 0;
        let skip_blank = |i: &mut usize| {
            while *i < chars.len() && chars[*i].is_whitespace() {
                *i += 1;
            }
        };
        let name = |i: &mut usize| -> String {
            let start = *i;
            while *i < chars.len() && is_name_char(chars[*i]) {
                *i += 1;
            }
            chars[start..*i].iter().collect()
        };
        skip_blank(&mut i);
        if i == chars.len() {
            return Ok(None);
        }
        let command = name(&mut i);
        if command.is_empty() {
            return Err(LineError::MissingCommand { column: i + 1 });
        }
        let mut args: Vec<(String, Option<String>)> = Vec::new();
        loop {
            let before = i;
            skip_blank(&mut i);
            if i == chars.len() {
                break;
            }
            if i == before {
                // A quoted value was followed directly by another character.
                return Err(LineError::Unexpected {
                    found: chars[i],
                    column: i + 1,
                });
            }
            let arg = name(&mut i);
            if arg.is_empty() {
                return Err(LineError::Unexpected {
                    found: chars[i],
                    column: i + 1,
                });
            }
            let value = if i < chars.len() && chars[i] == '=' {
                let eq = i;
                i += 1;
                if i < chars.len() && chars[i] == '"' {
                    let open = i;
                    i += 1;
                    let start = i;
                    while i < chars.len() && chars[i] != '"' {
                        i += 1;
                    }
                    if i == chars.len() {
                        return Err(LineError::Unterminated { column: open + 1 });
                    }
                    let v: String = chars[start..i].iter().collect();
                    i += 1;
                    Some(v)
                } else {
                    let v = name(&mut i);
                    if v.is_empty() {
                        return Err(LineError::MissingValue {
                            name: arg,
                            column: eq + 1,
                        });
                    }
                    Some(v)
                }
            } else {
                None
            };
            if args.iter().any(|(a, _)| *a == arg) {
                return Err(LineError::Duplicate(arg));
            }
            args.push((arg, value));
        }
        Ok(Some(HubLine { command, args }))
    }

    /// A line with no arguments yet.
    pub fn new(command: &str) -> HubLine {
        HubLine {
            command: command.to_owned(),
            args: Vec::new(),
        }
    }

    /// Adds `name=value`.
    pub fn arg(mut self, name: &str, value: impl ToString) -> HubLine {
        self.args.push((name.to_owned(), Some(value.to_string())));
        self
    }

    /// Adds a bare flag.
    pub fn flag(mut self, name: &str) -> HubLine {
        self.args.push((name.to_owned(), None));
        self
    }

    /// The value of argument `name`, if given with a value.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.args
            .iter()
            .find(|(a, _)| a == name)
            .and_then(|(_, v)| v.as_deref())
    }

    /// Whether argument `name` is present (as a flag or with a value).
    pub fn has(&self, name: &str) -> bool {
        self.args.iter().any(|(a, _)| a == name)
    }
}

/// Writes `value` as a Hub value: bare when it is a plain word, otherwise in double quotes. A
/// double quote inside cannot be escaped in the protocol, so it becomes `'`; other control
/// characters than tab (which a line may hold) become spaces.
pub fn quote(value: &str) -> String {
    if !value.is_empty() && value.chars().all(is_name_char) {
        value.to_owned()
    } else {
        let clean: String = value
            .chars()
            .map(|c| {
                if c == '"' {
                    '\''
                } else if c.is_control() && c != '\t' {
                    ' '
                } else {
                    c
                }
            })
            .collect();
        format!("\"{clean}\"")
    }
}

impl fmt::Display for HubLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.command)?;
        for (name, value) in &self.args {
            match value {
                Some(v) => write!(f, " {name}={}", quote(v))?,
                None => write!(f, " {name}")?,
            }
        }
        Ok(())
    }
}

/// What [`read_line`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadLine {
    /// A line, without its `\n` or `\r\n`.
    Line(String),
    /// A line longer than the bound; its bytes were read and dropped up to the line end.
    TooLong(usize),
    /// A line that is not UTF-8.
    NotUtf8,
    /// End of input.
    Eof,
}

/// Reads one line of at most `max` bytes (line ending excluded). Longer lines are consumed
/// and reported as [`ReadLine::TooLong`] without being stored, so a peer that never sends a
/// newline costs at most `max` bytes of memory. A last line without a newline is returned.
pub fn read_line<R: BufRead + ?Sized>(reader: &mut R, max: usize) -> io::Result<ReadLine> {
    let mut buf = Vec::new();
    let mut len = 0usize;
    let mut any = false;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            if !any {
                return Ok(ReadLine::Eof);
            }
            break;
        }
        any = true;
        let (part, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(n) => (&chunk[..n], Some(n + 1)),
            None => (chunk, None),
        };
        len += part.len();
        if len <= max + 1 {
            // Keep one byte more than the bound so that a `\r` before the `\n` still fits.
            buf.extend_from_slice(part);
        }
        let used = done.unwrap_or(chunk.len());
        reader.consume(used);
        if done.is_some() {
            break;
        }
    }
    if buf.last() == Some(&b'\r') && len <= max + 1 {
        buf.pop();
        len -= 1;
    }
    if len > max {
        return Ok(ReadLine::TooLong(len));
    }
    match String::from_utf8(buf) {
        Ok(s) => Ok(ReadLine::Line(s)),
        Err(_) => Ok(ReadLine::NotUtf8),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> HubLine {
        HubLine::parse(s).unwrap().unwrap()
    }

    #[test]
    fn tokenises() {
        let l = parse("  pos pos=Wbbbbb moves=\"32-28 19-23\" start  ");
        assert_eq!(l.command, "pos");
        assert_eq!(l.get("pos"), Some("Wbbbbb"));
        assert_eq!(l.get("moves"), Some("32-28 19-23"));
        assert!(l.has("start"));
        assert_eq!(l.get("start"), None);
        assert_eq!(parse("set-param name=x value=\"\"").get("value"), Some(""));
        assert_eq!(HubLine::parse("   "), Ok(None));
    }

    #[test]
    fn rejects_malformed() {
        for (bad, what) in [
            ("=x", "missing command"),
            ("level depth=", "no value"),
            ("pos moves=\"32-28", "unterminated"),
            ("go \"x\"", "unexpected"),
            ("a b=\"c\"d", "unexpected"),
            ("level depth=3 depth=4", "twice"),
            ("go\u{0}", "control"),
            ("a =b", "unexpected"),
        ] {
            let e = HubLine::parse(bad).unwrap_err();
            assert!(e.to_string().contains(what), "{bad}: {e}");
        }
    }

    #[test]
    fn formats_and_round_trips() {
        let l = HubLine::new("id")
            .arg("name", "Scan 3")
            .arg("version", "3.1")
            .arg("x", "")
            .flag("f");
        assert_eq!(l.to_string(), "id name=\"Scan 3\" version=3.1 x=\"\" f");
        assert_eq!(parse(&l.to_string()), l);
        assert_eq!(quote("a\"b"), "\"a'b\"");
        assert_eq!(quote("a=b"), "\"a=b\"");
    }

    #[test]
    fn bounded_reader() {
        let mut bytes = b"ab\r\n".to_vec();
        bytes.extend_from_slice(&[b'x'; 100]);
        bytes.extend_from_slice(b"\ncd\n\xff\nlast");
        let input = io::Cursor::new(bytes);
        let mut r = io::BufReader::with_capacity(7, input);
        assert_eq!(read_line(&mut r, 10).unwrap(), ReadLine::Line("ab".into()));
        assert_eq!(read_line(&mut r, 10).unwrap(), ReadLine::TooLong(100));
        assert_eq!(read_line(&mut r, 10).unwrap(), ReadLine::Line("cd".into()));
        assert_eq!(read_line(&mut r, 10).unwrap(), ReadLine::NotUtf8);
        assert_eq!(
            read_line(&mut r, 10).unwrap(),
            ReadLine::Line("last".into())
        );
        assert_eq!(read_line(&mut r, 10).unwrap(), ReadLine::Eof);
        // Exactly at the bound, with and without `\r`.
        let mut r = io::Cursor::new(b"0123456789\r\n0123456789\n01234567890\n".to_vec());
        assert_eq!(
            read_line(&mut r, 10).unwrap(),
            ReadLine::Line("0123456789".into())
        );
        assert_eq!(
            read_line(&mut r, 10).unwrap(),
            ReadLine::Line("0123456789".into())
        );
        assert_eq!(read_line(&mut r, 10).unwrap(), ReadLine::TooLong(11));
    }
}
