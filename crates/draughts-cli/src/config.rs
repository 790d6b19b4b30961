//! Config files: TOML parsed at the edge into the crates' typed config sections.
//!
//! Unknown keys are errors (every section is `deny_unknown_fields`), values can be overridden on
//! the command line with `--set section.key=value`, and the effective config is what gets copied
//! into a run directory.

use std::path::Path;

use serde::de::DeserializeOwned;

use crate::bad_input;

/// Reads `path`, applies `overrides` (`a.b=value`), and deserialises the result.
/// Returns the typed config and the effective TOML text (with the overrides applied).
pub fn load<T: DeserializeOwned>(path: &Path, overrides: &[String]) -> anyhow::Result<(T, String)> {
    let text = std::fs::read_to_string(path).map_err(|e| bad_input(format!("cannot read config {}: {e}", path.display())))?;
    parse(&text, &path.display().to_string(), overrides)
}

/// [`load`] on text; `origin` names the text in error messages.
pub fn parse<T: DeserializeOwned>(text: &str, origin: &str, overrides: &[String]) -> anyhow::Result<(T, String)> {
    if overrides.is_empty() {
        // Parsing the user's own text keeps line numbers in error messages true.
        let config = toml::from_str::<T>(text).map_err(|e| bad_input(format!("config {origin}: {e}")))?;
        return Ok((config, text.to_owned()));
    }
    let mut value: toml::Table = text.parse().map_err(|e| bad_input(format!("config {origin}: {e}")))?;
    for o in overrides {
        apply_override(&mut value, o).map_err(|e| bad_input(format!("--set {o}: {e}")))?;
    }
    let effective = toml::to_string(&value)?;
    let config = toml::from_str::<T>(&effective)
        .map_err(|e| bad_input(format!("config {origin} with --set {}: {e}", overrides.join(" --set "))))?;
    Ok((config, effective))
}

/// Sets `key.path=value` in a TOML table. The value is read as a TOML value (`32`, `0.5`,
/// `true`, `"text"`, `[1, 2]`); anything that is not one is taken as a plain string.
pub fn apply_override(table: &mut toml::Table, assignment: &str) -> Result<(), String> {
    let (key, raw) = assignment.split_once('=').ok_or("expected key=value")?;
    let key = key.trim();
    if key.is_empty() || key.split('.').any(|p| p.trim().is_empty()) {
        return Err(format!("`{key}` is not a key path like selfplay.games_in_flight"));
    }
    let raw = raw.trim();
    let value = match format!("v = {raw}").parse::<toml::Table>() {
        Ok(mut t) => t.remove("v").unwrap_or_else(|| toml::Value::String(raw.to_owned())),
        Err(_) => toml::Value::String(raw.to_owned()),
    };
    let parts: Vec<&str> = key.split('.').map(str::trim).collect();
    let mut cur = table;
    for p in &parts[..parts.len() - 1] {
        let entry = cur.entry(p.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        cur = match entry {
            toml::Value::Table(t) => t,
            _ => return Err(format!("`{p}` is a value, not a section")),
        };
    }
    cur.insert(parts[parts.len() - 1].to_owned(), value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Section {
        n: u32,
        name: String,
    }

    #[derive(Debug, serde::Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Cfg {
        seed: u64,
        section: Section,
    }

    const TEXT: &str = "seed = 1\n[section]\nn = 2\nname = \"a\"\n";

    #[test]
    fn overrides() {
        let (c, _) = parse::<Cfg>(TEXT, "t", &[]).unwrap();
        assert_eq!(c.section.n, 2);
        let (c, eff) = parse::<Cfg>(TEXT, "t", &["section.n=5".into(), "section.name=bee".into(), "seed = 9".into()]).unwrap();
        assert_eq!(c, Cfg { seed: 9, section: Section { n: 5, name: "bee".into() } });
        assert!(eff.contains("n = 5"));
    }

    #[test]
    fn errors_name_the_key() {
        let e = parse::<Cfg>("seed = 1\n[section]\nn = 2\nname = \"a\"\nextra = 3\n", "t.toml", &[]).unwrap_err();
        let msg = format!("{e:#}");
        assert!(msg.contains("extra") && msg.contains("t.toml") && msg.contains("line 5"), "{msg}");
        let e = parse::<Cfg>(TEXT, "t", &["section.n=\"x\"".into()]).unwrap_err();
        assert!(format!("{e:#}").contains("section.n") || format!("{e:#}").contains("invalid type"), "{e:#}");
        assert!(parse::<Cfg>(TEXT, "t", &["nokey".into()]).is_err());
        assert!(parse::<Cfg>(TEXT, "t", &["seed.x=1".into()]).is_err());
    }
}
