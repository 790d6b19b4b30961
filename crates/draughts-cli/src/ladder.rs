//! `draughts levels`: the levels people play (`configs/levels.toml`), shown with their ratings
//! (`show`) and rated (`rate`): the levels play as they are served, against each other and
//! against fixed anchors (a random mover, the hand-made engine at fixed depths), and a
//! maximum-likelihood fit of every game gives each level its Elo with a 95% interval, written to
//! the ratings file beside the levels file, where `draughts serve` (`/api/info`, the page) and
//! the Hub engine (`id`) show it.
//!
//! The schedule is a ladder, not a full round robin (the hard level's games cost a second a
//! move): first each level (weakest first, as the file lists them) meets the anchors (weakest
//! first) and the next level for a few placement games, from the first anchor the level below
//! did not beat in every game up to the first one it scores nothing against; the placement
//! ratings order all players, and then each plays its two nearest neighbours up in that order
//! for `--games-per-pair` games. Ratings come from every game.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use draughts_arena::stats::{fit_ratings, PairTally, RatingOptions};
use draughts_arena::{openings, run_match_into, ClockState, Maker, MatchConfig, PdnFile, Player, PlayerError, PlayerFactory, Wdl};
use draughts_core::{Game, Move, Rules};
use draughts_engine::{Endgames, Engine};
use draughts_nnue::Network;
use indicatif::{ProgressBar, ProgressStyle};

use crate::bad_input;
use crate::serve::levels::{self, LevelRating, LevelSpec, RatedPairing, RatedPlayer, RatingsFile};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: LevelsCommand,
}

#[derive(Debug, clap::Subcommand)]
enum LevelsCommand {
    /// The levels, how each plays and its rating (when the ratings file has one for it).
    Show(ShowArgs),
    /// Rate the levels: games against each other and against fixed anchors; writes the ratings
    /// file beside the levels file (`levels.ratings.json`).
    Rate(RateArgs),
}

#[derive(Debug, clap::Args)]
struct Source {
    /// A levels file in place of the built-in configs/levels.toml.
    #[arg(long)]
    levels: Option<PathBuf>,
    /// The model the `network` levels use. Default: models/sparse-pat32-g2 when it is there.
    #[arg(long)]
    model: Option<PathBuf>,
    /// The hand-made evaluation at every level, even when a model is there.
    #[arg(long, conflicts_with = "model")]
    no_model: bool,
    /// Endgame tables for the levels with `egtb = true`.
    #[arg(long)]
    egtb: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct ShowArgs {
    #[command(flatten)]
    source: Source,
}

#[derive(Debug, clap::Args)]
struct RateArgs {
    #[command(flatten)]
    source: Source,
    /// The anchors, weakest first: players whose play never changes (player specs, as
    /// `draughts match` takes).
    #[arg(long, num_args = 1.., default_values_t = DEFAULT_ANCHORS.iter().map(|s| s.to_string()))]
    anchors: Vec<String>,
    /// The player whose rating fixes the scale (one of the anchors).
    #[arg(long, default_value = "alphabeta:depth=4")]
    scale: String,
    /// Its rating.
    #[arg(long, default_value_t = 1500.0, allow_hyphen_values = true)]
    scale_elo: f64,
    /// Placement games of a level against an anchor or the next level (even).
    #[arg(long, default_value_t = 4)]
    placement_games: usize,
    /// Games of each player against its two nearest neighbours up the placement order (even).
    #[arg(long, default_value_t = 40)]
    games_per_pair: usize,
    /// Openings: a file with one FEN per line, or a PDN file. Default: the shipped set.
    #[arg(long)]
    openings: Option<PathBuf>,
    /// Games played at once.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Seed of the opening order and every player's random choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where to write the ratings (default: beside the levels file, `NAME.ratings.json`; for
    /// the built-in levels configs/levels.ratings.json, which the next build carries).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write every game as PDN to this file.
    #[arg(long)]
    pdn: Option<PathBuf>,
}

/// The default anchors, weakest first: the random mover and the hand-made engine.
pub const DEFAULT_ANCHORS: [&str; 8] = [
    "random",
    "alphabeta:depth=1",
    "alphabeta:depth=2",
    "alphabeta:depth=4",
    "alphabeta:depth=6",
    // Deeper, a node budget: a fixed depth takes minutes a move in some king endings.
    "alphabeta:nodes=20000",
    "alphabeta:nodes=200000",
    "alphabeta:nodes=2000000",
];

/// What the levels play with.
struct Served {
    levels: Vec<LevelSpec>,
    path: Option<PathBuf>,
    network: Option<Arc<Network>>,
    egtb: Option<Endgames>,
}

fn open(s: &Source) -> anyhow::Result<Served> {
    let levels = levels::load(s.levels.as_deref())?;
    let model = match (&s.model, s.no_model) {
        (Some(m), _) => Some(m.clone()),
        (None, false) if Path::new(crate::serve::DEFAULT_MODEL).is_dir() => Some(PathBuf::from(crate::serve::DEFAULT_MODEL)),
        _ => None,
    };
    let network = crate::models::load_for_alphabeta(model.as_deref(), "the levels play alpha-beta with it")?;
    let egtb = crate::egtb::load(s.egtb.as_deref())?;
    Ok(Served { levels, path: s.levels.clone(), network, egtb })
}

impl Served {
    fn network_id(&self, level: &LevelSpec) -> Option<String> {
        self.network.as_ref().filter(|_| level.network).map(|n| n.model_id().to_owned())
    }
}

/// A level played as `draughts serve` plays it: a fresh engine for every move (a request's), the
/// level's limits, evaluation, tables and options, and its random choices seeded per game.
#[derive(Debug)]
pub struct LevelPlayer {
    spec: LevelSpec,
    network: Option<Arc<Network>>,
    egtb: Option<Endgames>,
    seed: u64,
    stop: AtomicBool,
}

impl LevelPlayer {
    pub fn new(spec: LevelSpec, network: Option<Arc<Network>>, egtb: Option<Endgames>) -> LevelPlayer {
        let network = network.filter(|_| spec.network);
        let egtb = egtb.filter(|_| spec.egtb);
        LevelPlayer { spec, network, egtb, seed: 0, stop: AtomicBool::new(false) }
    }
}

impl Player for LevelPlayer {
    fn name(&self) -> String {
        format!("level {}", self.spec.name)
    }

    fn new_game(&mut self, seed: u64) {
        self.seed = seed;
    }

    fn choose(&mut self, game: &Game, _clock: &ClockState) -> Result<Move, PlayerError> {
        let mut engine = Engine::new(self.spec.engine_config(self.network.clone(), self.egtb.clone())).map_err(|e| PlayerError::Crashed { detail: format!("engine: {e}") })?;
        // A served move's seed is fresh for every request; here it is the game's, mixed with the ply.
        let seed = draughts_arena::mix_seed(self.seed, game.ply() as u64);
        let limits = self.spec.limits(None, seed, game.ply());
        let result = engine.search(game, &limits, &self.stop, &mut |_| {});
        result.best.ok_or_else(|| PlayerError::Crashed { detail: format!("no move in {}", game.position().to_fen()) })
    }
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    match a.command {
        LevelsCommand::Show(s) => show(s),
        LevelsCommand::Rate(r) => rate(r),
    }
}

fn show(a: ShowArgs) -> anyhow::Result<ExitCode> {
    let served = open(&a.source)?;
    for l in &served.levels {
        let id = served.network_id(l);
        let rating = match l.rating_for(id.as_deref()) {
            Some(r) => format!("Elo {:.0} [{:.0}, {:.0}] over {} games", r.elo, r.low, r.high, r.games),
            None => "not rated".to_owned(),
        };
        println!("{:<10} {:<40} {}", l.name, rating, l.summary(id.as_deref()));
    }
    Ok(ExitCode::SUCCESS)
}

/// One entrant of the ladder.
struct Entrant {
    name: String,
    kind: &'static str,
    player: String,
    fingerprint: Option<String>,
    network: Option<String>,
}

fn rate(a: RateArgs) -> anyhow::Result<ExitCode> {
    for (flag, n) in [("--placement-games", a.placement_games), ("--games-per-pair", a.games_per_pair)] {
        if n == 0 || n % 2 != 0 {
            return Err(bad_input(format!("{flag} {n}: a positive even number (games come in pairs)")));
        }
    }
    if !a.scale_elo.is_finite() {
        return Err(bad_input("--scale-elo: a number"));
    }
    let served = open(&a.source)?;
    let out = match (&a.out, &served.path) {
        (Some(o), _) => o.clone(),
        (None, Some(p)) => levels::ratings_path(p),
        (None, None) => PathBuf::from("configs/levels.ratings.json"),
    };
    let rules = Rules::FMJD;
    let openings = match &a.openings {
        Some(p) => openings::load(p, &rules).map_err(bad_input)?,
        None => openings::builtin(),
    };
    if openings.is_empty() {
        return Err(bad_input("the openings file holds no opening"));
    }
    let factory = crate::arena::factory();
    let specs: Vec<draughts_arena::PlayerSpec> =
        a.anchors.iter().map(|s| draughts_arena::PlayerSpec::parse(s).map_err(|e| bad_input(format!("--anchors: {e}")))).collect::<anyhow::Result<_>>()?;
    for s in &specs {
        factory.build(s).map_err(|e| bad_input(format!("--anchors: {e}")))?;
    }
    let scale = a.anchors.iter().position(|s| *s == a.scale).ok_or_else(|| bad_input(format!("--scale {}: not one of the --anchors", a.scale)))?;

    // The entrants: the levels (weakest first, as the file lists them), then the anchors.
    let mut entrants: Vec<Entrant> = served
        .levels
        .iter()
        .map(|l| Entrant {
            name: l.name.clone(),
            kind: "level",
            player: l.summary(served.network_id(l).as_deref()),
            fingerprint: Some(l.fingerprint()),
            network: served.network_id(l),
        })
        .collect();
    let levels_n = entrants.len();
    for s in &a.anchors {
        if entrants.iter().any(|e| e.name == *s) {
            return Err(bad_input(format!("--anchors: `{s}` is named twice (or is a level's name)")));
        }
        entrants.push(Entrant { name: s.clone(), kind: "anchor", player: s.clone(), fingerprint: None, network: None });
    }
    let makers: Vec<Box<Maker<'_>>> = served
        .levels
        .iter()
        .map(|l| {
            let (l, n, e) = (l.clone(), served.network.clone(), served.egtb.clone());
            Box::new(move || Ok(Box::new(LevelPlayer::new(l.clone(), n.clone(), e.clone())) as Box<dyn Player>)) as Box<Maker<'_>>
        })
        .chain(specs.iter().map(|s| Box::new(draughts_arena::maker(&factory, s)) as Box<Maker<'_>>))
        .collect();
    let anchor_index = levels_n + scale;
    let rating_options = RatingOptions { anchor: anchor_index, anchor_elo: a.scale_elo, virtual_draws: 1.0, ..RatingOptions::default() };

    let mut pdn = match &a.pdn {
        Some(p) => Some(PdnFile::create(p, rules).map_err(bad_input)?),
        None => None,
    };
    let config = |games: usize, seed: u64| MatchConfig {
        games,
        concurrency: a.concurrency.max(1),
        seed,
        rules,
        openings: openings.clone(),
        event: "draughts levels rate".to_owned(),
        ..MatchConfig::default()
    };
    let mut tallies: Vec<PairTally> = Vec::new();
    // Matches played so far: the PDN `Round` of a game is `MATCH.PAIR.GAME`.
    let mut matches = 0u64;
    let mut play = |stage: &str, pairs: &[(usize, usize)], games: &dyn Fn(usize, usize) -> usize, seed: u64, tallies: &mut Vec<PairTally>| {
        let total: usize = pairs.iter().map(|&(x, y)| games(x, y)).sum();
        let pb = ProgressBar::new(total as u64);
        pb.set_style(
            ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} games  {msg}").expect("valid template").progress_chars("=> "),
        );
        pb.set_message(stage.to_owned());
        let mut done = 0u64;
        for (round, &(x, y)) in pairs.iter().enumerate() {
            let n = games(x, y);
            if n == 0 {
                continue;
            }
            matches += 1;
            let prefix = matches.to_string();
            let result = run_match_into(&config(n, seed ^ (round as u64) << 20), &*makers[x], &*makers[y], pdn.as_mut(), Some(&prefix), |p| {
                pb.set_position(done + p.games_done as u64);
                pb.set_message(format!("{stage}: {} vs {}: {}", entrants[x].name, entrants[y].name, p.summary.progress_line()));
                ControlFlow::Continue(())
            })
            .map_err(bad_input)?;
            done += n as u64;
            pb.suspend(|| println!("{stage}: {} vs {}: {}", entrants[x].name, entrants[y].name, result.progress_line()));
            tallies.push(PairTally { a: x, b: y, wdl: result.wdl() });
        }
        pb.finish_and_clear();
        anyhow::Ok(())
    };
    // Placement: each level against the anchors from the first one the level below did not beat
    // every time, up to the first one it scores nothing against, and against the next level.
    let mut floor = levels_n;
    for l in 0..levels_n {
        let mut beaten_through = floor;
        for k in floor..entrants.len() {
            play("placement", &[(l, k)], &|_, _| a.placement_games, a.seed ^ (l as u64) << 40, &mut tallies)?;
            let wdl = tallies.last().expect("a placement match").wdl;
            if wdl.wins == wdl.games() && beaten_through == k {
                beaten_through = k + 1;
            }
            if wdl.points() == 0.0 {
                break;
            }
        }
        floor = beaten_through.min(entrants.len() - 1);
        if l + 1 < levels_n {
            play("placement", &[(l, l + 1)], &|_, _| a.placement_games, a.seed ^ (l as u64) << 40 ^ 1, &mut tallies)?;
        }
    }
    let fit = fit_ratings(entrants.len(), &tallies, &rating_options).map_err(|e| anyhow::anyhow!("placement ratings: {e}"))?;

    // The ladder: everyone against its two nearest neighbours up the placement order, topped
    // up to --games-per-pair.
    let mut order: Vec<usize> = (0..entrants.len()).collect();
    order.sort_by(|&x, &y| fit.ratings[x].elo.total_cmp(&fit.ratings[y].elo));
    let mut ladder: Vec<(usize, usize)> = Vec::new();
    for (i, &x) in order.iter().enumerate() {
        for &y in order.iter().skip(i + 1).take(2) {
            // Two anchors never change: their games say nothing new about the levels unless
            // a level sits between them, and then it meets both.
            if entrants[x].kind == "anchor" && entrants[y].kind == "anchor" {
                continue;
            }
            ladder.push((x, y));
        }
    }
    let played = |x: usize, y: usize, t: &[PairTally]| -> u64 {
        t.iter().filter(|p| (p.a, p.b) == (x, y) || (p.a, p.b) == (y, x)).map(|p| p.wdl.games()).sum()
    };
    let before = tallies.clone();
    let top_up = |x: usize, y: usize| a.games_per_pair.saturating_sub(played(x, y, &before) as usize) / 2 * 2;
    play("ladder", &ladder, &top_up, a.seed.wrapping_add(1), &mut tallies)?;
    if let Some(f) = pdn {
        f.finish().map_err(bad_input)?;
    }

    let fit = fit_ratings(entrants.len(), &tallies, &rating_options).map_err(|e| anyhow::anyhow!("ratings: {e}"))?;
    let mut players: Vec<(usize, RatedPlayer)> = entrants
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let r = &fit.ratings[i];
            let rating = LevelRating { elo: r.elo.round(), low: r.low.round(), high: r.high.round(), games: r.games, network: e.network.clone() };
            let p = RatedPlayer {
                name: e.name.clone(),
                kind: e.kind.to_owned(),
                player: e.player.clone(),
                fingerprint: e.fingerprint.clone(),
                rating,
                points: r.points,
            };
            (i, p)
        })
        .collect();
    players.sort_by(|x, y| y.1.rating.elo.total_cmp(&x.1.rating.elo));
    let mut merged: Vec<(usize, usize, Wdl)> = Vec::new();
    for t in &tallies {
        match merged.iter_mut().find(|(x, y, _)| (*x, *y) == (t.a, t.b)) {
            Some(m) => m.2 = Wdl { wins: m.2.wins + t.wdl.wins, draws: m.2.draws + t.wdl.draws, losses: m.2.losses + t.wdl.losses },
            None => merged.push((t.a, t.b, t.wdl)),
        }
    }
    let games: u64 = tallies.iter().map(|t| t.wdl.games()).sum();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let file = RatingsFile {
        format: 1,
        scale: format!("logistic Elo; {} = {}", a.scale, a.scale_elo),
        created: draughts_model::rfc3339_utc(now),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        seed: a.seed,
        machine: format!(
            "draughts {}, {} cores, {} games at once",
            env!("CARGO_PKG_VERSION"),
            std::thread::available_parallelism().map_or(1, |n| n.get()),
            a.concurrency.max(1)
        ),
        games,
        players: players.iter().map(|(_, p)| p.clone()).collect(),
        pairings: merged
            .iter()
            .map(|(x, y, w)| RatedPairing { a: entrants[*x].name.clone(), b: entrants[*y].name.clone(), wins: w.wins, draws: w.draws, losses: w.losses })
            .collect(),
    };
    let text = serde_json::to_string_pretty(&file)? + "\n";
    crate::rundir::write_atomic(&out, text.as_bytes())?;

    println!();
    println!("ratings ({}), 95% intervals, {games} games:", file.scale);
    let mut previous: Option<&RatedPlayer> = None;
    for (_, p) in players.iter().rev() {
        let r = &p.rating;
        let gap = match previous {
            Some(q) if p.kind == "level" => format!("  +{:.0} over level {}", r.elo - q.rating.elo, q.name),
            _ => String::new(),
        };
        println!("{:<8} {:<22} {:>6.0}  [{:>6.0}, {:>6.0}]  {:>5.1}/{:<4}{gap}", p.kind, p.name, r.elo, r.low, r.high, p.points, r.games);
        if p.kind == "level" {
            previous = Some(p);
        }
    }
    println!("written to {}", out.display());
    Ok(ExitCode::SUCCESS)
}
