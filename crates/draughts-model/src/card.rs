//! The model card's file list: a model directory's `README.md` ends with a section
//! `## Files (SHA-256)` holding a fenced block in the format of `sha256sum` (`HEX  NAME`, one
//! file per line, names relative to the directory), so that `sha256sum -c` can check a copy too.
//! Finding a model in a directory with such a card checks every file it lists
//! ([`verify_card`]): a file changed, truncated or missing is an error naming it.

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

/// The model card's file name in a model directory.
pub const CARD_FILE: &str = "README.md";

/// The heading of the card's file list.
pub const SUMS_HEADING: &str = "## Files (SHA-256)";

/// What is wrong with a model directory's file list.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CardError {
    /// A listed file is not there or cannot be read.
    #[error("{}: listed in {} but cannot be read: {message}", .path.display(), .card.display())]
    Missing { card: PathBuf, path: PathBuf, message: String },
    /// A listed file's contents differ from what the card says.
    #[error("{}: SHA-256 {actual} differs from {expected} in {} (the file was changed or damaged)", .path.display(), .card.display())]
    Mismatch { card: PathBuf, path: PathBuf, expected: String, actual: String },
    /// The file list itself does not read.
    #[error("{}:{line}: {message}", .card.display())]
    Malformed { card: PathBuf, line: usize, message: String },
}

/// SHA-256 of `bytes`, in lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The card section listing `files` (names relative to the directory, `/`-separated) with the
/// SHA-256 of their contents.
pub fn sums_section(files: &[(String, Vec<u8>)]) -> String {
    let mut s = format!(
        "{SUMS_HEADING}\n\nEvery file of this directory but this card, checked when the model is loaded \
         (`sha256sum -c` reads the block too):\n\n```text\n"
    );
    let mut sorted: Vec<&(String, Vec<u8>)> = files.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, bytes) in sorted {
        let _ = writeln!(s, "{}  {name}", sha256_hex(bytes));
    }
    s.push_str("```\n");
    s
}

/// Every file under `dir` but the card and temporary files (`*.tmp`), with its name relative to
/// `dir` (`/`-separated) and its contents, sorted by name: what the card lists.
pub fn directory_files(dir: &Path) -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let mut out = Vec::new();
    let mut dirs = vec![PathBuf::new()];
    while let Some(rel) = dirs.pop() {
        for entry in std::fs::read_dir(dir.join(&rel))? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = rel.join(&name);
            let kind = entry.file_type()?;
            if kind.is_dir() {
                dirs.push(path);
            } else if kind.is_file() && !name.ends_with(".tmp") && path != Path::new(CARD_FILE) {
                let parts: Vec<String> = path.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
                out.push((parts.join("/"), std::fs::read(entry.path())?));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// `card` with its file list replaced by (or, without one, followed by) `section`.
pub fn with_sums_section(card: &str, section: &str) -> String {
    let base = match card.find(SUMS_HEADING) {
        Some(at) => {
            // The section runs to the end of its fenced block (it is written last).
            let rest = &card[at..];
            let end = rest.find("```text").and_then(|open| rest[open + 7..].find("```").map(|close| open + 7 + close + 3));
            let tail = end.map_or("", |e| rest[e..].trim_start_matches('\n'));
            format!("{}{}", &card[..at], tail)
        }
        None => card.to_owned(),
    };
    let base = base.trim_end();
    if base.is_empty() {
        section.to_owned()
    } else {
        format!("{base}\n\n{section}")
    }
}

/// The `(hex, name)` entries of the card's file list; none when it has no such section.
pub fn read_sums(card: &Path, text: &str) -> Result<Vec<(String, String)>, CardError> {
    let malformed = |line: usize, message: String| CardError::Malformed { card: card.to_path_buf(), line, message };
    let mut lines = text.lines().enumerate().skip_while(|(_, l)| l.trim_end() != SUMS_HEADING);
    let Some((heading, _)) = lines.next() else { return Ok(Vec::new()) };
    let mut lines = lines.skip_while(|(_, l)| !l.starts_with("```"));
    if lines.next().is_none() {
        return Err(malformed(heading + 1, format!("`{SUMS_HEADING}` without its ``` block")));
    }
    let mut out = Vec::new();
    for (i, line) in lines {
        if line.starts_with("```") {
            return Ok(out);
        }
        let (hex, name) = line
            .split_once("  ")
            .ok_or_else(|| malformed(i + 1, format!("`{line}`: expected `SHA256  FILE`")))?;
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            return Err(malformed(i + 1, format!("`{hex}` is not a SHA-256 in lower-case hex")));
        }
        let relative = Path::new(name);
        if name.is_empty() || !relative.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(malformed(i + 1, format!("`{name}`: a file name inside the directory")));
        }
        out.push((hex.to_owned(), name.to_owned()));
    }
    Err(malformed(heading + 1, "the file list's ``` block is not closed".to_owned()))
}

/// Checks every file the card of `dir` lists; returns how many (0 when `dir` has no card, or a
/// card without a file list, as cards written before it had).
pub fn verify_card(dir: &Path) -> Result<usize, CardError> {
    let card = dir.join(CARD_FILE);
    let Ok(text) = std::fs::read_to_string(&card) else { return Ok(0) };
    let sums = read_sums(&card, &text)?;
    for (expected, name) in &sums {
        let path = dir.join(name);
        let bytes = std::fs::read(&path)
            .map_err(|e| CardError::Missing { card: card.clone(), path: path.clone(), message: e.to_string() })?;
        let actual = sha256_hex(&bytes);
        if actual != *expected {
            return Err(CardError::Mismatch { card: card.clone(), path, expected: expected.clone(), actual });
        }
    }
    Ok(sums.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_known_inputs() {
        assert_eq!(sha256_hex(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn a_card_lists_its_files_and_every_change_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let files = vec![("m.safetensors".to_owned(), b"weights".to_vec()), ("report/a.png".to_owned(), b"png".to_vec())];
        std::fs::create_dir_all(dir.path().join("report")).unwrap();
        for (n, b) in &files {
            std::fs::write(dir.path().join(n), b).unwrap();
        }
        let card = with_sums_section("# m\n\ntext\n", &sums_section(&files));
        // Replacing the section keeps one.
        let card = with_sums_section(&card, &sums_section(&files));
        assert_eq!(card.matches(SUMS_HEADING).count(), 1);
        assert!(card.starts_with("# m\n\ntext\n\n## Files"));
        std::fs::write(dir.path().join(CARD_FILE), &card).unwrap();
        assert_eq!(verify_card(dir.path()), Ok(2));

        std::fs::write(dir.path().join("m.safetensors"), b"weightz").unwrap();
        let err = verify_card(dir.path()).unwrap_err();
        assert!(matches!(err, CardError::Mismatch { .. }) && err.to_string().contains("m.safetensors"), "{err}");
        std::fs::remove_file(dir.path().join("m.safetensors")).unwrap();
        let err = verify_card(dir.path()).unwrap_err();
        assert!(matches!(err, CardError::Missing { .. }), "{err}");

        for (bad, what) in [
            ("zz  m.safetensors", "not a SHA-256"),
            (&*format!("{}  ../m", "0".repeat(64)), "inside the directory"),
            ("no separator", "expected"),
        ] {
            let text = format!("# m\n\n{SUMS_HEADING}\n\n```text\n{bad}\n```\n");
            let err = read_sums(Path::new("README.md"), &text).unwrap_err();
            assert!(err.to_string().contains(what) && err.to_string().contains("README.md:6"), "{err}");
        }
        let unclosed = format!("{SUMS_HEADING}\n```text\n{}  a\n", "0".repeat(64));
        assert!(read_sums(Path::new("R"), &unclosed).is_err());
        // A card without a list checks nothing.
        assert_eq!(read_sums(Path::new("R"), "# m\n\nno list\n"), Ok(Vec::new()));
    }
}
