//! Player specifications (`alphabeta:depth=6`, `hub:cmd="scan hub"`) and the factories that
//! turn them into players.
//!
//! Grammar: `KIND[:KEY=VALUE[,KEY=VALUE]...]`. A value runs to the next comma unless it is
//! written in double quotes, inside which `\"` and `\\` stand for `"` and `\`. Every kind also
//! takes `name=LABEL`, the name used in results and PDN instead of the spec text.
//!
//! | kind        | keys                                                    |
//! |-------------|---------------------------------------------------------|
//! | `random`    | `seed=N` (default 0)                                    |
//! | `alphabeta` | at least one of `depth=N`, `nodes=N`, `movetime=MS`; optional `model=DIR` (a sparse network as the evaluation), `hash=MIB`, `egtb=DIR`, `vary=CP` and `vary_plies=N` (a seeded choice within CP centi-men of the best move in the game's first N plies, 12 by default), every search option by name |
//! | `mcts`      | `model=DIR`, and `sims=N` or `movetime=MS` (or both); optional `quantised=on` (a sparse network evaluated in int8) |
//! | `policy`    | `model=DIR`, required                                   |
//! | `hub`       | `cmd="PATH ARGS"`, required; optional `depth`, `nodes`, `movetime` |
//! | `dxp`       | `addr=HOST:PORT`, required                              |
//!
//! The arena builds `random` itself (and `alphabeta` and `hub` through the engine and protocol
//! crates, see [`Builtin`]); the program that links the network supplies the rest through a
//! [`PlayerFactory`].

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use draughts_engine::{OptionError, SearchOptions, Variety};
use thiserror::Error;

use crate::player::{Player, RandomPlayer};

/// Plies of variety of an `alphabeta` player given `vary=CP` without `vary_plies`: the first six
/// moves of each side.
pub const DEFAULT_VARY_PLIES: u32 = 12;

/// Search limits of an engine player. At least one is set for `alphabeta`; a search stops at
/// the first limit it reaches.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SearchLimits {
    /// Nominal depth in plies.
    pub depth: Option<u32>,
    /// Nodes.
    pub nodes: Option<u64>,
    /// Time per move.
    pub movetime: Option<Duration>,
}

impl SearchLimits {
    /// Whether no limit is set.
    pub fn is_empty(&self) -> bool {
        self.depth.is_none() && self.nodes.is_none() && self.movetime.is_none()
    }
}

/// What kind of player, with its settings.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PlayerKind {
    /// Uniformly random legal moves.
    Random {
        /// Base seed, mixed with each game's seed.
        seed: u64,
    },
    /// The alpha-beta engine: the hand-made evaluation, or a sparse network's.
    AlphaBeta {
        /// Search limits.
        limits: SearchLimits,
        /// A sparse network (model or run directory, or checkpoint file) as the evaluation.
        model: Option<PathBuf>,
        /// Transposition table size in MiB (`hash=`); the engine's default when `None`.
        hash: Option<usize>,
        /// Endgame databases probed in the search (`egtb=DIR`).
        egtb: Option<PathBuf>,
        /// The search's optional techniques (`qs_threat=on`, `probcut=off`, ...: every name of
        /// [`SearchOptions::NAMES`] is a key); the engine's defaults for those not given.
        options: SearchOptions,
        /// Variety in the opening (`vary=CP`, `vary_plies=N`), seeded by each game's seed.
        variety: Option<Variety>,
    },
    /// MCTS with a trained network.
    Mcts {
        /// Model directory.
        model: PathBuf,
        /// Simulations per move (with `movetime` too: the first limit reached).
        sims: Option<u32>,
        /// Time per move.
        movetime: Option<Duration>,
        /// A sparse network evaluated quantised (`Precision::Int8`) instead of in float.
        quantised: bool,
    },
    /// The network's policy alone (the most likely legal move, no search).
    Policy {
        /// Model directory.
        model: PathBuf,
    },
    /// An external engine speaking the Hub protocol, run as a child process.
    Hub {
        /// The command line: program and arguments, split like a shell would (quotes allowed).
        cmd: String,
        /// Limits sent with every search; none means the engine's default.
        limits: SearchLimits,
        /// Send the whole game with every search (`history=all`) instead of the position after
        /// the last capture or man move and the king moves since (`history=reversible`, the Hub
        /// GUI's convention and the default). Only the whole game lets the engine know the
        /// draw-rule counters that run across irreversible moves (the 16- and 5-move rules).
        full_history: bool,
    },
    /// An external engine reached over DXP.
    Dxp {
        /// `HOST:PORT`.
        addr: String,
    },
}

impl PlayerKind {
    /// The kind's keyword: `random`, `alphabeta`, `mcts`, `policy`, `hub` or `dxp`.
    pub fn keyword(&self) -> &'static str {
        match self {
            PlayerKind::Random { .. } => "random",
            PlayerKind::AlphaBeta { .. } => "alphabeta",
            PlayerKind::Mcts { .. } => "mcts",
            PlayerKind::Policy { .. } => "policy",
            PlayerKind::Hub { .. } => "hub",
            PlayerKind::Dxp { .. } => "dxp",
        }
    }
}

/// A parsed player specification.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PlayerSpec {
    /// What to build.
    pub kind: PlayerKind,
    /// The `name=` label, if given.
    pub label: Option<String>,
}

/// The kinds, in the order error messages list them.
pub const KINDS: [&str; 6] = ["random", "alphabeta", "mcts", "policy", "hub", "dxp"];

/// Why a spec could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("player spec `{spec}`: {kind}")]
pub struct SpecError {
    /// The whole spec as given.
    pub spec: String,
    /// What is wrong.
    pub kind: SpecErrorKind,
}

/// What is wrong with a spec.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum SpecErrorKind {
    /// Nothing given.
    #[error("empty (expected one of {})", KINDS.join(", "))]
    Empty,
    /// The part before `:` is not a known kind.
    #[error("unknown player kind `{0}` (expected one of {known})", known = KINDS.join(", "))]
    UnknownKind(String),
    /// A key the kind does not take.
    #[error("unknown key `{key}` for {kind} (known: {})", known.join(", "))]
    UnknownKey {
        /// The kind.
        kind: &'static str,
        /// The key given.
        key: String,
        /// The keys the kind takes.
        known: &'static [&'static str],
    },
    /// A key given twice.
    #[error("key `{0}` given twice")]
    DuplicateKey(String),
    /// A `key=value` item that does not parse: no `=`, an empty key, an unterminated quote.
    #[error("at byte {column}: {reason}")]
    Syntax {
        /// Byte offset into the spec.
        column: usize,
        /// What was expected.
        reason: &'static str,
    },
    /// A number that does not parse or is out of range.
    #[error("`{key}={value}`: {reason}")]
    BadNumber {
        /// The key.
        key: &'static str,
        /// The value given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A value that is not allowed (an empty command, an address without a port).
    #[error("`{key}={value}`: {reason}")]
    BadValue {
        /// The key.
        key: &'static str,
        /// The value given.
        value: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A required key is missing.
    #[error("{kind} needs `{key}`")]
    MissingKey {
        /// The kind.
        kind: &'static str,
        /// The missing key (or keys, `depth, nodes or movetime`).
        key: &'static str,
    },
}

const RANDOM_KEYS: &[&str] = &["seed", "name"];
/// The limits, the model, the table size, then every name of [`SearchOptions::NAMES`].
const ALPHABETA_KEYS: &[&str] = &{
    const BASE: [&str; 9] = ["depth", "nodes", "movetime", "model", "hash", "egtb", "vary", "vary_plies", "name"];
    let mut keys = [""; BASE.len() + SearchOptions::NAMES.len()];
    let mut i = 0;
    while i < keys.len() {
        keys[i] = if i < BASE.len() { BASE[i] } else { SearchOptions::NAMES[i - BASE.len()] };
        i += 1;
    }
    keys
};
const MCTS_KEYS: &[&str] = &["model", "sims", "movetime", "quantised", "name"];
const POLICY_KEYS: &[&str] = &["model", "name"];
const HUB_KEYS: &[&str] = &["cmd", "depth", "nodes", "movetime", "history", "name"];
const DXP_KEYS: &[&str] = &["addr", "name"];

/// The `key=value` items of a spec, with the keys checked against the kind's list.
struct Items {
    kind: &'static str,
    items: Vec<(&'static str, String)>,
}

impl Items {
    fn take(&mut self, key: &'static str) -> Option<String> {
        let i = self.items.iter().position(|(k, _)| *k == key)?;
        Some(self.items.remove(i).1)
    }

    fn required(&mut self, key: &'static str) -> Result<String, SpecErrorKind> {
        self.take(key).ok_or(SpecErrorKind::MissingKey { kind: self.kind, key })
    }

    fn number<T>(&mut self, key: &'static str, min: T) -> Result<Option<T>, SpecErrorKind>
    where
        T: std::str::FromStr + PartialOrd + fmt::Display,
        T::Err: fmt::Display,
    {
        let Some(value) = self.take(key) else { return Ok(None) };
        let n: T = value.trim().parse().map_err(|e: T::Err| SpecErrorKind::BadNumber {
            key,
            value: value.clone(),
            reason: e.to_string(),
        })?;
        if n < min {
            return Err(SpecErrorKind::BadNumber { key, value, reason: format!("must be at least {min}") });
        }
        Ok(Some(n))
    }

    fn limits(&mut self) -> Result<SearchLimits, SpecErrorKind> {
        Ok(SearchLimits {
            depth: self.number("depth", 1u32)?,
            nodes: self.number("nodes", 1u64)?,
            movetime: self.number("movetime", 1u64)?.map(Duration::from_millis),
        })
    }
}

/// Splits `key=value,key="va,lue"` into items. `offset` is the byte offset of `body` in the spec.
fn split_items(body: &str, offset: usize) -> Result<Vec<(String, String)>, SpecErrorKind> {
    let mut items = Vec::new();
    let bytes = body.as_bytes();
    let mut i = 0;
    loop {
        let start = i;
        while i < bytes.len() && bytes[i] != b'=' && bytes[i] != b',' {
            i += 1;
        }
        let key = body[start..i].trim();
        if i >= bytes.len() || bytes[i] != b'=' {
            return Err(SpecErrorKind::Syntax { column: offset + start, reason: "expected `key=value`" });
        }
        if key.is_empty() {
            return Err(SpecErrorKind::Syntax { column: offset + start, reason: "empty key before `=`" });
        }
        i += 1; // '='
        // Skip blanks before a quoted value.
        let mut j = i;
        while j < bytes.len() && bytes[j] == b' ' {
            j += 1;
        }
        let value = if j < bytes.len() && bytes[j] == b'"' {
            let mut value = String::new();
            let mut k = j + 1;
            let mut closed = false;
            let mut chars = body[k..].char_indices();
            while let Some((off, c)) = chars.next() {
                match c {
                    '"' => {
                        k += off + 1;
                        closed = true;
                        break;
                    }
                    '\\' => match chars.next() {
                        Some((_, e @ ('"' | '\\'))) => value.push(e),
                        Some((_, other)) => {
                            value.push('\\');
                            value.push(other);
                        }
                        None => break,
                    },
                    c => value.push(c),
                }
            }
            if !closed {
                return Err(SpecErrorKind::Syntax { column: offset + j, reason: "unterminated `\"`" });
            }
            // Only blanks may follow the closing quote before the next comma.
            while k < bytes.len() && bytes[k] == b' ' {
                k += 1;
            }
            if k < bytes.len() && bytes[k] != b',' {
                return Err(SpecErrorKind::Syntax { column: offset + k, reason: "expected `,` after a quoted value" });
            }
            i = k;
            value
        } else {
            let s = i;
            while i < bytes.len() && bytes[i] != b',' {
                i += 1;
            }
            body[s..i].trim().to_owned()
        };
        items.push((key.to_owned(), value));
        if i >= bytes.len() {
            return Ok(items);
        }
        i += 1; // ','
        if i >= bytes.len() {
            return Err(SpecErrorKind::Syntax { column: offset + i, reason: "trailing `,`" });
        }
    }
}

impl PlayerSpec {
    /// Parses a spec, see the [module documentation](self).
    pub fn parse(text: &str) -> Result<PlayerSpec, SpecError> {
        PlayerSpec::parse_inner(text).map_err(|kind| SpecError { spec: text.to_owned(), kind })
    }

    fn parse_inner(text: &str) -> Result<PlayerSpec, SpecErrorKind> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(SpecErrorKind::Empty);
        }
        let lead = text.len() - text.trim_start().len();
        let (kind_text, body) = match trimmed.find(':') {
            Some(i) => (&trimmed[..i], Some((&trimmed[i + 1..], lead + i + 1))),
            None => (trimmed, None),
        };
        let (kind, known): (&'static str, &'static [&'static str]) = match kind_text.trim() {
            "random" => ("random", RANDOM_KEYS),
            "alphabeta" => ("alphabeta", ALPHABETA_KEYS),
            "mcts" => ("mcts", MCTS_KEYS),
            "policy" => ("policy", POLICY_KEYS),
            "hub" => ("hub", HUB_KEYS),
            "dxp" => ("dxp", DXP_KEYS),
            other => return Err(SpecErrorKind::UnknownKind(other.to_owned())),
        };
        let raw = match body {
            Some((b, _)) if b.trim().is_empty() => Vec::new(),
            Some((b, off)) => split_items(b, off)?,
            None => Vec::new(),
        };
        let mut items = Items { kind, items: Vec::new() };
        for (key, value) in raw {
            let Some(&k) = known.iter().find(|k| **k == key) else {
                return Err(SpecErrorKind::UnknownKey { kind, key, known });
            };
            if items.items.iter().any(|(seen, _)| *seen == k) {
                return Err(SpecErrorKind::DuplicateKey(key));
            }
            items.items.push((k, value));
        }
        let label = items.take("name");
        if label.as_deref().is_some_and(|l| l.trim().is_empty()) {
            return Err(SpecErrorKind::BadValue { key: "name", value: String::new(), reason: "must not be empty" });
        }
        let nonempty = |key: &'static str, value: String, reason: &'static str| {
            if value.trim().is_empty() {
                Err(SpecErrorKind::BadValue { key, value, reason })
            } else {
                Ok(value)
            }
        };
        let kind = match kind {
            "random" => PlayerKind::Random { seed: items.number("seed", 0u64)?.unwrap_or(0) },
            "alphabeta" => {
                let limits = items.limits()?;
                if limits.is_empty() {
                    return Err(SpecErrorKind::MissingKey { kind, key: "depth, nodes or movetime" });
                }
                let model = match items.take("model") {
                    Some(m) => Some(PathBuf::from(nonempty("model", m, "must name a model directory")?)),
                    None => None,
                };
                let hash = items.number("hash", 1usize)?;
                let egtb = match items.take("egtb") {
                    Some(d) => Some(PathBuf::from(nonempty("egtb", d, "must name a directory of endgame tables")?)),
                    None => None,
                };
                // Options not named are the engine's defaults for its evaluation.
                let mut options = SearchOptions::defaults(model.is_some());
                for name in SearchOptions::NAMES {
                    if let Some(value) = items.take(name) {
                        options.set(name, &value).map_err(|e| match e {
                            OptionError::BadValue { name, value, expected } => {
                                SpecErrorKind::BadValue { key: name, value, reason: expected }
                            }
                            OptionError::Unknown(_) => unreachable!("the name comes from SearchOptions::NAMES"),
                        })?;
                    }
                }
                let vary = items.number("vary", 0i32)?;
                let plies = items.number("vary_plies", 1u32)?;
                if plies.is_some() && vary.is_none() {
                    return Err(SpecErrorKind::MissingKey { kind, key: "vary (vary_plies needs it)" });
                }
                let variety = vary.map(|margin| Variety { margin, plies: plies.unwrap_or(DEFAULT_VARY_PLIES) });
                PlayerKind::AlphaBeta { limits, model, hash, egtb, options, variety }
            }
            "mcts" => {
                let model = nonempty("model", items.required("model")?, "must name a model directory")?;
                let sims = items.number("sims", 1u32)?;
                let movetime = items.number("movetime", 1u64)?.map(Duration::from_millis);
                if sims.is_none() && movetime.is_none() {
                    return Err(SpecErrorKind::MissingKey { kind, key: "sims or movetime" });
                }
                let quantised = match items.take("quantised").as_deref().map(str::trim) {
                    None | Some("off") => false,
                    Some("on") => true,
                    Some(other) => {
                        return Err(SpecErrorKind::BadValue { key: "quantised", value: other.to_owned(), reason: "expected `on` or `off`" });
                    }
                };
                PlayerKind::Mcts { model: PathBuf::from(model), sims, movetime, quantised }
            }
            "policy" => {
                let model = nonempty("model", items.required("model")?, "must name a model directory")?;
                PlayerKind::Policy { model: PathBuf::from(model) }
            }
            "hub" => {
                let cmd = nonempty("cmd", items.required("cmd")?, "must name a program")?;
                let full_history = match items.take("history").as_deref().map(str::trim) {
                    None | Some("reversible") => false,
                    Some("all") => true,
                    Some(other) => {
                        return Err(SpecErrorKind::BadValue {
                            key: "history",
                            value: other.to_owned(),
                            reason: "expected `all` or `reversible`",
                        })
                    }
                };
                PlayerKind::Hub { cmd, limits: items.limits()?, full_history }
            }
            "dxp" => {
                let addr = items.required("addr")?;
                let ok = addr.rsplit_once(':').is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
                if !ok {
                    return Err(SpecErrorKind::BadValue { key: "addr", value: addr, reason: "expected HOST:PORT" });
                }
                PlayerKind::Dxp { addr }
            }
            _ => unreachable!("every kind keyword is matched above"),
        };
        Ok(PlayerSpec { kind, label })
    }

    /// The name for results: the `name=` label, or the canonical spec text.
    pub fn display_name(&self) -> String {
        match &self.label {
            Some(l) => l.clone(),
            None => self.to_string(),
        }
    }
}

impl std::str::FromStr for PlayerSpec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<PlayerSpec, SpecError> {
        PlayerSpec::parse(s)
    }
}

fn quote(value: &str) -> String {
    if value.contains([',', '"', '\\', ' ']) || value.is_empty() {
        let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
        format!("\"{escaped}\"")
    } else {
        value.to_owned()
    }
}

impl fmt::Display for PlayerSpec {
    /// The canonical text, which parses back to the same spec.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut items: Vec<String> = Vec::new();
        let limits = |items: &mut Vec<String>, l: &SearchLimits| {
            if let Some(d) = l.depth {
                items.push(format!("depth={d}"));
            }
            if let Some(n) = l.nodes {
                items.push(format!("nodes={n}"));
            }
            if let Some(t) = l.movetime {
                items.push(format!("movetime={}", t.as_millis()));
            }
        };
        match &self.kind {
            PlayerKind::Random { seed } => {
                if *seed != 0 {
                    items.push(format!("seed={seed}"));
                }
            }
            PlayerKind::AlphaBeta { limits: l, model, hash, egtb, options, variety } => {
                limits(&mut items, l);
                if let Some(m) = model {
                    items.push(format!("model={}", quote(&m.to_string_lossy())));
                }
                if let Some(h) = hash {
                    items.push(format!("hash={h}"));
                }
                if let Some(d) = egtb {
                    items.push(format!("egtb={}", quote(&d.to_string_lossy())));
                }
                if let Some(v) = variety {
                    items.push(format!("vary={}", v.margin));
                    items.push(format!("vary_plies={}", v.plies));
                }
                let default = SearchOptions::defaults(model.is_some());
                for name in SearchOptions::NAMES {
                    if options.get(name) != default.get(name) {
                        items.push(format!("{name}={}", options.get(name).unwrap_or_default()));
                    }
                }
            }
            PlayerKind::Mcts { model, sims, movetime, quantised } => {
                items.push(format!("model={}", quote(&model.to_string_lossy())));
                if let Some(n) = sims {
                    items.push(format!("sims={n}"));
                }
                if let Some(t) = movetime {
                    items.push(format!("movetime={}", t.as_millis()));
                }
                if *quantised {
                    items.push("quantised=on".to_owned());
                }
            }
            PlayerKind::Policy { model } => items.push(format!("model={}", quote(&model.to_string_lossy()))),
            PlayerKind::Hub { cmd, limits: l, full_history } => {
                items.push(format!("cmd={}", quote(cmd)));
                limits(&mut items, l);
                if *full_history {
                    items.push("history=all".to_owned());
                }
            }
            PlayerKind::Dxp { addr } => items.push(format!("addr={}", quote(addr))),
        }
        if let Some(l) = &self.label {
            items.push(format!("name={}", quote(l)));
        }
        f.write_str(self.kind.keyword())?;
        if !items.is_empty() {
            write!(f, ":{}", items.join(","))?;
        }
        Ok(())
    }
}

/// Why a player could not be built.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum BuildError {
    /// This program has no way to build this kind (for example `mcts` without a network
    /// backend).
    #[error("`{spec}`: this program cannot build {kind} players")]
    Unsupported {
        /// The spec text.
        spec: String,
        /// The kind's keyword.
        kind: &'static str,
    },
    /// Building failed: a model that does not load, an engine that does not start.
    #[error("`{spec}`: {detail}")]
    Failed {
        /// The spec text.
        spec: String,
        /// What went wrong.
        detail: String,
    },
}

/// Builds players from specs. The CLI supplies one for the kinds the arena cannot build itself
/// (`mcts`, `policy`, `dxp`) and wraps it in [`Builtin`]. A closure
/// `Fn(&PlayerSpec) -> Result<Box<dyn Player>, BuildError> + Sync` is a factory.
///
/// Factories are shared between match workers (hence `Sync`); every worker builds its own
/// player instances, so players themselves need not be `Send`.
pub trait PlayerFactory: Sync {
    /// A new player for `spec`.
    fn build(&self, spec: &PlayerSpec) -> Result<Box<dyn Player>, BuildError>;
}

impl<F> PlayerFactory for F
where
    F: Fn(&PlayerSpec) -> Result<Box<dyn Player>, BuildError> + Sync,
{
    fn build(&self, spec: &PlayerSpec) -> Result<Box<dyn Player>, BuildError> {
        self(spec)
    }
}

/// A factory that builds nothing: every spec is [`BuildError::Unsupported`].
#[derive(Copy, Clone, Debug, Default)]
pub struct NoFactory;

impl PlayerFactory for NoFactory {
    fn build(&self, spec: &PlayerSpec) -> Result<Box<dyn Player>, BuildError> {
        Err(BuildError::Unsupported { spec: spec.to_string(), kind: spec.kind.keyword() })
    }
}

/// The arena's own factory: builds `random` (and, where their crates are linked, `alphabeta`
/// and `hub`) and hands every other kind to `external`.
#[derive(Copy, Clone, Debug, Default)]
pub struct Builtin<E = NoFactory> {
    /// The factory for the kinds the arena does not build.
    pub external: E,
}

impl Builtin<NoFactory> {
    /// Builds only what the arena builds.
    pub fn new() -> Builtin<NoFactory> {
        Builtin { external: NoFactory }
    }
}

impl<E: PlayerFactory> Builtin<E> {
    /// Builds what the arena builds, the rest with `external`.
    pub fn with_external(external: E) -> Builtin<E> {
        Builtin { external }
    }
}

impl<E: PlayerFactory> PlayerFactory for Builtin<E> {
    fn build(&self, spec: &PlayerSpec) -> Result<Box<dyn Player>, BuildError> {
        let player: Box<dyn Player> = match &spec.kind {
            PlayerKind::Random { seed } => Box::new(RandomPlayer::new(*seed)),
            _ => match crate::adapters::build(spec) {
                Some(result) => result?,
                None => self.external.build(spec)?,
            },
        };
        Ok(match &spec.label {
            Some(label) => Box::new(Named { name: label.clone(), inner: player }),
            None => player,
        })
    }
}

/// A player under another name.
#[derive(Debug)]
pub struct Named<P> {
    /// The name to report.
    pub name: String,
    /// The player.
    pub inner: P,
}

impl<P: Player> Player for Named<P> {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn new_game(&mut self, seed: u64) {
        self.inner.new_game(seed)
    }
    fn choose(&mut self, game: &draughts_core::Game, clock: &crate::ClockState) -> Result<draughts_core::Move, crate::PlayerError> {
        self.inner.choose(game, clock)
    }
}

/// A closure that builds a fresh player for `spec` with `factory`, for
/// [`crate::run_match`].
pub fn maker<'a, F: PlayerFactory + ?Sized>(
    factory: &'a F,
    spec: &'a PlayerSpec,
) -> impl Fn() -> Result<Box<dyn Player>, BuildError> + Sync + 'a {
    move || factory.build(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> PlayerSpec {
        PlayerSpec::parse(s).unwrap_or_else(|e| panic!("{e}"))
    }

    fn err(s: &str) -> SpecErrorKind {
        PlayerSpec::parse(s).unwrap_err().kind
    }

    #[test]
    fn parses_every_kind() {
        assert_eq!(parse("random").kind, PlayerKind::Random { seed: 0 });
        assert_eq!(parse("random:seed=42").kind, PlayerKind::Random { seed: 42 });
        assert_eq!(
            parse("alphabeta:depth=6").kind,
            PlayerKind::AlphaBeta {
                limits: SearchLimits { depth: Some(6), ..SearchLimits::default() },
                model: None,
                hash: None,
                egtb: None,
                options: SearchOptions::default(),
                variety: None
            }
        );
        assert_eq!(
            parse("alphabeta:model=models/sparse,movetime=100").kind,
            PlayerKind::AlphaBeta {
                limits: SearchLimits { movetime: Some(Duration::from_millis(100)), ..SearchLimits::default() },
                model: Some("models/sparse".into()),
                hash: None,
                egtb: None,
                options: SearchOptions::NETWORK,
                variety: None
            }
        );
        assert_eq!(
            parse("alphabeta:nodes=100000,movetime=250").kind,
            PlayerKind::AlphaBeta {
                limits: SearchLimits {
                    nodes: Some(100_000),
                    movetime: Some(Duration::from_millis(250)),
                    ..SearchLimits::default()
                },
                model: None,
                hash: None,
                egtb: None,
                options: SearchOptions::default(),
                variety: None
            }
        );
        assert_eq!(
            parse("mcts:model=runs/a/models/7,sims=64").kind,
            PlayerKind::Mcts { model: "runs/a/models/7".into(), sims: Some(64), movetime: None, quantised: false }
        );
        assert_eq!(
            parse("mcts:model=m,movetime=100").kind,
            PlayerKind::Mcts { model: "m".into(), sims: None, movetime: Some(Duration::from_millis(100)), quantised: false }
        );
        assert!(matches!(parse("mcts:model=m,sims=8,quantised=on").kind, PlayerKind::Mcts { quantised: true, .. }));
        assert!(matches!(parse("mcts:model=m,sims=8,quantised=off").kind, PlayerKind::Mcts { quantised: false, .. }));
        assert!(matches!(err("mcts:model=m,sims=8,quantised=yes"), SpecErrorKind::BadValue { key: "quantised", .. }));
        let PlayerKind::AlphaBeta { hash, options, .. } = parse("alphabeta:movetime=40,hash=64,qs_threat=on,probcut=off,probcut_margin=12").kind else {
            panic!("not alphabeta")
        };
        assert_eq!(hash, Some(64));
        assert!(options.qs_threat && !options.probcut && options.probcut_margin == 12);
        for name in SearchOptions::NAMES {
            assert!(ALPHABETA_KEYS.contains(&name), "alphabeta specs do not take the search option {name}");
        }
        // With a network the options start from the network's defaults; named ones still win,
        // and the canonical spec names what differs from the defaults of its evaluation.
        let options_of = |s: &str| match parse(s).kind {
            PlayerKind::AlphaBeta { options, .. } => options,
            _ => panic!("not alphabeta"),
        };
        assert_eq!(options_of("alphabeta:depth=3"), SearchOptions::DEFAULT);
        assert_eq!(options_of("alphabeta:depth=3,model=m"), SearchOptions::NETWORK);
        assert!(!options_of("alphabeta:depth=3,model=m,lmp=off").lmp);
        assert!(options_of("alphabeta:depth=3,lmp=on").lmp);
        assert_eq!(parse("alphabeta:depth=3,model=m").to_string(), "alphabeta:depth=3,model=m");
        assert_eq!(parse("alphabeta:depth=3,model=m,lmp=off").to_string(), "alphabeta:depth=3,model=m,lmp=off");
        assert_eq!(parse("alphabeta:depth=3,lmp=on").to_string(), "alphabeta:depth=3,lmp=on");
        assert!(matches!(err("alphabeta:depth=3,probcut=maybe"), SpecErrorKind::BadValue { key: "probcut", .. }));
        assert!(matches!(err("alphabeta:depth=3,hash=0"), SpecErrorKind::BadNumber { key: "hash", .. }));
        let spec = parse("alphabeta:depth=3,egtb=db/5 pieces");
        let PlayerKind::AlphaBeta { egtb, .. } = &spec.kind else { panic!("not alphabeta") };
        assert_eq!(egtb.as_deref(), Some(std::path::Path::new("db/5 pieces")));
        assert_eq!(parse(&spec.to_string()), spec);
        assert!(matches!(err("alphabeta:depth=3,egtb="), SpecErrorKind::BadValue { key: "egtb", .. }));
        let spec = parse("alphabeta:movetime=100,vary=15");
        let PlayerKind::AlphaBeta { variety, .. } = &spec.kind else { panic!("not alphabeta") };
        assert_eq!(*variety, Some(Variety { margin: 15, plies: DEFAULT_VARY_PLIES }));
        assert_eq!(parse(&spec.to_string()), spec);
        let PlayerKind::AlphaBeta { variety, .. } = parse("alphabeta:depth=3,vary=0,vary_plies=4").kind else { panic!("not alphabeta") };
        assert_eq!(variety, Some(Variety { margin: 0, plies: 4 }));
        assert!(matches!(err("alphabeta:depth=3,vary=-5"), SpecErrorKind::BadNumber { key: "vary", .. }));
        assert!(matches!(err("alphabeta:depth=3,vary_plies=6"), SpecErrorKind::MissingKey { .. }));
        assert_eq!(parse("policy:model=models/hard").kind, PlayerKind::Policy { model: "models/hard".into() });
        assert_eq!(
            parse(r#"hub:cmd="/opt/scan/scan hub --x=\"a,b\"",movetime=500"#).kind,
            PlayerKind::Hub {
                cmd: r#"/opt/scan/scan hub --x="a,b""#.into(),
                limits: SearchLimits { movetime: Some(Duration::from_millis(500)), ..SearchLimits::default() },
                full_history: false,
            }
        );
        assert_eq!(parse("hub:cmd=./engine").kind, PlayerKind::Hub { cmd: "./engine".into(), limits: SearchLimits::default(), full_history: false });
        assert!(matches!(parse("hub:cmd=./e,history=all").kind, PlayerKind::Hub { full_history: true, .. }));
        assert!(PlayerSpec::parse("hub:cmd=./e,history=some").is_err());
        assert_eq!(parse("dxp:addr=127.0.0.1:27531").kind, PlayerKind::Dxp { addr: "127.0.0.1:27531".into() });
        let named = parse("alphabeta:depth=2, name=\"AB 2\"");
        assert_eq!(named.label.as_deref(), Some("AB 2"));
        assert_eq!(named.display_name(), "AB 2");
        assert_eq!(parse("alphabeta:depth=2").display_name(), "alphabeta:depth=2");
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "random",
            "random:seed=9",
            "alphabeta:depth=4,nodes=10,movetime=30",
            "mcts:model=\"dir with space\",sims=8,name=x",
            "mcts:model=m,sims=8,movetime=20",
            "mcts:model=m,sims=8,quantised=on",
            "alphabeta:depth=3,model=\"a b\"",
            "alphabeta:movetime=40,hash=8,qs_threat=on,single_reply=off,probcut_margin=20",
            "policy:model=m",
            r#"hub:cmd="a \"b\" c\\d",depth=3"#,
            "dxp:addr=host:1",
        ] {
            let spec = parse(s);
            assert_eq!(parse(&spec.to_string()), spec, "{s} -> {spec}");
        }
        assert_eq!(parse(" alphabeta : depth = 3 ").to_string(), "alphabeta:depth=3");
    }

    #[test]
    fn clear_errors() {
        assert_eq!(err(""), SpecErrorKind::Empty);
        assert_eq!(err("minimax:depth=3"), SpecErrorKind::UnknownKind("minimax".into()));
        assert!(matches!(err("alphabeta:dpth=3"), SpecErrorKind::UnknownKey { kind: "alphabeta", ref key, .. } if key == "dpth"));
        assert!(matches!(err("alphabeta:depth=x"), SpecErrorKind::BadNumber { key: "depth", .. }));
        assert!(matches!(err("alphabeta:depth=0"), SpecErrorKind::BadNumber { key: "depth", .. }));
        assert!(matches!(err("alphabeta:depth=-1"), SpecErrorKind::BadNumber { key: "depth", .. }));
        assert!(matches!(err("random:seed=99999999999999999999999"), SpecErrorKind::BadNumber { key: "seed", .. }));
        assert_eq!(err("alphabeta"), SpecErrorKind::MissingKey { kind: "alphabeta", key: "depth, nodes or movetime" });
        assert_eq!(err("mcts:model=m"), SpecErrorKind::MissingKey { kind: "mcts", key: "sims or movetime" });
        assert!(matches!(err("alphabeta:depth=2,model="), SpecErrorKind::BadValue { key: "model", .. }));
        assert_eq!(err("mcts:sims=3"), SpecErrorKind::MissingKey { kind: "mcts", key: "model" });
        assert_eq!(err("hub:depth=3"), SpecErrorKind::MissingKey { kind: "hub", key: "cmd" });
        assert!(matches!(err("hub:cmd=\"\""), SpecErrorKind::BadValue { key: "cmd", .. }));
        assert!(matches!(err("dxp:addr=localhost"), SpecErrorKind::BadValue { key: "addr", .. }));
        assert_eq!(err("random:seed=1,seed=2"), SpecErrorKind::DuplicateKey("seed".into()));
        assert!(matches!(err("random:seed"), SpecErrorKind::Syntax { .. }));
        assert!(matches!(err("random:=3"), SpecErrorKind::Syntax { .. }));
        assert!(matches!(err("random:seed=1,"), SpecErrorKind::Syntax { .. }));
        assert!(matches!(err("hub:cmd=\"abc"), SpecErrorKind::Syntax { .. }));
        assert!(matches!(err("hub:cmd=\"a\"b"), SpecErrorKind::Syntax { .. }));
        let msg = PlayerSpec::parse("alphabeta:dpth=3").unwrap_err().to_string();
        assert!(msg.contains("alphabeta:dpth=3") && msg.contains("dpth") && msg.contains("depth, nodes, movetime"), "{msg}");
        let msg = PlayerSpec::parse("alphabeta:depth=x").unwrap_err().to_string();
        assert!(msg.contains("depth=x") && msg.contains("invalid digit"), "{msg}");
    }

    #[test]
    fn factories() {
        let random = parse("random:seed=3,name=R");
        let p = Builtin::new().build(&random).unwrap();
        assert_eq!(p.name(), "R");
        let mcts = parse("mcts:model=m,sims=2");
        let e = Builtin::new().build(&mcts).unwrap_err();
        assert_eq!(e, BuildError::Unsupported { spec: "mcts:model=m,sims=2".into(), kind: "mcts" });
        // A caller-supplied factory builds the rest.
        let external = |spec: &PlayerSpec| -> Result<Box<dyn Player>, BuildError> {
            match spec.kind {
                PlayerKind::Mcts { sims, .. } => Ok(Box::new(Named { name: format!("fake{}", sims.unwrap_or(0)), inner: RandomPlayer::new(0) })),
                _ => Err(BuildError::Unsupported { spec: spec.to_string(), kind: spec.kind.keyword() }),
            }
        };
        let f = Builtin::with_external(external);
        assert_eq!(f.build(&mcts).unwrap().name(), "fake2");
        assert_eq!(maker(&f, &random)().unwrap().name(), "R");
    }
}
