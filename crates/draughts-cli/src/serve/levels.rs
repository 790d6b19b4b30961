//! The levels offered to people, as data (`configs/levels.toml`, carried in the binary).

use std::path::Path;
use std::time::Duration;

use draughts_engine::{EngineConfig, Endgames, Limits, Noise, SearchOptions, Variety};
use serde::{Deserialize, Serialize};

use crate::bad_input;

/// The shipped levels.
pub const DEFAULT_LEVELS: &str = include_str!("../../../../configs/levels.toml");
/// The shipped levels' ratings (`draughts levels rate`).
pub const DEFAULT_RATINGS: &str = include_str!("../../../../configs/levels.ratings.json");

/// One level: the alpha-beta engine with these limits.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LevelSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    pub movetime_ms: Option<u64>,
    /// Random choice among the moves within this many centi-men of the best.
    pub noise_cp: Option<i32>,
    /// The random choice only in the game's first this many plies (variety in the opening for a
    /// strong level); every move when not given.
    pub noise_plies: Option<u32>,
    #[serde(default = "default_hash")]
    pub hash_mib: usize,
    /// The served model is the evaluation.
    #[serde(default)]
    pub network: bool,
    /// The engine probes the served endgame tables (`draughts serve --egtb DIR`), if any.
    #[serde(default)]
    pub egtb: bool,
    /// Search options as `draughts search --opt` takes them (`"probcut=off,quantised=off"`);
    /// the engine's defaults for the others.
    #[serde(default)]
    pub options: String,
    /// Search threads (Lazy SMP), 1 to 256; the same as `threads=N` in `options`.
    pub threads: Option<u16>,
    /// Hub and DXP: the GUI's (or the peer's) move time or clock replaces `movetime_ms`, which is
    /// then the time per move when they give none (a level at full strength). Without it, and
    /// always in `draughts serve`, `movetime_ms` caps every move.
    #[serde(default)]
    pub caller_time: bool,
    /// The level's measured rating, from the ratings file beside the levels file when it rated
    /// this very level (same limits, same network).
    #[serde(skip)]
    pub rating: Option<LevelRating>,
}

/// A level's rating, as `draughts levels rate` measured it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelRating {
    /// Logistic Elo on the ratings file's scale (see its `scale`).
    pub elo: f64,
    /// The 95% interval.
    pub low: f64,
    pub high: f64,
    /// Games behind it.
    pub games: u64,
    /// The network it was rated with (levels with `network = true`).
    pub network: Option<String>,
}

/// A ratings file: what `draughts levels rate` writes beside a levels file
/// (`levels.toml` -> `levels.ratings.json`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatingsFile {
    /// Format version (1).
    pub format: u32,
    /// What the numbers mean: logistic Elo, and the player whose rating is fixed.
    pub scale: String,
    /// When, how and on what it was measured.
    pub created: String,
    pub command: String,
    pub seed: u64,
    pub machine: String,
    /// Games in all.
    pub games: u64,
    /// Every player (levels and anchors), strongest first.
    pub players: Vec<RatedPlayer>,
    /// Every pairing's result, from `a`'s side.
    pub pairings: Vec<RatedPairing>,
}

/// One player of a ratings file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatedPlayer {
    pub name: String,
    /// `level` or `anchor`.
    pub kind: String,
    /// How it plays (a level's summary, an anchor's player spec).
    pub player: String,
    /// A level's fingerprint ([`LevelSpec::fingerprint`]): the rating holds for that level only.
    pub fingerprint: Option<String>,
    pub rating: LevelRating,
    pub points: f64,
}

/// One pairing of a ratings file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatedPairing {
    pub a: String,
    pub b: String,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

fn default_hash() -> usize {
    16
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LevelsFile {
    level: Vec<LevelSpec>,
}

impl LevelSpec {
    /// The engine limits of a move at this level at ply `ply` of its game; `movetime` (a
    /// request's) only shortens it.
    pub fn limits(&self, movetime: Option<Duration>, seed: u64, ply: usize) -> Limits {
        let own = self.movetime_ms.map(Duration::from_millis);
        let movetime = match (own, movetime) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Limits {
            depth: self.depth,
            nodes: self.nodes,
            movetime,
            clock: None,
            noise: self.noise_cp.and_then(|margin| match self.noise_plies {
                Some(plies) => Variety { margin, plies }.noise(ply, seed),
                None => Some(Noise { margin, seed }),
            }),
        }
    }

    /// The engine limits of a move at this level for a Hub or DXP engine, given the limits the
    /// GUI or the peer sets (`base`: a depth, nodes, a move time, a clock): the level's depth and
    /// nodes cap the caller's; its `movetime_ms` caps the caller's time too, unless
    /// `caller_time` (then it is the time when the caller gives none); its random choice as in
    /// [`LevelSpec::limits`].
    pub fn protocol_limits(&self, base: &Limits, seed: u64, ply: usize) -> Limits {
        let min = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let own = self.movetime_ms.map(Duration::from_millis);
        let mut l = Limits {
            depth: min(self.depth.map(u64::from), base.depth.map(u64::from)).map(|d| d as u32),
            nodes: min(self.nodes, base.nodes),
            movetime: base.movetime,
            clock: base.clock,
            noise: self.limits(None, seed, ply).noise,
        };
        if self.caller_time {
            if !l.is_bounded() {
                l.movetime = own;
            }
        } else if let Some(own) = own {
            l.movetime = Some(l.movetime.map_or(own, |t| t.min(own)));
        }
        l
    }

    /// The engine of one served move at this level (its table and search options) with the
    /// evaluation and tables the caller chose for it: `draughts serve` and `draughts levels rate`
    /// build every move's engine with this, so a rated level plays as it is served.
    pub fn engine_config(&self, network: Option<std::sync::Arc<draughts_nnue::Network>>, egtb: Option<Endgames>) -> EngineConfig {
        EngineConfig { tt_mib: self.hash_mib, network, options: self.search_options(), egtb, ..EngineConfig::default() }
    }

    /// The engine's search options at this level (checked when the file is read).
    pub fn search_options(&self) -> SearchOptions {
        let mut o = SearchOptions::default();
        // `parse` refused files whose options do not parse.
        let _ = o.parse_list(&self.options);
        if let Some(t) = self.threads {
            o.threads = t;
        }
        o
    }

    /// A hash of what decides how the level plays (its limits, randomness, table, evaluation,
    /// tables and options; not its name, description or `caller_time`), so a rating measured
    /// for one version of a level is not shown for another.
    pub fn fingerprint(&self) -> String {
        let text = format!(
            "depth={:?};nodes={:?};movetime_ms={:?};noise_cp={:?};noise_plies={:?};hash_mib={};network={};egtb={};options={:?};threads={}",
            self.depth,
            self.nodes,
            self.movetime_ms,
            self.noise_cp,
            self.noise_plies,
            self.hash_mib,
            self.network,
            self.egtb,
            options_fingerprint_text(&self.search_options()),
            self.search_options().threads,
        );
        format!("{:016x}", draughts_model::fnv1a64(text.as_bytes()))
    }

    /// The level's rating when it holds for the network `network` serves it with (`None` for
    /// the hand-made evaluation).
    pub fn rating_for(&self, network: Option<&str>) -> Option<&LevelRating> {
        let expected = if self.network { network } else { None };
        self.rating.as_ref().filter(|r| r.network.as_deref() == expected)
    }

    /// How the level plays, in words.
    pub fn summary(&self, network: Option<&str>) -> String {
        let mut parts = Vec::new();
        if let Some(d) = self.depth {
            parts.push(format!("depth {d}"));
        }
        if let Some(n) = self.nodes {
            parts.push(format!("{n} nodes"));
        }
        if let Some(t) = self.movetime_ms {
            parts.push(format!("{t} ms"));
        }
        match (self.noise_cp, self.noise_plies) {
            (Some(m), Some(p)) => parts.push(format!("random within {m} centi-men in the first {p} plies")),
            (Some(m), None) => parts.push(format!("random within {m} centi-men")),
            _ => {}
        }
        let threads = self.search_options().threads;
        if threads > 1 {
            parts.push(format!("{threads} threads"));
        }
        let eval = match network {
            Some(id) => format!("network {id}"),
            None => "hand-made evaluation".to_owned(),
        };
        format!("alpha-beta, {eval} ({}: {})", self.name, parts.join(", "))
    }
}

/// Parses a levels file; `origin` names it in messages.
pub fn parse(text: &str, origin: &str) -> anyhow::Result<Vec<LevelSpec>> {
    let file: LevelsFile = toml::from_str(text).map_err(|e| bad_input(format!("{origin}: {e}")))?;
    if file.level.is_empty() {
        return Err(bad_input(format!("{origin}: no [[level]]")));
    }
    for (i, l) in file.level.iter().enumerate() {
        let at = format!("{origin}: level {} `{}`", i + 1, l.name);
        if l.name.is_empty() || !l.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return Err(bad_input(format!("{at}: a name is letters, digits, `-` and `_`")));
        }
        if file.level[..i].iter().any(|o| o.name == l.name) {
            return Err(bad_input(format!("{at}: named twice")));
        }
        if l.depth.is_none() && l.nodes.is_none() && l.movetime_ms.is_none() {
            return Err(bad_input(format!("{at}: needs a limit (depth, nodes or movetime_ms)")));
        }
        if l.depth == Some(0) || l.nodes == Some(0) || l.movetime_ms == Some(0) {
            return Err(bad_input(format!("{at}: limits are at least 1")));
        }
        if l.movetime_ms.is_some_and(|t| t > 60_000) {
            return Err(bad_input(format!("{at}: movetime_ms is at most 60000")));
        }
        if !(1..=4096).contains(&l.hash_mib) {
            return Err(bad_input(format!("{at}: hash_mib is 1 to 4096")));
        }
        if l.noise_cp.is_some_and(|m| m < 0) {
            return Err(bad_input(format!("{at}: noise_cp is not negative")));
        }
        if l.noise_plies.is_some() && l.noise_cp.is_none() {
            return Err(bad_input(format!("{at}: noise_plies needs noise_cp")));
        }
        if let Err(e) = SearchOptions::default().parse_list(&l.options) {
            return Err(bad_input(format!("{at}: options: {e}")));
        }
        if l.threads.is_some_and(|t| !(1..=SearchOptions::MAX_THREADS).contains(&t)) {
            return Err(bad_input(format!("{at}: threads is 1 to {}", SearchOptions::MAX_THREADS)));
        }
    }
    Ok(file.level)
}

/// The levels of `path`, or the shipped ones, with the ratings of the ratings file beside them
/// ([`ratings_path`]) for the levels it rated as they are.
pub fn load(path: Option<&Path>) -> anyhow::Result<Vec<LevelSpec>> {
    let (mut levels, ratings) = match path {
        None => (parse(DEFAULT_LEVELS, "configs/levels.toml (built in)")?, Some(parse_ratings(DEFAULT_RATINGS, "built in")?)),
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| bad_input(format!("{}: {e}", p.display())))?;
            let levels = parse(&text, &p.display().to_string())?;
            let rp = ratings_path(p);
            let ratings = match std::fs::read_to_string(&rp) {
                Ok(text) => Some(parse_ratings(&text, &rp.display().to_string())?),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(bad_input(format!("{}: {e}", rp.display()))),
            };
            (levels, ratings)
        }
    };
    if let Some(r) = ratings {
        attach(&mut levels, &r);
    }
    Ok(levels)
}

/// Where the ratings of the levels file `levels` are: `NAME.ratings.json` beside `NAME.toml`.
pub fn ratings_path(levels: &Path) -> std::path::PathBuf {
    levels.with_extension("ratings.json")
}

/// Parses a ratings file; `origin` names it in messages.
pub fn parse_ratings(text: &str, origin: &str) -> anyhow::Result<RatingsFile> {
    let r: RatingsFile = serde_json::from_str(text).map_err(|e| bad_input(format!("ratings file {origin}: {e}")))?;
    if r.format != 1 {
        return Err(bad_input(format!("ratings file {origin}: format {} (this version reads 1)", r.format)));
    }
    Ok(r)
}

/// Gives each level the rating the file has for it (same name, same fingerprint).
pub fn attach(levels: &mut [LevelSpec], ratings: &RatingsFile) {
    for l in levels.iter_mut() {
        let fp = l.fingerprint();
        l.rating = ratings
            .players
            .iter()
            .find(|p| p.kind == "level" && p.name == l.name && p.fingerprint.as_deref() == Some(fp.as_str()))
            .map(|p| p.rating.clone());
    }
}

/// Search options added after the first ratings were measured. A level's fingerprint names one
/// of them only when it differs from [`SearchOptions::BASELINE`], so that adding an option that
/// is off changes no fingerprint (and no rating has to be measured again for it), while turning
/// one on does.
const OPTIONS_ADDED_LATER: [&str; 27] = [
    "singular", "singular_all", "rfp", "rfp_margin", "lazy_eval", "lazy_margin", "qs_exchanges", "lmp", "lmp_moves", "lmr_history", "iir",
    "cont_history", "lmr_log", "policy_order", "policy_depth", "corr_history", "singular_margin", "singular_all_depth", "lmr_moves",
    "aspiration", "lmr_nonpv_moves", "futility", "futility_margin", "lmr_cut", "iir_cut",
    "singular_negative", "improving",
];

/// The options as a level's fingerprint writes them: the derived `Debug` text of the options
/// that existed when ratings began, then `;name=value` for each later option that is not at its
/// baseline value.
fn options_fingerprint_text(o: &SearchOptions) -> String {
    let base = SearchOptions::BASELINE;
    let mut first = *o;
    let mut later = String::new();
    for name in OPTIONS_ADDED_LATER {
        let (value, baseline) = (o.get(name).unwrap_or_default(), base.get(name).unwrap_or_default());
        if value != baseline {
            later.push_str(&format!(";{name}={value}"));
        }
        first.set(name, &baseline).expect("an option's own value is valid");
    }
    // The derived `Debug` text writes a later option at its baseline as `, name: false` (a
    // switch) or `, name: 50` (a number).
    let mut text = format!("{first:?}");
    for name in OPTIONS_ADDED_LATER {
        let baseline = base.get(name).unwrap_or_default();
        let debug = match baseline.as_str() {
            "on" => "true",
            "off" => "false",
            number => number,
        };
        text = text.replace(&format!(", {name}: {debug}"), "");
    }
    text + &later
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_levels_parse_and_get_stronger() {
        let levels = load(None).unwrap();
        let names: Vec<_> = levels.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["beginner", "novice", "easy", "casual", "medium", "strong", "expert", "hard"]);
        let level = |name: &str| levels.iter().find(|l| l.name == name).unwrap();
        assert!(level("easy").noise_cp.is_some() && level("hard").network && !level("strong").network);
        let l = level("medium").limits(Some(Duration::from_millis(50)), 0, 0);
        assert_eq!(l.movetime, Some(Duration::from_millis(50)));
        assert_eq!(level("medium").limits(Some(Duration::from_secs(9)), 0, 0).movetime, Some(Duration::from_millis(200)));
        // The hand-made levels search with the engine's defaults (`lmp` lost with the hand-made
        // evaluation); the network levels add the options measured to gain with the network.
        assert!(levels.iter().filter(|l| !l.network).all(|l| l.search_options() == SearchOptions::default()));
        assert!(levels.iter().filter(|l| l.network).all(|l| l.search_options() == parsed("singular_all=on,lmp=on")));
        // Below hard, a level's strength does not depend on the machine: a depth or nodes limit.
        assert!(levels.iter().filter(|l| l.name != "hard").all(|l| l.depth.is_some() || l.nodes.is_some()));
        // The hard level varies its first moves (seeded), and only those.
        let hard = level("hard");
        let plies = hard.noise_plies.expect("the hard level has variety in the opening") as usize;
        assert!(hard.noise_cp.is_some_and(|m| (1..=20).contains(&m)), "{:?}", hard.noise_cp);
        assert!(hard.limits(None, 3, 0).noise.is_some() && hard.limits(None, 3, plies - 1).noise.is_some());
        assert_eq!(hard.limits(None, 3, plies).noise, None);
        assert!(level("easy").limits(None, 3, 500).noise.is_some(), "easy is random at every ply");
    }

    fn parsed(options: &str) -> SearchOptions {
        let mut o = SearchOptions::default();
        o.parse_list(options).unwrap();
        o
    }

    #[test]
    fn a_rating_holds_for_the_level_it_measured() {
        let text = "[[level]]\nname = \"a\"\ndescription = \"x\"\ndepth = 3\n\n[[level]]\nname = \"b\"\nnodes = 500\nnetwork = true\n";
        let mut levels = parse(text, "t.toml").unwrap();
        // The fingerprint follows how the level plays, not its words.
        let mut other = levels[0].clone();
        other.description = "y".into();
        assert_eq!(other.fingerprint(), levels[0].fingerprint());
        other.depth = Some(4);
        assert_ne!(other.fingerprint(), levels[0].fingerprint());
        other.depth = Some(3);
        other.options = "probcut=off".into();
        assert_ne!(other.fingerprint(), levels[0].fingerprint());
        // An option added later changes the fingerprint only away from its baseline value
        // (written the same way as before the option existed).
        // Another value: the other side of a switch, the next number.
        let flip = |v: &str| match v {
            "on" => "off".to_owned(),
            "off" => "on".to_owned(),
            n => (n.parse::<i32>().expect("a number option") + 1).to_string(),
        };
        for name in OPTIONS_ADDED_LATER {
            let default = SearchOptions::default().get(name).unwrap();
            other.options = format!("{name}={default}");
            assert_eq!(other.fingerprint(), levels[0].fingerprint(), "{name}");
            other.options = format!("{name}={}", flip(&default));
            assert_ne!(other.fingerprint(), levels[0].fingerprint(), "{name}");
            let baseline = SearchOptions::BASELINE.get(name).unwrap();
            for (value, named) in [(baseline.clone(), false), (flip(&baseline), true)] {
                let text = options_fingerprint_text(&parsed(&format!("{name}={value}")));
                assert_eq!(text.contains(name), named, "{text}");
                assert!(text.starts_with("SearchOptions {"), "{text}");
            }
        }
        other.options = String::new();
        let rated = |name: &str, fp: String, network: Option<&str>| RatedPlayer {
            name: name.into(),
            kind: "level".into(),
            player: String::new(),
            fingerprint: Some(fp),
            rating: LevelRating { elo: 1234.0, low: 1200.0, high: 1268.0, games: 40, network: network.map(str::to_owned) },
            points: 20.0,
        };
        let file = RatingsFile {
            format: 1,
            scale: "s".into(),
            created: String::new(),
            command: String::new(),
            seed: 1,
            machine: String::new(),
            games: 40,
            players: vec![rated("a", levels[0].fingerprint(), None), rated("b", levels[1].fingerprint(), Some("net-1"))],
            pairings: Vec::new(),
        };
        attach(&mut levels, &file);
        assert_eq!(levels[0].rating_for(None).map(|r| r.elo), Some(1234.0));
        // A network level's rating holds for the network it was rated with only.
        assert!(levels[1].rating_for(Some("net-1")).is_some());
        assert!(levels[1].rating_for(Some("net-2")).is_none() && levels[1].rating_for(None).is_none());
        // A level changed since: no rating.
        let mut changed = parse(&text.replace("depth = 3", "depth = 5"), "t.toml").unwrap();
        attach(&mut changed, &file);
        assert!(changed[0].rating.is_none());
        // Broken or foreign ratings files are named.
        let e = parse_ratings("{", "r.json").unwrap_err().to_string();
        assert!(e.contains("ratings file r.json"), "{e}");
        let e = parse_ratings(&serde_json::to_string(&RatingsFile { format: 2, ..file }).unwrap(), "r.json").unwrap_err().to_string();
        assert!(e.contains("format 2"), "{e}");
        // The shipped ratings file parses.
        parse_ratings(DEFAULT_RATINGS, "built in").unwrap();
    }

    #[test]
    fn levels_take_search_options() {
        let text = "[[level]]\nname = \"x\"\ndepth = 3\noptions = \"quantised=off, probcut_margin=20\"\n";
        let l = &parse(text, "t.toml").unwrap()[0];
        let o = l.search_options();
        assert!(!o.quantised && o.probcut_margin == 20 && o.probcut);
        let bad = "[[level]]\nname = \"x\"\ndepth = 3\noptions = \"nullmove=on\"\n";
        let e = parse(bad, "t.toml").unwrap_err().to_string();
        assert!(e.contains("t.toml: level 1 `x`: options") && e.contains("nullmove"), "{e}");

        // `threads` as a key of its own, checked for its range.
        let text = "[[level]]\nname = \"x\"\ndepth = 3\nthreads = 4\n";
        let l = &parse(text, "t.toml").unwrap()[0];
        assert_eq!(l.search_options().threads, 4);
        assert!(l.summary(None).contains("4 threads"), "{}", l.summary(None));
        let e = parse("[[level]]\nname = \"x\"\ndepth = 3\nthreads = 0\n", "t.toml").unwrap_err().to_string();
        assert!(e.contains("level 1 `x`: threads is 1 to 256"), "{e}");
        let e = parse("[[level]]\nname = \"x\"\ndepth = 3\nnoise_plies = 8\n", "t.toml").unwrap_err().to_string();
        assert!(e.contains("level 1 `x`: noise_plies needs noise_cp"), "{e}");
    }

    #[test]
    fn every_shipped_level_is_rated_as_shipped() {
        // A change to configs/levels.toml alters the changed levels' fingerprints: rate them again
        // (`draughts levels rate`, from the repository root) so that the built-in ratings file has
        // them; the network levels were rated with the shipped model.
        let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(crate::serve::DEFAULT_MODEL);
        let network = std::fs::read_dir(shipped)
            .unwrap()
            .filter_map(|e| e.unwrap().file_name().into_string().ok())
            .find_map(|n| n.strip_suffix(".safetensors").map(str::to_owned))
            .unwrap();
        for l in load(None).unwrap() {
            assert!(l.rating_for(Some(&network)).is_some(), "level `{}` has no rating in configs/levels.ratings.json", l.name);
        }
    }

    #[test]
    fn shipped_levels_play_in_hub_and_dxp_as_the_engine_s_levels() {
        use draughts_engine::{Clock, Level};
        let levels = load(None).unwrap();
        let clock = Clock { remaining: Duration::from_secs(60), increment: Duration::from_millis(500), moves_to_go: None };
        let bases = [
            Limits::default(),
            Limits::movetime(Duration::from_millis(50)),
            Limits::movetime(Duration::from_secs(5)),
            Limits::depth(3),
            Limits::depth(12),
            Limits::nodes(10_000),
            Limits { clock: Some(clock), ..Limits::default() },
            Limits { clock: Some(clock), movetime: Some(Duration::from_millis(700)), ..Limits::default() },
        ];
        for level in Level::ALL {
            let spec = levels.iter().find(|l| l.name == level.name()).unwrap();
            let after = spec.noise_plies.unwrap_or(0) as usize;
            for base in &bases {
                assert_eq!(spec.protocol_limits(base, 7, after), level.limits(base, 7), "{} with {base:?}", spec.name);
            }
        }
        // Before its last varied ply the hard level also chooses among near-best moves.
        let hard = levels.iter().find(|l| l.name == "hard").unwrap();
        assert!(hard.protocol_limits(&Limits::default(), 7, 0).noise.is_some());
    }

    #[test]
    fn shipped_levels_are_the_protocol_engines_levels() {
        let levels = load(None).unwrap();
        for level in draughts_engine::Level::ALL {
            let spec = levels.iter().find(|l| l.name == level.name()).unwrap();
            // A served level may add variety in the opening (`noise_plies`); after it, it plays
            // as the protocol engine's level does.
            let after = spec.noise_plies.unwrap_or(0) as usize;
            assert_eq!(spec.limits(None, 7, after), level.limits(&Limits::default(), 7), "{}", spec.name);
            assert_eq!(spec.network, level == draughts_engine::Level::Hard);
        }
    }

    #[test]
    fn bad_levels_files_are_named() {
        let err = |t: &str| parse(t, "x.toml").unwrap_err().to_string();
        assert!(err("").contains("x.toml"));
        assert!(err("[[level]]\nname = \"a\"\n").contains("needs a limit"));
        assert!(err("[[level]]\nname = \"a\"\ndepth = 2\nspeed = 3\n").contains("speed"));
        assert!(err("[[level]]\nname = \"a\"\ndepth = 2\n[[level]]\nname = \"a\"\ndepth = 3\n").contains("named twice"));
        assert!(err("[[level]]\nname = \"a b\"\ndepth = 2\n").contains("letters"));
    }
}
